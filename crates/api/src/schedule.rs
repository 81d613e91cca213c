//! The `BenchmarkSchedule` custom resource (`benchrun.dev/v1alpha1`): the same experiment again
//! and again, on a cron schedule or on demand, with its history and the changes found in it.
//!
//! A schedule creates a `BenchmarkRun` from its `runTemplate` at every time its `schedule`
//! names, points each new run's `spec.baseline` at the schedule's last Succeeded run, keeps the
//! newest `historyLimit` runs, and keeps in its status a compact per-cell series over every run
//! it has seen (longer than the runs it keeps), in which a changepoint detector looks for steps.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::spec::BenchmarkRunSpec;

/// Label on every run a schedule creates: the schedule's name.
pub const SCHEDULE_LABEL: &str = "benchrun.dev/schedule";

/// Annotation on a schedule that creates a run now: any new value triggers one run (for
/// example `kubectl annotate benchmarkschedule nightly benchrun.dev/trigger="$(date +%s)"
/// --overwrite`). The value last acted on is `status.lastTrigger`.
pub const TRIGGER_ANNOTATION: &str = "benchrun.dev/trigger";

/// Annotation on a run a schedule creates: the time the schedule fired for it (RFC 3339), or
/// `manual` for a run made by the trigger annotation.
pub const SCHEDULED_AT_ANNOTATION: &str = "benchrun.dev/scheduled-at";

/// Annotation of the run template carried into each point of the series: the commit the
/// targets were built from, when the user's pipeline sets it.
pub const COMMIT_ANNOTATION: &str = "benchrun.dev/commit";

/// Most points kept per cell in `status.series` (the oldest go first).
pub const MAX_POINTS: usize = 60;

/// Longest schedule name: the name is the value of the [`SCHEDULE_LABEL`] label on each of its
/// runs, and a label value holds at most 63 characters. A longer name is refused at admission.
pub const MAX_NAME_LENGTH: usize = 63;

/// Default `maxQueued`.
pub const DEFAULT_MAX_QUEUED: i32 = 3;

/// Most cells one schedule keeps a series for (the status stays small: about 200 bytes a point).
pub const MAX_SERIES: usize = 8;

/// A benchmark repeated on a schedule: every time `schedule` fires (or the trigger annotation
/// changes), a BenchmarkRun is created from `runTemplate`, compared with the schedule's last
/// Succeeded run, and its per-cell figures are added to the schedule's history, where steps in
/// the series are found even when every run was within tolerance of the one before.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "benchrun.dev",
    version = "v1alpha1",
    kind = "BenchmarkSchedule",
    plural = "benchmarkschedules",
    singular = "benchmarkschedule",
    shortname = "bsched",
    category = "benchrun",
    namespaced,
    cel,
    status = "BenchmarkScheduleStatus",
    printcolumn = r#"{"name":"Schedule","type":"string","jsonPath":".spec.schedule"}"#,
    printcolumn = r#"{"name":"Last run","type":"string","jsonPath":".status.lastRun"}"#,
    printcolumn = r#"{"name":"Verdict","type":"string","jsonPath":".status.lastRunVerdict"}"#,
    printcolumn = r#"{"name":"Next run","type":"date","jsonPath":".status.nextScheduleTime"}"#,
    printcolumn = r#"{"name":"Regressed","type":"string","jsonPath":".status.conditions[?(@.type==\"Regressed\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    validation = Rule::new("self.metadata.name.size() <= 63").message("metadata.name must be at most 63 characters: a BenchmarkSchedule's name is the value of the benchrun.dev/schedule label on each of its runs, and a label value holds at most 63; choose a shorter name"),
)]
#[serde(rename_all = "camelCase")]
pub struct BenchmarkScheduleSpec {
    /// When to create a run: a cron expression in UTC of five fields (minute, hour, day of
    /// month, month, day of week), e.g. `0 2 * * *` (every night at 02:00) or `*/30 * * * *`,
    /// or one of `@hourly`, `@daily`, `@midnight`, `@weekly`, `@monthly`, `@yearly`. A missed time (the
    /// operator was down) is caught up once, if it is at most `startingDeadlineSeconds` old.
    #[schemars(length(max = 100))]
    #[x_kube(validation = Rule::new("self.matches('^@(hourly|daily|weekly|monthly|yearly|annually|midnight)$') || self.matches('^ *[^ ]+( +[^ ]+){4} *$')").message("schedule must be a cron expression of five fields (minute hour day-of-month month day-of-week), e.g. \"0 2 * * *\", or @hourly, @daily, @weekly, @monthly or @yearly"))]
    pub schedule: String,

