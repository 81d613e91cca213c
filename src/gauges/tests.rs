//! Tests of the rows of a run's gauges, and the fixtures the collector's tests share.

use benchrun_api::{BenchmarkRunStatus, Latency, TargetUsage};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

/// 2026-01-01T00:00:00Z, the fixtures' completion time.
const COMPLETED: i64 = 1_767_225_600;

fn coordinates() -> Coordinates {
    Coordinates {
        target: "express".into(),
        scenario: "hello".into(),
        cpu: "500m".into(),
        memory: "256Mi".into(),
        replicas: 1,
        connections: 10,
        ..Coordinates::default()
    }
}

/// A measured repeat of express/hello c=10 with these figures, no errors, and a CPU and peak
/// memory that grow with the repeat (0.4 cores and 100 MB at repeat 0, +0.1 and +20 MB each).
pub(crate) fn result(cell: i32, repeat: i32, throughput: f64, p50: f64, p99: f64) -> CellResult {
    CellResult {
        cell,
        repeat,
        coordinates: coordinates(),
        outcome: Outcome::Measured,
        throughput: Some(throughput),
        latency_ms: Some(Latency {
            p50,
            p99,
            ..Latency::default()
        }),
        error_rate: Some(0.0),
        usage: TargetUsage {
            cpu_avg_cores: Some(0.4 + 0.1 * f64::from(repeat)),
            memory_peak_bytes: Some(100_000_000 + 20_000_000 * i64::from(repeat)),
            ..TargetUsage::default()
        },
        ..CellResult::default()
    }
}

fn failed(cell: i32, repeat: i32) -> CellResult {
    CellResult {
        cell,
        repeat,
        coordinates: coordinates(),
        outcome: Outcome::Failed,
        reason: Some("image pull failed".into()),
        ..CellResult::default()
    }
}

/// A `Succeeded` status with these results, completed at 2026-01-01T00:00:00Z.
pub(crate) fn finished(results: Vec<CellResult>) -> BenchmarkRunStatus {
    BenchmarkRunStatus {
        phase: Some(Phase::Succeeded),
        completion_time: Some(Time(Timestamp::from_second(COMPLETED).unwrap())),
        results,
        ..BenchmarkRunStatus::default()
    }
}

fn key() -> RunKey {
    RunKey {
        namespace: "bench".into(),
        schedule: "nightly".into(),
        run: "nightly-1".into(),
    }
}

fn gauges(status: &BenchmarkRunStatus) -> RunGauges {
    of_status(key(), status).expect("a finished run has gauges")
}

#[test]
fn each_figure_is_the_median_over_the_measured_repeats() {
    let g = gauges(&finished(vec![
        result(0, 0, 900.0, 10.0, 40.0),
        result(0, 1, 1300.0, 30.0, 90.0),
        result(0, 2, 1000.0, 12.0, 41.0),
    ]));
    assert_eq!(g.cells.len(), 1);
    let c = &g.cells[0];
    assert_eq!(c.repeats, 3);
    assert_eq!(c.throughput_rps, Some(1000.0));
    assert_eq!(c.latency_p50_seconds, Some(0.012));
    assert_eq!(c.latency_p99_seconds, Some(0.041));
    assert_eq!(c.error_ratio, Some(0.0));
    assert_eq!(c.cpu_cores, Some(0.5));
    assert_eq!(c.memory_peak_bytes, Some(120_000_000.0));
    assert_eq!(g.completed, Some(COMPLETED as f64));
    assert_eq!(g.phase, Phase::Succeeded);
}

#[test]
fn an_even_count_of_repeats_takes_the_mean_of_the_middle_two() {
    let g = gauges(&finished(vec![
        result(0, 0, 1000.0, 10.0, 40.0),
        result(0, 1, 1200.0, 12.0, 44.0),
    ]));
    let c = &g.cells[0];
    assert_eq!(c.throughput_rps, Some(1100.0));
    assert_eq!(c.latency_p50_seconds, Some(0.011));
    assert_eq!(c.latency_p99_seconds, Some(0.042));
    assert_eq!(c.memory_peak_bytes, Some(110_000_000.0));
}

