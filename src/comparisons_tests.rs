use benchrun_api::{
    CellResult, CompareAxis, ComparisonKind, ComparisonVerdict, ErrorCounts, Outcome, ValidatedRun,
};

use super::*;
use crate::results::tests::run_yaml;

/// A measured repeat at these coordinates: `throughput` req/s over 20 s, p99 10 ms, a steady
/// per-second throughput and `errors` 5xx responses.
fn repeat(cell: i32, target: &str, connections: i32, throughput: f64, errors: i64) -> CellResult {
    let mut coordinates = crate::results::tests::measured().coordinates;
    coordinates.target = target.into();
    coordinates.connections = connections;
    CellResult {
        cell,
        coordinates,
        outcome: Outcome::Measured,
        throughput: Some(throughput),
        requests: Some((throughput * 20.0) as i64),
        errors: Some(ErrorCounts {
            status5xx: errors,
            ..Default::default()
        }),
        latency_ms: Some(benchrun_api::Latency {
            p99: 10.0,
            ..Default::default()
        }),
        per_second_cv: Some(0.05),
        ..CellResult::default()
    }
}

/// Two targets × two connection counts (cells 0–3: express c=10, c=100, spring c=10, c=100),
/// 3 repeats each: spring 20 % faster at c=10, the same at c=100.
fn results() -> Vec<CellResult> {
    let mut out = Vec::new();
    for (cell, target, c, base) in [
        (0, "express", 10, 1000.0),
        (1, "express", 100, 2000.0),
        (2, "spring", 10, 1200.0),
        (3, "spring", 100, 2000.0),
    ] {
        for (i, jitter) in [0.99, 1.0, 1.01].iter().enumerate() {
            let mut r = repeat(cell, target, c, base * jitter, 0);
            r.repeat = i as i32;
            // Each round on a fresh deployment of each configuration (repeatOrder Interleaved).
            r.target_pods = vec![format!("{target}-c{c}-r{i}")];
            out.push(r);
        }
    }
    out
}

#[test]
fn each_target_is_compared_with_the_first_at_the_same_other_coordinates() {
    let run = run_yaml("");
    let c = within_run(&run, &results());
    assert_eq!(c.len(), 2, "{c:#?}");
    assert!(c.iter().all(|c| c.against == ComparisonKind::Target));
    assert!(c
        .iter()
        .all(|c| (c.candidate.as_str(), c.reference.as_str()) == ("spring", "express")));
    assert_eq!(c[0].coordinates.connections, 10);
    assert_eq!(c[0].verdict, ComparisonVerdict::Faster);
    assert_eq!(c[0].ratio, Some(1.2));
    let t = c[0].throughput.as_ref().unwrap();
    assert!(t.low > 1.05 && t.high < 1.35, "{t:?}");
    assert_eq!((c[0].candidate_repeats, c[0].reference_repeats), (3, 3));
    assert_eq!(c[1].verdict, ComparisonVerdict::Equivalent, "{:?}", c[1]);
    assert_eq!(c[0].tolerance, 0.05);
    let errors = c[0].errors.as_ref().unwrap();
    assert_eq!(errors.verdict, ComparisonVerdict::Equivalent);
    assert!(c[0].power.as_ref().unwrap().power > 0.9);
    assert_eq!(
        headline(&c).as_deref(),
        Some("spring/express 1.20× [1.17–1.23] Faster")
    );
}

#[test]
fn one_repeat_a_side_gives_a_ratio_without_an_interval_and_says_why() {
    let run = run_yaml("");
    let one: Vec<CellResult> = results().into_iter().filter(|r| r.repeat == 0).collect();
    let c = within_run(&run, &one);
    assert_eq!(c[0].verdict, ComparisonVerdict::Inconclusive);
    assert_eq!((c[0].ratio, c[0].throughput.is_none()), (Some(1.2), true));
    assert!(c[0].reason.as_ref().unwrap().contains("at least 2 a side"));
    assert_eq!(
        headline(&c).as_deref(),
        Some("spring/express 1.20× (no interval) Inconclusive")
    );
}

