//! Tests of the result mapping, variance, summary and conditions, and the fixtures shared
//! with the validity tests.

use std::collections::BTreeMap;

use benchrun_api::{
    validate, BenchmarkRunSpec, CellResult, SloSummary, SloVerdict, TargetUsage, ValidatedRun,
    Verdict, Warning, WarningCode,
};
use benchrun_wire::{CpuStats, ErrorCounts, Histograms, LatencyStats, LoadResult, Model, SCHEMA};

use super::*;

/// A run of two targets × two connection counts with 3 repeats, a 10 s warm-up and SLOs.
pub(crate) fn run_yaml(extra: &str) -> ValidatedRun {
    validate(&spec_yaml(extra)).unwrap()
}

/// The spec [`run_yaml`] validates.
pub(crate) fn spec_yaml(extra: &str) -> BenchmarkRunSpec {
    let yaml = format!(
        r#"
targets:
  - {{name: express, image: "x:1", port: 3000}}
  - {{name: spring, image: "y:1"}}
scenarios:
  - {{name: hello, path: /hello}}
resources: {{cpu: "1", memory: 1Gi}}
load: {{connections: 100, duration: 30s, warmup: 10s}}
matrix: {{connections: [10, 100]}}
repeats: 3
{extra}
"#
    );
    serde_yaml::from_str(&yaml).unwrap()
}

/// [`run_yaml`] with `slo: {p99: 200ms, errorRate: 1%}`.
/// The result conditions as the words stored in the status.
fn conditions(
    run: &ValidatedRun,
    results: &[CellResult],
) -> Vec<(&'static str, bool, String, String)> {
    conditions_with(run, results, &[])
}

fn conditions_with(
    run: &ValidatedRun,
    results: &[CellResult],
    comparisons: &[benchrun_api::Comparison],
) -> Vec<(&'static str, bool, String, String)> {
    result_conditions(run, results, comparisons)
        .into_iter()
        .map(|(t, ok, reason, message)| (t.as_str(), ok, reason.to_string(), message))
        .collect()
}

pub(crate) fn run() -> ValidatedRun {
    run_yaml("slo: {p99: 200ms, errorRate: 1%}")
}

fn stats(mean_us: f64, p50: u64, p99: u64, max: u64) -> LatencyStats {
    LatencyStats {
        count: 1,
        mean_us,
        p50_us: p50,
        p75_us: p50,
        p90_us: p99,
        p99_us: p99,
        p999_us: max,
        p9999_us: max,
        max_us: max,
        ..LatencyStats::default()
    }
}

/// 10 000 requests in 10 s (1000 req/s), p99 41.2 ms, 2 threads, 20 µs CPU per request.
pub(crate) fn load() -> LoadResult {
    LoadResult {
        schema: SCHEMA.into(),
        url: "http://10.96.0.7:3000/hello".into(),
        method: "GET".into(),
        model: Model::Closed,
        rate: None,
        connections: 100,
        threads: 2,
        keepalive: true,
        window_start_ms: 1_764_511_200_000,
        window_end_ms: 1_764_511_210_000,
        duration: 10.0,
        requests: 10_000,
        successes: 10_000,
        errors: ErrorCounts::default(),
        bytes: 1_200_000,
        throughput: 1000.0,
        window_counts: None,
        warmup_requests: 2_500,
        warmup_failed: 3,
        warmup_until_steady: None,
        latency: stats(12_345.678_9, 10_100, 41_200, 90_500),
        latency_uncorrected: None,
        connect: stats(250.0, 240, 400, 900),
        schedule_lag: None,
        cpu: CpuStats::new(150_000, 50_000, 10_000),
        timeline: Vec::new(),
        histograms: Histograms {
            latency: String::new(),
            latency_uncorrected: None,
            connect: String::new(),
        },
        scenarios: Vec::new(),
        nodes: Vec::new(),
        cpu_models: Vec::new(),
        start_at_ms: None,
        start_late_ms: None,
        window_start_spread_ms: 0,
        seed: None,
        backend: None,
        rx_timestamps: None,
        tcp: None,
        protocol: None,
    }
}

/// Usage of a target busy at 80 % of its limit, load pods at 30 %.
pub(crate) fn usage() -> TargetUsage {
    TargetUsage {
        cpu_avg_cores: Some(0.8),
        cpu_peak_cores: Some(0.95),
        cpu_avg_of_limit: Some(0.8),
        cpu_peak_of_limit: Some(0.95),
        cpu_throttled: Some(0.1),
        memory_avg_bytes: Some(100 << 20),
        memory_peak_bytes: Some(120 << 20),
        cpu_samples: Some(4),
        memory_samples: Some(4),
        sample_interval_seconds: Some(8.0),
        load_cpu_cores: Some(0.3),
        load_cpu_of_limit: Some(0.3),
        load_cpu_cores_prometheus: Some(0.31),
        ..TargetUsage::default()
    }
}

/// Target and load pods on different nodes, no restarts.
pub(crate) fn pods() -> PodFacts {
    PodFacts {
        target_nodes: vec!["node-a".into()],
        load_nodes: vec!["node-b".into()],
        ..PodFacts::default()
    }
}

/// The measured result of cell 1 (express, c=100), repeat 0, of [`run`] from `load` and
/// `usage`, with the pods of [`pods`], no extra figures and no detail.
pub(crate) fn measured_from(load: &LoadResult, usage: Option<&TargetUsage>) -> CellResult {
    let run = run();
    measured_result(
        &run,
        &run.cells[1],
        0,
        load,
        usage,
        BTreeMap::new(),
        &pods(),
        None,
    )
}

