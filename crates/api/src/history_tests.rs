use super::*;
use crate::schedule::{ChangepointSpec, SeriesChange};
use crate::status::{BenchmarkRunStatus, Latency};
use crate::BenchmarkRunSpec;

fn coordinates(target: &str) -> Coordinates {
    Coordinates {
        target: target.into(),
        scenario: "hello".into(),
        cpu: "500m".into(),
        memory: "256Mi".into(),
        replicas: 1,
        connections: 16,
        ..Default::default()
    }
}

fn result(cell: i32, repeat: i32, throughput: f64, p99: f64) -> CellResult {
    CellResult {
        cell,
        repeat,
        coordinates: coordinates("demo"),
        throughput: Some(throughput),
        latency_ms: Some(Latency {
            p99,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn run(name: &str, phase: Phase, results: Vec<CellResult>) -> BenchmarkRun {
    let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
        "targets": [{"name": "demo", "image": "benchrun.local/benchrun-demo:dev"}],
        "scenarios": [{"name": "hello", "path": "/"}],
        "load": {"connections": 16, "duration": "10s"}
    }))
    .unwrap();
    let mut r = BenchmarkRun::new(name, spec);
    r.status = Some(BenchmarkRunStatus {
        phase: Some(phase),
        results,
        ..Default::default()
    });
    r
}

#[test]
fn the_median_interval_is_the_whole_range_below_six_values_and_narrows_above() {
    assert_eq!(median_interval(&[]), None);
    assert_eq!(median_interval(&[5.0]), Some((5.0, [5.0, 5.0], None)));
    let (m, i, c) = median_interval(&[3.0, 1.0, 2.0]).unwrap();
    assert_eq!((m, i), (2.0, [1.0, 3.0]));
    assert!((c.unwrap() - 0.75).abs() < 1e-12, "{c:?}");
    // n = 6: k = 1 covers 1 − 2/64 = 96.9 %; k = 2 would cover 78 %.
    let (m, i, c) = median_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!((m, i), (3.5, [1.0, 6.0]));
    assert!((c.unwrap() - (1.0 - 2.0 / 64.0)).abs() < 1e-12);
    // n = 20: the classic k = 6 (x(6), x(15)) covers 95.9 %.
    let v: Vec<f64> = (1..=20).map(f64::from).collect();
    let (_, i, c) = median_interval(&v).unwrap();
    assert_eq!(i, [6.0, 15.0]);
    assert!(c.unwrap() >= 0.95 && c.unwrap() < 0.97, "{c:?}");
}

#[test]
fn a_run_gives_one_point_per_measured_cell_with_medians_over_its_repeats() {
    let mut failed = result(1, 0, 0.0, 0.0);
    failed.outcome = Outcome::Failed;
    failed.throughput = None;
    let mut r = run(
        "nightly-1",
        Phase::Succeeded,
        vec![
            result(0, 0, 100.0, 10.0),
            result(0, 1, 120.0, 12.0),
            result(0, 2, 110.0, 30.0),
            failed,
        ],
    );
    r.metadata.annotations = Some([(COMMIT_ANNOTATION.to_string(), "abc123".to_string())].into());
    let p = points(&r);
    assert_eq!(p.len(), 1, "the failed cell gives no point");
    let (key, _, point) = &p[0];
    assert_eq!(key, "demo/hello cpu=500m mem=256Mi c=16");
    assert_eq!(point.run, "nightly-1");
    assert_eq!(point.repeats, 3);
    assert_eq!(point.throughput, 110.0);
    assert_eq!(point.throughput_interval, Some([100.0, 120.0]));
    assert_eq!(point.p99_ms, Some(12.0));
    assert_eq!(point.p99_interval, Some([10.0, 30.0]));
    assert_eq!(point.commit.as_deref(), Some("abc123"));
    assert_eq!(
        point.images.get("demo").map(String::as_str),
        Some("benchrun.local/benchrun-demo:dev")
    );
}

#[test]
fn a_run_is_added_once_and_the_oldest_points_go_past_the_limit() {
    let mut series = Vec::new();
    let first = run("r0", Phase::Succeeded, vec![result(0, 0, 100.0, 10.0)]);
    assert!(add_run(&mut series, &first));
    assert!(
        !add_run(&mut series, &first),
        "the same run is not added twice"
    );
    for i in 1..(MAX_POINTS + 5) {
        add_run(
            &mut series,
            &run(
                &format!("r{i}"),
                Phase::Succeeded,
                vec![result(0, 0, 100.0, 10.0)],
            ),
        );
    }
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].points.len(), MAX_POINTS);
    assert_eq!(series[0].points[0].run, "r5");
    assert!(has_run(&series, "r64") && !has_run(&series, "r0"));
}

