//! Finds, by measuring, the value at which a target starts or stops meeting its SLOs.
//!
//! Two searches share one algorithm:
//! - capacity ([`Direction::HighestPassing`]): the highest offered request rate in `[min, max]`
//!   at which every SLO is met; low rates pass, high rates fail;
//! - demand ([`Direction::LowestPassing`]): the smallest resource value (CPU millicores or a
//!   replica count) in `[min, max]` at which every SLO is met; small values fail, large pass.
//!
//! [`next`] is a pure function of the bounds and the measurements so far. The caller measures
//! the value it asks for, appends the result to the history and calls it again, until it
//! returns [`Step::Done`]. Nothing else is remembered between calls, so the caller may restart
//! at any time. [`worst_case`] bounds how many measurements a search can take.
//!
//! # Strategy
//! 1. Measure the end expected to pass (min for capacity, max for demand). If it fails
//!    [`CONFIRMATIONS`] times, the answer is [`Outcome::NeverPasses`]. Then measure the other
//!    end; if it passes [`CONFIRMATIONS`] times, the answer is [`Outcome::AlwaysPasses`]. An end
//!    that would end the search decides the answer, so one cold measurement never does: it is
//!    confirmed like every deciding value (a disagreement is a mixed result). Ends are measured
//!    as given (whole numbers for integers).
//! 2. Bisect the gap between the passing value nearest the boundary and the next measured value
//!    beyond it until the two are within the precision: geometric mean for real values, rounded
//!    to three significant figures (more for precisions finer than 5 %), so rates of 100 and
//!    more are whole numbers; integer midpoint for integers. Each such value is measured once.
//! 3. Measure the two values that decide the answer, the passing and the failing value next to
//!    the boundary, until each is confirmed, then stop.
//!
//! # Decision rule
//! A value's verdict combines its usable measurements: it passes if they all passed, fails if
//! they all failed, and is *mixed* if they disagree. A value that decides the answer needs
//! [`CONFIRMATIONS`] (3) agreeing usable measurements, so it is measured twice more.
//!
//! A mixed value lies within measurement noise of the boundary, where a further measurement
//! and a majority vote would be close to a coin flip. So a mixed value is never the answer: it
//! is set aside in a *mixed zone*, and the bracket moves outward to the nearest values on either
//! side, whose gaps to the zone are bisected to the precision and which are confirmed in turn.
//! Passes beyond a failing value and fails before a passing value join the zone too. The
//! reported bracket then spans the zone and may be wider than the precision (the answer line
//! then says how wide and why); it is within the precision whenever no value was mixed. After more than [`MAX_MIXED`] mixed values the search
//! stops with the bracket it has.
//!
//! Why three agreeing measurements: against a service whose p99 latency follows a queueing
//! curve (SLO met up to 80 % utilisation) with 3 % run-to-run noise, and 5 % precision, one
//! repeat per side (two agreeing) brackets the true boundary in about 93-95 % of trials, a
//! majority of three no better, a majority of five about 96 %, and three agreeing about 98 % at
//! the same cost as the majority of five (see the tests).
//!
//! # Unusable measurements
//! An unusable measurement counts as neither pass nor fail, and the same value is measured once
//! more. A value with two unusable measurements and no usable one is given up:
//! - if it is the end expected to pass, the search stops with [`Outcome::Unusable`];
//! - otherwise it caps the gap being bisected, so the search goes on between the passing value
//!   and it (toward the passing side: overload and resource starvation make values beyond it
//!   unlikely to be measurable either). If that gap closes while the bracket is still wider
//!   than the precision, the search stops with [`Outcome::Unusable`] naming the value.
//!
//! A deciding value whose confirmation is unusable twice keeps the verdicts it has.

use serde::{Deserialize, Serialize};

/// Which end of the range is expected to meet the SLOs, and so what the search looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Direction {
    /// Capacity search: low values pass, high values fail; the answer is the highest passing value.
    HighestPassing,
    /// Demand search: low values fail, high values pass; the answer is the lowest passing value.
    LowestPassing,
}

