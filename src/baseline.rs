//! Is a measurement better, the same or worse than the baseline's? Cells are matched by
//! coordinates; their per-second throughput samples are compared with the Mann-Whitney U test,
//! which assumes no distribution (throughput per second is skewed and often bimodal under GC
//! pauses), and a tolerance says how large a change must be to matter. Pure.

use benchrun_api::validate::BaselinePlan;
use benchrun_api::{BaselineComparison, CellResult, Coordinates};
use benchrun_api::{Outcome, Verdict};
use benchrun_load::LoadResult;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::num::round;

/// Significance level: a change counts only when the test's two-sided p-value is below it.
/// 1 % rather than 5 %: a run compares many cells, and each is a chance of a false alarm.
pub const ALPHA: f64 = 0.01;

/// Fewest per-second samples on each side for a verdict other than `Same`: below this the
/// normal approximation of U is poor and a 5-second cell says little about a change.
pub const MIN_SAMPLES: usize = 5;

/// How a cell compares with its baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// `Better`, `Same` or `Worse`.
    pub verdict: Verdict,
    /// Median per-second throughput now over the baseline's.
    pub throughput_ratio: f64,
    /// Two-sided p-value of the Mann-Whitney U test (1 when it could not be computed).
    pub p_value: f64,
    /// Per-second samples of the baseline and of the current cell.
    pub samples: (usize, usize),
}

/// What the operator read of the baseline cell for one measurement: the per-second
/// throughputs of all its measured repeats and their p99 latencies in ms, or why there are
/// none (no such run, no cell with these coordinates, its detail ConfigMaps gone).
pub type BaselineObserved = Result<BaselineCell, String>;

/// The baseline cell's figures a comparison needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BaselineCell {
    /// Per-second throughputs of the whole seconds inside each measured repeat's window.
    pub samples: Vec<f64>,
    /// p99 latency in ms of each measured repeat.
    pub p99_ms: Vec<f64>,
}

/// The `baseline` entry of a measurement: its per-second throughputs (from `load`) and p99
/// against the baseline cell's, or `Unmatched` with the reason the baseline could not be read
/// or, for a measurement of more than 50 % errors, why it is not compared.
pub fn judge(
    plan: &BaselinePlan,
    observed: Option<&BaselineObserved>,
    load: &LoadResult,
    result: &CellResult,
) -> BaselineComparison {
    // A cell of mostly errors answered fast with failures: its throughput compared with the
    // baseline's would read as Better.
    if let Err(why @ crate::results::Ineligible::MostlyErrors { .. }) =
        crate::results::headline_eligible(result, None)
    {
        return unmatched(format!("not compared: {why}"));
    }
    let cell = match observed {
        Some(Ok(cell)) => cell,
        Some(Err(why)) => return unmatched(why.clone()),
        None => return unmatched("the baseline was not read".into()),
    };
    let now = per_second_throughput(load);
    let c = compare(&cell.samples, &now, plan.tolerance);
    let p99_now = result.latency_ms.as_ref().map(|l| l.p99);
    let p99_before = (!cell.p99_ms.is_empty())
        .then(|| cell.p99_ms.iter().sum::<f64>() / cell.p99_ms.len() as f64);
    let reason = (c.samples.0 < MIN_SAMPLES || c.samples.1 < MIN_SAMPLES).then(|| {
        format!(
            "fewer than {MIN_SAMPLES} whole seconds on a side ({} baseline, {} now): no verdict other than Same; measure for longer",
            c.samples.0, c.samples.1
        )
    });
    BaselineComparison {
        verdict: c.verdict,
        throughput_ratio: c
            .throughput_ratio
            .is_finite()
            .then(|| round(c.throughput_ratio, 4)),
        p99_ratio: match (p99_now, p99_before) {
            (Some(now), Some(before)) if before > 0.0 => Some(round(now / before, 4)),
            _ => None,
        },
        p_value: mann_whitney_p(&cell.samples, &now).map(|p| round_significant(p, 3)),
        baseline_samples: c.samples.0 as i32,
        samples: c.samples.1 as i32,
        reason,
    }
}

fn unmatched(reason: String) -> BaselineComparison {
    BaselineComparison {
        verdict: Verdict::Unmatched,
        reason: Some(reason),
        ..BaselineComparison::default()
    }
}

/// `x` to `digits` significant digits (p-values span many orders of magnitude).
fn round_significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// The requests of each whole second inside the measured window: the first and last seconds,
/// cut by the window's edges, would read low and are left out.
pub fn per_second_throughput(load: &LoadResult) -> Vec<f64> {
    load.timeline
        .iter()
        .filter(|e| {
            let start = e.second.saturating_mul(1000);
            start >= load.window_start_ms && start.saturating_add(1000) <= load.window_end_ms
        })
        .map(|e| e.requests as f64)
        .collect()
}

/// The measured results among `results` with exactly these coordinates (all repeats), in any
/// order of the run's cells: matching is by what was measured, not by position.
pub fn matching<'a>(results: &'a [CellResult], coordinates: &Coordinates) -> Vec<&'a CellResult> {
    results
        .iter()
        .filter(|r| r.outcome == Outcome::Measured && r.coordinates == *coordinates)
        .collect()
}

/// Compares per-second throughput samples of the current cell with the baseline's.
/// `tolerance` is the relative change that matters (0.05 = 5 %).
pub fn compare(baseline: &[f64], current: &[f64], tolerance: f64) -> Comparison {
    let samples = (baseline.len(), current.len());
    let ratio = match (median(baseline), median(current)) {
        (Some(b), Some(c)) if b > 0.0 => c / b,
        _ => f64::NAN,
    };
    let p_value = mann_whitney_p(baseline, current).unwrap_or(1.0);
    let enough = samples.0 >= MIN_SAMPLES && samples.1 >= MIN_SAMPLES;
    let verdict = if !enough || !ratio.is_finite() || p_value >= ALPHA {
        Verdict::Same
    } else if ratio < 1.0 - tolerance {
        Verdict::Worse
    } else if ratio > 1.0 + tolerance {
        Verdict::Better
    } else {
        Verdict::Same
    };
    Comparison {
        verdict,
        throughput_ratio: ratio,
        p_value,
        samples,
    }
}

fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 0 {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    })
}

/// Two-sided p-value of the Mann-Whitney U test of `a` against `b`, from the normal
/// approximation with the tie correction and a continuity correction; `None` when either
/// sample is empty or every value is tied (nothing to rank).
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Midranks for ties; Σ(t³ − t) over tie groups for the variance.
    let mut rank_sum_a = 0.0;
    let mut ties = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let midrank = (i + j) as f64 / 2.0 + 1.0;
        rank_sum_a += midrank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let n = n1 + n2;
    let mean = n1 * n2 / 2.0;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if variance <= 0.0 {
        return None;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    let normal = Normal::new(0.0, 1.0).ok()?;
    Some((2.0 * (1.0 - normal.cdf(z))).clamp(0.0, 1.0))
}

#[cfg(test)]
#[path = "baseline_tests.rs"]
mod tests;
