//! From the cells of a run to a verdict on a claim.

use benchrun_api::{BenchmarkRun, CellResult, Outcome, WarningCode};

use super::claims::{Expect, Metric, Selector};
use benchrun_api::compare::{ComparisonVerdict, RatioEstimate};

/// What our run says about a claim or one of its comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Our interval says what the write-up says.
    Reproduced,
    /// Our interval says the opposite.
    Contradicted,
    /// Neither: no difference where one was claimed, or too uncertain to tell.
    NotReproduced,
    /// This machine cannot answer it: the reason is in the claims file, or the cells measured
    /// something else than the targets (their backing service was the limit or restarted).
    NotTestable,
    /// The run lacks the cells (fewer than 2 measured repeats a side).
    NoMeasurement,
    /// No run yet.
    NotRun,
}

impl Verdict {
    /// The word the page prints.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Reproduced => "Reproduced",
            Verdict::Contradicted => "Contradicted",
            Verdict::NotReproduced => "Not reproduced",
            Verdict::NotTestable => "Not testable here",
            Verdict::NoMeasurement => "No measurement",
            Verdict::NotRun => "Not run yet",
        }
    }

    /// A claim's verdict from its comparisons': a missing run first; then any contradiction,
    /// then any comparison that was measured and did not reproduce the claim (whatever the
    /// untestable or unmeasured parts say: a claim one of whose testable parts fails, fails);
    /// then a missing measurement, then an untestable part; Reproduced only when every
    /// comparison reproduces it.
    pub fn combine(parts: &[Verdict]) -> Verdict {
        [
            Verdict::NotRun,
            Verdict::Contradicted,
            Verdict::NotReproduced,
            Verdict::NoMeasurement,
            Verdict::NotTestable,
        ]
        .into_iter()
        .find(|v| parts.contains(v))
        .unwrap_or(if parts.is_empty() {
            Verdict::NoMeasurement
        } else {
            Verdict::Reproduced
        })
    }
}

/// The claimed direction against our estimate, whose margin is `tolerance` (the same margin
/// the estimate's verdict used) and whose metric is better when higher or lower.
///
/// `NotWorse` ("equals or beats") is a non-inferiority claim: an interval wholly on the claimed
/// side of the margin reproduces it even when the estimate could not say Faster or Equivalent
/// (e.g. ×1.23 [1.04–1.46] at ±5 %). `Ratio` claims are judged on an estimate already divided
/// by the claimed ratio (see `render`), so Equivalent means "the claimed ratio, within the
/// margin".
pub fn judge(
    expect: Expect,
    estimate: &RatioEstimate,
    tolerance: f64,
    higher_is_better: bool,
) -> Verdict {
    use ComparisonVerdict::{Equivalent, Faster, Inconclusive, NotCompared, Slower};
    match (expect, estimate.verdict) {
        (_, NotCompared) => Verdict::NotReproduced,
        (Expect::NotWorse, Inconclusive)
            if not_worse_beyond_margin(estimate, tolerance, higher_is_better) =>
        {
            Verdict::Reproduced
        }
        (_, Inconclusive) => Verdict::NotReproduced,
        (Expect::Better, Faster) | (Expect::Worse, Slower) => Verdict::Reproduced,
        (Expect::Better, Slower) | (Expect::Worse, Faster) => Verdict::Contradicted,
        (Expect::Better | Expect::Worse, Equivalent) => Verdict::NotReproduced,
        (Expect::Equal | Expect::Ratio, Equivalent) => Verdict::Reproduced,
        (Expect::Equal | Expect::Ratio, Faster | Slower) => Verdict::Contradicted,
        (Expect::NotWorse, Faster | Equivalent) => Verdict::Reproduced,
        (Expect::NotWorse, Slower) => Verdict::Contradicted,
    }
}

/// The 95 % interval, oriented so that above 1 is better for the candidate.
fn oriented(estimate: &RatioEstimate, higher_is_better: bool) -> (f64, f64) {
    if higher_is_better {
        (estimate.low, estimate.high)
    } else {
        (1.0 / estimate.high, 1.0 / estimate.low)
    }
}

/// Whether the whole interval lies above the worse end of the margin: the candidate is not
/// worse than the reference by more than `tolerance` (non-inferiority).
pub fn not_worse_beyond_margin(
    estimate: &RatioEstimate,
    tolerance: f64,
    higher_is_better: bool,
) -> bool {
    oriented(estimate, higher_is_better).0 >= 1.0 / (1.0 + tolerance.max(0.0))
}

/// Which way the whole interval leans from 1.0, when all of it is on one side: `Some(true)`
/// when the candidate is better over all of it, `Some(false)` when it is worse.
pub fn leaning(estimate: &RatioEstimate, higher_is_better: bool) -> Option<bool> {
    let (low, high) = oriented(estimate, higher_is_better);
    if low > 1.0 {
        Some(true)
    } else if high < 1.0 {
        Some(false)
    } else {
        None
    }
}

