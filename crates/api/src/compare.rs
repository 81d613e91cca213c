//! Comparisons with their uncertainty: is A faster than B, by how much, and how sure is that?
//! Pure statistics, no I/O: the operator writes `status.comparisons[]` with them and the
//! `kubectl benchrun` plugin and the docs generator read them back.
//!
//! **The unit of replication is the repeat.** Each measured window gives one value per side
//! (its throughput, its p99, the coefficient of variation of its per-second throughput). The
//! seconds inside one window are not independent samples: a JIT, a GC or a noisy neighbour
//! shifts whole windows, so a test over seconds (as the Mann-Whitney verdict of earlier
//! operators did) is sure of differences that the next run does not repeat.
//!
//! **The interval.** A ratio of two positive quantities is compared on the log scale, where it
//! is a difference and where multiplicative noise (a window 10 % slow) is symmetric: with
//! `x̄`, `s²` and `n` the mean, variance and count of the logs of each side's per-repeat
//! values, `d = x̄_c − x̄_r`, `se = √(s_c²/n_c + s_r²/n_r)` and the Welch–Satterthwaite degrees
//! of freedom `ν = se⁴ / ((s_c²/n_c)²/(n_c−1) + (s_r²/n_r)²/(n_r−1))`, the ratio is `e^d` and
//! its `1 − α` interval `e^(d ± t(1−α/2, ν)·se)`. Welch's t rather than a bootstrap: with 3 to
//! 10 repeats a bootstrap's resamples take only a handful of distinct values and its interval
//! is too narrow (a percentile bootstrap over 3 values covers far less than 95 %), while the
//! t interval keeps its coverage at any count from 2 up when the logs are roughly normal
//! (unit tests simulate 1 000 experiments to check it), is exact to compute (deterministic,
//! no seed) and allows the two sides different spreads.
//!
//! **The verdict.** With tolerance `τ` the margin is `[1/(1+τ), 1+τ]`, symmetric on the log
//! scale. `Faster`/`Slower` when the whole 95 % interval lies outside the margin on one side
//! (the direction says which is better); `Equivalent` when the whole 90 % interval lies
//! inside it — the two one-sided tests (TOST) of equivalence, each at 5 %; `Inconclusive`
//! otherwise. Both cannot hold at once (the 90 % interval lies inside the 95 % one).
//!
//! **Errors** are counts, not repeats: Fisher's exact test on the 2×2 table of errors and
//! successful requests of each side (exact for any counts, zero included).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::function::factorial::ln_binomial;

pub use crate::vocab::ComparisonVerdict;

/// Confidence of the intervals shown (and of the `Faster`/`Slower` verdict).
pub const CONFIDENCE: f64 = 0.95;
/// Confidence of the equivalence interval: two one-sided tests at 5 % each.
pub const EQUIVALENCE_CONFIDENCE: f64 = 0.90;
/// Significance of the error-rate test: a run compares many cells, each a chance of a false
/// alarm, and request counts make tiny differences significant.
pub const ERROR_ALPHA: f64 = 0.01;
/// Smallest difference of error rates that counts (0.1 percentage points), however
/// significant: with millions of requests, 10 errors against 30 is significant and harmless.
pub const MIN_ERROR_RATE_DIFFERENCE: f64 = 0.001;
/// Tolerance of the spread comparison: the per-second coefficient of variation must grow by
/// more than this (its 95 % interval wholly above `1 + 0.25`) to be flagged. Per-second CVs are
/// noisier than throughputs; a doubled variance is a CV 1.41 times as large.
pub const SPREAD_TOLERANCE: f64 = 0.25;
/// The power [`power`] aims at when it says how many repeats are needed.
pub const TARGET_POWER: f64 = 0.8;
/// Most repeats per side [`power`] names; beyond it the answer is "more than this".
pub const MAX_REPEATS_NEEDED: u32 = 1000;

/// A ratio candidate / reference with its 95 % interval and what it says against the
/// tolerance.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RatioEstimate {
    /// Candidate over reference: the ratio of the geometric means of the per-repeat values
    /// (1.21 = 21 % more).
    pub ratio: f64,
    /// Lower end of the 95 % interval of the ratio (Welch's t on the logs).
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
    /// `Faster`, `Slower`, `Equivalent` or `Inconclusive` (see `docs/metrics.md`).
    pub verdict: ComparisonVerdict,
}

