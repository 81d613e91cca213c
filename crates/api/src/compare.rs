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
use statrs::function::gamma::ln_gamma;

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
    /// One-sided p-value of this comparison alone that the candidate is worse than the
    /// reference by more than the tolerance (Welch's t of the log ratio against the margin):
    /// below 0.025 exactly when `verdict` is `Slower`. Summaries over many comparisons
    /// (`Regressed`) adjust these for the family (Holm).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_worse: Option<f64>,
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

/// How likely the repeats were to give the verdict the observed ratio points to, and how many
/// would make that likely (see [`power`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PowerEstimate {
    /// The chance (0–1), with the repeats used and taking the observed throughput ratio and
    /// each side's observed spread as true, of the verdict that ratio calls for: `Faster` or
    /// `Slower` (the whole 95 % interval beyond the tolerance) when it lies beyond the
    /// tolerance, `Equivalent` (the whole 90 % interval inside it) when it lies inside.
    pub power: f64,
    /// The fewest repeats a side that would give that verdict with 80 % chance (at most
    /// 1000; 1000 with `withinCap: false` means not even 1000 would: a ratio at the tolerance
    /// itself cannot be told from it).
    pub repeats_needed: u32,
    /// The verdict `power` is the chance of (absent in statuses of older operators, whose
    /// power was the chance of an interval excluding 1.0 at a change of the tolerance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<ComparisonVerdict>,
    /// The true throughput ratio assumed: the observed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumed_ratio: Option<f64>,
    /// `false` when no number of repeats up to 1000 reaches 80 %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_cap: Option<bool>,
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
        p_worse: Some(p_worse(&diff, margin, higher_is_better)),
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

/// Which verdict a power figure is the chance of, on the log scale of candidate over
/// reference: the 95 % interval wholly above the margin (`Above`: `Faster` for throughput,
/// `Slower` for latency), wholly below it (`Below`), or the 90 % interval wholly inside it
/// (`Within`: `Equivalent`, the two one-sided tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aim {
    /// Low end of the 95 % interval above `ln(1 + τ)`.
    Above,
    /// High end of the 95 % interval below `−ln(1 + τ)`.
    Below,
    /// The 90 % interval inside `[−ln(1 + τ), ln(1 + τ)]`.
    Within,
}

impl Aim {
    /// The verdict that this outcome is for a figure where higher is better (throughput) or
    /// lower is (latency, spread).
    pub fn verdict(self, higher_is_better: bool) -> ComparisonVerdict {
        match (self, higher_is_better) {
            (Aim::Within, _) => ComparisonVerdict::Equivalent,
            (Aim::Above, true) | (Aim::Below, false) => ComparisonVerdict::Faster,
            (Aim::Above, false) | (Aim::Below, true) => ComparisonVerdict::Slower,
        }
    }

    /// The verdict a true log-ratio `delta` calls for at the log-margin `margin`: beyond it on
    /// either side, or within it.
    pub fn of(delta: f64, margin: f64) -> Aim {
        if delta > margin {
            Aim::Above
        } else if delta < -margin {
            Aim::Below
        } else {
            Aim::Within
        }
    }
}

/// A design the chance of a verdict is computed for: the standard deviations of the logs of
/// each side's per-repeat values (taken as true) and the repeats of each side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Design {
    /// Standard deviation of the logs of the candidate's per-repeat values.
    pub sd_candidate: f64,
    /// The same for the reference.
    pub sd_reference: f64,
    /// Repeats of the candidate (at least 2).
    pub n_candidate: f64,
    /// Repeats of the reference (at least 2).
    pub n_reference: f64,
}

impl Design {
    /// The same spreads with `n` repeats a side.
    pub fn with_repeats(self, n: u32) -> Design {
        Design {
            n_candidate: f64::from(n),
            n_reference: f64::from(n),
            ..self
        }
    }