/// The measured result of cell 1 (express, c=100), repeat 0, from the fixtures above.
pub(crate) fn measured() -> CellResult {
    measured_from(&load(), Some(&usage()))
}

#[test]
fn a_clean_measurement_maps_every_figure_and_has_no_warnings() {
    let run = run();
    let mut extra = BTreeMap::new();
    extra.insert("rps".to_string(), 998.0);
    let r = measured_result(
        &run,
        &run.cells[1],
        2,
        &load(),
        Some(&usage()),
        extra.clone(),
        &pods(),
        Some("run-detail-c1-r2".into()),
    );
    assert_eq!((r.cell, r.repeat), (1, 2));
    assert_eq!(r.outcome, Outcome::Measured);
    assert_eq!(r.coordinates.target, "express");
    assert_eq!(r.coordinates.scenario, "hello");
    assert_eq!(r.coordinates.connections, 100);
    assert_eq!(r.coordinates.cpu, "1");
    assert_eq!(r.coordinates.memory, "1Gi");
    assert_eq!(r.coordinates.rate, None);
    assert_eq!(
        (r.requests, r.warmup_requests, r.bytes),
        (Some(10_000), Some(2_500), Some(1_200_000))
    );
    assert_eq!(r.throughput, Some(1000.0));
    // 1000 req/s on 0.8 cores.
    assert_eq!(r.requests_per_core, Some(1250.0));
    assert_eq!(r.error_rate, Some(0.0));
    let l = r.latency_ms.clone().unwrap();
    assert_eq!((l.mean, l.p50, l.p99, l.max), (12.346, 10.1, 41.2, 90.5));
    assert_eq!(r.errors, Some(benchrun_api::ErrorCounts::default()));
    assert_eq!(r.connect_ms, Some(0.25));
    let c = r.connect_times_ms.clone().unwrap();
    assert_eq!((c.count, c.min, c.mean, c.max), (1, 0.0, 0.25, 0.9));
    assert!(
        l.table.is_empty(),
        "no histogram in this load result, so no table"
    );
    assert_eq!(r.generator_cpu_us_per_request, Some(20.0));
    // Load CPU from the generator's own 200 ms over the 10 s window, against 1 pod × 1 core.
    assert_eq!(
        r.usage,
        TargetUsage {
            load_cpu_cores: Some(0.02),
            load_cpu_of_limit: Some(0.02),
            ..usage()
        }
    );
    assert_eq!(r.target_nodes, vec!["node-a".to_string()]);
    assert_eq!(r.load_nodes, vec!["node-b".to_string()]);
    assert_eq!(
        r.window_start.as_ref().map(|t| t.0.to_string()),
        Some("2025-11-30T14:00:00Z".into())
    );
    assert_eq!(
        r.window_end.as_ref().map(|t| t.0.to_string()),
        Some("2025-11-30T14:00:10Z".into())
    );
    assert_eq!(r.slo, Some(SloVerdict::Met));
    assert_eq!(r.warnings, Vec::<Warning>::new());
    assert_eq!(r.extra, extra);
    assert_eq!(r.detail.as_deref(), Some("run-detail-c1-r2"));
}

#[test]
fn load_nodes_come_from_the_result_even_when_no_load_pod_was_observed() {
    let mut l = load();
    l.nodes = vec!["node-c".into(), "node-b".into()];
    let run = run();
    let gone = PodFacts {
        load_nodes: Vec::new(),
        ..pods()
    };
    let r = measured_result(
        &run,
        &run.cells[1],
        0,
        &l,
        Some(&usage()),
        BTreeMap::new(),
        &gone,
        None,
    );
    assert_eq!(r.load_nodes, ["node-b", "node-c"]);
    // Observed pods and the result's own nodes are joined; an old result names none.
    assert_eq!(
        load_nodes(&l, &["node-a".into(), "node-b".into()]),
        ["node-a", "node-b", "node-c"]
    );
    assert_eq!(load_nodes(&load(), &["node-a".into()]), ["node-a"]);
}

#[test]
fn same_node_is_decided_from_the_nodes_the_result_names() {
    let mut l = load();
    l.nodes = vec!["node-a".into()];
    let run = run();
    let gone = PodFacts {
        load_nodes: Vec::new(),
        ..pods()
    };
    let r = measured_result(
        &run,
        &run.cells[1],
        0,
        &l,
        Some(&usage()),
        BTreeMap::new(),
        &gone,
        None,
    );
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0]
        .to_string()
        .starts_with("SameNode: target and load pods shared node node-a;"));
}

#[test]
fn error_classes_fold_into_the_status_classes_and_add_up_to_the_total() {
    let mut l = load();
    l.errors = ErrorCounts {
        total: 200,
        connect_refused: 1,
        connect_timeout: 2,
        connect_other: 3,
        timeout: 4,
        read: 5,
        body_mismatch: 6,
        protocol: 7,
        tls_handshake: 0,
        tls_certificate: 0,
        alpn_mismatch: 0,
        status_4xx: 8,
        status_5xx: 164,
        status_codes: [(500, 164), (404, 8)].into(),
    };
    let r = measured_from(&l, Some(&usage()));
    let e = r.errors.clone().unwrap();
    assert_eq!((e.connect_refused, e.connect_timeout, e.timeout), (1, 2, 4));
    assert_eq!(e.read, 5 + 6 + 7 + 3);
    assert_eq!((e.status4xx, e.status5xx), (8, 164));
    assert_eq!(
        e.connect_refused + e.connect_timeout + e.timeout + e.read + e.status4xx + e.status5xx,
        200
    );
    assert_eq!(r.error_rate, Some(0.02));
    assert_eq!(
        r.slo.as_ref().map(ToString::to_string).as_deref(),
        Some("Violated: error rate 2.0% > 1%")
    );
    assert!(r.warnings[0]
        .to_string()
        .starts_with("HighErrorRate: 2.0% of requests failed (200 of 10000: "));
}

