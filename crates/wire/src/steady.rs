//! Steady state: whether a series of figures equally spaced in time (the per-second throughput
//! of a measured window, a cell's repeats in the order they were measured, the last seconds of a
//! warm-up) trends, and the rule that ends a steady warm-up. Pure.
//!
//! **The trend.** The Theil–Sen slope (the median of the slopes between every pair of points:
//! robust to a few outlying seconds such as a GC pause) with Sen's 95 % interval, which is
//! Kendall's rank test inverted (Sen 1968; ties corrected): no assumption about the shape of the
//! noise, only that the points are exchangeable when there is no trend. The size of a trend is
//! its *change*: the slope times the span of the series (`n − 1` steps) over the series' median,
//! so `+0.21` is "rose 21 % of its level from the first point to the last".
//!
//! **Flagged** (`NotSteady`, see `docs/metrics.md`): a measured window whose per-second
//! figures trend, the interval of the slope excluding 0 *and* the change at least
//! [`WINDOW_MIN_CHANGE`] (a trend the test can see but too small to matter is not flagged, and
//! a large one the noise hides cannot be); a cell's repeats that move one way by at least
//! [`REPEATS_MIN_CHANGE`] ([`repeats_trend`]).
//!
//! **A steady warm-up** ends when the trailing [`STEADY_SECONDS`] seconds of per-second figures
//! show no trend that matters: the interval includes 0 and the change over them is below
//! [`STEADY_MAX_CHANGE`], in [`STEADY_CHECKS`] checks running ([`WarmupRule`]).

/// The two-sided 95 % quantile of the standard normal distribution (the steady warm-up's test).
pub const Z95: f64 = 1.959_963_984_540_054;
/// The two-sided 99 % quantile (the flags': a warning raised by chance costs trust).
pub const Z99: f64 = 2.575_829_303_548_901;

/// Fewest whole seconds a window must hold to be judged.
pub const WINDOW_MIN_SECONDS: usize = 5;
/// Smallest change over a window, as a fraction of its median, that is flagged.
pub const WINDOW_MIN_CHANGE: f64 = 0.05;
/// Fewest repeats of a cell that are judged.
pub const REPEATS_MIN: usize = 3;
/// Smallest change over a cell's repeats, as a fraction of their median, that is flagged.
pub const REPEATS_MIN_CHANGE: f64 = 0.15;
/// Fewest trailing seconds of a warm-up the steady rule looks at.
pub const MIN_STEADY_SECONDS: usize = 10;
/// Most trailing seconds of a warm-up the steady rule looks at.
pub const MAX_STEADY_SECONDS: usize = 60;
/// Largest change over the trailing seconds, as a fraction of their median, that counts as
/// steady.
pub const STEADY_MAX_CHANGE: f64 = 0.025;
/// Checks in a row (one a second) that must find the trailing seconds steady.
pub const STEADY_CHECKS: usize = 3;

/// The trend of a series of figures equally spaced in time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// Points in the series.
    pub n: usize,
    /// The Theil–Sen slope, per step (per second, per repeat).
    pub slope: f64,
    /// Sen's 95 % interval of the slope; `None` when the series is too short to bound it
    /// (fewer than 5 points without ties: no trend can be told from noise).
    pub interval: Option<(f64, f64)>,
    /// The median of the series.
    pub level: f64,
    /// Where the Theil–Sen line starts: the median of `x_i − slope · i`; it ends at
    /// `intercept + slope · (n − 1)`.
    pub intercept: f64,
}

impl Trend {
    /// The change from the first point to the last along the slope, as a fraction of the
    /// level: `slope × (n − 1) / level`.
    pub fn change(&self) -> f64 {
        self.slope * self.span() / self.level
    }

    /// The interval of [`Trend::change`], from the slope's.
    pub fn change_interval(&self) -> Option<(f64, f64)> {
        let k = self.span() / self.level;
        self.interval.map(|(lo, hi)| (lo * k, hi * k))
    }

    /// Whether the 95 % interval of the slope excludes 0: a trend the rank test can see.
    pub fn significant(&self) -> bool {
        self.interval.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0)
    }

    /// The line's value at the last point.
    pub fn end(&self) -> f64 {
        self.intercept + self.slope * self.span()
    }

    fn span(&self) -> f64 {
        self.n.saturating_sub(1) as f64
    }
}

/// The trend of `xs` (equally spaced, in time order); `None` with fewer than 2 points, a
/// figure that is not finite or a median that is not positive.
pub fn trend(xs: &[f64], z: f64) -> Option<Trend> {
    let n = xs.len();
    if n < 2 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let level = median(&mut xs.to_vec());
    if level.is_nan() || level <= 0.0 {
        return None;
    }
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            slopes.push((xs[j] - xs[i]) / (j - i) as f64);
        }
    }
    let slope = median(&mut slopes);
    // `slopes` is sorted now. Sen's interval: the slopes of ranks (N − C)/2 and (N + C)/2 + 1
    // (1-based, to the nearest rank), C = z · √Var(S), S Kendall's statistic of the series
    // against time. A lower rank below 1 means the test cannot reach the level: no interval.
    let c = z * kendall_variance(xs).sqrt();
    let total = slopes.len() as f64;
    let lower = ((total - c) / 2.0).round();
    let upper = ((total + c) / 2.0).round() + 1.0;
    let interval = (lower >= 1.0).then(|| {
        let at = |rank: f64| slopes[(rank as usize).clamp(1, slopes.len()) - 1];
        (at(lower), at(upper))
    });
    let intercept = median(
        &mut xs
            .iter()
            .enumerate()
            .map(|(i, x)| x - slope * i as f64)
            .collect::<Vec<_>>(),
    );
    Some(Trend {
        n,
        slope,
        interval,
        level,
        intercept,
    })
}