#[test]
fn a_failed_reference_leaves_its_candidates_uncompared() {
    let run = run_yaml("");
    let mut rs = results();
    for r in rs.iter_mut().filter(|r| r.cell == 0) {
        r.outcome = Outcome::Failed;
    }
    let c = within_run(&run, &rs);
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].verdict, ComparisonVerdict::NotCompared);
    assert_eq!(
        c[0].reason.as_deref(),
        Some("not compared: the reference (cell 0 has no measured repeat)")
    );
    assert_eq!(c[1].coordinates.connections, 100);
    assert_eq!(c[1].verdict, ComparisonVerdict::Equivalent);
}

/// Issue 52: a healthy target against a reference whose every request returned 404 gets no
/// ratio, no interval and no verdict, but the reason; it never headlines, and the healthy
/// comparison does.
#[test]
fn a_reference_of_all_errors_is_not_compared_and_says_why() {
    let run = run_yaml("");
    let mut rs = results();
    for r in rs.iter_mut().filter(|r| r.cell == 0) {
        r.errors = Some(ErrorCounts {
            status4xx: r.requests.unwrap(),
            ..Default::default()
        });
        r.error_rate = Some(1.0);
    }
    let c = within_run(&run, &rs);
    let first = &c[0];
    assert_eq!(first.verdict, ComparisonVerdict::NotCompared);
    assert_eq!(
        (
            first.ratio,
            &first.throughput,
            &first.p99,
            &first.errors,
            &first.power
        ),
        (None, &None, &None, &None, &None)
    );
    assert_eq!(
        first.reason.as_deref(),
        Some("not compared: the reference (cell 0 had 100% errors (4xx), above the 1% a comparison allows)")
    );
    assert_eq!(
        headline(&c).as_deref(),
        Some("spring/express 1.00× [0.98–1.02] Equivalent")
    );
    // An SLO error rate sets the threshold: at 100 % allowed the cell is compared.
    let lax = run_yaml("slo: {errorRate: \"100%\"}");
    assert!(within_run(&lax, &rs)[0].ratio.is_some());
    // A generator-bound candidate is not compared either.
    let mut rs = results();
    rs[7].warnings.push(benchrun_api::Warning::new(
        benchrun_api::WarningCode::GeneratorBound,
        "x",
    ));
    let c = within_run(&run, &rs);
    assert!(
        c[0].reason
            .as_deref()
            .unwrap()
            .starts_with("not compared: the candidate (cell 2 r1 was generator-bound"),
        "{:?}",
        c[0].reason
    );
}

/// A repeat whose offered rate was not met because the generator's connections carried too
/// few requests (not its CPU, not the target's) measured the connections' ceiling: its cell is
/// not compared, and the entry says which repeat and why. Met rates, or a target at its CPU
/// limit, are compared as before.
#[test]
fn a_connection_bound_side_is_not_compared_and_says_why() {
    let run = run_yaml("");
    let open = |rs: &mut Vec<CellResult>, achieved: f64, target_cpu: f64| {
        for r in rs.iter_mut() {
            r.coordinates.rate = Some(1000);
            r.usage.cpu_avg_of_limit = Some(0.3);
        }
        let r = &mut rs[7]; // cell 2 (spring c=10), repeat 1
        r.throughput = Some(achieved);
        r.usage.cpu_avg_of_limit = Some(target_cpu);
    };
    let mut rs = results();
    open(&mut rs, 400.0, 0.3);
    let c = within_run(&run, &rs);
    assert_eq!(c[0].verdict, ComparisonVerdict::NotCompared, "{:?}", c[0]);
    assert_eq!(
        c[0].reason.as_deref(),
        Some("not compared: the candidate (cell 2 r1 was connection-bound (its 10 connections, not the target, set the rate))")
    );
    // The target at its CPU limit set the rate: that is the target's figure, compared.
    let mut rs = results();
    open(&mut rs, 400.0, 0.97);
    assert_ne!(
        within_run(&run, &rs)[0].verdict,
        ComparisonVerdict::NotCompared
    );
    // The rate met: compared.
    let mut rs = results();
    open(&mut rs, 1000.0, 0.3);
    assert_ne!(
        within_run(&run, &rs)[0].verdict,
        ComparisonVerdict::NotCompared
    );
}