/// Whether a result's coordinates match the selector.
fn matches(r: &CellResult, s: &Selector) -> bool {
    s.target.as_ref().is_none_or(|t| *t == r.coordinates.target)
        && s.scenario
            .as_ref()
            .is_none_or(|x| *x == r.coordinates.scenario)
        && s.connections.is_none_or(|c| c == r.coordinates.connections)
}

/// The metric of one measured result, in the page's unit (MB for bytes).
fn metric_of(r: &CellResult, metric: Metric) -> Option<f64> {
    match metric {
        Metric::Throughput => r.throughput,
        Metric::LatencyMean => r.latency_ms.as_ref().map(|l| l.mean),
        Metric::LatencyP50 => r.latency_ms.as_ref().map(|l| l.p50),
        Metric::LatencyMax => r.latency_ms.as_ref().map(|l| l.max),
        Metric::ConnectMax => r.connect_times_ms.as_ref().map(|c| c.max),
        Metric::MemoryPeak => r.usage.memory_peak_bytes.map(|b| b as f64 / 1e6),
        Metric::ImageBytes => r.target_image_bytes.map(|b| b as f64 / 1e6),
    }
}

/// Why the cells the selector matches measured something else than their target: in more than
/// half of their measured repeats a backing service was at its CPU limit (`ServiceBound`) or
/// had restarted (`ServiceRestarted`, its seeded data gone). `None` when they measured the
/// target.
pub fn not_the_target(run: &BenchmarkRun, selector: &Selector) -> Option<String> {
    let results: Vec<&CellResult> = run
        .status
        .as_ref()?
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Measured && matches(r, selector))
        .collect();
    let with = |code: WarningCode| {
        results
            .iter()
            .filter(|r| r.warnings.iter().any(|w| w.code == code))
            .count()
    };
    [
        (WarningCode::ServiceRestarted, "its backing service restarted (its seeded data gone)"),
        (WarningCode::ServiceBound, "its backing service was at its CPU limit"),
    ]
    .into_iter()
    .map(|(code, what)| (with(code), code, what))
    .find(|(n, _, _)| 2 * n > results.len())
    .map(|(n, code, what)| {
        format!(
            "{what} in {n} of {} measurements of {} ({}): the cells measured the service, not the target",
            results.len(),
            selector.describe(),
            code.as_str()
        )
    })
}

/// Why a comparison cannot be read, when a side whose cells measured their backing service
/// rather than their target ([`not_the_target`], given for candidate and reference) did not
/// come out better: a service at its limit holds a side's figure back, so a side that won
/// anyway won by at least what was measured, but a side that lost or tied may have lost to its
/// store. `None` when the comparison stands.
pub fn bound_side_loses(
    bound: &(Option<String>, Option<String>),
    estimate: &RatioEstimate,
) -> Option<String> {
    let (candidate_won, reference_won) = match estimate.verdict {
        ComparisonVerdict::Faster => (true, false),
        ComparisonVerdict::Slower => (false, true),
        _ => (false, false),
    };
    match bound {
        (Some(why), _) if !candidate_won => Some(why.clone()),
        (_, Some(why)) if !reference_won => Some(why.clone()),
        _ => None,
    }
}

