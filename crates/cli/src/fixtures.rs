//! Fixed inputs for the renderers' tests (and, rendered, the examples in docs/report.md).
//!
//! Built by the operator's own code paths, so every warning, verdict, reason, summary and
//! capacity text is the one the operator writes: the run is a YAML spec through
//! [`benchrun_api::validate`], each measured cell is [`results::measured_result`] of a
//! [`LoadResult`] with round figures (its warnings and SLO verdict computed there), the failed
//! cell is [`results::failed_result`], and the summary, result conditions and capacity entries
//! are what [`results::summarize`], [`results::result_conditions`] and [`capacity::capacity`]
//! make of them.

use std::collections::BTreeMap;

use benchrun::results::{self, PodFacts};
use benchrun::{capacity, names, plan};
use benchrun_api::{
    validate, BenchmarkRunSpec, BenchmarkRunStatus, Capacity, CellResult, ConditionType,
    CurrentMeasurement, Outcome, Phase, Reason, Stage, TargetUsage, UslFit, ValidatedRun,
};
use benchrun_wire::{CpuStats, ErrorCounts, Histograms, LatencyStats, LoadResult, Model, SCHEMA};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

pub mod schedule;

/// A timestamp from an RFC 3339 string.
pub fn time(s: &str) -> Time {
    Time(s.parse().unwrap())
}

/// The run's name: detail ConfigMaps are named after it.
const RUN: &str = "demo";
/// When the run finished (and its conditions last changed).
const FINISHED: &str = "2026-11-30T10:00:00Z";
/// Start of the first measured window; each cell's window is 30 s, one after the other.
const FIRST_WINDOW_MS: u64 = 1_764_496_800_000;
const WINDOW_MS: u64 = 30_000;

/// A run of two targets × two connection counts, one repeat, a 10 s warm-up and SLOs.
fn run_from(targets: &str, connections: &str) -> ValidatedRun {
    let yaml = format!(
        r#"
targets:
{targets}
scenarios:
  - {{name: hello, path: /hello}}
resources: {{cpu: "1", memory: 1Gi}}
load: {{connections: 10, duration: 30s, warmup: 10s}}
matrix: {{connections: {connections}}}
slo: {{p99: 200ms, errorRate: 1%}}
"#
    );
    let spec: BenchmarkRunSpec = serde_yaml::from_str(&yaml).unwrap();
    validate(&spec).unwrap()
}

/// The fixture run: express and spring, 10 and 100 connections (cells 0–3).
pub fn run() -> ValidatedRun {
    run_from(
        "  - {name: express, image: \"express:4.21\", port: 3000}\n  - {name: spring, image: \"spring:3.2\", port: 8080}",
        "[10, 100]",
    )
}

/// Latency statistics in µs with the shape of a fast HTTP server: p50 a fifth of p99, p90 a
/// half, the mean a quarter, p99.9 one and a half times and the maximum three times p99.
fn latency(p99_us: u64) -> LatencyStats {
    LatencyStats {
        count: 1,
        mean_us: (p99_us / 4) as f64,
        p50_us: p99_us / 5,
        p75_us: p99_us / 3,
        p90_us: p99_us / 2,
        p99_us,
        p999_us: p99_us * 3 / 2,
        p9999_us: p99_us * 2,
        max_us: p99_us * 3,
        ..LatencyStats::default()
    }
}

/// What the load generator reports for one cell: `rps` over a 30 s window (two threads, one
/// load pod), p99 `p99_us`, the load pod busy at `load_cpu` of its 1-core limit, and `errors`.
fn load(
    cell: u64,
    connections: u64,
    rps: u64,
    p99_us: u64,
    load_cpu: f64,
    errors: ErrorCounts,
) -> LoadResult {
    let requests = rps * WINDOW_MS / 1000;
    let start = FIRST_WINDOW_MS + cell * 60_000;
    let cpu_us = (load_cpu * (WINDOW_MS * 1000) as f64) as u64;
    LoadResult {
        schema: SCHEMA.into(),
        url: "http://10.96.0.7:3000/hello".into(),
        method: "GET".into(),
        model: Model::Closed,
        rate: None,
        connections,
        threads: 2,
        keepalive: true,
        window_start_ms: start,
        window_end_ms: start + WINDOW_MS,
        duration: (WINDOW_MS / 1000) as f64,
        requests,
        successes: requests - errors.total,
        errors,
        bytes: requests * 120,
        throughput: rps as f64,
        window_counts: None,
        protocol: None,
        warmup_requests: rps * 10,
        warmup_failed: 0,
        warmup_until_steady: None,
        latency: latency(p99_us),
        latency_uncorrected: None,
        connect: LatencyStats::default(),
        schedule_lag: None,
        cpu: CpuStats::new(cpu_us * 3 / 4, cpu_us / 4, requests),
        timeline: Vec::new(),
        histograms: Histograms {
            latency: String::new(),
            latency_uncorrected: None,
            connect: String::new(),
        },
        scenarios: Vec::new(),
        nodes: vec!["node-b".into()],
        cpu_models: Vec::new(),
        start_at_ms: None,
        start_late_ms: None,
        window_start_spread_ms: 0,
        seed: None,
        backend: None,
        rx_timestamps: None,
        tcp: None,
    }
}

