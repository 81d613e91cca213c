//! The gauges of finished runs at scrape time: a prometheus-client [`Collector`] over the
//! controller's cache of runs. Only the leader has that cache (it is handed over once synced,
//! see [`RunsCollector::export`]), so a standby exports none of these gauges and the two
//! replicas never export the same series. Nothing is read from the apiserver per scrape.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use benchrun_api::BenchmarkRun;
use kube::runtime::reflector::Store;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;

use super::{
    RunGauges, CELL_METRICS, COMPLETION_HELP, COMPLETION_METRIC, DEFAULT_MAX_RUNS, DROPPED_HELP,
    DROPPED_METRIC,
};

/// Encodes [`super::of`] of the finished runs in the cache it was given that
/// [`super::select`] keeps, and how many it left out.
pub struct RunsCollector {
    store: Mutex<Option<Store<BenchmarkRun>>>,
    max_runs: AtomicUsize,
}

impl Default for RunsCollector {
    fn default() -> Self {
        Self {
            store: Mutex::new(None),
            max_runs: AtomicUsize::new(DEFAULT_MAX_RUNS),
        }
    }
}

impl fmt::Debug for RunsCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunsCollector")
            .field("exporting", &self.store().is_some())
            .finish()
    }
}

impl RunsCollector {
    /// Exports the finished runs of this cache from the next scrape on. Called by the leader's
    /// controller once the cache is synced, so a partly listed cache never drops series.
    pub fn export(&self, store: Store<BenchmarkRun>) {
        *self.store.lock().unwrap_or_else(|e| e.into_inner()) = Some(store);
    }

    /// Exports the gauges of at most `max` runs from the next scrape on (`--metrics-max-runs`).
    pub fn set_max_runs(&self, max: usize) {
        self.max_runs.store(max, Ordering::Relaxed);
    }

    fn store(&self) -> Option<Store<BenchmarkRun>> {
        self.store.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The gauges of the exported runs, by namespace and name (a stable exposition order),
    /// and how many were left out; `None` without a cache (a standby).
    fn runs(&self) -> Option<(Vec<RunGauges>, usize)> {
        let store = self.store()?;
        let runs: Vec<RunGauges> = store.state().iter().filter_map(|r| super::of(r)).collect();
        Some(super::select(runs, self.max_runs.load(Ordering::Relaxed)))
    }
}

impl Collector for RunsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let Some((runs, dropped)) = self.runs() else {
            return Ok(());
        };
        let dropped = ConstGauge::new(i64::try_from(dropped).unwrap_or(i64::MAX));
        dropped.encode(encoder.encode_descriptor(
            DROPPED_METRIC,
            DROPPED_HELP,
            None,
            MetricType::Gauge,
        )?)?;
        for metric in CELL_METRICS {
            let rows: Vec<(Vec<(&str, String)>, f64)> = runs
                .iter()
                .flat_map(|run| {
                    run.cells
                        .iter()
                        .filter_map(|c| Some((escaped(c.labels(&run.key)), (metric.value)(c)?)))
                })
                .collect();
            encode_gauges(&mut encoder, metric.name, metric.help, &rows)?;
        }
        let rows: Vec<(Vec<(&str, String)>, f64)> = runs
            .iter()
            .filter_map(|run| Some((escaped(run.labels()), run.completed?)))
            .collect();
        encode_gauges(&mut encoder, COMPLETION_METRIC, COMPLETION_HELP, &rows)
    }
}

/// One gauge family; none at all (no `# HELP` either) without rows.
fn encode_gauges(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: &[(Vec<(&str, String)>, f64)],
) -> fmt::Result {
    if rows.is_empty() {
        return Ok(());
    }
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, value) in rows {
        ConstGauge::new(*value).encode(family.encode_family(labels)?)?;
    }
    Ok(())
}

