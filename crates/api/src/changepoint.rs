//! Offline changepoint detection over a benchmark cell's series of runs.
//!
//! Scheduled runs give, for each measured cell, one number per run (for
//! example the throughput median of run 1..N). A regression that arrives as a
//! slow drift or as a single step, with every run within tolerance of the one
//! before, is invisible to run-to-run comparison. [`changepoints`] finds where
//! the level of the series changed and how large each step was.
//!
//! Method: the series is split into segments of constant mean by minimising
//! the Gaussian cost (sum of squared deviations from each segment's mean,
//! divided by the noise variance) plus a fixed penalty for every changepoint.
//! The minimum is found exactly with PELT (pruned exact linear time, Killick
//! et al. 2012), with every segment at least `min_segment` points long.
//!
//! The noise level comes from the series itself, in two passes. The first
//! pass uses the median absolute deviation of first differences, which a step
//! or a drift barely moves. The second pass uses the pooled standard
//! deviation within the segments the first pass found, which is much less
//! noisy; a single wild run inflates it, which makes the detector more
//! cautious rather than less. The penalty is `penalty * ln(n)` noise
//! variances per changepoint (`n` at least 20: short series get the penalty of 20
//! points), a BIC-like penalty made stricter than plain BIC (2 ln n) so that flat series stay
//! quiet at every length.
//!
//! What it reports for a slow drift: a staircase. A linear drift has no single
//! changepoint, so the detector splits it into a few segments of rising (or
//! falling) mean, each change at least `min_segment` runs from the next, with
//! steps of roughly the drift per run times the segment length.
//!
//! Limits: a step in the newest `min_segment - 1` runs or fewer is never
//! reported at its own index. A single wild newest run is absorbed, but if
//! two or three of the newest runs jump far, the jump shows up as a change
//! at `len - min_segment`, the latest index allowed, with the mean of the
//! newest `min_segment` runs as `after` (so a smaller step than the real one).
//! Callers may treat a change at `len - min_segment` as provisional.
//! The input must be finite: a series holding a NaN or an infinity is
//! rejected and gives no changepoints.

/// Settings for [`changepoints`]. The defaults suit benchmark series and need
/// no tuning per series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// The fewest points a segment may hold. No changepoint is ever reported
    /// among the first or the last `min_segment` points, so fewer than
    /// `min_segment` newest runs never form a segment of their own. Values
    /// below 1 count as 1. Default: 4.
    pub min_segment: usize,
    /// The smallest relative step worth reporting, as a fraction of the level
    /// before it (0.02 means 2 %). Smaller steps are merged away even when
    /// they are statistically clear. Default: 0.02.
    pub min_step: f64,
    /// The cost of one changepoint, in multiples of `ln(n)` noise variances,
    /// where `n` is the length of the series. Plain BIC would be 2; larger
    /// values make the detector quieter. Default: 3.5, which keeps more than
    /// 97 % of flat Gaussian series of 8 to 200 points free of changepoints.
    pub penalty: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            min_segment: 4,
            min_step: 0.02,
            penalty: 3.5,
        }
    }
}

/// One change in the level of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Index of the first point of the new segment (0-based).
    pub index: usize,
    /// Mean of the segment that ends just before `index`.
    pub before: f64,
    /// Mean of the segment that starts at `index`.
    pub after: f64,
    /// Relative size of the step, `after / before - 1`, signed so that a rise
    /// is positive (it divides by `|before|`, and is infinite if `before` is 0).
    pub step: f64,
}

/// Finds the changes in level of `series`, oldest first.
///
/// The result is deterministic and depends only on its inputs. Every reported
/// change has `min_segment <= index <= series.len() - min_segment`. A series
/// shorter than `2 * min_segment`, a constant series, and a series holding a
/// NaN or an infinity all give an empty result. Values are expected to be
/// positive levels such as throughputs or latencies; `step` is relative to
/// the level before the change.
#[must_use]
pub fn changepoints(series: &[f64], opts: &Options) -> Vec<Change> {
    let m = opts.min_segment.max(1);
    let n = series.len();
    if n < 2 * m || series.iter().any(|x| !x.is_finite()) {
        return Vec::new();
    }
    let Some(first_sigma) = noise_sigma(series) else {
        return Vec::new();
    };
    let first = with_sigma(series, opts, first_sigma);
    let sigma = pooled_sigma(series, &first).unwrap_or(first_sigma);
    with_sigma(series, opts, sigma)
}

/// Series shorter than this are penalised as if they had this length: with a handful of
/// points the noise estimate rests on two or three differences and is often far too small,
/// and `ln(n)` alone let one flat series in 14 of 4 points show a change (minimum segment 2,
/// 3 % noise). A step large enough to matter in so few runs still clears the higher bar.
const SHORT: usize = 20;

/// Segments a finite series of length at least `2 * min_segment` with a given
/// noise standard deviation.
fn with_sigma(series: &[f64], opts: &Options, sigma: f64) -> Vec<Change> {
    let m = opts.min_segment.max(1);
    let n = series.len();
    let center = median(series.to_vec());
    let z: Vec<f64> = series.iter().map(|x| (x - center) / sigma).collect();
    let beta = opts.penalty.max(0.0) * (n.max(SHORT) as f64).ln();
    let mut cuts = pelt(&z, m, beta);

    // Drop steps too small to matter, smallest first, merging their segments.
    loop {
        let changes = describe(series, &cuts);
        let smallest = changes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.step.abs() < opts.min_step)
            .min_by(|a, b| a.1.step.abs().total_cmp(&b.1.step.abs()));
        match smallest {
            Some((k, _)) => {
                cuts.remove(k);
            }
            None => return changes,
        }
    }
}