/// The range to search and how finely to locate the answer in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// The smallest value that may be measured.
    pub min: f64,
    /// The largest value that may be measured.
    pub max: f64,
    /// Relative precision: the search stops when the failing value exceeds the passing value
    /// (or the passing the failing, for demand) by at most this fraction (0.05 = 5 %).
    pub precision: f64,
    /// Values are whole numbers (replica counts); the search then stops at adjacent integers
    /// and `precision` is not used.
    pub integer: bool,
    /// Bisection values are also rounded to whole numbers (request rates, millicores), so
    /// that every value asked for can be set exactly; a gap with no whole number inside it
    /// ends the bisection there. Not used with `integer`.
    pub whole_values: bool,
}

/// What one measurement says about the SLOs at the measured value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Every SLO was met.
    Pass,
    /// At least one SLO was missed.
    Fail,
    /// The measurement is meaningless (the load generator was the bottleneck, a pod ran out of
    /// memory, ...), with the reason; it counts as neither pass nor fail.
    Unusable(String),
}

/// One measurement: the value measured and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The measured value (request rate, millicores or replicas).
    pub value: f64,
    /// What the measurement says about the SLOs.
    pub verdict: Verdict,
}

/// What the search wants next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Step {
    /// Measure this value next.
    Measure(f64),
    /// The search is over, with this answer.
    Done(Answer),
}

/// The result of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The passing value nearest the boundary: the answer.
    pub passing: Option<f64>,
    /// The failing value nearest the boundary, on the other side of it.
    pub failing: Option<f64>,
    /// How the search ended.
    pub outcome: Outcome,
    /// The answer in one line, for people.
    pub line: String,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// The boundary lies between `passing` and `failing`.
    Bracketed,
    /// Even the far end passed: the answer is at least max (capacity) or at most min (demand).
    AlwaysPasses,
    /// Even the near end failed, or gave mixed results: the answer is below min (capacity) or
    /// above max (demand).
    NeverPasses,
    /// Repeated unusable measurements made the search impossible, or the bracket could not be
    /// narrowed to the precision.
    Unusable,
}

/// How many agreeing usable measurements a value that decides the answer needs.
pub const CONFIRMATIONS: u32 = 3;

/// How many mixed values the search accepts; one more stops it with the bracket it has.
pub const MAX_MIXED: u32 = 2;

/// How many unusable measurements of one value end the attempts to measure it.
const MAX_UNUSABLE: u32 = 2;

/// The most measurements of one value: [`CONFIRMATIONS`] usable ones and the unusable ones
/// retried among them.
pub const MAX_PER_VALUE: u32 = CONFIRMATIONS + MAX_UNUSABLE;

/// Relative tolerance when comparing values, so that values that went through a
/// serialisation round trip still match.
const SAME: f64 = 1e-9;

/// The smallest number of significant figures values are rounded to.
const MIN_DIGITS: i32 = 3;

/// Asks for the next value to measure, or gives the answer, from the measurements so far.
///
/// Pure and deterministic: the same bounds and history always give the same step.
/// Measurements of values outside `[min, max]` are ignored. Invalid bounds give
/// [`Outcome::Unusable`] at once.
pub fn next(direction: Direction, bounds: &Bounds, history: &[Measurement]) -> Step {
    match Space::new(direction, bounds) {
        Ok(space) => decide(&space, &tally(&space, history)),
        Err(reason) => done(
            None,
            None,
            Outcome::Unusable,
            format!("invalid bounds: {reason}"),
        ),
    }
}

/// The most measurements [`next`] asks for before it is done, for a history it produced
/// itself; 0 for invalid bounds.
///
/// With `D` the bisections that narrow `[min, max]` to the precision, `H` the bisections that
/// narrow half of it (both allowing for rounding), `K` = [`MAX_MIXED`] and `C` =
/// [`CONFIRMATIONS`]: a search measures at most `2 + D + K·H` distinct values (the two ends,
/// the first bisection, and one re-opened gap per accepted mixed value). Each is measured at
/// most twice (one unusable retry) unless it decides the answer; at most `K + 3` values do (the
/// final passing and failing values and up to `K + 1` that turned out mixed), each at most
/// `C + 1` times (one unusable retry). So `worst_case = 2·(2 + D + K·H) + (K + 3)·(C − 1)`.
pub fn worst_case(bounds: &Bounds) -> u32 {
    let Ok(space) = Space::new(Direction::HighestPassing, bounds) else {
        return 0;
    };
    let first = space.bisections(space.full_gap());
    let reopened = space.bisections(space.half_gap());
    let values = 2 + first + MAX_MIXED * reopened;
    2 * values + (MAX_MIXED + 3) * (CONFIRMATIONS - 1)
}

