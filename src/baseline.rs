//! Is a cell better, the same or worse than the baseline's? Cells are matched by
//! coordinates; the unit of replication is the repeat: this cell's measured repeats so far
//! against the baseline cell's, one throughput per window, compared with Welch's t interval
//! on the logs ([`benchrun_api::compare`]). The seconds inside a window are not independent
//! samples (a JIT, a GC or a noisy neighbour shifts whole windows), so earlier operators'
//! Mann-Whitney test over per-second throughputs was sure of differences that did not
//! repeat. Pure.

use benchrun_api::compare::ComparisonVerdict;
use benchrun_api::validate::BaselinePlan;
use benchrun_api::{BaselineComparison, CellResult, Comparison, Coordinates};
use benchrun_api::{Outcome, Verdict};

use crate::comparisons::{baseline_entry, round_significant};

/// What the operator read of the baseline cell for one measurement: the measured repeats of
/// the baseline run's cell with these coordinates, or why there are none (no such run, no
/// cell with these coordinates).
pub type BaselineObserved = Result<BaselineCell, String>;

/// The baseline cell's figures a comparison needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BaselineCell {
    /// The baseline run's measured results with these coordinates (all repeats), with
    /// `perSecondCv` filled from their detail ConfigMaps where that run predates it.
    pub results: Vec<CellResult>,
}

/// The legacy per-measurement verdict of a comparison's throughput verdict.
pub fn verdict_word(v: ComparisonVerdict) -> Verdict {
    match v {
        ComparisonVerdict::Faster => Verdict::Better,
        ComparisonVerdict::Slower => Verdict::Worse,
        ComparisonVerdict::Equivalent => Verdict::Same,
        ComparisonVerdict::Inconclusive => Verdict::Inconclusive,
        ComparisonVerdict::NotCompared => Verdict::Unmatched,
    }
}

/// The `baseline` entry of a measurement and the cell's `Baseline` comparison: `cell` holds the
/// cell's measured repeats so far, this one included; or `Unmatched` with the reason the
/// baseline could not be read (and no comparison).
pub fn judge(
    plan: &BaselinePlan,
    observed: Option<&BaselineObserved>,
    run: &benchrun_api::ValidatedRun,
    cell: &[&CellResult],
) -> (BaselineComparison, Option<Comparison>) {
    let base = match observed {
        Some(Ok(base)) => base,
        Some(Err(why)) => return (unmatched(why.clone()), None),
        None => return (unmatched("the baseline was not read".into()), None),
    };
    let Some(c) = baseline_entry(run, &plan.run, cell, &base.results) else {
        return (unmatched("no measured repeat of this cell".into()), None);
    };
    // A side that failed, was OOM-killed, generator-bound or mostly errors (a measurement of
    // 404s answers fast: its throughput would read as Better) is not compared; the entry
    // says why.
    if c.verdict == ComparisonVerdict::NotCompared {
        let why = c.reason.clone().unwrap_or_else(|| "not compared".into());
        return (unmatched(why), Some(c));
    }
    let tp = |rs: &[&CellResult]| -> Vec<f64> { rs.iter().filter_map(|r| r.throughput).collect() };
    let base_refs: Vec<&CellResult> = base.results.iter().collect();
    let verdict = c
        .throughput
        .as_ref()
        .map_or(Verdict::Inconclusive, |t| verdict_word(t.verdict));
    let b = BaselineComparison {
        verdict,
        throughput_ratio: c.ratio,
        p99_ratio: c.p99.as_ref().map(|p| p.ratio).or_else(|| {
            let mean = |rs: &[&CellResult]| {
                let v: Vec<f64> = rs
                    .iter()
                    .filter_map(|r| Some(r.latency_ms.as_ref()?.p99))
                    .collect();
                crate::comparisons::geometric_mean(&v)
            };
            match (mean(cell), mean(&base_refs)) {
                (Some(a), Some(b)) => Some(crate::num::round(a / b, 4)),
                _ => None,
            }
        }),
        p_value: benchrun_api::compare::ratio_p_value(&tp(cell), &tp(&base_refs))
            .map(|p| round_significant(p, 3)),
        baseline_samples: 0,
        samples: 0,
        ratio_low: c.throughput.as_ref().map(|t| t.low),
        ratio_high: c.throughput.as_ref().map(|t| t.high),
        baseline_repeats: Some(c.reference_repeats),
        repeats: Some(c.candidate_repeats),
        reason: c.reason.clone(),
    };
    (b, Some(c))
}

fn unmatched(reason: String) -> BaselineComparison {
    BaselineComparison {
        verdict: Verdict::Unmatched,
        reason: Some(reason),
        ..BaselineComparison::default()
    }
}

/// The measured results among `results` with exactly these coordinates (all repeats), in any
/// order of the run's cells: matching is by what was measured, not by position.
pub fn matching<'a>(results: &'a [CellResult], coordinates: &Coordinates) -> Vec<&'a CellResult> {
    results
        .iter()
        .filter(|r| r.outcome == Outcome::Measured && r.coordinates == *coordinates)
        .collect()
}

#[cfg(test)]
#[path = "baseline_tests.rs"]
mod tests;
