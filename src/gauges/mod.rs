//! Each finished run's per-cell figures as gauges on the operator's `/metrics`, so that the
//! cluster's Prometheus keeps their history for dashboards and alerts (see `docs/metrics.md`,
//! Gauges of finished runs).
//!
//! Pure: [`of`] turns one run into its rows (labels and values), and [`CELL_METRICS`] names
//! what each gauge reads from a row. The thin [`collector`] encodes the rows of the runs in the
//! controller's cache at scrape time; it asks the apiserver nothing.
//!
//! A cell's figures are medians over its repeats whose outcome is `Measured` (a failed repeat
//! has no figures), as the comparisons read them (`src/comparisons.rs`): every measured repeat
//! counts, also one of mostly errors, whose error ratio is exported beside its throughput. A
//! figure no measured repeat has (no CPU when Prometheus could not be read) is left out.

pub mod collector;

use std::collections::BTreeMap;

use benchrun_api::{BenchmarkRun, BenchmarkRunStatus, CellResult, Coordinates, Outcome, Phase};
use kube::ResourceExt;

/// The label a BenchmarkSchedule puts on its runs (the API crate's).
pub use benchrun_api::schedule::SCHEDULE_LABEL;

/// Which run a gauge belongs to: its namespace, its schedule (`""` when none) and its name.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunKey {
    /// The run's namespace.
    pub namespace: String,
    /// The value of the run's [`SCHEDULE_LABEL`], `""` without it.
    pub schedule: String,
    /// The run's name.
    pub run: String,
}

/// The gauges of one finished run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunGauges {
    /// Which run.
    pub key: RunKey,
    /// `Succeeded` or `Failed`.
    pub phase: Phase,
    /// `status.completionTime` in seconds since the Unix epoch (absent in a status without it).
    pub completed: Option<f64>,
    /// One row per cell that has a result, in matrix order.
    pub cells: Vec<CellGauges>,
}

/// One cell's figures: medians over its measured repeats.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CellGauges {
    /// Index of the cell in matrix order: with the run, it makes each label set unique (two
    /// cells may differ only in coordinates that are no label, such as `requests`).
    pub cell: i32,
    /// The cell's coordinates.
    pub coordinates: Coordinates,
    /// Repeats with outcome `Measured`, which the figures are medians of (0 when all failed).
    pub repeats: usize,
    /// Requests per second.
    pub throughput_rps: Option<f64>,
    /// Median latency in seconds.
    pub latency_p50_seconds: Option<f64>,
    /// 99th percentile latency in seconds.
    pub latency_p99_seconds: Option<f64>,
    /// Errors over requests (0.01 = 1 %).
    pub error_ratio: Option<f64>,
    /// Average CPU of the target pods in cores (summed over the pods).
    pub cpu_cores: Option<f64>,
    /// Peak memory working set of the target pods in bytes (summed over the pods).
    pub memory_peak_bytes: Option<f64>,
}

impl CellGauges {
    /// The labels of this cell's gauges, in exposition order: `namespace`, `schedule`, `run`,
    /// `cell`, `target`, `scenario`, `cpu`, `memory`, `replicas`, `connections` and `rate`
    /// (requests per second of the open model, `""` in the closed model). Values are raw: the
    /// encoder escapes them.
    pub fn labels(&self, key: &RunKey) -> Vec<(&'static str, String)> {
        let c = &self.coordinates;
        vec![
            ("namespace", key.namespace.clone()),
            ("schedule", key.schedule.clone()),
            ("run", key.run.clone()),
            ("cell", self.cell.to_string()),
            ("target", c.target.clone()),
            ("scenario", c.scenario.clone()),
            ("cpu", c.cpu.clone()),
            ("memory", c.memory.clone()),
            ("replicas", c.replicas.to_string()),
            ("connections", c.connections.to_string()),
            ("rate", c.rate.map(|r| r.to_string()).unwrap_or_default()),
        ]
    }
}

impl RunGauges {
    /// The labels of `benchrun_run_completion_timestamp_seconds`: `namespace`, `schedule`,
    /// `run` and `phase`.
    pub fn labels(&self) -> Vec<(&'static str, String)> {
        vec![
            ("namespace", self.key.namespace.clone()),
            ("schedule", self.key.schedule.clone()),
            ("run", self.key.run.clone()),
            ("phase", self.phase.as_str().to_string()),
        ]
    }
}

/// One gauge of every cell: its name after the registry's `benchrun_` prefix, its help and
/// the figure it reads (absent: no sample for that cell).
#[derive(Clone, Copy, Debug)]
pub struct CellMetric {
    /// Name without the `benchrun_` prefix, e.g. `cell_throughput_rps`.
    pub name: &'static str,
    /// The `# HELP` text.
    pub help: &'static str,
    /// The value of a cell's row.
    pub value: fn(&CellGauges) -> Option<f64>,
}