/// Candidate against reference on the spread of the per-second throughput inside the windows:
/// a change of variance that leaves the mean alone (a canary whose variance doubled).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadEstimate {
    /// Mean over the candidate's repeats of the per-second coefficient of variation.
    pub candidate_cv: f64,
    /// The same for the reference.
    pub reference_cv: f64,
    /// The ratio of the CVs with its 95 % interval, lower is better, at a tolerance of 25 %.
    pub ratio: RatioEstimate,
    /// `true` when the spread grew beyond that tolerance (`ratio.verdict` is `Slower`).
    pub increased: bool,
}

/// Candidate against reference on the error rate: Fisher's exact test on the errors and the
/// successful requests of all repeats of each side.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorRateEstimate {
    /// Errors over requests of the candidate (0.01 = 1 %).
    pub candidate_rate: f64,
    /// The same for the reference.
    pub reference_rate: f64,
    /// Two-sided p-value of Fisher's exact test (1 when neither side had an error).
    pub p_value: f64,
    /// `Slower` (more errors) or `Faster` (fewer) when p < 0.01 and the rates differ by at
    /// least 0.1 percentage points; `Equivalent` when neither side had an error;
    /// `Inconclusive` otherwise.
    pub verdict: ComparisonVerdict,
}

/// How likely the repeats were to see a change as large as the tolerance, and how many would
/// make that likely.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PowerEstimate {
    /// The chance that a true change of exactly the tolerance would have given a 95 % interval
    /// excluding 1.0, at the spread observed and the repeats used (0–1).
    pub power: f64,
    /// Repeats per side for 80 % power at the spread observed (at most 1000; 1000 means
    /// "at least that many").
    pub repeats_needed: u32,
}

/// The logs of the positive, finite values: the values a ratio can be taken of.
fn logs(xs: &[f64]) -> Vec<f64> {
    xs.iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .map(|x| x.ln())
        .collect()
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Welch's difference of the log means: `d`, its standard error and degrees of freedom.
struct LogDifference {
    d: f64,
    se: f64,
    df: f64,
}

impl LogDifference {
    fn of(candidate: &[f64], reference: &[f64]) -> Option<Self> {
        let (c, r) = (logs(candidate), logs(reference));
        if c.len() < 2 || r.len() < 2 {
            return None;
        }
        let ((mc, vc), (mr, vr)) = (mean_var(&c), mean_var(&r));
        let (nc, nr) = (c.len() as f64, r.len() as f64);
        let (ac, ar) = (vc / nc, vr / nr);
        let se = (ac + ar).sqrt();
        let denom = ac * ac / (nc - 1.0) + ar * ar / (nr - 1.0);
        let df = if denom > 0.0 {
            (ac + ar).powi(2) / denom
        } else {
            nc + nr - 2.0
        };
        Some(LogDifference { d: mc - mr, se, df })
    }

    /// The `confidence` interval of `d`.
    fn interval(&self, confidence: f64) -> (f64, f64) {
        let h = t_quantile(1.0 - (1.0 - confidence) / 2.0, self.df) * self.se;
        (self.d - h, self.d + h)
    }

    /// Two-sided p-value of `d = 0`.
    fn p_value(&self) -> f64 {
        if self.se == 0.0 {
            return if self.d == 0.0 { 1.0 } else { 0.0 };
        }
        let t = StudentsT::new(0.0, 1.0, self.df).expect("df > 0");
        (2.0 * t.sf((self.d / self.se).abs())).clamp(0.0, 1.0)
    }
}

fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df.max(1e-9))
        .map(|t| t.inverse_cdf(p))
        .unwrap_or(f64::INFINITY)
}