#[test]
fn a_measurement_without_requests_has_a_zero_error_rate_and_no_generator_cost() {
    let mut l = load();
    l.requests = 0;
    l.throughput = 0.0;
    l.connect.count = 0;
    let r = measured_from(&l, Some(&usage()));
    assert_eq!(r.error_rate, Some(0.0));
    assert_eq!(r.generator_cpu_us_per_request, None);
    assert_eq!(r.connect_ms, None);
}

#[test]
fn missing_usage_keeps_the_load_figures_and_warns_metrics_unavailable() {
    let r = measured_from(&load(), None);
    assert_eq!(r.throughput, Some(1000.0));
    assert_eq!(
        r.usage,
        TargetUsage {
            load_cpu_cores: Some(0.02),
            load_cpu_of_limit: Some(0.02),
            ..TargetUsage::default()
        },
        "the generator's own CPU needs no Prometheus"
    );
    assert_eq!(r.warnings.len(), 1);
    assert!(r.warnings[0]
        .to_string()
        .starts_with("MetricsUnavailable: Prometheus could not be queried"));
}

#[test]
fn a_failed_measurement_has_its_reason_and_no_figures() {
    let run = run();
    let r = failed_result(
        &run,
        &run.cells[2],
        1,
        "ImagePullBackOff: image \"y:1\" cannot be pulled".into(),
    );
    assert_eq!((r.cell, r.repeat), (2, 1));
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.coordinates.target, "spring");
    assert_eq!(r.coordinates.connections, 10);
    assert_eq!(
        r.reason.as_deref(),
        Some("ImagePullBackOff: image \"y:1\" cannot be pulled")
    );
    assert_eq!(
        (r.requests, r.throughput, r.slo.clone()),
        (None, None, None)
    );
    assert_eq!(
        (r.error_rate, r.bytes, r.warmup_requests),
        (None, None, None)
    );
    assert_eq!((r.errors.clone(), r.latency_ms.clone()), (None, None));
    let json = serde_json::to_value(&r).unwrap();
    for field in [
        "requests",
        "throughput",
        "latencyMs",
        "errorRate",
        "errors",
        "bytes",
    ] {
        assert!(
            json.get(field).is_none(),
            "{field} is absent, not zero: {json}"
        );
    }
}

fn repeats(throughputs: &[f64]) -> Vec<CellResult> {
    throughputs
        .iter()
        .enumerate()
        .map(|(i, t)| CellResult {
            cell: 1,
            repeat: i as i32,
            outcome: Outcome::Measured,
            throughput: Some(*t),
            ..CellResult::default()
        })
        .collect()
}

#[test]
fn noisy_repeats_all_get_high_variance_once() {
    let mut rs = repeats(&[1000.0, 800.0, 1200.0]);
    apply_variance(&mut rs, 3);
    apply_variance(&mut rs, 3);
    for r in &rs {
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0]
            .to_string()
            .starts_with("HighVariance: throughput varied by CV 20% across 3 repeats"));
    }
}

#[test]
fn steady_repeats_and_single_runs_get_no_high_variance() {
    let mut rs = repeats(&[1000.0, 1050.0, 980.0]);
    apply_variance(&mut rs, 3);
    assert!(rs.iter().all(|r| r.warnings.is_empty()));
    let mut one = repeats(&[1000.0, 500.0]);
    apply_variance(&mut one, 1);
    assert!(one.iter().all(|r| r.warnings.is_empty()));
}

#[test]
fn trending_repeats_get_not_steady_once_and_a_window_s_own_stays() {
    let mut rs = repeats(&[251.0, 770.0, 936.0]);
    rs[1].warnings.push(Warning::new(
        WarningCode::NotSteady,
        "throughput rose within the measured window, ...",
    ));
    apply_variance(&mut rs, 3);
    apply_variance(&mut rs, 3);
    let codes: Vec<Vec<&str>> = rs
        .iter()
        .map(|r| r.warnings.iter().map(|w| w.code.as_str()).collect())
        .collect();
    assert_eq!(
        codes,
        [
            vec!["HighVariance", "NotSteady"],
            vec!["NotSteady", "HighVariance", "NotSteady"],
            vec!["HighVariance", "NotSteady"],
        ]
    );
    assert!(rs[0].warnings[1]
        .message
        .starts_with("across its 3 repeats"));
    // The cell no longer trends once a fourth repeat falls back: the warning goes.
    rs.extend(repeats(&[251.0, 770.0, 936.0, 300.0]).pop());
    apply_variance(&mut rs, 4);
    assert!(rs[0]
        .warnings
        .iter()
        .all(|w| w.code != WarningCode::NotSteady));
    assert_eq!(
        rs[1]
            .warnings
            .iter()
            .filter(|w| w.code == WarningCode::NotSteady)
            .count(),
        1
    );
}

