//! Status written by earlier versions still reads: measured cells keep every figure, and a
//! failed cell written now carries no load figure at all (absent, not zero).

use benchrun_api::{
    BenchmarkRunStatus, CellResult, ErrorCounts, Latency, Outcome, Phase, SloSummary, SloVerdict,
    Stage, Verdict, WarningCode,
};

/// A measured cell as stored before the load figures became optional.
const OLD_MEASURED: &str = r#"{
  "cell": 1, "repeat": 0,
  "coordinates": {"target": "express", "scenario": "hello", "cpu": "1", "memory": "1Gi",
                  "replicas": 1, "connections": 100},
  "outcome": "Measured",
  "requests": 162150, "warmupRequests": 5000,
  "errors": {"connectRefused": 0, "connectTimeout": 0, "timeout": 0, "read": 2,
             "status4xx": 0, "status5xx": 0},
  "errorRate": 0.000012, "bytes": 19458000, "throughput": 5405.0,
  "latencyMs": {"mean": 18.2, "p50": 8.2, "p90": 20.5, "p99": 41.0, "p999": 90.1, "max": 123.0},
  "usage": {}, "restarts": 0, "oomKills": 0
}"#;

/// A failed cell as stored before: zeros where nothing was measured.
const OLD_FAILED: &str = r#"{
  "cell": 3, "repeat": 0,
  "coordinates": {"target": "spring", "scenario": "hello", "cpu": "1", "memory": "1Gi",
                  "replicas": 1, "connections": 100},
  "outcome": "Failed", "reason": "ImagePullBackOff",
  "requests": 0, "warmupRequests": 0,
  "errors": {"connectRefused": 0, "connectTimeout": 0, "timeout": 0, "read": 0,
             "status4xx": 0, "status5xx": 0},
  "errorRate": 0.0, "bytes": 0, "throughput": 0.0,
  "latencyMs": {"mean": 0.0, "p50": 0.0, "p90": 0.0, "p99": 0.0, "p999": 0.0, "max": 0.0},
  "usage": {}, "restarts": 0, "oomKills": 0
}"#;

#[test]
fn a_measured_cell_stored_before_keeps_every_figure_and_writes_back_the_same() {
    let r: CellResult = serde_json::from_str(OLD_MEASURED).unwrap();
    assert_eq!(r.requests, Some(162_150));
    assert_eq!(r.warmup_requests, Some(5000));
    assert_eq!(
        r.errors,
        Some(ErrorCounts {
            read: 2,
            ..ErrorCounts::default()
        })
    );
    assert_eq!(r.error_rate, Some(0.000012));
    assert_eq!((r.bytes, r.throughput), (Some(19_458_000), Some(5405.0)));
    assert_eq!(r.latency_ms.as_ref().map(|l| l.p99), Some(41.0));
    let old: serde_json::Value = serde_json::from_str(OLD_MEASURED).unwrap();
    let again = serde_json::to_value(&r).unwrap();
    for field in [
        "requests",
        "warmupRequests",
        "errors",
        "errorRate",
        "bytes",
        "throughput",
    ] {
        assert_eq!(again[field], old[field], "{field}");
    }
    assert_eq!(again["latencyMs"], old["latencyMs"]);
}

#[test]
fn a_failed_cell_stored_before_still_reads() {
    let r: CellResult = serde_json::from_str(OLD_FAILED).unwrap();
    assert_eq!(r.outcome, Outcome::Failed);
    assert_eq!(r.reason.as_deref(), Some("ImagePullBackOff"));
    assert_eq!(r.latency_ms, Some(Latency::default()));
}

#[test]
fn a_failed_cell_without_figures_writes_none_of_them() {
    let r = CellResult {
        outcome: Outcome::Failed,
        reason: Some("load Job failed".into()),
        ..CellResult::default()
    };
    let json = serde_json::to_value(&r).unwrap();
    for field in [
        "requests",
        "warmupRequests",
        "errors",
        "errorRate",
        "bytes",
        "throughput",
        "latencyMs",
    ] {
        assert!(json.get(field).is_none(), "{field} written: {json}");
    }
    let back: CellResult = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);
}