/// The validity warnings of the measured results the selector matches: each code with the
/// number of results that carry it, of how many, in the code's order (e.g.
/// `[("HighVariance", 2)]` of 3).
pub fn warnings(run: &BenchmarkRun, selector: &Selector) -> (Vec<(&'static str, usize)>, usize) {
    let results: Vec<&CellResult> = run
        .status
        .as_ref()
        .map(|s| {
            s.results
                .iter()
                .filter(|r| r.outcome == Outcome::Measured && matches(r, selector))
                .collect()
        })
        .unwrap_or_default();
    let mut counts: std::collections::BTreeMap<&'static str, usize> = Default::default();
    for r in &results {
        let mut codes: Vec<&'static str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
        codes.sort_unstable();
        codes.dedup();
        for c in codes {
            *counts.entry(c).or_default() += 1;
        }
    }
    (counts.into_iter().collect(), results.len())
}

/// The metric of every measured result (every repeat) of the cells the selector matches, in
/// the run's order.
pub fn values(run: &BenchmarkRun, selector: &Selector, metric: Metric) -> Vec<f64> {
    run.status
        .as_ref()
        .map(|s| {
            s.results
                .iter()
                .filter(|r| r.outcome == Outcome::Measured && matches(r, selector))
                .filter_map(|r| metric_of(r, metric))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(verdict: ComparisonVerdict) -> RatioEstimate {
        RatioEstimate {
            ratio: 1.0,
            low: 0.9,
            high: 1.1,
            verdict,
            p_worse: None,
        }
    }

    #[test]
    fn the_claimed_direction_against_our_interval_gives_the_verdict() {
        use ComparisonVerdict::*;
        assert_eq!(
            judge(Expect::Better, &est(Faster), 0.05, true),
            Verdict::Reproduced
        );
        assert_eq!(
            judge(Expect::Better, &est(Slower), 0.05, true),
            Verdict::Contradicted
        );
        assert_eq!(
            judge(Expect::Better, &est(Equivalent), 0.05, true),
            Verdict::NotReproduced
        );
        assert_eq!(
            judge(Expect::Worse, &est(Slower), 0.05, true),
            Verdict::Reproduced
        );
        assert_eq!(
            judge(Expect::Equal, &est(Equivalent), 0.05, true),
            Verdict::Reproduced
        );
        assert_eq!(
            judge(Expect::Equal, &est(Faster), 0.05, true),
            Verdict::Contradicted
        );
        assert_eq!(
            judge(Expect::NotWorse, &est(Equivalent), 0.05, true),
            Verdict::Reproduced
        );
        assert_eq!(
            judge(Expect::NotWorse, &est(Slower), 0.05, true),
            Verdict::Contradicted
        );
        assert_eq!(
            judge(Expect::Better, &est(Inconclusive), 0.05, true),
            Verdict::NotReproduced
        );
    }

    #[test]
    fn a_claim_is_reproduced_only_when_every_comparison_is_and_contradicted_by_any() {
        use Verdict::*;
        assert_eq!(Verdict::combine(&[Reproduced, Reproduced]), Reproduced);
        assert_eq!(
            Verdict::combine(&[Reproduced, NotReproduced]),
            NotReproduced
        );
        assert_eq!(
            Verdict::combine(&[Reproduced, Contradicted, NotReproduced]),
            Contradicted
        );
        assert_eq!(
            Verdict::combine(&[Contradicted, NoMeasurement]),
            Contradicted
        );
        assert_eq!(Verdict::combine(&[NotRun]), NotRun);
        assert_eq!(Verdict::combine(&[]), NoMeasurement);
        assert_eq!(Verdict::combine(&[Reproduced, NotTestable]), NotTestable);
        assert_eq!(Verdict::combine(&[NotTestable, Contradicted]), Contradicted);
    }

    /// A run whose results are `target`'s repeats, each with the `warnings` given.
    fn run_with(target: &str, warnings: &[&[&str]]) -> BenchmarkRun {
        let results: Vec<serde_json::Value> = warnings
            .iter()
            .enumerate()
            .map(|(i, w)| {
                serde_json::json!({
                    "cell": 0, "repeat": i, "outcome": "Measured", "throughput": 3.0,
                    "coordinates": {"target": target, "scenario": "list", "connections": 10,
                        "cpu": "500m", "memory": "512Mi", "replicas": 1},
                    "warnings": w,
                })
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "apiVersion": "benchrun.dev/v1alpha1", "kind": "BenchmarkRun",
            "metadata": {"name": "seed"},
            "spec": {"targets": [{"name": target, "image": "x"}],
                "scenarios": [{"name": "list", "path": "/"}], "load": {"duration": "20s"}},
            "status": {"results": results},
        }))
        .unwrap()
    }

    #[test]
    fn cells_limited_by_their_backing_service_in_most_repeats_did_not_measure_the_target() {
        let select = Selector {
            target: Some("express".into()),
            ..Default::default()
        };
        let bound = "ServiceBound: backing service mongo averaged 100.0% of its CPU limit";
        let run = run_with("express", &[&[bound], &[bound], &[]]);
        let why = not_the_target(&run, &select).expect("2 of 3 bound");
        assert!(
            why.starts_with("its backing service was at its CPU limit in 2 of 3 measurements of express (ServiceBound)"),
            "{why}"
        );
        let restarted = "ServiceRestarted: backing service mongo restarted 1 time";
        let run = run_with("express", &[&[bound, restarted], &[restarted], &[bound]]);
        assert!(not_the_target(&run, &select)
            .unwrap()
            .starts_with("its backing service restarted"));
        // One of three is not most: the cells measured the target.
        let run = run_with("express", &[&[bound], &[], &[]]);
        assert_eq!(not_the_target(&run, &select), None);
    }

    #[test]
    fn a_side_held_back_by_its_store_counts_only_when_it_won_anyway() {
        use ComparisonVerdict::*;
        let why = Some("held back".to_string());
        // The bound candidate won: its lead is at least what was measured.
        assert_eq!(bound_side_loses(&(why.clone(), None), &est(Faster)), None);
        // It lost, tied or could not tell: it may have lost to its store.
        for v in [Slower, Equivalent, Inconclusive] {
            assert_eq!(
                bound_side_loses(&(why.clone(), None), &est(v)),
                why.clone(),
                "{v:?}"
            );
        }
        // The same for the reference, mirrored.
        assert_eq!(bound_side_loses(&(None, why.clone()), &est(Slower)), None);
        assert_eq!(
            bound_side_loses(&(None, why.clone()), &est(Faster)),
            why.clone()
        );
        // Both bound: one of them did not win.
        assert!(bound_side_loses(&(why.clone(), why.clone()), &est(Faster)).is_some());
        assert_eq!(bound_side_loses(&(None, None), &est(Slower)), None);
    }
}