    /// The true standard error of the difference of the log means and the Welch–
    /// Satterthwaite degrees of freedom of its estimate.
    fn se_df(&self) -> (f64, f64) {
        let ac = self.sd_candidate.powi(2) / self.n_candidate;
        let ar = self.sd_reference.powi(2) / self.n_reference;
        let denom = ac * ac / (self.n_candidate - 1.0) + ar * ar / (self.n_reference - 1.0);
        let df = if denom > 0.0 {
            (ac + ar).powi(2) / denom
        } else {
            self.n_candidate + self.n_reference - 2.0
        };
        ((ac + ar).sqrt(), df)
    }
}

/// The standard normal distribution function.
fn phi(x: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-x / std::f64::consts::SQRT_2)
}

/// `t(0.975, ν)` and `t(0.95, ν)` on a grid of `ln ν` from `ln 1` to `ln 5000`, computed
/// once: [`verdict_chance`] needs them at thousands of Welch degrees of freedom, and the
/// quantile of statrs is an iterative inversion. Interpolated linearly in `ln ν`, within
/// 10⁻⁴ of the exact quantile.
fn t_table() -> &'static [(f64, f64)] {
    static TABLE: std::sync::OnceLock<Vec<(f64, f64)>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=T_GRID)
            .map(|i| {
                let df = (T_MAX_DF.ln() * i as f64 / T_GRID as f64).exp();
                (
                    t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, df),
                    t_quantile(1.0 - (1.0 - EQUIVALENCE_CONFIDENCE) / 2.0, df),
                )
            })
            .collect()
    })
}
const T_GRID: usize = 2000;
const T_MAX_DF: f64 = 5000.0;

/// `(t(0.975, ν), t(0.95, ν))` from [`t_table`] (ν at least 1; beyond the table its last entry,
/// within 10⁻³ of the normal quantiles).
fn t_pair(df: f64) -> (f64, f64) {
    let table = t_table();
    let x = df.clamp(1.0, T_MAX_DF).ln() / T_MAX_DF.ln() * T_GRID as f64;
    let i = (x.floor() as usize).min(T_GRID - 1);
    let f = x - i as f64;
    let (a, b) = (table[i], table[i + 1]);
    (a.0 + f * (b.0 - a.0), a.1 + f * (b.1 - a.1))
}

/// Simpson's nodes and weights for the chi distribution on `k` degrees of freedom (`√` of a
/// chi-squared variate): `n` intervals over its mean ± 8 (its standard deviation is below
/// 0.71), weights times the density, summing to about 1.
fn chi_nodes(k: f64, n: usize) -> Vec<(f64, f64)> {
    let ln_norm = (k / 2.0 - 1.0) * std::f64::consts::LN_2 + ln_gamma(k / 2.0);
    let density = |w: f64| -> f64 {
        if w <= 0.0 {
            return if k == 1.0 { (-ln_norm).exp() } else { 0.0 };
        }
        ((k - 1.0) * w.ln() - w * w / 2.0 - ln_norm).exp()
    };
    let (from, to) = ((k.sqrt() - 8.0).max(0.0), k.sqrt() + 8.0);
    let h = (to - from) / n as f64;
    (0..=n)
        .map(|i| {
            let w = from + h * i as f64;
            let simpson = match i {
                0 => 1.0,
                i if i == n => 1.0,
                i if i % 2 == 1 => 4.0,
                _ => 2.0,
            };
            (w, simpson * h / 3.0 * density(w))
        })
        .filter(|(_, weight)| *weight > 0.0)
        .collect()
}