/// The variance of Kendall's S of `xs` against time under no trend, ties corrected:
/// `(n(n−1)(2n+5) − Σ t(t−1)(2t+5)) / 18` over the groups of `t` equal values.
fn kendall_variance(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|x| **x == sorted[i]).count();
        let t = j as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        i += j;
    }
    (n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0
}

/// The median of `xs`, which it sorts.
fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The trend of a measured window's per-second figures when it is flagged: at least
/// [`WINDOW_MIN_SECONDS`] seconds, the slope's 95 % interval excluding 0 and a change of at
/// least [`WINDOW_MIN_CHANGE`] either way; `None` otherwise.
pub fn window_trend(per_second: &[f64]) -> Option<Trend> {
    if per_second.len() < WINDOW_MIN_SECONDS {
        return None;
    }
    trend(per_second, Z99).filter(|t| t.significant() && t.change().abs() >= WINDOW_MIN_CHANGE)
}

/// The trend of a cell's repeats (in the order measured) when it is flagged: at least
/// [`REPEATS_MIN`] repeats that move one way, each further than the one before — strictly
/// monotone with up to 4 repeats (Kendall's test cannot reach 5 % with fewer than 5), the
/// slope's 95 % interval excluding 0 from 5 on — by a change of at least
/// [`REPEATS_MIN_CHANGE`] of their median; `None` otherwise.
pub fn repeats_trend(values: &[f64]) -> Option<Trend> {
    if values.len() < REPEATS_MIN {
        return None;
    }
    let t = trend(values, Z95)?;
    let one_way = if values.len() < 5 {
        let up = values.windows(2).all(|w| w[1] > w[0]);
        let down = values.windows(2).all(|w| w[1] < w[0]);
        up || down
    } else {
        t.significant()
    };
    (one_way && t.change().abs() >= REPEATS_MIN_CHANGE).then_some(t)
}

/// How many trailing seconds the steady rule looks at for a measured window of
/// `window_secs` (`None`: bounded by a request count): as many as the window holds, at least
/// [`MIN_STEADY_SECONDS`] and at most [`MAX_STEADY_SECONDS`], so that the warm-up ends when a
/// window as long as the one to be measured would not trend; [`MIN_STEADY_SECONDS`] without a
/// duration.
pub fn steady_seconds(window_secs: Option<f64>) -> usize {
    window_secs.map_or(MIN_STEADY_SECONDS, |w| {
        (w.ceil() as usize).clamp(MIN_STEADY_SECONDS, MAX_STEADY_SECONDS)
    })
}

/// Whether the last `seconds` figures of `series` (one a second, oldest first) are steady:
/// the slope's 95 % interval includes 0 and the change over them is below
/// [`STEADY_MAX_CHANGE`] either way. `None` with fewer figures, else the verdict and the trend
/// of those seconds.
pub fn trailing_steady(series: &[f64], seconds: usize) -> Option<(bool, Trend)> {
    let tail = series.get(series.len().checked_sub(seconds.max(2))?..)?;
    let t = trend(tail, Z95)?;
    Some((!t.significant() && t.change().abs() < STEADY_MAX_CHANGE, t))
}

/// The stop rule of a steady warm-up, fed one figure a second: steady once
/// [`trailing_steady`] has held for [`STEADY_CHECKS`] seconds running.
#[derive(Clone, Debug)]
pub struct WarmupRule {
    seconds: usize,
    series: Vec<f64>,
    run: usize,
    last: Option<Trend>,
}

impl WarmupRule {
    /// A rule that looks at the trailing `seconds` (see [`steady_seconds`]).
    pub fn new(seconds: usize) -> Self {
        WarmupRule {
            seconds,
            series: Vec::new(),
            run: 0,
            last: None,
        }
    }

    /// Adds the figure of the second just ended; returns whether the warm-up may end.
    pub fn push(&mut self, figure: f64) -> bool {
        self.series.push(figure);
        match trailing_steady(&self.series, self.seconds) {
            Some((steady, t)) => {
                self.last = Some(t);
                self.run = if steady { self.run + 1 } else { 0 };
            }
            None => self.run = 0,
        }
        self.run >= STEADY_CHECKS
    }

    /// The trend of the trailing seconds at the last check, if there was one.
    pub fn last(&self) -> Option<Trend> {
        self.last
    }

    /// The trailing seconds the rule looks at.
    pub fn seconds(&self) -> usize {
        self.seconds
    }
}

/// After how many seconds of `series` a [`WarmupRule`] of `seconds` ends the warm-up; `None`
/// when it does not within the series.
pub fn steady_after(series: &[f64], seconds: usize) -> Option<usize> {
    let mut rule = WarmupRule::new(seconds);
    series.iter().position(|x| rule.push(*x)).map(|i| i + 1)
}

#[cfg(test)]
#[path = "steady_tests.rs"]
mod tests;