fn series_of(values: &[f64]) -> Vec<CellSeries> {
    let mut series = Vec::new();
    for (i, v) in values.iter().enumerate() {
        add_run(
            &mut series,
            &run(
                &format!("r{i}"),
                Phase::Succeeded,
                vec![result(0, 0, *v, 1000.0 / v)],
            ),
        );
    }
    series
}

#[test]
fn a_step_down_in_throughput_names_its_first_run_and_is_worse_in_both_figures() {
    let values = [1000.0, 1010.0, 990.0, 1005.0, 770.0, 765.0, 780.0, 772.0];
    let opts = options(Some(&ChangepointSpec {
        min_segment: Some(2),
        min_step: None,
    }));
    let found = changes(&series_of(&values), &opts);
    assert_eq!(found.len(), 2, "{found:?}");
    let t = found.iter().find(|c| c.figure == "throughput").unwrap();
    assert_eq!((t.run.as_str(), t.index), ("r4", 4));
    assert!(t.worse && t.step < -0.2 && t.step > -0.26, "{t:?}");
    assert!(!t.provisional);
    let p = found.iter().find(|c| c.figure == "p99").unwrap();
    assert!(p.worse && p.step > 0.2, "{p:?}");
}

#[test]
fn no_change_is_reported_before_the_step_or_in_a_flat_series() {
    let opts = options(Some(&ChangepointSpec {
        min_segment: Some(2),
        min_step: None,
    }));
    assert!(changes(&series_of(&[1000.0, 1010.0, 990.0, 1005.0]), &opts).is_empty());
    assert!(changes(&series_of(&[1000.0, 1010.0, 990.0, 1005.0, 770.0]), &opts).is_empty());
}

#[test]
fn options_default_to_four_runs_and_two_percent() {
    let o = options(None);
    assert_eq!((o.min_segment, o.min_step), (4, 0.02));
    let o = options(Some(&ChangepointSpec {
        min_segment: Some(3),
        min_step: Some("5%".into()),
    }));
    assert_eq!((o.min_segment, o.min_step), (3, 0.05));
}

#[test]
fn the_verdict_reads_phase_regression_and_slos() {
    assert_eq!(verdict(&run("a", Phase::Running, vec![])), "Running");
    assert_eq!(verdict(&run("a", Phase::Failed, vec![])), "Failed");
    assert_eq!(verdict(&run("a", Phase::Succeeded, vec![])), "Succeeded");
    let mut r = run("a", Phase::Succeeded, vec![]);
    r.status.as_mut().unwrap().conditions.push(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
            type_: "Regressed".into(),
            status: "True".into(),
            reason: "Worse".into(),
            message: String::new(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        },
    );
    assert_eq!(verdict(&r), "Regressed");
}

#[test]
fn regressed_names_the_first_run_of_the_newest_worse_step() {
    let c = |index, step: f64, worse| SeriesChange {
        cell: "demo/hello cpu=1 mem=1Gi c=4".into(),
        figure: "throughput".into(),
        run: format!("r{index}"),
        index,
        before: 1000.0,
        after: 1000.0 * (1.0 + step),
        step,
        worse,
        provisional: false,
        environment_change: None,
    };
    let (worse, reason, msg) = regressed(&[c(4, -0.23, true)]);
    assert!(worse);
    assert_eq!(reason, "StepFound");
    assert!(
        msg.contains("fell by 23.0% from run r4 (mean 1000 → 770)"),
        "{msg}"
    );
    // A later step back up ends it.
    let (worse, reason, _) = regressed(&[c(4, -0.23, true), c(9, 0.3, false)]);
    assert!(!worse);
    assert_eq!(reason, "NoneWorse");
    assert_eq!(regressed(&[]).1, "NoChange");
}