/// Label values as the exposition format wants them: prometheus-client writes them verbatim,
/// and a scenario name (free text) may hold a quote or a backslash.
fn escaped(labels: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    labels
        .into_iter()
        .map(|(k, v)| {
            let v = v
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n");
            (k, v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use benchrun_api::{BenchmarkRunSpec, Phase};
    use kube::runtime::{reflector, watcher};

    use super::*;
    use crate::gauges::tests::{finished, result};
    use crate::telemetry::Metrics;

    fn spec() -> BenchmarkRunSpec {
        serde_yaml::from_str(
            r#"
targets: [{name: express, image: "x:1"}]
scenarios: [{name: hello, path: /hello}]
load: {connections: 10, duration: 30s}
"#,
        )
        .unwrap()
    }

    fn run(namespace: &str, name: &str, status: benchrun_api::BenchmarkRunStatus) -> BenchmarkRun {
        let mut run = BenchmarkRun::new(name, spec());
        run.metadata.namespace = Some(namespace.into());
        run.status = Some(status);
        run
    }

    fn store(runs: Vec<BenchmarkRun>) -> Store<BenchmarkRun> {
        let (store, mut cache) = reflector::store();
        cache.apply_watcher_event(&watcher::Event::Init);
        for run in runs {
            cache.apply_watcher_event(&watcher::Event::InitApply(run));
        }
        cache.apply_watcher_event(&watcher::Event::InitDone);
        store
    }

    #[test]
    fn the_leaders_metrics_show_each_finished_cell_as_gauges() {
        let mut scheduled = run(
            "bench",
            "nightly-1",
            finished(vec![
                result(0, 0, 1000.0, 10.0, 40.0),
                result(0, 1, 1200.0, 12.0, 44.0),
            ]),
        );
        scheduled
            .metadata
            .labels
            .get_or_insert_default()
            .insert(crate::gauges::SCHEDULE_LABEL.into(), "nightly".into());
        let mut running = finished(vec![result(0, 0, 500.0, 5.0, 20.0)]);
        running.phase = Some(Phase::Running);
        let m = Arc::new(Metrics::default());
        m.export_runs(store(vec![scheduled, run("bench", "busy", running)]));
        let text = m.render();
        let labels = r#"namespace="bench",schedule="nightly",run="nightly-1",cell="0",target="express",scenario="hello",cpu="500m",memory="256Mi",replicas="1",connections="10",rate="""#;
        for line in [
            "# TYPE benchrun_cell_throughput_rps gauge".to_string(),
            format!("benchrun_cell_throughput_rps{{{labels}}} 1100.0"),
            format!("benchrun_cell_latency_p50_seconds{{{labels}}} 0.011"),
            format!("benchrun_cell_latency_p99_seconds{{{labels}}} 0.042"),
            format!("benchrun_cell_error_ratio{{{labels}}} 0.0"),
            format!("benchrun_cell_cpu_cores{{{labels}}} 0.45"),
            format!("benchrun_cell_memory_peak_bytes{{{labels}}} 110000000.0"),
            format!("benchrun_cell_repeats{{{labels}}} 2.0"),
            r#"benchrun_run_completion_timestamp_seconds{namespace="bench",schedule="nightly",run="nightly-1",phase="Succeeded"} 1767225600.0"#.to_string(),
        ] {
            assert!(text.contains(&format!("{line}\n")), "missing {line:?} in\n{text}");
        }
        assert!(!text.contains(r#"run="busy""#), "an unfinished run: {text}");
    }

    #[test]
    fn the_series_are_capped_at_the_most_recent_runs_and_the_rest_counted() {
        let at = |secs: i64, cells: Vec<benchrun_api::CellResult>| {
            let mut s = finished(cells);
            s.completion_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                jiff::Timestamp::from_second(1_767_225_600 + secs).unwrap(),
            ));
            s
        };
        let m = Metrics::default();
        m.set_max_runs(2);
        m.export_runs(store(vec![
            run("bench", "first", at(0, vec![result(0, 0, 1.0, 1.0, 1.0)])),
            run("bench", "second", at(10, vec![result(0, 0, 2.0, 1.0, 1.0)])),
            run("other", "third", at(20, vec![result(0, 0, 3.0, 1.0, 1.0)])),
            run("other", "refused", at(30, Vec::new())),
        ]));
        let text = m.render();
        assert!(text.contains("benchrun_metrics_runs_dropped 1\n"), "{text}");
        assert!(!text.contains(r#"run="first""#), "the oldest run: {text}");
        assert!(
            !text.contains(r#"run="refused""#),
            "a run without results: {text}"
        );
        for kept in ["second", "third"] {
            assert!(
                text.contains(&format!(r#"run="{kept}",cell="0""#)),
                "missing {kept} in {text}"
            );
        }
        m.set_max_runs(10);
        let text = m.render();
        assert!(text.contains("benchrun_metrics_runs_dropped 0\n"), "{text}");
        assert!(text.contains(r#"run="first""#), "{text}");
    }

    #[test]
    fn a_standby_exports_no_run_gauges() {
        let m = Metrics::default();
        let text = m.render();
        assert!(!text.contains("benchrun_cell_"), "{text}");
        assert!(!text.contains("benchrun_run_completion"), "{text}");
        assert!(!text.contains("benchrun_metrics_runs_dropped"), "{text}");
    }

    #[test]
    fn label_values_are_escaped() {
        let mut status = finished(vec![result(0, 0, 1000.0, 10.0, 40.0)]);
        status.results[0].coordinates.scenario = "say \"hi\"\\n".into();
        let m = Metrics::default();
        m.export_runs(store(vec![run("bench", "quoted", status)]));
        let text = m.render();
        assert!(
            text.contains(r#"scenario="say \"hi\"\\n""#),
            "unescaped label value in\n{text}"
        );
    }
}