impl Bounds {
    /// Checks that the bounds describe a searchable range, saying what is wrong if not.
    pub fn validate(&self) -> Result<(), String> {
        Space::new(Direction::HighestPassing, self).map(|_| ())
    }
}

/// The searched range, normalised, with the arithmetic the search needs.
struct Space {
    direction: Direction,
    min: f64,
    max: f64,
    precision: f64,
    integer: bool,
    whole_values: bool,
    digits: i32,
}

impl Space {
    /// Checks and normalises bounds: integer bounds shrink to whole numbers.
    fn new(direction: Direction, bounds: &Bounds) -> Result<Space, String> {
        let Bounds {
            min,
            max,
            precision,
            integer,
            whole_values,
        } = *bounds;
        if !(min.is_finite() && max.is_finite()) {
            return Err(format!("min {min} and max {max} must be finite"));
        }
        let (min, max) = if integer {
            (min.ceil(), max.floor())
        } else {
            (min, max)
        };
        if min > max {
            return Err(format!("min {min} is above max {max}"));
        }
        if !integer && min <= 0.0 {
            return Err(format!("min {min} must be positive"));
        }
        let usable_precision = precision.is_finite() && precision > 0.0;
        if !integer && !usable_precision {
            return Err(format!("precision {precision} must be positive"));
        }
        let digits = if integer {
            MIN_DIGITS
        } else {
            digits_for(precision)
        };
        Ok(Space {
            direction,
            min,
            max,
            precision,
            integer,
            whole_values,
            digits,
        })
    }

    /// The end expected to pass.
    fn near_end(&self) -> f64 {
        match self.direction {
            Direction::HighestPassing => self.min,
            Direction::LowestPassing => self.max,
        }
    }

    /// The end expected to fail.
    fn far_end(&self) -> f64 {
        match self.direction {
            Direction::HighestPassing => self.max,
            Direction::LowestPassing => self.min,
        }
    }

    /// Position from the passing side: lower ranks are expected to pass.
    fn rank(&self, x: f64) -> f64 {
        match self.direction {
            Direction::HighestPassing => x,
            Direction::LowestPassing => -x,
        }
    }

    /// Whether `a` lies on the passing side of `b`.
    fn before(&self, a: f64, b: f64) -> bool {
        self.rank(a) < self.rank(b) && !same(a, b)
    }

    /// Whether a value lies within the bounds.
    fn contains(&self, x: f64) -> bool {
        (x >= self.min || same(x, self.min)) && (x <= self.max || same(x, self.max))
    }

    /// Whether two values are close enough to end the search between them.
    fn resolved(&self, a: f64, b: f64) -> bool {
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        if self.integer {
            high - low <= 1.0 + SAME
        } else {
            high / low - 1.0 <= self.precision + SAME
        }
    }

    /// The value that splits an unresolved gap, or `None` if the gap is resolved or rounding
    /// leaves no value strictly inside it.
    fn split(&self, a: f64, b: f64) -> Option<f64> {
        if self.resolved(a, b) {
            return None;
        }
        let (low, high) = if a <= b { (a, b) } else { (b, a) };
        let middle = if self.integer {
            low + ((high - low) / 2.0).floor()
        } else if self.whole_values {
            round_to_digits((low * high).sqrt(), self.digits).round()
        } else {
            round_to_digits((low * high).sqrt(), self.digits)
        };
        let inside = middle > low && middle < high && !same(middle, low) && !same(middle, high);
        inside.then_some(middle)
    }

    /// The width of the whole range: log ratio for real values, steps for integers.
    fn full_gap(&self) -> f64 {
        if self.integer {
            self.max - self.min
        } else {
            (self.max / self.min).ln()
        }
    }

    /// The widest gap next to a bisection value: half the range, plus rounding.
    fn half_gap(&self) -> f64 {
        if self.integer {
            (self.full_gap() / 2.0).ceil()
        } else {
            self.full_gap() / 2.0 + self.rounding_slack()
        }
    }

