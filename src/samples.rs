//! Resource figures of one measured window from raw Prometheus samples.
//!
//! Pure: numbers in, numbers out. The samples are the raw points of each series around the
//! window (a range selector evaluated as an instant query), stamped with the time cAdvisor took
//! them, which on a kubelet with its defaults is every 10–20 s — often less than two per short
//! window, so nothing here relies on `rate()`, which extrapolates over its range.
//!
//! A counter (CPU seconds, CFS periods) is read as a piecewise-linear function of time through
//! its samples, after undoing resets (a value below the one before means the counter restarted
//! from zero). Its increase over the window is its value at the window's end minus its value at
//! the window's start, summed over the series; the average is that increase over the window's
//! length. The edges are estimated like this:
//!
//! - An interval between two samples that straddles an edge mixes time inside and outside the
//!   window, and outside it the load is usually off (before the warm-up, after the end). Its
//!   inside part therefore gets the rate of the nearest interval lying wholly inside the
//!   window; when there is none (a single sample inside), the higher of the two straddling
//!   rates. Either way the part never gains more than its whole interval did, so the counter
//!   never passes its next sample.
//! - A series without a sample before the window started inside it (a restarted container):
//!   its counter counts from zero at the window's start. A series without a sample after the
//!   window while other series have one stopped inside it: it stays at its last value. When no
//!   series has a sample after the window yet, the last rate inside is carried to the end.
//!
//! The summed function is piecewise linear with a knot at every series' sample, so the window
//! splits into intervals of constant summed rate; the peak is the highest of them and the
//! average their time-weighted mean — the peak is never below the average.

/// Raw samples of one series: `(unix seconds, value)`, in ascending time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// The points, ascending by time.
    pub points: Vec<(f64, f64)>,
    /// The series' `pod` label (empty when it has none).
    pub pod: String,
}

/// The measured window in unix seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    /// Window start.
    pub start: f64,
    /// Window end (after `start`).
    pub end: f64,
}

impl Span {
    /// Length in seconds.
    pub fn secs(&self) -> f64 {
        self.end - self.start
    }

    fn contains(&self, t: f64) -> bool {
        (self.start..=self.end).contains(&t)
    }
}

/// A counter's figures over the window, summed over its series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CounterFigures {
    /// Increase from window start to window end.
    pub increase: f64,
    /// Increase per second over the window.
    pub avg: f64,
    /// Highest summed rate between consecutive knots within the window (≥ `avg`).
    pub peak: f64,
    /// Fewest samples inside the window of any series that existed before the window (all
    /// series when none did).
    pub samples: usize,
}

/// A gauge's figures from its samples inside the window, summed over its series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaugeFigures {
    /// Mean of the summed values at the sample times inside the window.
    pub avg: f64,
    /// Highest summed value at a sample time inside the window.
    pub peak: f64,
    /// Samples inside the window over all series.
    pub samples: usize,
}

/// The counter's values with resets undone: each drop is taken as a restart from zero.
fn unreset(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(points.len());
    for &(t, v) in points {
        let adjusted = match out.last() {
            None => v,
            Some(&(_, prev_adj)) => {
                let prev_raw = points[out.len() - 1].1;
                prev_adj + if v >= prev_raw { v - prev_raw } else { v }
            }
        };
        out.push((t, adjusted));
    }
    out
}

fn rate(a: (f64, f64), b: (f64, f64)) -> f64 {
    if b.0 > a.0 {
        (b.1 - a.1) / (b.0 - a.0)
    } else {
        0.0
    }
}

/// Value of a piecewise-linear function (knots ascending, `t` within their span).
fn at(knots: &[(f64, f64)], t: f64) -> f64 {
    let i = knots.partition_point(|k| k.0 < t);
    match (i.checked_sub(1).map(|j| knots[j]), knots.get(i)) {
        (_, Some(&b)) if b.0 == t => b.1,
        (Some(a), Some(&b)) => a.1 + rate(a, b) * (t - a.0),
        (Some(a), None) => a.1,
        (None, Some(&b)) => b.1,
        (None, None) => 0.0,
    }
}

/// The knots of one series' counter over the window, from `span.start` to `span.end`; `None`
/// when the series has no point in or around it.
/// `data_after_end` tells whether any series has a sample after the window.
fn counter_knots(s: &Series, span: Span, data_after_end: bool) -> Option<Vec<(f64, f64)>> {
    let p = unreset(&s.points);
    let first_in = p.partition_point(|q| q.0 < span.start);
    let after_in = p.partition_point(|q| q.0 <= span.end);
    let before = first_in.checked_sub(1).map(|i| p[i]);
    let after = p.get(after_in).copied();
    let inside = &p[first_in..after_in];
    let (Some(&a), Some(&b)) = (inside.first(), inside.last()) else {
        // No sample inside: only a straddling interval can say anything (plain interpolation).
        let (x, y) = (before?, after?);
        let knots = vec![
            (span.start, at(&[x, y], span.start)),
            (span.end, at(&[x, y], span.end)),
        ];
        return Some(knots);
    };
    let n = inside.len();
    // With a single sample inside: the higher of the two straddling rates.
    let fallback = [before.map(|x| rate(x, a)), after.map(|y| rate(b, y))]
        .into_iter()
        .flatten()
        .fold(0.0, f64::max);
    let start_value = match before {
        None => 0.0,
        Some(x) => {
            let r = if n >= 2 {
                rate(inside[0], inside[1])
            } else {
                fallback
            };
            let gained = (r.max(0.0) * (a.0 - span.start)).min(a.1 - x.1);
            a.1 - gained
        }
    };
    let end_value = match after {
        Some(y) => {
            let r = if n >= 2 {
                rate(inside[n - 2], b)
            } else {
                fallback
            };
            b.1 + (r.max(0.0) * (span.end - b.0)).min(y.1 - b.1)
        }
        None if data_after_end => b.1,
        None => {
            let r = if n >= 2 {
                rate(inside[n - 2], b)
            } else {
                fallback
            };
            b.1 + r.max(0.0) * (span.end - b.0)
        }
    };
    let mut knots = Vec::with_capacity(n + 2);
    if a.0 > span.start {
        knots.push((span.start, start_value));
    }
    knots.extend_from_slice(inside);
    if b.0 < span.end {
        knots.push((span.end, end_value));
    }
    Some(knots)
}