/// A status as the operator wrote it before its words were types: every phase, stage,
/// outcome, warning, verdict and SLO word as a string.
const OLD_STATUS: &str = r#"{
  "phase": "Running",
  "progress": "2/4",
  "current": {"cell": 2, "repeat": 0, "stage": "Collecting", "since": "2026-11-30T14:00:00Z"},
  "results": [
    {"cell": 0, "repeat": 0,
     "coordinates": {"target": "a", "scenario": "s", "cpu": "1", "memory": "1Gi",
                     "replicas": 1, "connections": 10},
     "outcome": "Measured", "throughput": 100.0, "usage": {}, "restarts": 0, "oomKills": 0,
     "slo": "Violated: p99 250.1ms > 200ms; error rate 2.0% > 1%",
     "warnings": ["SameNode: target and load pods shared node n1; use nodeSelector",
                  "OOMKilled: target containers were OOM-killed once at the memory limit 1Gi"],
     "baseline": {"verdict": "Worse", "baselineSamples": 10, "samples": 10}},
    {"cell": 1, "repeat": 0,
     "coordinates": {"target": "a", "scenario": "s", "cpu": "1", "memory": "1Gi",
                     "replicas": 1, "connections": 20},
     "outcome": "Failed", "reason": "ImagePullBackOff", "usage": {}, "restarts": 0, "oomKills": 0}
  ],
  "summary": {"failed": 1, "suspect": 1, "slo": "Violated (1)"}
}"#;

#[test]
fn a_status_stored_before_reads_as_types_and_writes_the_same_strings() {
    let old: serde_json::Value = serde_json::from_str(OLD_STATUS).unwrap();
    let s: BenchmarkRunStatus = serde_json::from_value(old.clone()).unwrap();
    assert_eq!(s.phase, Some(Phase::Running));
    // Stage Collecting, which older operators wrote, is read as Loading (and written so).
    assert_eq!(s.current.as_ref().unwrap().stage, Stage::Loading);
    let r = &s.results[0];
    assert_eq!(r.outcome, Outcome::Measured);
    assert_eq!(
        r.slo,
        Some(SloVerdict::Violated(vec![
            "p99 250.1ms > 200ms".into(),
            "error rate 2.0% > 1%".into()
        ]))
    );
    let codes: Vec<WarningCode> = r.warnings.iter().map(|w| w.code).collect();
    assert_eq!(codes, vec![WarningCode::SameNode, WarningCode::OomKilled]);
    assert_eq!(
        r.warnings[1].message,
        "target containers were OOM-killed once at the memory limit 1Gi"
    );
    assert_eq!(r.baseline.as_ref().unwrap().verdict, Verdict::Worse);
    assert_eq!(s.results[1].outcome, Outcome::Failed);
    assert_eq!(
        s.summary.as_ref().unwrap().slo,
        Some(SloSummary::Violated(1))
    );
    // Written back, every other word is the string it was.
    let again = serde_json::to_value(&s).unwrap();
    assert_eq!(again.pointer("/current/stage").unwrap(), "Loading");
    for path in [
        "/phase",
        "/results/0/outcome",
        "/results/0/slo",
        "/results/0/warnings",
        "/results/0/baseline/verdict",
        "/results/1/outcome",
        "/summary/slo",
    ] {
        assert_eq!(again.pointer(path), old.pointer(path), "{path}");
    }
}

#[test]
fn a_word_no_operator_writes_is_refused_naming_its_vocabulary() {
    let bad = OLD_STATUS.replace("\"Collecting\"", "\"Collected\"");
    let e = serde_json::from_str::<BenchmarkRunStatus>(&bad).unwrap_err();
    assert!(
        e.to_string().contains("\"Collected\" is not a Stage"),
        "{e}"
    );
}