    /// How far (in log ratio) rounding can move a bisection value.
    fn rounding_slack(&self) -> f64 {
        let relative = 0.5 * 10f64.powi(1 - self.digits);
        -(1.0 - relative).ln()
    }

    /// How many bisections narrow a gap of this width to the precision, whichever half is kept.
    fn bisections(&self, gap: f64) -> u32 {
        let mut count = 0;
        if self.integer {
            let mut steps = gap;
            while steps > 1.0 {
                steps = (steps / 2.0).ceil();
                count += 1;
            }
        } else {
            let target = self.precision.ln_1p() * (1.0 - 1e-9);
            let slack = self.rounding_slack();
            let mut width = gap;
            while width > target {
                width = width / 2.0 + slack;
                count += 1;
            }
        }
        count
    }
}

/// Significant figures for a precision: at least [`MIN_DIGITS`], and enough that rounding
/// moves a value by at most a tenth of the precision.
fn digits_for(precision: f64) -> i32 {
    let needed = (1.0 - (precision / 5.0).log10() - 1e-9).ceil();
    if needed.is_finite() {
        (needed as i32).clamp(MIN_DIGITS, 15)
    } else {
        MIN_DIGITS
    }
}

/// Rounds to a number of significant figures.
fn round_to_digits(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let exponent = x.abs().log10().floor() as i32;
    let places = digits - 1 - exponent;
    if places >= 0 {
        let scale = 10f64.powi(places);
        (x * scale).round() / scale
    } else {
        let scale = 10f64.powi(-places);
        (x / scale).round() * scale
    }
}

/// Whether two values are the same up to serialisation noise.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME * a.abs().max(b.abs()).max(1.0)
}

/// What the measurements of one value add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// No usable measurement yet, one unusable: measure again.
    Retry,
    /// No usable measurement and too many unusable ones: no longer measured.
    GivenUp,
    /// Every usable measurement passed.
    Pass,
    /// Every usable measurement failed.
    Fail,
    /// Usable measurements disagree.
    Mixed,
}

/// All measurements of one value.
#[derive(Debug, Clone)]
struct Point {
    value: f64,
    passes: u32,
    fails: u32,
    unusable: u32,
    reason: String,
}

impl Point {
    /// A value not measured yet.
    fn new(value: f64) -> Point {
        Point {
            value,
            passes: 0,
            fails: 0,
            unusable: 0,
            reason: String::new(),
        }
    }

    /// How many measurements were usable.
    fn usable(&self) -> u32 {
        self.passes + self.fails
    }

    /// What the measurements add up to.
    fn status(&self) -> Status {
        match (self.passes, self.fails) {
            (0, 0) if self.unusable >= MAX_UNUSABLE => Status::GivenUp,
            (0, 0) => Status::Retry,
            (_, 0) => Status::Pass,
            (0, _) => Status::Fail,
            _ => Status::Mixed,
        }
    }

    /// Whether a deciding value still needs a measurement to be confirmed.
    fn unconfirmed(&self) -> bool {
        self.status() != Status::Mixed
            && self.usable() < CONFIRMATIONS
            && self.unusable < MAX_UNUSABLE
    }
}

/// Groups the history by value, ignoring values outside the bounds, ordered by rank.
fn tally(space: &Space, history: &[Measurement]) -> Vec<Point> {
    let mut points: Vec<Point> = Vec::new();
    for measurement in history.iter().filter(|m| space.contains(m.value)) {
        let index = match points.iter().position(|p| same(p.value, measurement.value)) {
            Some(index) => index,
            None => {
                points.push(Point::new(measurement.value));
                points.len() - 1
            }
        };
        let point = &mut points[index];
        match &measurement.verdict {
            Verdict::Pass => point.passes += 1,
            Verdict::Fail => point.fails += 1,
            Verdict::Unusable(reason) => {
                point.unusable += 1;
                point.reason.clone_from(reason);
            }
        }
    }
    points.sort_by(|a, b| space.rank(a.value).total_cmp(&space.rank(b.value)));
    points
}

/// The measurements of a value, if it was measured.
fn find(points: &[Point], value: f64) -> Option<&Point> {
    points.iter().find(|p| same(p.value, value))
}