/// Fewest samples inside the window of any series that covers it (has a sample inside, or
/// samples on both sides) and existed before it; of all covering series when none existed
/// before (the window started with the containers). 0 when the window fell between two samples
/// of such a series; `None` when no series covers the window. The count [`counter`] reports,
/// also when it has no figures.
pub fn fewest_samples(series: &[Series], span: Span) -> Option<usize> {
    let (mut fewest_old, mut fewest_any) = (None::<usize>, None::<usize>);
    for s in series {
        let inside = s.points.iter().filter(|p| span.contains(p.0)).count();
        let before = s.points.first().is_some_and(|p| p.0 < span.start);
        let after = s.points.last().is_some_and(|p| p.0 > span.end);
        if inside == 0 && !(before && after) {
            continue;
        }
        if before {
            fewest_old = Some(fewest_old.map_or(inside, |f| f.min(inside)));
        }
        fewest_any = Some(fewest_any.map_or(inside, |f| f.min(inside)));
    }
    fewest_old.or(fewest_any)
}

/// A counter's increase, average and peak rate over the window, summed over its series.
/// `None` when some series that existed before the window has no sample inside it (the window
/// fell between two of its samples), or no series has one.
pub fn counter(series: &[Series], span: Span) -> Option<CounterFigures> {
    if span.secs() <= 0.0 {
        return None;
    }
    let data_after_end = series
        .iter()
        .any(|s| s.points.last().is_some_and(|p| p.0 > span.end));
    let samples = fewest_samples(series, span)?;
    let all: Vec<Vec<(f64, f64)>> = series
        .iter()
        .filter_map(|s| counter_knots(s, span, data_after_end))
        .collect();
    if samples == 0 {
        // The window fell between two samples of some series: nothing was sampled in it.
        return None;
    }
    let mut times: Vec<f64> = all.iter().flatten().map(|k| k.0).collect();
    times.push(span.start);
    times.push(span.end);
    times.sort_by(f64::total_cmp);
    times.dedup();
    let sums: Vec<(f64, f64)> = times
        .iter()
        .map(|&t| (t, all.iter().map(|k| at(k, t)).sum()))
        .collect();
    let increase = sums.last()?.1 - sums.first()?.1;
    let avg = increase / span.secs();
    let peak = sums
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| rate(w[0], w[1]))
        .fold(f64::NEG_INFINITY, f64::max);
    Some(CounterFigures {
        increase,
        avg,
        // Equal to the largest interval rate: the average is their weighted mean. `max`
        // only absorbs floating-point rounding.
        peak: peak.max(avg),
        samples,
    })
}

/// A gauge's average and peak from its samples inside the window, summed over its series at
/// every sample time (a series counts between its first and last sample, linearly
/// interpolated, and as zero outside them). `None` without a sample inside.
pub fn gauge(series: &[Series], span: Span) -> Option<GaugeFigures> {
    let mut times: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|t| span.contains(*t))
        .collect();
    let samples = times.len();
    times.sort_by(f64::total_cmp);
    times.dedup();
    if times.is_empty() {
        return None;
    }
    let value = |s: &Series, t: f64| match (s.points.first(), s.points.last()) {
        (Some(f), Some(l)) if f.0 <= t && t <= l.0 => at(&s.points, t),
        _ => 0.0,
    };
    let sums: Vec<f64> = times
        .iter()
        .map(|&t| series.iter().map(|s| value(s, t)).sum())
        .collect();
    Some(GaugeFigures {
        avg: sums.iter().sum::<f64>() / sums.len() as f64,
        peak: sums.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        samples,
    })
}

/// Largest spacing in seconds between consecutive samples of any series, over the intervals
/// that overlap the window (over all intervals when none does). `None` without two samples.
pub fn sample_interval(series: &[Series], span: Span) -> Option<f64> {
    let gaps = |overlapping: bool| {
        series
            .iter()
            .flat_map(|s| s.points.windows(2))
            .filter(move |w| !overlapping || (w[1].0 >= span.start && w[0].0 <= span.end))
            .map(|w| w[1].0 - w[0].0)
            .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))))
    };
    gaps(true).or_else(|| gaps(false))
}

/// The shortest window, in whole seconds, that holds at least `samples` samples wherever it
/// falls, when samples come every `interval` seconds.
pub fn min_window_secs(interval: f64, samples: usize) -> u64 {
    (interval * samples as f64).ceil().max(1.0) as u64
}

#[cfg(test)]
#[path = "samples_tests.rs"]
mod tests;