#[test]
fn failed_repeats_count_neither_in_the_figures_nor_in_the_repeats() {
    let g = gauges(&finished(vec![
        result(0, 0, 1000.0, 10.0, 40.0),
        failed(0, 1),
        result(0, 2, 1200.0, 12.0, 44.0),
    ]));
    let c = &g.cells[0];
    assert_eq!(c.repeats, 2);
    assert_eq!(c.throughput_rps, Some(1100.0));
}

#[test]
fn a_repeat_of_mostly_errors_counts_and_its_error_ratio_is_exported() {
    let mut errors = result(0, 1, 5000.0, 1.0, 2.0);
    errors.error_rate = Some(0.9);
    let g = gauges(&finished(vec![result(0, 0, 1000.0, 10.0, 40.0), errors]));
    let c = &g.cells[0];
    assert_eq!(c.repeats, 2);
    assert_eq!(c.throughput_rps, Some(3000.0));
    assert_eq!(c.error_ratio, Some(0.45));
}

#[test]
fn a_figure_no_measured_repeat_has_is_left_out() {
    let mut a = result(0, 0, 1000.0, 10.0, 40.0);
    let mut b = result(0, 1, 1200.0, 12.0, 44.0);
    a.usage = TargetUsage::default();
    b.usage.memory_peak_bytes = None;
    b.latency_ms = None;
    let c = &gauges(&finished(vec![a, b])).cells[0];
    assert_eq!(c.cpu_cores, Some(0.5), "the one repeat with CPU");
    assert_eq!(c.memory_peak_bytes, None);
    assert_eq!(c.latency_p99_seconds, Some(0.04));
    assert_eq!(c.throughput_rps, Some(1100.0));
}

#[test]
fn a_run_with_no_measured_cell_has_rows_of_zero_repeats_and_no_figures() {
    let mut status = finished(vec![failed(0, 0), failed(1, 0), failed(1, 1)]);
    status.phase = Some(Phase::Failed);
    let g = gauges(&status);
    assert_eq!(g.phase, Phase::Failed);
    assert_eq!(g.cells.iter().map(|c| c.cell).collect::<Vec<_>>(), [0, 1]);
    for c in &g.cells {
        assert_eq!(
            *c,
            CellGauges {
                cell: c.cell,
                coordinates: coordinates(),
                ..CellGauges::default()
            }
        );
        let values: Vec<Option<f64>> = CELL_METRICS.iter().map(|m| (m.value)(c)).collect();
        assert_eq!(values, [None, None, None, None, None, None, Some(0.0)]);
    }
}

#[test]
fn a_run_refused_before_measuring_has_only_its_completion() {
    let mut status = finished(Vec::new());
    status.phase = Some(Phase::Failed);
    let g = gauges(&status);
    assert!(g.cells.is_empty());
    assert_eq!(g.completed, Some(COMPLETED as f64));
}

#[test]
fn an_unfinished_run_has_no_gauges() {
    for phase in [
        None,
        Some(Phase::Pending),
        Some(Phase::Queued),
        Some(Phase::Running),
    ] {
        let mut status = finished(vec![result(0, 0, 1000.0, 10.0, 40.0)]);
        status.phase = phase;
        assert_eq!(of_status(key(), &status), None, "{phase:?}");
    }
}

#[test]
fn cells_are_in_matrix_order_whatever_the_order_of_the_results() {
    let mut second = result(1, 0, 2000.0, 10.0, 40.0);
    second.coordinates.connections = 100;
    let g = gauges(&finished(vec![
        second,
        result(0, 0, 1000.0, 10.0, 40.0),
        result(1, 1, 2200.0, 10.0, 40.0),
    ]));
    let rows: Vec<(i32, i32, Option<f64>)> = g
        .cells
        .iter()
        .map(|c| (c.cell, c.coordinates.connections, c.throughput_rps))
        .collect();
    assert_eq!(rows, [(0, 10, Some(1000.0)), (1, 100, Some(2100.0))]);
}