/// The per-cell gauges, in exposition order.
pub const CELL_METRICS: &[CellMetric] = &[
    CellMetric {
        name: "cell_throughput_rps",
        help: "Requests per second of a finished run's cell: median over its measured repeats.",
        value: |c| c.throughput_rps,
    },
    CellMetric {
        name: "cell_latency_p50_seconds",
        help: "Median latency of a finished run's cell: median over its measured repeats.",
        value: |c| c.latency_p50_seconds,
    },
    CellMetric {
        name: "cell_latency_p99_seconds",
        help: "99th percentile latency of a finished run's cell: median over its measured repeats.",
        value: |c| c.latency_p99_seconds,
    },
    CellMetric {
        name: "cell_error_ratio",
        help: "Errors over requests of a finished run's cell: median over its measured repeats.",
        value: |c| c.error_ratio,
    },
    CellMetric {
        name: "cell_cpu_cores",
        help: "Average CPU of the target pods in cores of a finished run's cell: median over its measured repeats.",
        value: |c| c.cpu_cores,
    },
    CellMetric {
        name: "cell_memory_peak_bytes",
        help: "Peak memory working set of the target pods of a finished run's cell: median over its measured repeats.",
        value: |c| c.memory_peak_bytes,
    },
    CellMetric {
        name: "cell_repeats",
        help: "Measured repeats the figures of a finished run's cell are medians of (0: every repeat failed).",
        value: |c| Some(c.repeats as f64),
    },
];

/// Name (after the `benchrun_` prefix) of the gauge of each finished run's completion time.
pub const COMPLETION_METRIC: &str = "run_completion_timestamp_seconds";
/// Its `# HELP` text.
pub const COMPLETION_HELP: &str =
    "When a finished run completed (status.completionTime), in seconds since the Unix epoch.";

/// Default of the operator's `--metrics-max-runs`: the most runs whose gauges are exported.
pub const DEFAULT_MAX_RUNS: usize = 200;

/// Name (after the `benchrun_` prefix) of the gauge of the runs [`select`] left out.
pub const DROPPED_METRIC: &str = "metrics_runs_dropped";
/// Its `# HELP` text.
pub const DROPPED_HELP: &str = "Finished runs with results whose gauges the last scrape left out: \
     beyond --metrics-max-runs, the least recently completed.";

/// The runs whose gauges are exported, in exposition order (by namespace, schedule and
/// name), and how many were left out: only runs that measured something (a cell result; a run
/// refused before measuring has none), at most `max` of them, the most recently completed (a
/// run without a completion time counts as the oldest). This bounds the series of `/metrics`
/// to `max` × (7 × cells + 1) whatever number of finished runs the cluster keeps.
pub fn select(mut runs: Vec<RunGauges>, max: usize) -> (Vec<RunGauges>, usize) {
    runs.retain(|r| !r.cells.is_empty());
    let completed = |r: &RunGauges| r.completed.unwrap_or(f64::NEG_INFINITY);
    runs.sort_by(|a, b| {
        completed(b)
            .total_cmp(&completed(a))
            .then_with(|| a.key.cmp(&b.key))
    });
    let dropped = runs.len().saturating_sub(max);
    runs.truncate(max);
    runs.sort_by(|a, b| a.key.cmp(&b.key));
    (runs, dropped)
}

/// The gauges of a run; `None` until it is finished (`Succeeded` or `Failed`).
pub fn of(run: &BenchmarkRun) -> Option<RunGauges> {
    let key = RunKey {
        namespace: run.namespace().unwrap_or_default(),
        schedule: run
            .labels()
            .get(SCHEDULE_LABEL)
            .cloned()
            .unwrap_or_default(),
        run: run.name_any(),
    };
    of_status(key, run.status.as_ref()?)
}

/// [`of`] from the run's key and status.
pub fn of_status(key: RunKey, status: &BenchmarkRunStatus) -> Option<RunGauges> {
    let phase = status.phase.filter(|p| p.is_final())?;
    let mut by_cell: BTreeMap<i32, Vec<&CellResult>> = BTreeMap::new();
    for r in &status.results {
        by_cell.entry(r.cell).or_default().push(r);
    }
    Some(RunGauges {
        key,
        phase,
        completed: status
            .completion_time
            .as_ref()
            .map(|t| t.0.as_second() as f64),
        cells: by_cell
            .into_iter()
            .map(|(cell, results)| cell_gauges(cell, &results))
            .collect(),
    })
}

/// A cell's row from its results (every repeat, failed ones too; at least one).
fn cell_gauges(cell: i32, results: &[&CellResult]) -> CellGauges {
    let measured: Vec<&CellResult> = results
        .iter()
        .copied()
        .filter(|r| r.outcome == Outcome::Measured)
        .collect();
    let figure =
        |f: &dyn Fn(&CellResult) -> Option<f64>| median(measured.iter().filter_map(|r| f(r)));
    CellGauges {
        cell,
        coordinates: results
            .first()
            .map(|r| r.coordinates.clone())
            .unwrap_or_default(),
        repeats: measured.len(),
        throughput_rps: figure(&|r| r.throughput),
        // Milliseconds to seconds after the median: the division of the median is exact where
        // the median of divided values may not be.
        latency_p50_seconds: figure(&|r| r.latency_ms.as_ref().map(|l| l.p50))
            .map(|ms| ms / 1000.0),
        latency_p99_seconds: figure(&|r| r.latency_ms.as_ref().map(|l| l.p99))
            .map(|ms| ms / 1000.0),
        error_ratio: figure(&|r| r.error_rate),
        cpu_cores: figure(&|r| r.usage.cpu_avg_cores),
        memory_peak_bytes: figure(&|r| r.usage.memory_peak_bytes.map(|b| b as f64)),
    }
}

/// Median of the finite values (mean of the middle two for an even count); `None` without any.
/// The same median as a schedule's series ([`benchrun_api::history::median_interval`]).
pub fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().collect();
    benchrun_api::history::median_interval(&v).map(|(m, _, _)| m)
}

#[cfg(test)]
mod tests;
