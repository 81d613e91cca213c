//! The rounds of `spec.repeatsUntil` in the planner: added after the first repeats while a
//! comparison is too wide, stopped when it is precise or at `maxRepeats`.

use super::tests::{at, cond, obs};
use super::*;
use crate::builders::fixtures::run as validated;
use crate::results;
use benchrun_api::Outcome;

/// Two targets (a, b), one cell each, 2 repeats, rounds up to 4 until within ±5 %.
const SPEC: &str = r#"
targets: [{name: a, image: img:1}, {name: b, image: img:1}]
scenarios: [{name: hello, path: /hello}]
load: {connections: 4, duration: 20s}
repeats: 2
repeatsUntil: {maxRepeats: 4, ratioWithin: "5%"}
"#;

/// A running run between measurements with these (cell, repeat, throughput) results.
fn status(run: &ValidatedRun, measured: &[(usize, usize, f64)]) -> BenchmarkRunStatus {
    BenchmarkRunStatus {
        phase: Some(Phase::Running),
        results: measured
            .iter()
            .map(|&(cell, repeat, tp)| CellResult {
                outcome: Outcome::Measured,
                reason: None,
                throughput: Some(tp),
                ..results::failed_result(run, &run.cells[cell], repeat, String::new())
            })
            .collect(),
        ..BenchmarkRunStatus::default()
    }
}

fn next(d: &Decision) -> Option<(i32, i32)> {
    d.status.current.as_ref().map(|c| (c.cell, c.repeat))
}

#[test]
fn a_wide_comparison_gets_a_round_after_the_first_repeats_and_stops_at_max_repeats() {
    let run = validated(SPEC);
    // b against a moves by ±20 % between repeats: far wider than ±5 %.
    let mut m = vec![(0, 0, 1000.0), (0, 1, 1002.0), (1, 0, 900.0)];
    let d = plan(&run, &status(&run, &m), &obs(), at(0));
    assert_eq!(next(&d), Some((1, 1)), "the first repeats come first");
    assert_eq!(d.status.total, Some(4));
    m.push((1, 1, 1300.0));
    let d = plan(&run, &status(&run, &m), &obs(), at(0));
    // Interleaved (the default of a run that compares): the round's cells in a seeded order.
    assert_eq!(next(&d).map(|n| n.1), Some(2), "a round follows");
    assert_eq!(d.status.total, Some(6));
    m.extend([(0, 2, 1001.0), (1, 2, 1000.0)]);
    let d = plan(&run, &status(&run, &m), &obs(), at(0));
    assert_eq!(next(&d).map(|n| n.1), Some(3), "and another, still wide");
    assert_eq!(d.status.total, Some(8));
    m.extend([(0, 3, 999.0), (1, 3, 1250.0)]);
    let d = plan(&run, &status(&run, &m), &obs(), at(0));
    assert_eq!(
        d.status.phase,
        Some(Phase::Succeeded),
        "maxRepeats 4 reached"
    );
    assert_eq!(d.status.total, Some(8));
    assert_eq!(d.status.progress.as_deref(), Some("8/8"));
    assert_eq!(d.status.results.len(), 8, "no result lost");
    let r = d
        .status
        .repeats_until
        .as_ref()
        .expect("status.repeatsUntil");
    assert!(!r.goal_met);
    assert_eq!((r.repeats, r.rounds.len()), (4, 2));
    let done = cond(&d.status, benchrun_api::ConditionType::Succeeded);
    assert!(
        done.message
            .contains("repeatsUntil: maxRepeats 4 reached at ±"),
        "{}",
        done.message
    );
}

#[test]
fn a_precise_comparison_ends_the_run_after_the_first_repeats() {
    // The width rule may stop only from MIN_REPEATS_TO_STOP (6) repeats on.
    let run = validated(
        &SPEC
            .replace("repeats: 2", "repeats: 6")
            .replace("maxRepeats: 4", "maxRepeats: 8"),
    );
    let m: Vec<(usize, usize, f64)> = (0..6)
        .flat_map(|r| [(0, r, 1000.0 + r as f64), (1, r, 1200.0 + r as f64)])
        .collect();
    let d = plan(&run, &status(&run, &m), &obs(), at(0));
    assert_eq!(d.status.phase, Some(Phase::Succeeded));
    assert_eq!(d.status.total, Some(12));
    let r = d.status.repeats_until.as_ref().unwrap();
    assert!(r.goal_met && r.rounds.is_empty(), "{r:?}");
    assert!(
        r.message
            .starts_with("every comparison within ±5% after 6 repeats"),
        "{}",
        r.message
    );
    let c = &d.status.comparisons[0];
    assert_eq!(c.precision_met, Some(true));
    assert!(c.precision.unwrap() < 0.05);
}

#[test]
fn a_recorded_measurement_refreshes_what_the_rounds_reached() {
    let run = validated(SPEC);
    let mut s = status(&run, &[(0, 0, 1000.0), (0, 1, 1002.0), (1, 0, 900.0)]);
    s.current = Some(CurrentMeasurement {
        cell: 1,
        repeat: 1,
        stage: benchrun_api::Stage::Loading,
        since: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at(0)),
        job: None,
    });
    let o = crate::observed::Observed {
        job: crate::observed::JobObserved::Failed("boom".into()),
        ..obs()
    };
    // The last of the first repeats fails: b/a asks for no round, and status says why.
    let d = plan(&run, &s, &o, at(1000));
    assert_eq!(d.status.phase, Some(Phase::Succeeded));
    let r = d.status.repeats_until.as_ref().unwrap();
    assert!(
        r.message.starts_with("stopped at 2 repeats"),
        "{}",
        r.message
    );
    assert_eq!(d.status.comparisons[0].precision_met, Some(false));
}
