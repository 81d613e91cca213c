//! Status written by earlier versions still reads: measured cells keep every figure, and a
//! failed cell written now carries no load figure at all (absent, not zero).

use benchrun_api::{CellResult, ErrorCounts, Latency};

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
    assert_eq!(r.outcome, "Failed");
    assert_eq!(r.reason.as_deref(), Some("ImagePullBackOff"));
    assert_eq!(r.latency_ms, Some(Latency::default()));
}

#[test]
fn a_failed_cell_without_figures_writes_none_of_them() {
    let r = CellResult {
        outcome: "Failed".into(),
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