#[test]
fn a_step_that_coincides_with_a_new_kernel_is_reported_as_that() {
    use crate::environment::{Environment, NodeEnvironment};
    let env = |kernel: &str| Environment {
        nodes: vec![NodeEnvironment {
            name: "n".into(),
            role: "Target".into(),
            kernel: kernel.into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let point = |i: usize, throughput: f64, kernel: &str| SeriesPoint {
        run: format!("r{i}"),
        repeats: 3,
        throughput,
        environment: Some(env(kernel)),
        ..Default::default()
    };
    let mut points: Vec<SeriesPoint> = (0..6).map(|i| point(i, 1000.0, "6.1")).collect();
    points.extend((6..12).map(|i| point(i, 700.0, "6.2")));
    let series = [CellSeries {
        cell: "demo/hello".into(),
        points,
        ..Default::default()
    }];
    let found = changes(&series, &Options::default());
    let step = found
        .iter()
        .find(|c| c.figure == "throughput")
        .expect("a step at r6");
    assert_eq!(step.run, "r6");
    assert_eq!(
        step.environment_change.as_deref(),
        Some("target kernel 6.1 vs 6.2")
    );
    let (worse, reason, msg) = regressed(&found);
    assert!(worse);
    assert_eq!(reason, "EnvironmentChanged");
    assert!(
        msg.contains("with a change of environment: target kernel 6.1 vs 6.2"),
        "{msg}"
    );
}

/// A Succeeded run that finished at minute `minute` with one measured repeat of a cell per
/// connection count in `connections`.
fn run_of_cells(name: &str, minute: i64, connections: &[i32]) -> BenchmarkRun {
    let results = connections
        .iter()
        .enumerate()
        .map(|(i, &c)| CellResult {
            coordinates: Coordinates {
                connections: c,
                ..coordinates("demo")
            },
            ..result(i as i32, 0, 100.0, 10.0)
        })
        .collect();
    let mut r = run(name, Phase::Succeeded, results);
    let at = jiff::Timestamp::from_second(1_800_000_000 + minute * 60).unwrap();
    r.status.as_mut().unwrap().completion_time =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at));
    r
}

fn tracked(series: &[CellSeries]) -> Vec<i32> {
    let mut c: Vec<i32> = series
        .iter()
        .map(|s| {
            s.cell
                .rsplit_once(" c=")
                .and_then(|(_, c)| c.parse().ok())
                .unwrap()
        })
        .collect();
    c.sort();
    c
}

#[test]
fn after_a_template_change_the_new_cells_are_tracked_in_place_of_the_oldest_unused() {
    let mut series = Vec::new();
    // The old template measured eight cells; the last of them twice more.
    let old: Vec<i32> = (1..=8).collect();
    assert!(add_run(&mut series, &run_of_cells("r0", 0, &old)));
    assert!(add_run(&mut series, &run_of_cells("r1", 1, &[8])));
    assert_eq!(series.len(), MAX_SERIES);
    // The new template keeps cell 8 and measures three new ones.
    assert!(add_run(
        &mut series,
        &run_of_cells("r2", 2, &[8, 16, 32, 64])
    ));
    assert_eq!(series.len(), MAX_SERIES);
    assert_eq!(tracked(&series), [4, 5, 6, 7, 8, 16, 32, 64]);
    assert_eq!(
        series
            .iter()
            .find(|s| s.cell.ends_with(" c=8"))
            .unwrap()
            .points
            .len(),
        3
    );
    for c in [16, 32, 64] {
        let s = series
            .iter()
            .find(|s| s.cell.ends_with(&format!(" c={c}")))
            .unwrap();
        assert_eq!(s.points[0].run, "r2");
    }
}

#[test]
fn a_run_of_more_cells_than_the_limit_tracks_the_first_and_evicts_none_of_its_own() {
    let mut series = Vec::new();
    let many: Vec<i32> = (1..=10).collect();
    assert!(add_run(&mut series, &run_of_cells("r0", 0, &many)));
    assert_eq!(tracked(&series), (1..=8).collect::<Vec<_>>());
    assert_eq!(
        evictable(&series, &["demo/hello cpu=500m mem=256Mi c=1"]),
        Some(1)
    );
}