/// What Prometheus gives for a target using `cores` of its 1-core limit and `mib` of memory.
fn usage(cores: f64, mib: i64) -> TargetUsage {
    TargetUsage {
        cpu_avg_cores: Some(cores),
        cpu_peak_cores: Some(cores),
        cpu_avg_of_limit: Some(cores),
        cpu_peak_of_limit: Some(cores),
        cpu_throttled: Some(0.0),
        memory_avg_bytes: Some(mib << 20),
        memory_peak_bytes: Some(mib << 20),
        cpu_samples: Some(4),
        memory_samples: Some(4),
        sample_interval_seconds: Some(8.0),
        ..TargetUsage::default()
    }
}

/// Target on node-a, load on node-b, no restarts.
fn pods() -> PodFacts {
    PodFacts {
        target_nodes: vec!["node-a".into()],
        load_nodes: vec!["node-b".into()],
        ..PodFacts::default()
    }
}

/// The operator's record of cell `cell` of [`run`] from `load` and `usage`.
fn measured(run: &ValidatedRun, cell: usize, load: &LoadResult, usage: &TargetUsage) -> CellResult {
    results::measured_result(
        run,
        &run.cells[cell],
        0,
        load,
        Some(usage),
        BTreeMap::new(),
        &pods(),
        Some(names::detail_name(RUN, cell, 0)),
    )
}

/// Four measurements of two targets: express at 10 connections (clean), express at 100
/// (generator-bound with 2 % errors: suspect and violating the error-rate SLO), spring at 10
/// (clean) and spring at 100 (failed: its image could not be pulled).
pub fn results() -> Vec<CellResult> {
    let run = run();
    let clean = ErrorCounts::default();
    let failing = ErrorCounts {
        status_5xx: 3240,
        total: 3240,
        ..ErrorCounts::default()
    };
    let mut all = vec![
        measured(&run, 0, &load(0, 10, 4100, 3100, 0.3, clean.clone()), &usage(0.95, 128)),
        measured(&run, 1, &load(1, 100, 5400, 41_000, 0.97, failing), &usage(0.95, 128)),
        measured(&run, 2, &load(2, 10, 2950, 9800, 0.25, clean), &usage(0.62, 384)),
        results::failed_result(
            &run,
            &run.cells[3],
            0,
            format!(
                "target not ready after {}: ImagePullBackOff: Back-off pulling image \"spring:3.2\"",
                benchrun_api::units::format_duration(run.ready_timeout)
            ),
        ),
    ];
    results::apply_variance(&mut all, run.repeats);
    all
}

/// A fitted and a refused capacity entry.
///
/// The refused one (spring) is what [`capacity::capacity`] makes of [`results`]. The fixture's
/// two express measurements cannot be fitted either (and one is generator-bound), so the
/// fitted entry is [`capacity::capacity`] of a seven-count connections sweep of express whose
/// throughputs lie on the curve σ=0.05, κ=0.0008, λ=1200 req/s.
pub fn capacity() -> Vec<Capacity> {
    let run = run();
    let spring = capacity::capacity(&run, &results())
        .into_iter()
        .find(|c| c.target == "spring")
        .expect("a capacity entry for spring");
    let sweep = run_from(
        "  - {name: express, image: \"express:4.21\", port: 3000}",
        "[1, 2, 4, 8, 16, 32, 64]",
    );
    let curve = UslFit {
        contention: 0.05,
        coherency: 0.0008,
        throughput_at_one: 1200.0,
        ..UslFit::default()
    };
    let measured: Vec<CellResult> = sweep
        .cells
        .iter()
        .map(|c| {
            let rps = curve.throughput(f64::from(c.connections)).round() as u64;
            let l = load(
                c.index as u64,
                c.connections as u64,
                rps,
                3000,
                0.3,
                ErrorCounts::default(),
            );
            measured(&sweep, c.index, &l, &usage(0.9, 128))
        })
        .collect();
    let express = capacity::capacity(&sweep, &measured)
        .into_iter()
        .next()
        .expect("a capacity entry for the sweep");
    vec![express, spring]
}