#[test]
fn labels_name_the_run_its_schedule_and_the_cells_coordinates() {
    let mut open = result(3, 0, 1000.0, 10.0, 40.0);
    open.coordinates.rate = Some(500);
    let g = gauges(&finished(vec![result(2, 0, 1000.0, 10.0, 40.0), open]));
    let pairs = |labels: Vec<(&str, String)>| -> Vec<String> {
        labels
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    };
    assert_eq!(
        pairs(g.cells[0].labels(&g.key)),
        [
            "namespace=bench",
            "schedule=nightly",
            "run=nightly-1",
            "cell=2",
            "target=express",
            "scenario=hello",
            "cpu=500m",
            "memory=256Mi",
            "replicas=1",
            "connections=10",
            "rate=",
        ]
    );
    assert!(pairs(g.cells[1].labels(&g.key)).contains(&"rate=500".to_string()));
    assert_eq!(
        pairs(g.labels()),
        [
            "namespace=bench",
            "schedule=nightly",
            "run=nightly-1",
            "phase=Succeeded"
        ]
    );
}

#[test]
fn a_run_without_the_schedule_label_has_an_empty_schedule() {
    let spec = serde_yaml::from_str(
        "{targets: [{name: a, image: \"x:1\"}], scenarios: [{name: s, path: /}], load: {connections: 1, duration: 30s}}",
    )
    .unwrap();
    let mut run = BenchmarkRun::new("adhoc", spec);
    run.metadata.namespace = Some("bench".into());
    run.status = Some(finished(Vec::new()));
    let key = |run: &BenchmarkRun| of(run).map(|g| g.key);
    let want = |schedule: &str| RunKey {
        namespace: "bench".into(),
        schedule: schedule.into(),
        run: "adhoc".into(),
    };
    assert_eq!(key(&run), Some(want("")));
    run.metadata
        .labels
        .get_or_insert_default()
        .insert(SCHEDULE_LABEL.into(), "weekly".into());
    assert_eq!(key(&run), Some(want("weekly")));
    run.status = None;
    assert_eq!(key(&run), None, "no status: not finished");
}

#[test]
fn the_median_skips_values_that_are_not_finite() {
    assert_eq!(median([]), None);
    assert_eq!(median([f64::NAN]), None);
    assert_eq!(median([3.0, f64::INFINITY, 1.0, 2.0]), Some(2.0));
}

/// Gauges of run `name` in `bench`, completed `completed` seconds after the fixtures' time
/// (`None`: no completion time), with one measured cell or none.
fn finished_run(name: &str, completed: Option<i64>, measured: bool) -> RunGauges {
    let mut status = finished(if measured {
        vec![result(0, 0, 1000.0, 10.0, 40.0)]
    } else {
        Vec::new()
    });
    status.completion_time =
        completed.map(|s| Time(Timestamp::from_second(COMPLETED + s).unwrap()));
    let key = RunKey {
        namespace: "bench".into(),
        schedule: String::new(),
        run: name.into(),
    };
    of_status(key, &status).expect("finished")
}

fn names(runs: &[RunGauges]) -> Vec<&str> {
    runs.iter().map(|r| r.key.run.as_str()).collect()
}

#[test]
fn select_keeps_the_most_recently_completed_runs_that_measured_something() {
    let runs = vec![
        finished_run("a-old", Some(0), true),
        finished_run("b-newest", Some(300), true),
        finished_run("c-refused", Some(400), false),
        finished_run("d-no-time", None, true),
        finished_run("e-newer", Some(200), true),
        finished_run("f-mid", Some(100), true),
    ];
    let (kept, dropped) = select(runs.clone(), 3);
    // The three newest with a result, in exposition order; the refused run is no candidate,
    // the run without a completion time counts as the oldest.
    assert_eq!(names(&kept), ["b-newest", "e-newer", "f-mid"]);
    assert_eq!(dropped, 2, "a-old and d-no-time");
    let (all, none) = select(runs.clone(), DEFAULT_MAX_RUNS);
    assert_eq!(
        names(&all),
        ["a-old", "b-newest", "d-no-time", "e-newer", "f-mid"]
    );
    assert_eq!(none, 0);
    let (nothing, every) = select(runs, 0);
    assert!(nothing.is_empty());
    assert_eq!(every, 5);
}

#[test]
fn select_breaks_ties_of_completion_time_by_name() {
    let runs = vec![
        finished_run("z", Some(0), true),
        finished_run("a", Some(0), true),
        finished_run("m", Some(0), true),
    ];
    let (kept, dropped) = select(runs, 2);
    assert_eq!(names(&kept), ["a", "m"]);
    assert_eq!(dropped, 1);
}
