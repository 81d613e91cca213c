use benchrun_api::validate::BaselinePlan;
use benchrun_api::{CellResult, Coordinates, Outcome, Verdict};
use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};

use super::*;
use crate::results::tests::load;

/// Per-second throughputs around `mean` with normal noise of `cv` × mean (Box-Muller over a
/// seeded generator, so every run of the test sees the same samples).
fn samples(rng: &mut TestRng, n: usize, mean: f64, cv: f64) -> Vec<f64> {
    let mut uniform = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (0..n)
        .map(|_| {
            let (u1, u2): (f64, f64) = (uniform().max(f64::MIN_POSITIVE), uniform());
            let z = (-2.0_f64 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            (mean * (1.0 + cv * z)).round()
        })
        .collect()
}

fn rng(seed: u8) -> TestRng {
    TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32])
}

#[test]
fn the_p_value_is_the_textbook_one_with_and_without_ties() {
    // No ties: U = 1, z = (36 − 1 − 0.5) / √108, p = 0.000901 (worked by hand).
    let a = [10.0, 12.0, 11.0, 15.0, 14.0, 13.0, 9.0, 16.0];
    let b = [18.0, 17.0, 20.0, 19.0, 15.5, 21.0, 22.0, 16.5, 23.0];
    let p = mann_whitney_p(&a, &b).unwrap();
    assert!((p - 0.000_900_9).abs() < 1e-6, "{p}");
    assert_eq!(mann_whitney_p(&b, &a), Some(p), "two-sided: symmetric");
    // Ties: midranks, Σ(t³ − t) = 48, variance 10.857, z = 1.3657, p = 0.17203.
    let p = mann_whitney_p(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 3.0, 4.0]).unwrap();
    assert!((p - 0.172_034).abs() < 1e-5, "{p}");
    assert_eq!(mann_whitney_p(&[5.0, 5.0], &[5.0, 5.0]), None, "all tied");
    assert_eq!(mann_whitney_p(&[], &[1.0]), None);
}

#[test]
fn two_samples_of_one_distribution_are_the_same() {
    // 30 per-second samples each (a 30 s cell), 5 % noise, 200 pairs: at α = 1 % about 2
    // false alarms are expected; the tolerance of 5 % removes nearly all of them.
    let mut r = rng(1);
    let mut not_same = 0;
    for _ in 0..200 {
        let a = samples(&mut r, 30, 4000.0, 0.05);
        let b = samples(&mut r, 30, 4000.0, 0.05);
        if compare(&a, &b, 0.05).verdict != Verdict::Same {
            not_same += 1;
        }
    }
    assert!(
        not_same <= 2,
        "{not_same} of 200 identical pairs judged different"
    );
}

#[test]
fn a_ten_percent_drop_is_worse_and_a_rise_is_better() {
    let mut r = rng(2);
    for _ in 0..200 {
        let base = samples(&mut r, 30, 4000.0, 0.05);
        let slower = samples(&mut r, 30, 3600.0, 0.05);
        let c = compare(&base, &slower, 0.05);
        assert_eq!(c.verdict, Verdict::Worse, "{c:?}");
        assert!((0.85..0.95).contains(&c.throughput_ratio), "{c:?}");
        assert!(c.p_value < ALPHA, "{c:?}");
        let faster = samples(&mut r, 30, 4400.0, 0.05);
        assert_eq!(compare(&base, &faster, 0.05).verdict, Verdict::Better);
    }
}

#[test]
fn a_change_within_the_tolerance_is_the_same_however_significant() {
    // 3 % slower with 0.5 % noise: the test is sure, the tolerance says it does not matter.
    let mut r = rng(3);
    let base = samples(&mut r, 30, 4000.0, 0.005);
    let slower = samples(&mut r, 30, 3880.0, 0.005);
    let c = compare(&base, &slower, 0.05);
    assert!(c.p_value < 1e-6, "{c:?}");
    assert_eq!(c.verdict, Verdict::Same);
    assert_eq!(
        compare(&base, &slower, 0.02).verdict,
        Verdict::Worse,
        "a tighter tolerance"
    );
}

#[test]
fn too_few_samples_give_no_verdict_but_same() {
    let c = compare(&[4000.0, 4010.0, 3990.0], &[2000.0, 2010.0, 1990.0], 0.05);
    assert_eq!((c.verdict, c.samples), (Verdict::Same, (3, 3)));
    assert!((c.throughput_ratio - 0.5).abs() < 1e-9);
}

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