/// The first step: retries, then the two ends, then the search between them.
fn decide(space: &Space, points: &[Point]) -> Step {
    if let Some(point) = points.iter().find(|p| p.status() == Status::Retry) {
        return Step::Measure(point.value);
    }
    let near = space.near_end();
    let unconfirmed = |value: f64| find(points, value).is_some_and(Point::unconfirmed);
    match find(points, near).map(Point::status) {
        None | Some(Status::Retry) => return Step::Measure(near),
        Some(Status::GivenUp) => return never_measured(points, near),
        // An end that would end the search decides the answer: one cold measurement must
        // not, so it is confirmed like every deciding value.
        Some(Status::Fail) if unconfirmed(near) => return Step::Measure(near),
        Some(Status::Fail) => return never_passes(space, near, "fails"),
        Some(Status::Mixed) => return never_passes(space, near, "gives mixed results"),
        Some(Status::Pass) => {}
    }
    let far = space.far_end();
    match find(points, far).map(Point::status) {
        None | Some(Status::Retry) => Step::Measure(far),
        Some(Status::Pass) if unconfirmed(far) => Step::Measure(far),
        Some(Status::Pass) => always_passes(space, far),
        Some(Status::Fail | Status::Mixed | Status::GivenUp) => search(space, points),
    }
}

/// Where the search stands: the values next to the boundary and the mixed zone between them.
struct Bracket<'a> {
    /// The passing value nearest the boundary, before any mixed or failing value.
    passing: &'a Point,
    /// The failing value nearest the boundary, beyond every mixed or passing value.
    failing: Option<&'a Point>,
    /// Values between them whose results disagree or are out of order, in rank order.
    mixed: Vec<&'a Point>,
}

/// Locates the boundary among the measured values; `None` if no value passed.
fn bracket(points: &[Point]) -> Option<Bracket<'_>> {
    let known: Vec<&Point> = points.iter().filter(|p| p.usable() > 0).collect();
    let first_not_pass = known
        .iter()
        .position(|p| p.status() != Status::Pass)
        .unwrap_or(known.len());
    let last_not_fail = known.iter().rposition(|p| p.status() != Status::Fail)?;
    let passing = *known.get(first_not_pass.checked_sub(1)?)?;
    let failing = known.get(last_not_fail + 1).copied();
    let mixed = known
        .get(first_not_pass..=last_not_fail)
        .map(<[&Point]>::to_vec)
        .unwrap_or_default();
    Some(Bracket {
        passing,
        failing,
        mixed,
    })
}

/// The next value beyond `value` that was measured or given up.
fn next_beyond<'a>(space: &Space, points: &'a [Point], value: f64) -> Option<&'a Point> {
    points.iter().find(|p| space.before(value, p.value))
}

/// Bisects the gaps next to the boundary, then confirms the deciding values.
fn search(space: &Space, points: &[Point]) -> Step {
    // The near end passed before the search starts, so a bracket exists; this is a fallback.
    let Some(bracket) = bracket(points) else {
        return never_passes(space, space.near_end(), "fails");
    };
    let mixed_count = bracket
        .mixed
        .iter()
        .filter(|p| p.status() == Status::Mixed)
        .count();
    if mixed_count > MAX_MIXED as usize {
        return finish(space, points, &bracket, "stopped: too many mixed results");
    }
    let passing = bracket.passing.value;
    if let Some(value) =
        next_beyond(space, points, passing).and_then(|p| space.split(passing, p.value))
    {
        return Step::Measure(value);
    }
    let beyond_zone = bracket.mixed.last().and_then(|top| {
        next_beyond(space, points, top.value).and_then(|p| space.split(top.value, p.value))
    });
    if let Some(value) = beyond_zone {
        return Step::Measure(value);
    }
    if bracket.passing.unconfirmed() {
        return Step::Measure(passing);
    }
    if let Some(failing) = bracket.failing.filter(|f| f.unconfirmed()) {
        return Step::Measure(failing.value);
    }
    finish(space, points, &bracket, "")
}