#[test]
fn a_warm_up_until_steady_is_recorded_with_the_result() {
    let run = run();
    let mut l = load();
    l.warmup_until_steady = Some(benchrun_wire::SteadyWarmup {
        seconds: 23.456,
        steady: true,
        max_seconds: 60.0,
        figure: benchrun_wire::SteadyFigure::Throughput,
        trailing_seconds: 10,
        change: Some(0.004),
    });
    let r = measured_result(
        &run,
        &run.cells[0],
        0,
        &l,
        Some(&usage()),
        BTreeMap::new(),
        &PodFacts::default(),
        None,
    );
    assert_eq!(
        (r.warmup_seconds, r.warmup_steady),
        (Some(23.5), Some(true))
    );
    assert!(
        r.warnings.iter().all(|w| w.code != WarningCode::NotSteady),
        "{:?}",
        r.warnings
    );
    l.warmup_until_steady.as_mut().unwrap().steady = false;
    let r = measured_result(
        &run,
        &run.cells[0],
        0,
        &l,
        Some(&usage()),
        BTreeMap::new(),
        &PodFacts::default(),
        None,
    );
    assert_eq!(r.warmup_steady, Some(false));
    assert!(
        r.warnings.iter().any(|w| w.code == WarningCode::NotSteady),
        "{:?}",
        r.warnings
    );
    let plain = measured_result(
        &run,
        &run.cells[0],
        0,
        &load(),
        Some(&usage()),
        BTreeMap::new(),
        &PodFacts::default(),
        None,
    );
    assert_eq!((plain.warmup_seconds, plain.warmup_steady), (None, None));
}

#[test]
fn failed_repeats_do_not_count_towards_variance() {
    let mut rs = repeats(&[1000.0, 1010.0]);
    rs.push(CellResult {
        cell: 1,
        repeat: 2,
        outcome: Outcome::Failed,
        ..CellResult::default()
    });
    apply_variance(&mut rs, 3);
    assert!(rs.iter().all(|r| r.warnings.is_empty()));
}

#[test]
fn the_summary_names_the_best_cell_and_counts_failures_and_suspects() {
    let run = run();
    let best = measured();
    let mut slow = best.clone();
    slow.throughput = Some(400.4);
    slow.cell = 0;
    slow.coordinates.connections = 10;
    slow.warnings = vec![Warning::new(WarningCode::ConcurrencyBound, "...")];
    slow.slo = Some(SloVerdict::Violated(vec!["p99 250.1ms > 200ms".into()]));
    let failed = failed_result(&run, &run.cells[2], 0, "x".into());
    let s = summarize(&run, &[slow, best, failed]);
    assert_eq!(s.best_throughput, Some(1000));
    assert_eq!(s.best_p99.as_deref(), Some("41ms"));
    assert_eq!(s.best_cell.as_deref(), Some("express/hello cpu=1 c=100"));
    assert_eq!((s.failed, s.suspect), (1, 1));
    assert_eq!(s.slo, Some(SloSummary::Violated(1)));
}

#[test]
fn an_all_4xx_measurement_never_becomes_the_best() {
    let run = run_yaml("");
    let mut not_found = measured();
    not_found.slo = None;
    not_found.throughput = Some(8144.0);
    not_found.error_rate = Some(1.0);
    let s = summarize(&run, std::slice::from_ref(&not_found));
    assert_eq!(s.best_throughput, None);
    assert_eq!(
        (s.best_p99.as_deref(), s.best_cell.as_deref()),
        (None, None)
    );
    assert_eq!(
        s.best_left_out.as_deref(),
        Some("1 with more than 50% errors: not considered for the best throughput")
    );
}

#[test]
fn a_mixed_run_picks_the_best_measurement_whose_errors_are_within_the_slo() {
    let run = run();
    let valid = measured();
    let mut errors = measured();
    errors.cell = 0;
    errors.coordinates.connections = 10;
    errors.throughput = Some(5000.0);
    errors.error_rate = Some(0.2);
    let mut most = errors.clone();
    most.throughput = Some(9000.0);
    most.error_rate = Some(0.9);
    let s = summarize(&run, &[errors, valid, most]);
    assert_eq!(s.best_throughput, Some(1000));
    assert_eq!(s.best_cell.as_deref(), Some("express/hello cpu=1 c=100"));
    assert_eq!(
        s.best_left_out.as_deref(),
        Some("2 above the SLO's error rate of 1%: not considered for the best throughput")
    );
}

#[test]
fn the_summary_has_no_slo_tally_without_slos() {
    let run = run_yaml("");
    let mut r = measured();
    r.slo = None;
    let s = summarize(&run, &[r]);
    assert_eq!(s.slo, None);
    assert_eq!(summarize(&run, &[]).best_throughput, None);
}

#[test]
fn describe_shows_swept_memory_replicas_and_rate() {
    let mut run = run();
    let matrix = &mut run.matrix;
    matrix.memory = vec!["512Mi".into(), "1Gi".into()];
    matrix.replicas = vec![1, 2];
    let mut c = measured().coordinates;
    c.replicas = 2;
    c.rate = Some(500);
    assert_eq!(
        describe(&run, &c),
        "express/hello cpu=1 mem=1Gi replicas=2 c=100 rate=500"
    );
}

#[test]
fn conditions_report_slos_validity_and_metrics() {
    let run = run();
    let good = measured();
    let mut bad = measured();
    bad.repeat = 1;
    bad.slo = Some(SloVerdict::Violated(vec!["p99 250.1ms > 200ms".into()]));
    bad.warnings = vec![
        Warning::new(WarningCode::SameNode, "x"),
        Warning::new(WarningCode::MetricsUnavailable, "y"),
    ];
    let conds = conditions(&run, &[good.clone(), bad]);
    assert_eq!(conds[0].0, "SLOsMet");
    assert!(!conds[0].1);
    assert_eq!(conds[0].2, "SLOViolated");
    assert_eq!(
        conds[0].3,
        "1 of 2 measurements violated the SLOs: express/hello cpu=1 c=100 r1: Violated: p99 250.1ms > 200ms"
    );
    assert_eq!(
        conds[1],
        (
            "ResultsValid",
            false,
            "SuspectResults".into(),
            "1 of 2 measurements have validity warnings: MetricsUnavailable ×1, SameNode ×1".into()
        )
    );
    assert_eq!(conds[2], ("MetricsAvailable", false, "MetricsMissing".into(), "Prometheus gave no CPU or memory for 1 of 2 measurements (cell 1 r1); their load figures are kept".into()));
    let conds = conditions(&run, &[good]);
    assert_eq!((conds[0].1, conds[1].1, conds[2].1), (true, true, true));
}