#[test]
fn more_errors_make_an_otherwise_equivalent_target_slower() {
    let run = run_yaml("");
    let mut rs = results();
    for r in rs.iter_mut().filter(|r| r.cell == 3) {
        r.errors.as_mut().unwrap().status5xx = 400; // 1 % of 40 000
    }
    let c = within_run(&run, &rs);
    assert_eq!(
        c[1].errors.as_ref().unwrap().verdict,
        ComparisonVerdict::Slower
    );
    assert_eq!(c[1].verdict, ComparisonVerdict::Slower);
}

/// One target, two scenarios (n2000, n2200) × two CPU limits (250m, 500m), 3 repeats each on
/// a fresh deployment per round: n2200 10 % slower than n2000, 500m twice 250m.
fn scenarios_by_cpu(compare: &str) -> (ValidatedRun, Vec<CellResult>) {
    let yaml = format!(
        r#"
targets: [{{name: demo, image: "x:1"}}]
scenarios: [{{name: n2000, path: "/compute?n=2000"}}, {{name: n2200, path: "/compute?n=2200"}}]
load: {{connections: 4, duration: 5s}}
matrix: {{cpu: ["250m", "500m"]}}
repeats: 3
{compare}
"#
    );
    let spec: benchrun_api::BenchmarkRunSpec = serde_yaml::from_str(&yaml).unwrap();
    let run = benchrun_api::validate(&spec).unwrap();
    let mut rs = Vec::new();
    // Matrix order: cpu outer, scenario inner.
    for (cell, cpu, scenario, t) in [
        (0, "250m", "n2000", 1000.0),
        (1, "250m", "n2200", 900.0),
        (2, "500m", "n2000", 2000.0),
        (3, "500m", "n2200", 1800.0),
    ] {
        for (i, j) in [0.98, 1.0, 1.02].iter().enumerate() {
            let mut r = repeat(cell, "demo", 4, t * j, 0);
            r.coordinates.scenario = scenario.into();
            r.coordinates.cpu = cpu.into();
            r.repeat = i as i32;
            // Both scenarios of a round on that round's deployment of the CPU limit.
            r.target_pods = vec![format!("demo-{cpu}-r{i}")];
            rs.push(r);
        }
    }
    (run, rs)
}

#[test]
fn two_scenarios_of_one_target_are_not_compared_unless_asked() {
    let (run, rs) = scenarios_by_cpu("");
    assert_eq!(within_run(&run, &rs), Vec::new());
    assert_eq!(headline(&refresh(&run, &rs, &[])), None);
}

#[test]
fn along_the_scenarios_each_request_is_compared_with_the_first_at_each_cpu_limit() {
    let (run, rs) = scenarios_by_cpu("compare: {along: scenario}");
    let c = within_run(&run, &rs);
    assert_eq!(c.len(), 2, "{c:#?}");
    for (c, cpu) in c.iter().zip(["250m", "500m"]) {
        assert_eq!(c.against, ComparisonKind::Scenario);
        assert_eq!(c.axis, None);
        assert_eq!(
            (c.candidate.as_str(), c.reference.as_str()),
            ("n2200", "n2000")
        );
        assert_eq!(c.coordinates.cpu, cpu);
        assert_eq!(c.verdict, ComparisonVerdict::Slower);
    }
}

#[test]
fn along_the_cpu_limit_each_limit_is_compared_with_the_first_listed_per_scenario() {
    let (run, rs) = scenarios_by_cpu("compare: {along: cpu}");
    let c = within_run(&run, &rs);
    assert_eq!(c.len(), 2, "{c:#?}");
    for (c, scenario) in c.iter().zip(["n2000", "n2200"]) {
        assert_eq!(c.against, ComparisonKind::Axis);
        assert_eq!(c.axis, Some(CompareAxis::Cpu));
        assert_eq!(
            (c.candidate.as_str(), c.reference.as_str()),
            ("500m", "250m")
        );
        assert_eq!(c.coordinates.scenario, scenario);
        assert_eq!(c.coordinates.cpu, "500m");
        assert_eq!(
            (c.candidate_deployments, c.reference_deployments),
            (Some(3), Some(3))
        );
        let t = c.throughput.as_ref().unwrap();
        assert!(t.low > 1.9 && t.high < 2.1, "{t:?}");
        assert_eq!(c.verdict, ComparisonVerdict::Faster);
        // The reference cell is found again from the entry (repeatsUntil measures both).
        let mut at_250m = c.coordinates.clone();
        at_250m.cpu = "250m".into();
        assert_eq!(c.reference_coordinates(), Some(at_250m));
    }
    assert_eq!(
        headline(&refresh(&run, &rs, &[])).as_deref(),
        Some("n2000 500m/250m 2.00× [1.91–2.09] Faster")
    );
}