    /// `true` stops creating runs on the schedule (the trigger annotation still creates one).
    /// Runs already created go on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suspend: bool,

    /// What to do when the schedule fires while a run it created has not finished: `Skip`
    /// (the default: no run for that time; `status.lastSkip` says so) or `Queue` (create it;
    /// it waits for the measuring slot like any run).
    #[serde(default)]
    pub concurrency_policy: ConcurrencyPolicy,

    /// With `concurrencyPolicy: Queue`, the most runs of this schedule that may wait for the
    /// measuring slot at once (not yet measuring; default 3, 1 to 100). A fire while that many
    /// wait creates no run: `status.lastSkip` and an event say so. This keeps a schedule that
    /// fires faster than its runs measure from piling up runs. Runs made by the trigger
    /// annotation are not limited by it (the operator's `--max-queued-per-namespace` still is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= 1 && self <= 100").message("maxQueued must be between 1 and 100"))]
    pub max_queued: Option<i32>,

    /// How many of the schedule's finished runs to keep (default 10, 1 to 100); older ones are
    /// deleted, oldest first. The series in `status.series` keeps up to 60 points per cell
    /// regardless, so the history outlives the runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= 1 && self <= 100").message("historyLimit must be between 1 and 100"))]
    pub history_limit: Option<i32>,

    /// How late a missed schedule time may still be caught up, in seconds (default 300). A time
    /// missed by more (the operator was down) gets no run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= 1").message("startingDeadlineSeconds must be at least 1"))]
    pub starting_deadline_seconds: Option<i64>,

    /// The tolerance of each run's comparison with the schedule's last Succeeded run (its
    /// `spec.baseline.tolerance`), e.g. `"3%"` (default: the run's default, `"5%"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) < 100.0").message("baselineTolerance must be a percentage below 100% such as \"5%\""))]
    pub baseline_tolerance: Option<String>,

    /// How steps in the series are found (see `status.changes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changepoints: Option<ChangepointSpec>,

    /// The run to create each time. Its `spec` is a BenchmarkRun spec; `spec.baseline` is set
    /// by the schedule to its last Succeeded run (with `baselineTolerance`), unless the
    /// template names a baseline run itself.
    pub run_template: RunTemplate,
}

/// Whether a schedule creates a run while one of its runs is unfinished.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default, JsonSchema)]
pub enum ConcurrencyPolicy {
    /// No run for that time; `status.lastSkip` records it.
    #[default]
    Skip,
    /// Create it; it queues behind the unfinished one for the measuring slot.
    Queue,
}

/// How the schedule looks for steps in its series.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangepointSpec {
    /// The fewest runs on each side of a change (default 4, at least 2): a change is reported
    /// once this many runs after it agree, and never within the newest `minSegment - 1` runs.
    /// Smaller values report sooner and are more easily fooled by one odd run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self >= 2 && self <= 30").message("changepoints.minSegment must be between 2 and 30"))]
    pub min_segment: Option<i32>,

    /// The smallest step worth reporting, as a percentage of the level before it (default
    /// `"2%"`). Smaller steps are not reported even when the series shows them clearly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) < 100.0").message("changepoints.minStep must be a percentage below 100% such as \"2%\""))]
    pub min_step: Option<String>,
}

/// The metadata and spec of the runs a schedule creates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunTemplate {
    /// Labels and annotations copied to each run (the schedule adds `benchrun.dev/schedule`).
    /// An annotation `benchrun.dev/commit` is carried into each point of the series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<TemplateMetadata>,
    /// The BenchmarkRun spec of each run.
    pub spec: BenchmarkRunSpec,
}