#[test]
fn without_slos_there_is_no_slos_met_condition() {
    let run = run_yaml("");
    let conds = conditions(&run, &[]);
    let types: Vec<&str> = conds.iter().map(|c| c.0).collect();
    assert_eq!(types, vec!["ResultsValid", "MetricsAvailable"]);
}

#[test]
fn efficiency_needs_cpu_figures() {
    assert_eq!(measured_from(&load(), None).requests_per_core, None);
    let idle = TargetUsage {
        cpu_avg_cores: Some(0.0),
        ..usage()
    };
    assert_eq!(measured_from(&load(), Some(&idle)).requests_per_core, None);
    assert_eq!(requests_per_core(333.0, 0.3), Some(1110.0));
}

/// A `Baseline` comparison of the cell at `connections` with the given verdict and ratio.
fn baseline_comparison(
    connections: i32,
    verdict: benchrun_api::ComparisonVerdict,
    ratio: f64,
) -> benchrun_api::Comparison {
    let mut coordinates = measured().coordinates;
    coordinates.connections = connections;
    benchrun_api::Comparison {
        against: benchrun_api::ComparisonKind::Baseline,
        axis: None,
        candidate: "express".into(),
        reference: "last-week".into(),
        coordinates,
        candidate_repeats: 3,
        reference_repeats: 3,
        candidate_deployments: Some(3),
        reference_deployments: Some(3),
        tolerance: 0.05,
        verdict,
        ratio: Some(ratio),
        throughput: Some(benchrun_api::compare::RatioEstimate {
            ratio,
            low: ratio - 0.05,
            high: ratio + 0.05,
            verdict,
            p_worse: None,
        }),
        p99: None,
        spread: None,
        errors: None,
        power: Some(benchrun_api::compare::PowerEstimate {
            power: 0.4,
            repeats_needed: 7,
            verdict: None,
            assumed_ratio: None,
            within_cap: None,
        }),
        precision: None,
        precision_met: None,
        environment_change: Vec::new(),
        reason: None,
    }
}

#[test]
fn a_slower_cell_sets_regressed_and_names_the_worst() {
    use benchrun_api::ComparisonVerdict::*;
    let run = run_yaml("baseline: {run: last-week}");
    let all = [measured()];
    let comps = [
        baseline_comparison(10, Equivalent, 0.99),
        baseline_comparison(50, Slower, 0.8),
        baseline_comparison(100, Slower, 0.6),
    ];
    let conds = conditions_with(&run, &all, &comps);
    let regressed = conds.iter().find(|c| c.0 == "Regressed").unwrap();
    assert_eq!(
        regressed,
        &(
            "Regressed",
            true,
            "Worse".to_string(),
            "against last-week: Equivalent ×1, Slower ×2; 2 of 3 comparisons (throughput, p99, spread and errors of 3 cells) worse beyond the tolerance at a family-wise 2.5% (Holm, one-sided); worst: express/hello c=100: throughput 0.60× [0.55–0.65] (3 vs 3 repeats); express/hello c=50: throughput 0.80× [0.75–0.85] (3 vs 3 repeats)".to_string()
        )
    );
    let conds = conditions_with(&run, &all, &comps[..1]);
    let regressed = conds.iter().find(|c| c.0 == "Regressed").unwrap();
    assert_eq!(
        (regressed.1, regressed.2.as_str(), regressed.3.as_str()),
        (false, "NoneWorse", "against last-week: Equivalent ×1; 0 of 1 comparisons (throughput, p99, spread and errors of 1 cells) worse beyond the tolerance at a family-wise 2.5% (Holm, one-sided)")
    );
    assert!(!conditions_with(&run_yaml(""), &all, &comps)
        .iter()
        .any(|c| c.0 == "Regressed"));
}

#[test]
fn an_inconclusive_cell_is_not_a_regression_but_has_its_own_reason() {
    use benchrun_api::ComparisonVerdict::*;
    let run = run_yaml("baseline: {run: last-week}");
    let comps = [
        baseline_comparison(10, Equivalent, 0.99),
        baseline_comparison(50, Inconclusive, 0.93),
    ];
    let conds = conditions_with(&run, &[measured()], &comps);
    let regressed = conds.iter().find(|c| c.0 == "Regressed").unwrap();
    assert_eq!(
        (regressed.1, regressed.2.as_str(), regressed.3.as_str()),
        (
            false,
            "Inconclusive",
            "against last-week: Equivalent ×1, Inconclusive ×1; 0 of 2 comparisons (throughput, p99, spread and errors of 2 cells) worse beyond the tolerance at a family-wise 2.5% (Holm, one-sided); about 7 repeats a side would give the verdict the observed ratios point to"
        )
    );
}

/// `recorded` (cell 1 of [`run`]) again with [`usage`] from Prometheus, given late.
fn late(run: &ValidatedRun, recorded: &CellResult) -> CellResult {
    with_late_usage(
        run,
        &run.cells[1],
        recorded,
        &load(),
        &usage(),
        BTreeMap::new(),
    )
}

#[test]
fn late_usage_keeps_the_baseline_verdict() {
    let run = run();
    let mut recorded = measured_from(&load(), None);
    recorded.baseline = Some(benchrun_api::BaselineComparison {
        verdict: Verdict::Worse,
        ..Default::default()
    });
    let r = late(&run, &recorded);
    assert_eq!(r.baseline, recorded.baseline);
    assert!(r.usage.cpu_avg_cores.is_some());
}