#[test]
fn the_named_axis_comes_before_the_targets() {
    let run = run_yaml("compare: {along: connections}");
    let c = within_run(&run, &results());
    let kinds: Vec<(ComparisonKind, &str, &str)> = c
        .iter()
        .map(|c| (c.against, c.candidate.as_str(), c.reference.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (ComparisonKind::Axis, "100", "10"),
            (ComparisonKind::Axis, "100", "10"),
            (ComparisonKind::Target, "spring", "express"),
            (ComparisonKind::Target, "spring", "express"),
        ]
    );
    assert_eq!(c[0].coordinates.target, "express");
    assert_eq!(c[1].coordinates.target, "spring");
}

#[test]
fn refresh_keeps_the_baseline_entries_and_bounds_the_list() {
    let run = run_yaml("baseline: {run: last-week}");
    let rs = results();
    let cell: Vec<&CellResult> = rs.iter().filter(|r| r.cell == 0).collect();
    let base: Vec<CellResult> = rs
        .iter()
        .filter(|r| r.cell == 0)
        .map(|r| CellResult {
            throughput: r.throughput.map(|t| t * 1.25),
            ..r.clone()
        })
        .collect();
    let entry = baseline_entry(&run, "last-week", &cell, &base).unwrap();
    assert_eq!(entry.against, ComparisonKind::Baseline);
    assert_eq!(entry.verdict, ComparisonVerdict::Slower);
    let mut previous = Vec::new();
    upsert_baseline(&mut previous, entry.clone());
    upsert_baseline(&mut previous, entry.clone());
    assert_eq!(previous.len(), 1, "one entry per cell");
    let all = refresh(&run, &rs, &previous);
    assert_eq!(all.len(), 3);
    assert_eq!(all[2], entry);
    let many = vec![entry; MAX_COMPARISONS + 5];
    assert_eq!(refresh(&run, &rs, &many).len(), MAX_COMPARISONS);
    // Without comparisons within the run, the baseline's lowest ratio is the headline.
    assert_eq!(
        headline(&previous).as_deref(),
        Some("express/last-week 0.80× [0.78–0.82] Slower")
    );
}

#[test]
fn repeats_on_one_deployment_a_side_keep_their_interval_but_give_no_verdict() {
    let run = run_yaml("");
    // spring 20 % faster at c=10, but each target's three repeats ran on one pod.
    let mut rs = results();
    for r in &mut rs {
        r.target_pods = vec![format!("{}-only", r.coordinates.target)];
    }
    let c = within_run(&run, &rs);
    let fast = &c[0];
    assert_eq!(fast.verdict, ComparisonVerdict::Inconclusive, "{fast:#?}");
    assert_eq!(
        (fast.candidate_deployments, fast.reference_deployments),
        (Some(1), Some(1))
    );
    assert!(fast.shared_deployment());
    let t = fast
        .throughput
        .as_ref()
        .expect("the interval is still shown");
    assert!(
        t.low > 1.1 && t.verdict == ComparisonVerdict::Inconclusive,
        "{t:?}"
    );
    assert_eq!(t.p_worse, None);
    assert_eq!(fast.power, None);
    let why = fast.reason.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("repeats shared one deployment on either side")
            && why.contains("set repeatOrder Interleaved"),
        "{why}"
    );
    // The same figures on a fresh deployment per repeat give the verdict.
    let c = within_run(&run, &results());
    assert_eq!(c[0].verdict, ComparisonVerdict::Faster);
    assert_eq!(
        (c[0].candidate_deployments, c[0].reference_deployments),
        (Some(3), Some(3))
    );
    assert!(!c[0].shared_deployment());
}