/// Pooled standard deviation within the segments that `changes` delimit,
/// with one degree of freedom per segment mean. `None` if no degree of
/// freedom is left.
fn pooled_sigma(x: &[f64], changes: &[Change]) -> Option<f64> {
    let mut bounds = vec![0];
    bounds.extend(changes.iter().map(|c| c.index));
    bounds.push(x.len());
    let dof = x.len().checked_sub(bounds.len() - 1).filter(|&d| d > 0)?;
    let rss: f64 = bounds
        .windows(2)
        .map(|w| {
            let seg = &x[w[0]..w[1]];
            let mean = seg.iter().sum::<f64>() / seg.len() as f64;
            seg.iter().map(|v| (v - mean).powi(2)).sum::<f64>()
        })
        .sum();
    Some(floor((rss / dof as f64).sqrt(), x))
}

/// Keeps noise-free data (a perfect ramp or staircase) from dividing by zero.
fn floor(sigma: f64, x: &[f64]) -> f64 {
    let scale = x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    sigma.max(scale * 1e-9).max(f64::MIN_POSITIVE)
}

/// Robust noise standard deviation: MAD of first differences, scaled.
/// Returns `None` for a constant series.
fn noise_sigma(x: &[f64]) -> Option<f64> {
    let d: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    let k = d.len() as f64;
    let med = median(d.clone());
    let mad = median(d.iter().map(|v| (v - med).abs()).collect());
    // 1.4826 makes the MAD consistent for a normal sd; k / (k - 0.8) is the
    // small-sample correction of Croux and Rousseeuw; differences of
    // independent noise have sd sqrt(2) * sigma.
    let mut sigma = 1.4826 * mad * k / (k - 0.8).max(0.2) / std::f64::consts::SQRT_2;
    if sigma <= 0.0 {
        // More than half the differences are equal (quantised or stepwise
        // data): fall back on the ordinary sd of the differences.
        let mean = d.iter().sum::<f64>() / k;
        let var = d.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / k;
        sigma = (var / 2.0).sqrt();
    }
    let first = x[0];
    if x.iter().all(|&v| v == first) {
        return None;
    }
    Some(floor(sigma, x))
}

/// Median of the values (mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Prefix sums of values and squares, for O(1) segment costs.
struct Prefix {
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl Prefix {
    fn new(z: &[f64]) -> Self {
        let mut s1 = vec![0.0; z.len() + 1];
        let mut s2 = vec![0.0; z.len() + 1];
        for (i, v) in z.iter().enumerate() {
            s1[i + 1] = s1[i] + v;
            s2[i + 1] = s2[i] + v * v;
        }
        Prefix { s1, s2 }
    }

    /// Sum of squared deviations from the mean over `z[a..b]`.
    fn cost(&self, a: usize, b: usize) -> f64 {
        let s = self.s1[b] - self.s1[a];
        ((self.s2[b] - self.s2[a]) - s * s / (b - a) as f64).max(0.0)
    }
}

/// PELT with a minimum segment length. Returns the sorted changepoints (the
/// first index of each new segment).
///
/// Pruning with a minimum segment length needs care: a candidate `s` that is
/// beaten at time `t` (`F[s] + C(s, t) > F[t]`) is only sure to stay beaten
/// once `t` itself becomes a candidate, at `t + m`; it is kept until then.
fn pelt(z: &[f64], m: usize, beta: f64) -> Vec<usize> {
    let n = z.len();
    let p = Prefix::new(z);
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    let mut drop_at = vec![usize::MAX; n + 1];
    f[0] = -beta;
    let mut cands: Vec<usize> = vec![0];
    for t in m..=n {
        let new = t - m;
        if new >= m {
            cands.push(new);
        }
        cands.retain(|&s| drop_at[s] > t);
        let mut best = f64::INFINITY;
        let mut arg = 0;
        for &s in &cands {
            let v = f[s] + p.cost(s, t) + beta;
            if v < best {
                best = v;
                arg = s;
            }
        }
        f[t] = best;
        last[t] = arg;
        let slack = 1e-9 * (1.0 + best.abs());
        for &s in &cands {
            if drop_at[s] == usize::MAX && f[s] + p.cost(s, t) > best + slack {
                drop_at[s] = t + m;
            }
        }
    }
    backtrack(&last)
}

/// The changepoints of the best segmentation, from `last[t]` (the start of the last segment
/// of the best split of the first `t` points), in increasing order.
fn backtrack(last: &[usize]) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut t = last[last.len() - 1];
    while t > 0 {
        cuts.push(t);
        t = last[t];
    }
    cuts.reverse();
    cuts
}

/// Turns changepoints into [`Change`]s using the mean of each segment.
fn describe(x: &[f64], cuts: &[usize]) -> Vec<Change> {
    let mut bounds = Vec::with_capacity(cuts.len() + 2);
    bounds.push(0);
    bounds.extend_from_slice(cuts);
    bounds.push(x.len());
    let means: Vec<f64> = bounds
        .windows(2)
        .map(|w| x[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64)
        .collect();
    cuts.iter()
        .enumerate()
        .map(|(k, &index)| {
            let (before, after) = (means[k], means[k + 1]);
            let step = if after == before {
                0.0
            } else {
                (after - before) / before.abs()
            };
            Change {
                index,
                before,
                after,
                step,
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "changepoint_tests.rs"]
mod tests;