/// The chance that an experiment of `design` gives the outcome `aim` at the tolerance
/// `tolerance` when the true log-ratio (candidate over reference) is `delta` and the logs are
/// normal with the design's standard deviations.
///
/// Exact up to quadrature: the estimated log difference is normal around `delta` with the true
/// standard error `σ` and independent of the two sample variances, each `σ_side²·χ²_k / k`
/// with `k` its repeats less one. Given the variances, the interval's standard error and its
/// Welch degrees of freedom (hence its t quantile) are fixed, and the chance is a difference of
/// normal distribution functions; it is integrated over both chi variates by Simpson's rule
/// (60 intervals each). With 20 or more repeats a side the Welch degrees of freedom hardly
/// vary and one chi variate on the Welch–Satterthwaite `ν` stands for both (600 intervals).
/// Deterministic; within about 0.01 of simulation (unit tests).
pub fn verdict_chance(aim: Aim, delta: f64, design: Design, tolerance: f64) -> f64 {
    let margin = tolerance.max(0.0).ln_1p();
    let (sigma, df) = design.se_df();
    // The chance given the interval's standard error and its t quantiles.
    let given = |se: f64, (t95, t90): (f64, f64)| -> f64 {
        if sigma == 0.0 {
            let inside = match aim {
                Aim::Above => delta > margin,
                Aim::Below => delta < -margin,
                Aim::Within => delta.abs() <= margin,
            };
            return f64::from(u8::from(inside));
        }
        let u = se / sigma;
        match aim {
            Aim::Above => phi((delta - margin) / sigma - t95 * u),
            Aim::Below => phi((-margin - delta) / sigma - t95 * u),
            Aim::Within => (phi((margin - delta) / sigma - t90 * u)
                - phi((-margin - delta) / sigma + t90 * u))
            .max(0.0),
        }
    };
    if sigma == 0.0 {
        return given(0.0, (0.0, 0.0));
    }
    let (kc, kr) = (design.n_candidate - 1.0, design.n_reference - 1.0);
    let total = if kc.min(kr) >= 19.0 {
        chi_nodes(df, 600)
            .into_iter()
            .map(|(w, weight)| weight * given(sigma * w / df.sqrt(), t_pair(df)))
            .sum::<f64>()
    } else {
        let (ac, ar) = (
            design.sd_candidate.powi(2) / design.n_candidate,
            design.sd_reference.powi(2) / design.n_reference,
        );
        let (nodes_c, nodes_r) = (chi_nodes(kc, 60), chi_nodes(kr, 60));
        let mut sum = 0.0;
        for &(wc, weight_c) in &nodes_c {
            // This side's share of se² given its variance estimate.
            let vc = ac * wc * wc / kc;
            for &(wr, weight_r) in &nodes_r {
                let vr = ar * wr * wr / kr;
                let denom = vc * vc / kc + vr * vr / kr;
                let welch = if denom > 0.0 {
                    (vc + vr).powi(2) / denom
                } else {
                    kc + kr
                };
                sum += weight_c * weight_r * given((vc + vr).sqrt(), t_pair(welch));
            }
        }
        sum
    };
    total.clamp(0.0, 1.0)
}

