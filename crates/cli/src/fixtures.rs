//! Fixed inputs for the renderers' tests (and, rendered, the examples in docs/report.md).

use benchrun_api::{
    BenchmarkRunStatus, Capacity, CellResult, Coordinates, CurrentMeasurement, ErrorCounts,
    Latency, Outcome, Phase, SloSummary, SloVerdict, Stage, Summary, TargetUsage, UslFit, Warning,
    WarningCode,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// A timestamp from an RFC 3339 string.
pub fn time(s: &str) -> Time {
    Time(s.parse().unwrap())
}

/// Rounds to three decimals so figures survive a JSON round trip exactly.
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// One measured cell with round, recognisable figures.
pub fn cell(cell: i32, target: &str, cpu: &str, conns: i32, rps: f64, p99: f64) -> CellResult {
    CellResult {
        cell,
        repeat: 0,
        coordinates: Coordinates {
            target: target.into(),
            scenario: "hello".into(),
            cpu: cpu.into(),
            memory: "1Gi".into(),
            replicas: 1,
            connections: conns,
            rate: None,
            ..Coordinates::default()
        },
        outcome: Outcome::Measured,
        requests: Some((rps * 30.0) as i64),
        warmup_requests: Some(0),
        errors: Some(ErrorCounts::default()),
        error_rate: Some(0.0),
        bytes: Some(0),
        throughput: Some(rps),
        latency_ms: Some(Latency {
            mean: round3(p99 / 4.0),
            p50: round3(p99 / 5.0),
            p90: round3(p99 / 2.0),
            p99,
            p999: round3(p99 * 1.5),
            max: round3(p99 * 3.0),
            table: Vec::new(),
        }),
        usage: TargetUsage {
            cpu_avg_cores: Some(0.95),
            cpu_avg_of_limit: Some(0.95),
            memory_peak_bytes: Some(134_217_728),
            ..Default::default()
        },
        slo: Some(SloVerdict::Met),
        detail: Some(format!("demo-detail-{cell}-0")),
        ..Default::default()
    }
}

/// Four measurements of two targets, one suspect, one violating the SLO, one failed.
pub fn results() -> Vec<CellResult> {
    let mut spring = cell(2, "spring", "1", 10, 2950.0, 9.8);
    spring.usage.cpu_avg_cores = Some(0.62);
    spring.usage.cpu_avg_of_limit = Some(0.62);
    spring.usage.memory_peak_bytes = Some(402_653_184);
    let mut slow = cell(1, "express", "1", 100, 5405.2, 41.0);
    slow.error_rate = Some(0.0123);
    slow.slo = Some(SloVerdict::Violated(vec!["errorRate 1.23% > 1%".into()]));
    slow.warnings = vec![
        Warning::new(
            WarningCode::GeneratorBound,
            "the load pods used 97% of their CPU limit; throughput may be the generator's",
        ),
        Warning::new(
            WarningCode::HighErrorRate,
            "1.23% of requests failed (read 665)",
        ),
    ];
    // As the operator writes a failed measurement: coordinates and reason, no figures.
    let failed = CellResult {
        cell: 3,
        coordinates: cell(3, "spring", "1", 100, 0.0, 0.0).coordinates,
        outcome: Outcome::Failed,
        reason: Some("ImagePullBackOff: spring:3.2 not found".into()),
        ..Default::default()
    };
    let mut all = vec![
        cell(0, "express", "1", 10, 4100.0, 3.1),
        slow,
        spring,
        failed,
    ];
    // As the operator writes it: throughput over the CPU cores used, to one decimal.
    for r in &mut all {
        r.requests_per_core = r
            .throughput
            .zip(r.usage.cpu_avg_cores)
            .map(|(x, cores)| (x / cores * 10.0).round() / 10.0);
    }
    all
}

/// A fitted and a refused capacity entry, as a connections sweep of two targets gives them.
pub fn capacity() -> Vec<Capacity> {
    let entry = |target: &str| Capacity {
        target: target.into(),
        scenario: "hello".into(),
        cpu: "1".into(),
        memory: "1Gi".into(),
        replicas: 1,
        model: "USL".into(),
        ..Default::default()
    };
    vec![
        Capacity {
            points: 7,
            fit: Some(UslFit {
                contention: 0.05,
                coherency: 0.0008,
                throughput_at_one: 1200.0,
                peak_connections: Some(34),
                peak_throughput: Some(11500.7),
                r_squared: 0.9981,
            }),
            ..entry("express")
        },
        Capacity {
            points: 1,
            excluded: Some("1 failed".into()),
            refused: Some("1 usable measurements at 1 connection counts: the fit needs at least 6 over at least 3 connection counts (sweep more matrix.connections values, or add repeats)".into()),
            ..entry("spring")
        },
    ]
}

/// A finished run's status around [`results`].
pub fn status() -> BenchmarkRunStatus {
    let cond = |t: &str, s: &str, reason: &str, message: &str| Condition {
        type_: t.into(),
        status: s.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: time("2026-11-30T10:00:00Z"),
        observed_generation: Some(1),
    };
    BenchmarkRunStatus {
        phase: Some(Phase::Succeeded),
        progress: Some("4/4".into()),
        total: Some(4),
        conditions: vec![
            cond("Accepted", "True", "Valid", "the spec is valid"),
            cond(
                "Succeeded",
                "True",
                "Measured",
                "3 of 4 measurements succeeded",
            ),
            cond(
                "SLOsMet",
                "False",
                "Violated",
                "1 measurement violated the SLOs",
            ),
            cond(
                "ResultsValid",
                "False",
                "Suspect",
                "1 measurement has validity warnings",
            ),
        ],
        results: results(),
        summary: Some(Summary {
            best_throughput: Some(5405),
            best_p99: Some("41ms".into()),
            best_cell: Some("express/hello cpu=1 c=100".into()),
            failed: 1,
            suspect: 1,
            slo: Some(SloSummary::Violated(1)),
        }),
        capacity: capacity(),
        ..Default::default()
    }
}

/// A run in the middle of its second measurement.
pub fn running_status() -> BenchmarkRunStatus {
    BenchmarkRunStatus {
        phase: Some(Phase::Running),
        progress: Some("1/4".into()),
        total: Some(4),
        current: Some(CurrentMeasurement {
            cell: 1,
            repeat: 0,
            stage: Stage::Loading,
            since: time("2026-11-30T10:02:00Z"),
            job: Some("demo-load-1-0".into()),
        }),
        results: results()[..1].to_vec(),
        ..Default::default()
    }
}

/// Asserts that `got` equals the file `tests/golden/<name>`; with `BENCHRUN_BLESS=1` in the
/// environment, (re)writes the file instead. The files are also the examples in the docs.
pub fn assert_golden(name: &str, got: &str) {
    // Read at run time, not with env!: a test binary reused from another checkout's build
    // (shared target directory) must compare against this checkout's files.
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test");
    let path = std::path::Path::new(&dir).join("tests/golden").join(name);
    if std::env::var_os("BENCHRUN_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(got, want, "rendered output differs from {}", path.display());
}