/// A finished run's status around [`results`], as the operator leaves it.
pub fn status() -> BenchmarkRunStatus {
    let run = run();
    let results = results();
    let now = time(FINISHED).0;
    let generation = Some(1);
    let mut conditions = Vec::new();
    let mut set = |type_, ok, reason, message| {
        plan::set_condition(&mut conditions, type_, ok, reason, message, now, generation)
    };
    // In the order the operator sets them: Accepted when the run starts, the result conditions
    // after each measurement, Succeeded when the last one is recorded.
    set(
        ConditionType::Accepted,
        true,
        Reason::Valid,
        "the spec is valid".into(),
    );
    for (type_, ok, reason, message) in results::result_conditions(&run, &results, &[]) {
        set(type_, ok, reason, message);
    }
    let measured = results
        .iter()
        .filter(|r| r.outcome == Outcome::Measured)
        .count();
    set(
        ConditionType::Succeeded,
        true,
        Reason::Completed,
        format!("{measured} of {} measurements measured", results.len()),
    );
    BenchmarkRunStatus {
        phase: Some(Phase::Succeeded),
        progress: Some(format!("{}/{}", results.len(), run.total())),
        total: Some(run.total() as i32),
        conditions,
        summary: Some(results::summarize(&run, &results)),
        capacity: capacity(),
        results,
        ..Default::default()
    }
}

/// [`status`] with the comparison of spring against express at 10 connections, as the
/// operator writes it.
pub fn compared() -> BenchmarkRunStatus {
    use benchrun_api::compare::{ErrorRateEstimate, PowerEstimate, RatioEstimate};
    use benchrun_api::{Comparison, ComparisonKind, ComparisonVerdict};
    let mut s = status();
    let coordinates = s
        .results
        .iter()
        .find(|r| r.coordinates.target == "spring")
        .map(|r| r.coordinates.clone())
        .expect("a spring measurement");
    s.comparisons = vec![Comparison {
        against: ComparisonKind::Target,
        axis: None,
        candidate: "spring".into(),
        reference: "express".into(),
        coordinates,
        candidate_repeats: 3,
        reference_repeats: 3,
        candidate_deployments: Some(3),
        reference_deployments: Some(3),
        tolerance: 0.05,
        verdict: ComparisonVerdict::Faster,
        ratio: Some(1.21),
        throughput: Some(RatioEstimate {
            ratio: 1.21,
            low: 1.12,
            high: 1.30,
            verdict: ComparisonVerdict::Faster,
            p_worse: None,
        }),
        p99: Some(RatioEstimate {
            ratio: 0.9,
            low: 0.7,
            high: 1.15,
            verdict: ComparisonVerdict::Inconclusive,
            p_worse: None,
        }),
        spread: None,
        errors: Some(ErrorRateEstimate {
            candidate_rate: 0.005,
            reference_rate: 0.0,
            p_value: 0.001,
            verdict: ComparisonVerdict::Inconclusive,
        }),
        power: Some(PowerEstimate {
            power: 0.94,
            repeats_needed: 3,
            verdict: None,
            assumed_ratio: None,
            within_cap: None,
        }),
        precision: Some(0.0774),
        precision_met: None,
        environment_change: Vec::new(),
        reason: None,
    }];
    if let Some(summary) = s.summary.as_mut() {
        summary.headline = Some("spring/express 1.21× [1.12–1.30] Faster".into());
    }
    s
}

/// A run in the middle of its second measurement.
pub fn running_status() -> BenchmarkRunStatus {
    let run = run();
    BenchmarkRunStatus {
        phase: Some(Phase::Running),
        progress: Some(format!("1/{}", run.total())),
        total: Some(run.total() as i32),
        current: Some(CurrentMeasurement {
            cell: 1,
            repeat: 0,
            stage: Stage::Loading,
            since: time("2026-11-30T10:02:00Z"),
            job: Some(names::job_name(RUN, 1, 0)),
        }),
        results: results()[..1].to_vec(),
        ..Default::default()
    }
}

/// Asserts that `got` equals the insta snapshot `tests/golden/<name>.snap`. A difference
/// fails the test; outside CI insta also writes `<name>.snap.new` beside it, and
/// `INSTA_UPDATE=always` accepts the new output. The snapshots are also the examples in the
/// docs.
pub fn assert_golden(name: &str, got: &str) {
    assert_snapshot_in("tests/golden", name, got);
}

/// Asserts that `got` equals the insta snapshot `<dir>/<name>.snap` under the crate's
/// directory (see [`assert_golden`]).
pub fn assert_snapshot_in(dir: &str, name: &str, got: &str) {
    // The directory is found at run time, not with env!: a test binary reused from another
    // checkout's build (shared target directory) must compare against this checkout's files.
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(std::path::Path::new(&crate_dir).join(dir));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name.to_string(), got));
}