#[test]
fn only_whole_seconds_inside_the_window_are_samples() {
    let mut l = load();
    l.window_start_ms = 1_000_500;
    l.window_end_ms = 1_004_000;
    let entry = |second: u64, requests: u64| benchrun_load::TimelineEntry {
        second,
        requests,
        errors: 0,
        p50_us: 0,
        p99_us: 0,
        histogram: String::new(),
    };
    l.timeline = (999..=1004).map(|s| entry(s, s - 990)).collect();
    // 999 and 1000 start before the window, 1004 ends after it.
    assert_eq!(per_second_throughput(&l), vec![11.0, 12.0, 13.0]);
}

fn timeline_load(per_second: &[u64]) -> benchrun_load::LoadResult {
    let mut l = load();
    l.window_start_ms = 2_000_000;
    l.window_end_ms = 2_000_000 + 1000 * per_second.len() as u64;
    l.timeline = per_second
        .iter()
        .enumerate()
        .map(|(i, &requests)| benchrun_load::TimelineEntry {
            second: 2000 + i as u64,
            requests,
            errors: 0,
            p50_us: 0,
            p99_us: 0,
            histogram: String::new(),
        })
        .collect();
    l
}

#[test]
fn a_judged_measurement_carries_ratios_the_p_value_and_its_sample_counts() {
    let plan = BaselinePlan {
        run: "last-week".into(),
        tolerance: 0.05,
    };
    let mut r = rng(4);
    let before = BaselineCell {
        samples: samples(&mut r, 20, 4000.0, 0.03),
        p99_ms: vec![10.0, 12.0],
    };
    let now: Vec<u64> = samples(&mut r, 10, 3000.0, 0.03)
        .iter()
        .map(|x| *x as u64)
        .collect();
    let mut result = CellResult {
        latency_ms: Some(benchrun_api::Latency {
            p99: 16.5,
            ..Default::default()
        }),
        ..CellResult::default()
    };
    let b = judge(
        &plan,
        Some(&Ok(before.clone())),
        &timeline_load(&now),
        &result,
    );
    assert_eq!(b.verdict, Verdict::Worse);
    assert_eq!((b.baseline_samples, b.samples), (20, 10));
    assert!((0.7..0.8).contains(&b.throughput_ratio.unwrap()), "{b:?}");
    assert_eq!(b.p99_ratio, Some(1.5));
    assert!(b.p_value.unwrap() < 1e-4, "{b:?}");
    assert_eq!(b.reason, None);
    // Three seconds now: a ratio, but no verdict beyond Same, and the reason says why.
    result.latency_ms = None;
    let b = judge(&plan, Some(&Ok(before)), &timeline_load(&now[..3]), &result);
    assert_eq!((b.verdict, b.p99_ratio), (Verdict::Same, None));
    assert!(b.reason.unwrap().starts_with("fewer than 5 whole seconds"));
}

#[test]
fn a_measurement_of_mostly_errors_is_not_compared_with_its_baseline() {
    let plan = BaselinePlan {
        run: "last-week".into(),
        tolerance: 0.05,
    };
    let before = BaselineCell {
        samples: vec![1000.0; 10],
        p99_ms: vec![10.0],
    };
    let failures = CellResult {
        throughput: Some(8144.0),
        error_rate: Some(1.0),
        ..CellResult::default()
    };
    let b = judge(
        &plan,
        Some(&Ok(before)),
        &timeline_load(&[8144; 10]),
        &failures,
    );
    assert_eq!(b.verdict, Verdict::Unmatched);
    assert_eq!(
        b.reason.as_deref(),
        Some("not compared: 100.0% of its requests failed (more than 50%)")
    );
}

#[test]
fn an_unreadable_baseline_is_unmatched_with_its_reason() {
    let plan = BaselinePlan {
        run: "gone".into(),
        tolerance: 0.05,
    };
    let why: BaselineObserved = Err("BenchmarkRun gone not found in this namespace".into());
    let b = judge(&plan, Some(&why), &load(), &CellResult::default());
    assert_eq!(b.verdict, Verdict::Unmatched);
    assert_eq!(
        b.reason.as_deref(),
        Some("BenchmarkRun gone not found in this namespace")
    );
    assert_eq!((b.throughput_ratio, b.p_value), (None, None));
}