#[test]
fn a_restarted_backing_service_is_named_and_the_warning_survives_late_usage() {
    let run = run();
    let pods = PodFacts {
        service_restarts: vec![ServiceRestart {
            name: "mongo".into(),
            terminations: 1,
            last_reason: Some("OOMKilled".into()),
        }],
        ..pods()
    };
    let recorded = measured_result(
        &run,
        &run.cells[1],
        0,
        &load(),
        None,
        BTreeMap::new(),
        &pods,
        None,
    );
    let restarted: Vec<&Warning> = recorded
        .warnings
        .iter()
        .filter(|w| w.code == WarningCode::ServiceRestarted)
        .collect();
    assert_eq!(restarted.len(), 1, "{:?}", recorded.warnings);
    assert!(
        restarted[0].message.starts_with(
            "backing service mongo restarted 1 time since the run made it, last: OOMKilled;"
        ),
        "{}",
        restarted[0]
    );
    let late = late(&run, &recorded);
    assert_eq!(
        late.warnings
            .iter()
            .filter(|w| w.code == WarningCode::ServiceRestarted)
            .count(),
        1,
        "{:?}",
        late.warnings
    );
    // A service that never restarted says nothing.
    let quiet = validity::service_restarted(&[ServiceRestart {
        name: "mongo".into(),
        ..Default::default()
    }]);
    assert!(quiet.is_empty());
}

#[test]
fn the_latency_table_has_abs_percentages_from_the_merged_histogram() {
    let mut h = benchrun_wire::hist::new_latency();
    // 1..=1000 ms, one request each.
    for ms in 1..=1000u64 {
        h.record(ms * 1000).unwrap();
    }
    let table = latency_table(&benchrun_wire::hist::encode(&h));
    let percents: Vec<f64> = table.iter().map(|r| r.percent).collect();
    assert_eq!(percents, LATENCY_TABLE_PERCENTS.to_vec());
    let within = |percent: f64| table.iter().find(|r| r.percent == percent).unwrap().ms;
    // 3 significant digits: 66 % of 1..=1000 ms is 660 ms, give or take the bucket width.
    assert!((within(66.0) - 660.0).abs() <= 1.0, "{}", within(66.0));
    assert!((within(98.0) - 980.0).abs() <= 1.0, "{}", within(98.0));
    assert!(
        (within(100.0) - 1000.0).abs() <= 1.0,
        "the 100 % row is the slowest request"
    );
    assert!(table.windows(2).all(|w| w[0].ms <= w[1].ms));
    assert!(latency_table("").is_empty() && latency_table("not base64!").is_empty());
}

/// The largest run the CRD admits ([`benchrun_api::MAX_MEASUREMENTS`] measurements), every
/// result carrying every figure at its largest (the ab table, 4 backing services, the
/// per-pod list at its cap, five long warnings, 10 extra queries, a baseline verdict, the
/// summary) and the comparisons at their cap ([`benchrun_api::status::MAX_COMPARISONS`]):
/// its status must stay far below the apiserver's 1.5 MiB object limit (etcd's default
/// request limit), with room for the spec and metadata. Prints the size measured.
#[test]
fn the_status_of_the_largest_run_stays_far_below_the_object_limit() {
    let run = run();
    let mut r = measured();
    r.coordinates.target = "t2345678901234567890".into();
    r.coordinates.scenario = "s".repeat(63);
    // Five warnings at once, each as long as the longest the operator writes.
    r.warnings = (0..5)
        .map(|i| Warning::new(WarningCode::ALL[i], "x".repeat(320)))
        .collect();
    let l = r.latency_ms.as_mut().unwrap();
    l.table = [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 100.0]
        .iter()
        .map(|&percent| benchrun_api::LatencyPercentile {
            percent,
            ms: 12345.678,
        })
        .collect();
    r.extra = (0..10)
        .map(|i| (format!("query-{i:02}"), 1.0e12 / 7.0))
        .collect();
    r.detail = Some(format!("{}-detail-c199-r9", "r".repeat(30)));
    let service = |i: usize| benchrun_api::ServiceUsage {
        name: format!("service-{i}-{}", "s".repeat(10)),
        cpu_avg_cores: Some(0.1234),
        cpu_peak_cores: Some(0.9876),
        cpu_avg_of_limit: Some(0.1234),
        cpu_peak_of_limit: Some(0.9876),
        cpu_throttled: Some(0.0123),
        memory_avg_bytes: Some(1 << 30),
        memory_peak_bytes: Some(1 << 31),
    };
    r.usage.services = (0..benchrun_api::services::MAX_SERVICES)
        .map(service)
        .collect();
    r.usage.memory_rss_peak_bytes = Some(1 << 31);
    r.usage.memory_before_load_bytes = Some(1 << 30);
    r.usage.pods = (0..crate::prometheus::MAX_POD_ENTRIES)
        .map(|i| benchrun_api::PodUsage {
            pod: format!(
                "{}-t2345678901234567890-1a2b3c4d-5d9f8c7b6c-x2x4{i}",
                "r".repeat(30)
            ),
            cpu_avg_cores: Some(0.1234),
            cpu_avg_of_limit: Some(0.1234),
            memory_peak_bytes: Some(1 << 31),
            memory_rss_peak_bytes: Some(1 << 31),
        })
        .collect();
    r.target_ready_seconds = Some(123.456);
    r.target_image_bytes = Some(1 << 30);
    r.per_second_cv = Some(0.1234);
    r.baseline = Some(benchrun_api::BaselineComparison {
        verdict: Verdict::Inconclusive,
        throughput_ratio: Some(0.1234),
        p99_ratio: Some(1.2345),
        p_value: Some(0.000123),
        ratio_low: Some(0.1234),
        ratio_high: Some(0.1234),
        baseline_repeats: Some(10),
        repeats: Some(10),
        // A reason only when there is no interval.
        reason: None,
        ..Default::default()
    });
    let mut results = Vec::new();
    for i in 0..benchrun_api::MAX_MEASUREMENTS {
        let mut x = r.clone();
        (x.cell, x.repeat) = ((i / 10) as i32, (i % 10) as i32);
        results.push(x);
    }
    // The comparisons at their cap, every figure present and long.
    let mut c = baseline_comparison(100, benchrun_api::ComparisonVerdict::Inconclusive, 0.1234);
    c.coordinates = r.coordinates.clone();
    c.candidate = c.coordinates.target.clone();
    c.reference = "r".repeat(63);
    c.p99 = c.throughput.clone();
    c.spread = Some(benchrun_api::compare::SpreadEstimate {
        candidate_cv: 0.1234,
        reference_cv: 0.1234,
        ratio: c.throughput.clone().unwrap(),
        increased: false,
    });
    c.errors = Some(benchrun_api::compare::ErrorRateEstimate {
        candidate_rate: 0.123456,
        reference_rate: 0.123456,
        p_value: 0.000123,
        verdict: benchrun_api::ComparisonVerdict::Inconclusive,
    });
    c.reason = Some("x".repeat(150));
    let comparisons = vec![c; benchrun_api::status::MAX_COMPARISONS];
    let status = benchrun_api::BenchmarkRunStatus {
        summary: Some(summarize(&run, &results)),
        results,
        comparisons,
        ..Default::default()
    };
    let part = |v: serde_json::Value| serde_json::to_vec(&v).unwrap().len();
    println!(
        "one result {} B: warnings {}, pods {}, services {}, latency {}, extra {}",
        part(serde_json::to_value(&r).unwrap()),
        part(serde_json::to_value(&r.warnings).unwrap()),
        part(serde_json::to_value(&r.usage.pods).unwrap()),
        part(serde_json::to_value(&r.usage.services).unwrap()),
        part(serde_json::to_value(&r.latency_ms).unwrap()),
        part(serde_json::to_value(&r.extra).unwrap()),
    );
    println!(
        "comparisons: {} B",
        part(serde_json::to_value(&status.comparisons).unwrap())
    );
    let bytes = serde_json::to_vec(&status).unwrap().len();
    println!(
        "status of {} measurements: {bytes} bytes ({} per measurement)",
        benchrun_api::MAX_MEASUREMENTS,
        bytes / benchrun_api::MAX_MEASUREMENTS
    );
    // 1.2 MiB: 300 KiB below the apiserver's limit for the spec (at most about 100 KiB with
    // every list at its cap) and the metadata.
    assert!(bytes < 1200 * 1024, "{bytes} bytes");
}