/// The fewest repeats a side at which an experiment with the spreads of `design` gives the
/// outcome `aim` with at least [`TARGET_POWER`] chance when the true log-ratio is `delta`;
/// `None` when even [`MAX_REPEATS_NEEDED`] do not (a true ratio at the margin itself, or
/// `Within` for a ratio beyond it). The chance grows with the repeats, so a bisection finds it.
pub fn repeats_needed(aim: Aim, delta: f64, design: Design, tolerance: f64) -> Option<u32> {
    let chance = |n: u32| verdict_chance(aim, delta, design.with_repeats(n), tolerance);
    if chance(MAX_REPEATS_NEEDED) < TARGET_POWER {
        return None;
    }
    if chance(2) >= TARGET_POWER {
        return Some(2);
    }
    let (mut lo, mut hi) = (2, MAX_REPEATS_NEEDED);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if chance(mid) >= TARGET_POWER {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The power of a throughput comparison for the verdict it points to: taking the observed
/// ratio and the observed spread of each side as true, the chance that an experiment with the
/// repeats used gives the verdict that ratio calls for (`Faster`/`Slower` when it lies beyond
/// the margin `[1/(1+τ), 1+τ]`: the whole 95 % interval beyond it; `Equivalent` when it lies
/// inside: the whole 90 % interval inside), and the repeats a side that would make that chance
/// [`TARGET_POWER`] ([`repeats_needed`]). `None` with fewer than 2 values on a side.
pub fn power(candidate: &[f64], reference: &[f64], tolerance: f64) -> Option<PowerEstimate> {
    let (c, r) = (logs(candidate), logs(reference));
    let diff = LogDifference::of(candidate, reference)?;
    let design = Design {
        sd_candidate: mean_var(&c).1.sqrt(),
        sd_reference: mean_var(&r).1.sqrt(),
        n_candidate: c.len() as f64,
        n_reference: r.len() as f64,
    };
    let aim = Aim::of(diff.d, tolerance.max(0.0).ln_1p());
    let power = verdict_chance(aim, diff.d, design, tolerance);
    let needed = repeats_needed(aim, diff.d, design, tolerance);
    Some(PowerEstimate {
        power,
        repeats_needed: needed.unwrap_or(MAX_REPEATS_NEEDED),
        verdict: Some(aim.verdict(true)),
        assumed_ratio: Some(diff.d.exp()),
        within_cap: Some(needed.is_some()),
    })
}

/// One-sided p-value that the candidate is worse than the reference by more than the
/// tolerance: Welch's t of the log difference against the margin `ln(1 + τ)` on the worse
/// side (`H₀`: the true ratio is at most that far on the worse side). It is below 2.5 %
/// exactly when the 95 % interval lies wholly beyond the margin on the worse side, that is
/// when the verdict is `Slower`: the per-comparison test behind the verdict, and what
/// [`holm`] adjusts for a family of comparisons.
fn p_worse(diff: &LogDifference, margin: f64, higher_is_better: bool) -> f64 {
    // How far the estimate is past the margin in the worse direction, in standard errors.
    let past = if higher_is_better {
        -margin - diff.d
    } else {
        diff.d - margin
    };
    if diff.se == 0.0 {
        return if past > 0.0 { 0.0 } else { 1.0 };
    }
    let t = StudentsT::new(0.0, 1.0, diff.df.max(1e-9)).expect("df > 0");
    t.sf(past / diff.se).clamp(0.0, 1.0)
}

/// One-sided level of each comparison's "worse beyond the tolerance" test and the family-wise
/// level [`holm`] keeps over a family of them: the 95 % interval's one side, so that a family
/// of one comparison is worse exactly when its verdict is `Slower`.
pub const FAMILY_ALPHA: f64 = (1.0 - CONFIDENCE) / 2.0;

/// The p-value of an error-rate comparison on the scale of [`FAMILY_ALPHA`]: Fisher's
/// two-sided p-value times `FAMILY_ALPHA / ERROR_ALPHA` when the candidate has more errors by
/// at least [`MIN_ERROR_RATE_DIFFERENCE`], else 1. Below `FAMILY_ALPHA` exactly when the
/// comparison's verdict is `Slower`.
pub fn error_p_worse(e: &ErrorRateEstimate) -> f64 {
    if e.candidate_rate - e.reference_rate >= MIN_ERROR_RATE_DIFFERENCE {
        (e.p_value * FAMILY_ALPHA / ERROR_ALPHA).min(1.0)
    } else {
        1.0
    }
}

/// Holm's step-down procedure: which of the hypotheses with p-values `p` are rejected with a
/// family-wise error rate of at most `alpha`, whatever their dependence. The smallest p-value
/// is held to `alpha / k`, the next to `alpha / (k − 1)`, … until one is not below its bound.
pub fn holm(p: &[f64], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let k = p.len();
    let mut rejected = vec![false; k];
    for (rank, &i) in order.iter().enumerate() {
        if p[i] <= alpha / (k - rank) as f64 {
            rejected[i] = true;
        } else {
            break;
        }
    }
    rejected
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