/// Candidate over reference from their per-repeat values (one per measured window, e.g. each
/// repeat's throughput), with the 95 % interval of the ratio and the verdict against
/// `tolerance` (0.05 = 5 %). `higher_is_better` says which way is `Faster`: true for
/// throughput, false for latency. Values that are not positive and finite are left out (a
/// ratio needs them); `None` when either side has fewer than 2 left.
pub fn compare_repeats(
    candidate: &[f64],
    reference: &[f64],
    tolerance: f64,
    higher_is_better: bool,
) -> Option<RatioEstimate> {
    let diff = LogDifference::of(candidate, reference)?;
    let (low, high) = diff.interval(CONFIDENCE);
    let (elow, ehigh) = diff.interval(EQUIVALENCE_CONFIDENCE);
    let margin = tolerance.max(0.0).ln_1p();
    let verdict = if low > margin || high < -margin {
        // Above the margin: the candidate's value is larger.
        if (low > margin) == higher_is_better {
            ComparisonVerdict::Faster
        } else {
            ComparisonVerdict::Slower
        }
    } else if elow >= -margin && ehigh <= margin {
        ComparisonVerdict::Equivalent
    } else {
        ComparisonVerdict::Inconclusive
    };
    Some(RatioEstimate {
        ratio: diff.d.exp(),
        low: low.exp(),
        high: high.exp(),
        verdict,
    })
}

/// Two-sided p-value of Welch's t test that the ratio of the per-repeat values is 1 (on the
/// logs); `None` when either side has fewer than 2 positive values.
pub fn ratio_p_value(candidate: &[f64], reference: &[f64]) -> Option<f64> {
    LogDifference::of(candidate, reference).map(|d| d.p_value())
}

/// The spread of the per-second throughput: each side's per-repeat coefficients of variation
/// compared like [`compare_repeats`], lower is better, at [`SPREAD_TOLERANCE`]; `increased`
/// flags a spread that grew beyond it whatever the mean did. `None` with fewer than 2 CVs on
/// a side.
pub fn compare_spread(candidate_cv: &[f64], reference_cv: &[f64]) -> Option<SpreadEstimate> {
    let ratio = compare_repeats(candidate_cv, reference_cv, SPREAD_TOLERANCE, false)?;
    let mean = |xs: &[f64]| {
        let l = logs(xs);
        l.iter().map(|x| x.exp()).sum::<f64>() / l.len() as f64
    };
    Some(SpreadEstimate {
        candidate_cv: mean(candidate_cv),
        reference_cv: mean(reference_cv),
        increased: ratio.verdict == ComparisonVerdict::Slower,
        ratio,
    })
}

/// Fisher's exact test of the error counts: `errors` of `requests` on each side (all repeats
/// together). Exact for small and zero counts. `None` when a side sent no request or counts
/// more errors than requests.
pub fn compare_error_rates(
    candidate_errors: u64,
    candidate_requests: u64,
    reference_errors: u64,
    reference_requests: u64,
) -> Option<ErrorRateEstimate> {
    if candidate_requests == 0
        || reference_requests == 0
        || candidate_errors > candidate_requests
        || reference_errors > reference_requests
    {
        return None;
    }
    // Rows are the sides, columns errors and successes: the test's hypergeometric runs over
    // the (few) errors, not over the requests.
    let table = [
        candidate_errors,
        candidate_requests - candidate_errors,
        reference_errors,
        reference_requests - reference_errors,
    ];
    let p_value = fisher_two_sided(table);
    let candidate_rate = candidate_errors as f64 / candidate_requests as f64;
    let reference_rate = reference_errors as f64 / reference_requests as f64;
    let differs = p_value < ERROR_ALPHA
        && (candidate_rate - reference_rate).abs() >= MIN_ERROR_RATE_DIFFERENCE;
    let verdict = if differs && candidate_rate > reference_rate {
        ComparisonVerdict::Slower
    } else if differs {
        ComparisonVerdict::Faster
    } else if candidate_errors == 0 && reference_errors == 0 {
        ComparisonVerdict::Equivalent
    } else {
        ComparisonVerdict::Inconclusive
    };
    Some(ErrorRateEstimate {
        candidate_rate,
        reference_rate,
        p_value,
        verdict,
    })
}

