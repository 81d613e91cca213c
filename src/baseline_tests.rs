use benchrun_api::validate::BaselinePlan;
use benchrun_api::{CellResult, ComparisonVerdict, Coordinates, Outcome, Verdict};

use super::*;
use crate::results::tests::{load, run_yaml};

fn result(cell: i32, connections: i32, outcome: Outcome) -> CellResult {
    CellResult {
        cell,
        coordinates: Coordinates {
            target: "demo".into(),
            scenario: "hello".into(),
            cpu: "500m".into(),
            memory: "128Mi".into(),
            replicas: 1,
            connections,
            rate: None,
            ..Coordinates::default()
        },
        outcome,
        ..CellResult::default()
    }
}

#[test]
fn only_whole_seconds_inside_the_window_are_samples() {
    let mut l = load();
    l.window_start_ms = 1_000_500;
    l.window_end_ms = 1_004_000;
    let entry = |second: u64, requests: u64| benchrun_wire::TimelineEntry {
        second,
        requests,
        errors: 0,
        p50_us: 0,
        p99_us: 0,
        histogram: String::new(),
    };
    l.timeline = (999..=1004).map(|s| entry(s, s - 990)).collect();
    // 999 and 1000 start before the window, 1004 ends after it.
    assert_eq!(
        crate::comparisons::per_second_throughput(&l),
        vec![11.0, 12.0, 13.0]
    );
    // Their spread: mean 12, standard deviation 1.
    assert_eq!(crate::comparisons::per_second_cv(&l), Some(0.0833));
    // With a response lag of 800 ms the window's first responses came at 1 001 300: second
    // 1001 held the first of them only. The drain after the window's end is not its time.
    l.window_counts = Some(benchrun_wire::WindowCounts {
        response_lag_ms: Some(800.0),
        drain_ms: 800,
        ..Default::default()
    });
    l.timeline.push(entry(1005, 3));
    assert_eq!(
        crate::comparisons::per_second_throughput(&l),
        vec![12.0, 13.0]
    );
}

#[test]
fn cells_are_matched_by_coordinates_whatever_their_order() {
    let baseline = vec![
        result(0, 2, Outcome::Measured),
        result(1, 8, Outcome::Measured),
        result(1, 8, Outcome::Measured),
        result(2, 32, Outcome::Failed),
    ];
    // The current run sweeps the connections in the other order.
    let current = result(0, 8, Outcome::Measured);
    let found = matching(&baseline, &current.coordinates);
    assert_eq!(found.len(), 2);
    assert!(found.iter().all(|r| r.cell == 1));
    assert!(matching(&baseline, &result(2, 32, Outcome::Measured).coordinates).is_empty());
}

/// A measured repeat of `cell` at `throughput` req/s and p99 `p99` ms.
fn repeat(cell: i32, repeat: i32, throughput: f64, p99: f64) -> CellResult {
    CellResult {
        repeat,
        // Each repeat on a deployment of its own (repeatOrder Interleaved).
        target_pods: vec![format!("demo-c{cell}-r{repeat}")],
        throughput: Some(throughput),
        requests: Some((throughput * 20.0) as i64),
        errors: Some(Default::default()),
        latency_ms: Some(benchrun_api::Latency {
            p99,
            ..Default::default()
        }),
        ..result(cell, 8, Outcome::Measured)
    }
}

fn plan() -> BaselinePlan {
    BaselinePlan {
        run: "last-week".into(),
        tolerance: 0.05,
    }
}

#[test]
fn a_cell_is_judged_over_its_repeats_not_its_seconds() {
    let run = run_yaml("baseline: {run: last-week}");
    let before = BaselineCell {
        results: [4000.0, 4040.0, 3960.0]
            .iter()
            .enumerate()
            .map(|(i, &t)| repeat(1, i as i32, t, 10.0))
            .collect(),
    };
    let now = [
        repeat(0, 0, 3000.0, 15.0),
        repeat(0, 1, 3030.0, 15.2),
        repeat(0, 2, 2970.0, 14.8),
    ];
    let cell: Vec<&CellResult> = now.iter().collect();
    let (b, c) = judge(&plan(), Some(&Ok(before.clone())), &run, &cell);
    assert_eq!(b.verdict, Verdict::Worse, "{b:?}");
    assert_eq!((b.baseline_repeats, b.repeats), (Some(3), Some(3)));
    assert_eq!((b.baseline_samples, b.samples), (0, 0));
    assert_eq!(b.throughput_ratio, Some(0.75));
    assert!(
        b.ratio_low.unwrap() < 0.75 && 0.75 < b.ratio_high.unwrap(),
        "{b:?}"
    );
    // The ratio of the geometric means of the p99s.
    assert_eq!(b.p99_ratio, Some(1.4999));
    assert!(b.p_value.unwrap() < 1e-4, "{b:?}");
    let c = c.unwrap();
    assert_eq!(c.verdict, ComparisonVerdict::Slower);
    assert_eq!(
        (c.candidate.as_str(), c.reference.as_str()),
        ("demo", "last-week")
    );
    // One repeat so far: a ratio, no interval, and the verdict says it cannot tell.
    let (b, c) = judge(&plan(), Some(&Ok(before)), &run, &cell[..1]);
    assert_eq!((b.verdict, b.ratio_low), (Verdict::Inconclusive, None));
    assert_eq!(b.p99_ratio, Some(1.5));
    assert!(b.reason.unwrap().contains("at least 2 a side"));
    assert_eq!(c.unwrap().verdict, ComparisonVerdict::Inconclusive);
}

#[test]
fn a_measurement_of_mostly_errors_is_not_compared_with_its_baseline() {
    let run = run_yaml("baseline: {run: last-week}");
    let before = BaselineCell {
        results: vec![repeat(1, 0, 1000.0, 10.0), repeat(1, 1, 1000.0, 10.0)],
    };
    let mut failures = repeat(0, 1, 8144.0, 1.0);
    failures.error_rate = Some(1.0);
    let earlier = repeat(0, 0, 1000.0, 10.0);
    let (b, c) = judge(&plan(), Some(&Ok(before)), &run, &[&earlier, &failures]);
    // The comparison entry says why, without figures.
    let c = c.unwrap();
    assert_eq!(
        (b.verdict, c.verdict),
        (Verdict::Unmatched, ComparisonVerdict::NotCompared)
    );
    assert_eq!((c.ratio, c.throughput), (None, None));
    assert_eq!(
        b.reason.as_deref(),
        Some("not compared: the candidate (cell 0 r1 had 100% errors, above the 1% a comparison allows)")
    );
}

#[test]
fn an_unreadable_baseline_is_unmatched_with_its_reason() {
    let plan = BaselinePlan {
        run: "gone".into(),
        tolerance: 0.05,
    };
    let why: BaselineObserved = Err("BenchmarkRun gone not found in this namespace".into());
    let run = run_yaml("baseline: {run: gone}");
    let r = CellResult::default();
    let (b, c) = judge(&plan, Some(&why), &run, &[&r]);
    assert_eq!((b.verdict, c), (Verdict::Unmatched, None));
    assert_eq!(
        b.reason.as_deref(),
        Some("BenchmarkRun gone not found in this namespace")
    );
    assert_eq!((b.throughput_ratio, b.p_value), (None, None));
}