type Rng = proptest::test_runner::TestRng;

/// A uniform draw in [0, 1).
fn uniform(rng: &mut Rng) -> f64 {
    use proptest::prelude::Rng as _;
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A seeded standard normal draw (Box-Muller).
fn normal(rng: &mut Rng) -> f64 {
    let (u1, u2) = (uniform(rng).max(f64::MIN_POSITIVE), uniform(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A Poisson draw of mean `mean` (Knuth's product of uniforms; small means only).
fn poisson(rng: &mut Rng, mean: f64) -> i64 {
    let (limit, mut k, mut p) = ((-mean).exp(), 0, 1.0);
    loop {
        p *= uniform(rng);
        if p <= limit {
            return k;
        }
        k += 1;
    }
}

/// One simulated repeat of the cell at `connections` as an identical build would measure it:
/// throughput 3 % CV, p99 15 % CV, per-second CV around 5 % (itself 30 % CV), 0.1 % errors
/// of about 20 000 requests.
fn simulated_repeat(rng: &mut Rng, connections: i32, repeat: i32) -> CellResult {
    let lognormal = |rng: &mut Rng, mean: f64, cv: f64| {
        let s = (1.0f64 + cv * cv).ln().sqrt();
        mean * (s * normal(rng) - s * s / 2.0).exp()
    };
    let mut r = measured();
    r.cell = connections;
    r.repeat = repeat;
    r.coordinates.connections = connections;
    r.warnings.clear();
    // Each repeat on its own deployment, as the default design measures a comparison: with one
    // deployment a side every comparison would be Inconclusive and the test would assert nothing.
    r.target_pods = vec![format!(
        "demo-{:016x}",
        (uniform(rng) * 2f64.powi(53)) as u64
    )];
    let throughput = lognormal(rng, 1000.0, 0.03);
    let requests = (throughput * 20.0) as i64;
    let errors = poisson(rng, requests as f64 * 0.001);
    r.throughput = Some(throughput);
    r.requests = Some(requests);
    r.errors = Some(benchrun_api::ErrorCounts {
        status5xx: errors,
        ..Default::default()
    });
    r.error_rate = Some(errors as f64 / requests as f64);
    r.latency_ms.as_mut().unwrap().p99 = lognormal(rng, 12.0, 0.15);
    r.per_second_cv = Some(lognormal(rng, 0.05, 0.30));
    r
}

/// Issue 52's check of `Regressed`: 20 cells of an identical build against an identical
/// baseline (3 repeats a side; each cell's throughput, p99, spread and errors compared: a
/// family of 80) set `Regressed` in at most 5 % of 300 simulated runs. Holm's procedure at a
/// family-wise 2.5 % bounds it at 2.5 %; counting every per-comparison `Slower`, as before,
/// must give at least 10 % (else the comparisons could not say Slower at all). The table is
/// docs/metrics.md's.
#[test]
fn twenty_identical_cells_against_an_identical_baseline_rarely_regress() {
    let run = run_yaml("baseline: {run: last-week}");
    let mut rng = Rng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &[52; 32]);
    let (runs, mut regressed_runs, mut any_slower_runs) = (300, 0, 0);
    for _ in 0..runs {
        let comparisons: Vec<benchrun_api::Comparison> = (0..20)
            .map(|cell| {
                let now: Vec<CellResult> = (0..3)
                    .map(|k| simulated_repeat(&mut rng, cell, k))
                    .collect();
                let base: Vec<CellResult> = (0..3)
                    .map(|k| simulated_repeat(&mut rng, cell, k))
                    .collect();
                let now: Vec<&CellResult> = now.iter().collect();
                crate::comparisons::baseline_entry(&run, "last-week", &now, &base).unwrap()
            })
            .collect();
        assert!(comparisons
            .iter()
            .all(|c| c.verdict != benchrun_api::ComparisonVerdict::NotCompared));
        if comparisons
            .iter()
            .any(|c| c.verdict == benchrun_api::ComparisonVerdict::Slower)
        {
            any_slower_runs += 1;
        }
        let (_, status, _, message) = super::regressed("last-week", &[], &comparisons);
        if status {
            regressed_runs += 1;
            println!("{message}");
        }
    }
    let rate = f64::from(regressed_runs) / f64::from(runs);
    let naive = f64::from(any_slower_runs) / f64::from(runs);
    let table = format!(
        "| 20 identical cells against an identical baseline, {runs} simulated runs | runs with a wrong answer |\n|---|---|\n\
         | any per-comparison `Slower` taken at face value | {any_slower_runs} ({:.1} %) |\n\
         | `Regressed` (Holm over the family of 80, family-wise 2.5 %) | {regressed_runs} ({:.1} %) |\n",
        naive * 100.0,
        rate * 100.0
    );
    println!("{table}");
    assert!(rate <= 0.05, "{rate}");
    // The family matters: taken one by one, the same comparisons do say Slower.
    assert!(
        naive >= 0.10,
        "{naive}: the simulated comparisons never say Slower"
    );
    benchrun_docblock::check("docs/metrics.md", "regressed-family", &table);
}

/// The condition states the family and the level, and a comparison that is `Slower` on its own
/// but not within the family does not set `Regressed`.
#[test]
fn regressed_states_the_family_and_holds_a_lone_slower_to_it() {
    use benchrun_api::ComparisonVerdict::*;
    let mut lone = baseline_comparison(50, Slower, 0.9);
    lone.throughput.as_mut().unwrap().p_worse = Some(0.02);
    let mut comps = vec![lone];
    comps.extend((0..9).map(|c| baseline_comparison(c, Equivalent, 1.0)));
    let (_, status, reason, message) = super::regressed("last-week", &[], &comps);
    assert!(!status, "{message}");
    assert_eq!(reason, Reason::Inconclusive);
    assert!(
        message.contains("0 of 10 comparisons (throughput, p99, spread and errors of 10 cells) worse beyond the tolerance at a family-wise 2.5% (Holm, one-sided)"),
        "{message}"
    );
    // Alone it is the family: Regressed.
    let (_, status, _, message) = super::regressed("last-week", &[], &comps[..1]);
    assert!(status, "{message}");
    assert!(message.contains("1 of 1 comparisons"), "{message}");
}

/// A regression every worse cell of which also ran in another environment than its baseline
/// cell is reported as that (reason `EnvironmentChanged`), naming what differs; one worse cell
/// in a like environment keeps it `Worse`.
#[test]
fn a_regression_with_a_new_kernel_is_reported_as_an_environment_change() {
    use benchrun_api::environment::{Environment, NodeEnvironment};
    use benchrun_api::ComparisonVerdict::*;
    let env = |kernel: &str| CellResult {
        environment: Some(Environment {
            nodes: vec![NodeEnvironment {
                name: "n".into(),
                role: "Target".into(),
                kernel: kernel.into(),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..measured()
    };
    let mut slower = baseline_comparison(50, Slower, 0.8);
    slower.environment_change =
        crate::comparisons::environment_differences(&[env("6.2")], &[env("6.1")]);
    assert_eq!(slower.environment_change, ["target kernel 6.2 vs 6.1"]);
    slower.reason = crate::comparisons::environment_note(&[env("6.2")], &[env("6.1")]);
    assert_eq!(
        slower.reason.as_deref(),
        Some("environments differ: target kernel 6.2 vs 6.1 (the difference may be the environment's, not the code's)")
    );
    let (_, status, reason, message) = super::regressed("last-week", &[], &[slower.clone()]);
    assert!(status, "{message}");
    assert_eq!(reason, Reason::EnvironmentChanged);
    assert!(
        message.ends_with("every worse cell ran in another environment than the baseline (target kernel 6.2 vs 6.1): the change may be the environment's, not the code's"),
        "{message}"
    );
    // Alike environments say nothing.
    assert_eq!(
        crate::comparisons::environment_note(&[env("6.1")], &[env("6.1")]),
        None
    );
    // The reason's words alone do not make it the environment's: the field does.
    let mut worded = slower.clone();
    worded.environment_change.clear();
    let (_, _, reason, _) = super::regressed("last-week", &[], &[worded]);
    assert_eq!(reason, Reason::Worse);
    let plain = baseline_comparison(100, Slower, 0.6);
    let (_, status, reason, _) = super::regressed("last-week", &[], &[slower, plain]);
    assert!(status);
    assert_eq!(reason, Reason::Worse);
}