/// Two-sided p-value of Fisher's exact test of the 2×2 table `[a, b, c, d]` (rows: the sides;
/// columns: errors, successes): the probability, with the margins fixed, of every table no
/// more likely than this one. Summed in log space over the hypergeometric support of `a`
/// within 40 standard deviations of its mean (beyond that a term is below e⁻⁸⁰⁰).
/// Hand-written rather than statrs's `fishers_exact`, which takes a tail as `1 − cdf` and so
/// loses it to cancellation: for 120 errors in 100 000 requests against none it returns 0.46
/// (the exact value is about 10⁻³⁶).
fn fisher_two_sided([a, b, c, d]: [u64; 4]) -> f64 {
    let (row, other_row, col) = (a + b, c + d, a + c);
    let total = row + other_row;
    if col == 0 || col == total {
        return 1.0;
    }
    let ln_p =
        |x: u64| ln_binomial(row, x) + ln_binomial(other_row, col - x) - ln_binomial(total, col);
    let lo = col.saturating_sub(other_row);
    let hi = col.min(row);
    let (n, k, big) = (col as f64, row as f64, total as f64);
    let mean = n * k / big;
    let sd = (n * k / big * (1.0 - k / big) * (big - n) / (big - 1.0).max(1.0)).sqrt();
    let from = lo.max((mean - 40.0 * sd - 1.0).max(0.0) as u64);
    let to = hi.min((mean + 40.0 * sd + 1.0) as u64);
    let observed = ln_p(a) + 1e-7;
    let mut p: f64 = (from..=to)
        .map(ln_p)
        .filter(|&l| l <= observed)
        .map(f64::exp)
        .sum();
    if !(from..=to).contains(&a) {
        p += ln_p(a).exp();
    }
    p.clamp(0.0, 1.0)
}

/// The power to detect a change of `tolerance` from the spread of the per-repeat values: the
/// chance that a true ratio of `1 + tolerance` would give a 95 % interval excluding 1.0 with the
/// repeats used, and the repeats per side that would make that chance [`TARGET_POWER`] (the
/// spread of both sides taken as observed). `None` with fewer than 2 values on a side.
pub fn power(candidate: &[f64], reference: &[f64], tolerance: f64) -> Option<PowerEstimate> {
    let diff = LogDifference::of(candidate, reference)?;
    let effect = tolerance.max(0.0).ln_1p();
    let at = |se: f64, df: f64| {
        if se == 0.0 {
            return 1.0;
        }
        let t = StudentsT::new(0.0, 1.0, df.max(1e-9)).expect("df > 0");
        let crit = t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0);
        // The shifted central t: the usual approximation of the noncentral one.
        t.sf(crit - effect / se) + t.cdf(-crit - effect / se)
    };
    let power = at(diff.se, diff.df);
    let (c, r) = (logs(candidate), logs(reference));
    let spread = mean_var(&c).1 + mean_var(&r).1;
    let repeats_needed = (2..=MAX_REPEATS_NEEDED)
        .find(|&n| at((spread / f64::from(n)).sqrt(), f64::from(2 * n - 2)) >= TARGET_POWER)
        .unwrap_or(MAX_REPEATS_NEEDED);
    Some(PowerEstimate {
        power,
        repeats_needed,
    })
}

/// The verdict of a comparison over its parts: `Slower` when any part is worse beyond its
/// tolerance (throughput, p99, errors, or a spread that grew), `Faster` when some part is
/// better and none worse, `Equivalent` when throughput is equivalent and no part is better or
/// worse (a p99 the repeats cannot tell does not hold the headline back: per-repeat p99s are
/// far noisier than throughputs), `Inconclusive` otherwise (also without a throughput
/// estimate).
pub fn overall_verdict(
    throughput: Option<&RatioEstimate>,
    p99: Option<&RatioEstimate>,
    spread: Option<&SpreadEstimate>,
    errors: Option<&ErrorRateEstimate>,
) -> ComparisonVerdict {
    use ComparisonVerdict::*;
    let parts = [
        throughput.map(|t| t.verdict),
        p99.map(|p| p.verdict),
        errors.map(|e| e.verdict).filter(|v| *v != Equivalent),
    ];
    if parts.contains(&Some(Slower)) || spread.is_some_and(|s| s.increased) {
        Slower
    } else if parts.contains(&Some(Faster)) {
        Faster
    } else if throughput.map(|t| t.verdict) == Some(Equivalent) {
        Equivalent
    } else {
        Inconclusive
    }
}

/// A ratio and its interval as people read it: `1.21× [1.12–1.30]`.
pub fn format_ratio(r: &RatioEstimate) -> String {
    format!("{:.2}× [{:.2}–{:.2}]", r.ratio, r.low, r.high)
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