/// The answer once the search has located the boundary as well as it can.
fn finish(space: &Space, points: &[Point], bracket: &Bracket<'_>, note: &str) -> Step {
    let passing = bracket.passing.value;
    // With no failing value beyond the mixed zone, the zone's far edge stands in for one.
    let failing = bracket
        .failing
        .or(bracket.mixed.last().copied())
        .map(|p| p.value);
    let blocking = points.iter().find(|p| {
        p.status() == Status::GivenUp
            && space.before(passing, p.value)
            && failing.is_none_or(|f| space.before(p.value, f))
    });
    let outcome = match (failing, blocking) {
        (None, _) => Outcome::Unusable,
        (Some(f), Some(_)) if !space.resolved(passing, f) => Outcome::Unusable,
        _ => Outcome::Bracketed,
    };
    let mut parts = vec![format!("{} {}", lead(space), show(passing))];
    if let Some(f) = failing {
        parts.push(format!("{} fails", show(f)));
    }
    if !note.is_empty() {
        parts.push(note.to_string());
    }
    if !bracket.mixed.is_empty() {
        let values: Vec<String> = bracket.mixed.iter().map(|p| show(p.value)).collect();
        parts.push(format!("inconsistent results at {}", values.join(", ")));
    }
    if let Some(f) =
        failing.filter(|f| outcome == Outcome::Bracketed && !space.resolved(passing, *f))
    {
        parts.push(wider_than_asked(space, passing, f, bracket));
    }
    if let Some(point) = blocking.filter(|_| outcome == Outcome::Unusable) {
        parts.push(format!(
            "{} could not be measured: {}",
            show(point.value),
            point.reason
        ));
    }
    done(Some(passing), failing, outcome, parts.join("; "))
}

/// Why a bracket is wider than the precision asked, with its width: inconsistent results
/// near the boundary, or no value that can be set exactly between its ends.
fn wider_than_asked(space: &Space, passing: f64, failing: f64, bracket: &Bracket<'_>) -> String {
    let (low, high) = if passing <= failing {
        (passing, failing)
    } else {
        (failing, passing)
    };
    let width = if space.integer {
        format!("{} apart", show(high - low))
    } else {
        format!("{:.1}% wide", (high / low - 1.0) * 100.0)
    };
    let asked = if space.integer {
        "adjacent values".to_string()
    } else {
        format!("{:.1}%", space.precision * 100.0)
    };
    let why = if !bracket.mixed.is_empty() {
        "results within the noise of the boundary disagreed, so the mixed values are left between the ends (more repeats per value or longer windows narrow it)"
    } else {
        "no value that can be set exactly lies between its ends"
    };
    format!("the bracket is {width}, not the {asked} asked: {why}")
}

/// How the answer line starts for a direction.
fn lead(space: &Space) -> &'static str {
    match space.direction {
        Direction::HighestPassing => "highest passing value",
        Direction::LowestPassing => "lowest passing value",
    }
}

/// The answer when the far end passes.
fn always_passes(space: &Space, far: f64) -> Step {
    let bound = match space.direction {
        Direction::HighestPassing => "at least",
        Direction::LowestPassing => "at most",
    };
    let line = format!(
        "passes even at {}: the answer is {bound} {}",
        show(far),
        show(far)
    );
    done(Some(far), None, Outcome::AlwaysPasses, line)
}

/// The answer when the near end fails or gives mixed results.
fn never_passes(space: &Space, near: f64, how: &str) -> Step {
    let bound = match space.direction {
        Direction::HighestPassing => "below",
        Direction::LowestPassing => "above",
    };
    let line = format!(
        "{how} even at {}: the answer is {bound} {}",
        show(near),
        show(near)
    );
    done(None, Some(near), Outcome::NeverPasses, line)
}

/// The answer when the near end could not be measured.
fn never_measured(points: &[Point], near: f64) -> Step {
    let reason = find(points, near)
        .map(|p| p.reason.as_str())
        .unwrap_or_default();
    let line = format!("{} could not be measured: {reason}", show(near));
    done(None, None, Outcome::Unusable, line)
}

/// A finished search.
fn done(passing: Option<f64>, failing: Option<f64>, outcome: Outcome, line: String) -> Step {
    Step::Done(Answer {
        passing,
        failing,
        outcome,
        line,
    })
}

/// A value for people: as few digits as it was rounded to.
fn show(x: f64) -> String {
    format!("{x}")
}

#[cfg(test)]
#[path = "bisection_tests.rs"]
mod tests;