/// Labels and annotations of the runs a schedule creates.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
pub struct TemplateMetadata {
    /// Labels of each run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations of each run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// What the schedule has done and found.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BenchmarkScheduleStatus {
    /// `metadata.generation` of the spec this status reflects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready` (the schedule is valid and active; `False`, reason `InvalidSchedule`, naming
    /// the field when the cron expression or the run template is invalid: no run is created;
    /// `False`, reason `RunCreateFailed`, with the apiserver's words when creating a run
    /// failed, until a run is created or the spec changes) and `Regressed` (a step for the
    /// worse was found in the series of some cell: see `changes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The newest time the cron expression fired that the schedule acted on: a run created
    /// for it, or the time skipped (see `lastSkip`). Runs made by the trigger annotation do not
    /// move it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,
    /// When the schedule fires next (absent while suspended or invalid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_schedule_time: Option<Time>,
    /// The newest run the schedule created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<String>,
    /// The newest run's verdict: its phase while unfinished, else `Failed`, `Regressed` (slower
    /// than its baseline), `SLO violated`, `Faster` or `Succeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_verdict: Option<String>,
    /// The newest Succeeded run: the next run's baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_succeeded_run: Option<String>,
    /// The value of the `benchrun.dev/trigger` annotation last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_trigger: Option<String>,
    /// The newest time the schedule fired without creating a run, and why (concurrency policy
    /// `Skip` with a run unfinished, `Queue` with `maxQueued` runs waiting, or the time missed
    /// by more than the deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_skip: Option<String>,
    /// The schedule's runs that still exist, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<ScheduledRun>,
    /// Per cell, one point per finished run the schedule has seen, oldest first (at most 60
    /// points per cell and 8 cells).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<CellSeries>,
    /// Steps found in the series, per cell and figure, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<SeriesChange>,
}

/// One run of the schedule.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduledRun {
    /// The BenchmarkRun's name.
    pub name: String,
    /// The time the schedule fired for it; absent for a run made by the trigger annotation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_time: Option<Time>,
    /// The run's phase, e.g. `Queued`, `Running`, `Succeeded`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The run's verdict once finished (see `lastRunVerdict`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
}

/// The series of one cell over the schedule's runs.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CellSeries {
    /// The cell, e.g. `demo/compute cpu=500m mem=256Mi c=16`.
    pub cell: String,
    /// Target name.
    pub target: String,
    /// Scenario name.
    pub scenario: String,
    /// One point per finished run with a measurement of this cell, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<SeriesPoint>,
}

/// One run's figures for one cell: medians over the run's measured repeats of the cell, each
/// with an interval of the median.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeriesPoint {
    /// The run.
    pub run: String,
    /// When the run finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<Time>,
    /// Measured repeats of the cell in that run.
    pub repeats: i32,
    /// Median throughput over the repeats, requests per second.
    pub throughput: f64,
    /// Interval of that median: `[low, high]` requests per second (see `coverage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_interval: Option<[f64; 2]>,
    /// Median p99 latency over the repeats, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    /// Interval of that median, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_interval: Option<[f64; 2]>,
    /// The probability that the intervals hold the true median: the order statistics nearest
    /// the middle that cover it with at least 95 % (for fewer than 6 repeats, the whole range,
    /// which covers `1 − 2·0.5ⁿ`: 75 % with 3 repeats). Absent with a single repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// The targets' images by target name: the digests their containers ran
    /// (`results[].environment.targetImages`, joined by `, ` when several), else the image as
    /// the run's spec named it (results from before digests were recorded). A tag can move;
    /// the digest names the bytes that ran.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub images: BTreeMap<String, String>,
    /// Where the cell's first measured repeat ran (its `environment`, images left out: they
    /// are in `images`); absent for results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::environment::Environment>,
    /// The run's `benchrun.dev/commit` annotation, when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// A step in one figure of one cell's series.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeriesChange {
    /// The cell (as in `series[].cell`).
    pub cell: String,
    /// `throughput` or `p99`.
    pub figure: String,
    /// The first run of the new level.
    pub run: String,
    /// Its index in the cell's series (0 = oldest point kept).
    pub index: i32,
    /// Mean of the figure over the runs before the change (back to the previous change).
    pub before: f64,
    /// Mean over the runs from the change on (up to the next change).
    pub after: f64,
    /// Relative step, `after / before − 1` (−0.23 = 23 % lower).
    pub step: f64,
    /// Whether the step is for the worse: lower throughput or higher p99.
    pub worse: bool,
    /// What differs between where the run before the change and the first run of the new
    /// level ran (`target kernel 6.1 vs 6.2`): a step that coincides with a new kernel, node
    /// kind or operator may be the environment's, not the code's. Absent when they are alike
    /// or either is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment_change: Option<String>,
    /// Whether it sits at the newest position a change can take (`minSegment` runs from the
    /// end): the next runs may still move it or change its size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub provisional: bool,
}
