//! The `BenchmarkRun` status: progress, conditions and one compact entry per measurement.
//!
//! Status is the record of the run and the operator's memory: together with the observed
//! children it is all the operator needs to resume after a restart. Large detail (histograms,
//! per-second timelines) lives in ConfigMaps owned by the run, named in `detail`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compare::{ErrorRateEstimate, PowerEstimate, RatioEstimate, SpreadEstimate};
use crate::vocab::{CompareAxis, ComparisonKind, ComparisonVerdict};
use crate::vocab::{Outcome, Phase, SloSummary, SloVerdict, Stage, Verdict, Warning};

/// Observed state of a BenchmarkRun.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BenchmarkRunStatus {
    /// `Pending`, `Queued`, `Running`, `Succeeded` or `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// The `metadata.generation` this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Accepted, Running, Succeeded, Failed, SLOsMet, ResultsValid, MetricsAvailable,
    /// ChildrenApplied, Regressed; and Ready, Reconciling and Stalled in the form kstatus
    /// (Flux, kpt, Config Sync) and `kubectl wait --for=condition=Ready` read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// Finished measurements over all measurements, e.g. `17/72` (with `spec.repeatsUntil`,
    /// over those decided so far: it grows as rounds are added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<String>,
    /// Number of measurements in the run: cells × repeats, plus the rounds `spec.repeatsUntil`
    /// has added so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<i32>,
    /// When the first cell started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the run finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// The measurement in progress (absent between measurements and when finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<CurrentMeasurement>,
    /// One entry per finished measurement, in matrix order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<CellResult>,
    /// Headline figures of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// The capacity of each target configuration whose load the run swept: a Universal
    /// Scalability Law fit over the connections axis (closed model) or the highest rate that
    /// met the SLOs (open model). Recomputed as measurements finish.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<Capacity>,
    /// With `spec.search`: each configuration's search, its answer, the bracket around the
    /// boundary and every measurement with its verdict, updated as measurements finish.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<SearchResult>,
    /// Each target against the first target measured at the same other coordinates (with a
    /// single target: each scenario against the first scenario), and with `spec.baseline` each
    /// cell against its baseline cell: the throughput and p99 ratios with 95 % intervals over
    /// the repeats, the spread and the error rates, and a verdict. Recomputed as measurements
    /// finish; at most 64 entries (see `docs/metrics.md`, Comparisons).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<Comparison>,
    /// With `spec.repeatsUntil`: the rounds of repeats added after `spec.repeats`, whether
    /// every comparison reached the precision goal, and the widest precision reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats_until: Option<crate::repeats::RepeatsReached>,
}

/// Where the run is in its current measurement.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CurrentMeasurement {
    /// Index of the cell in matrix order (0-based).
    pub cell: i32,
    /// Repeat index (0-based).
    pub repeat: i32,
    /// `Deploying` or `Loading` (a status stored by an older operator in its former third
    /// stage, `Collecting`, reads as `Loading`).
    pub stage: Stage,
    /// When the stage began.
    pub since: Time,
    /// Name of the load Job, once created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

/// The coordinates of a cell: one value per matrix axis.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Coordinates {
    /// Target name.
    pub target: String,
    /// Scenario name.
    pub scenario: String,
    /// CPU limit of each target pod.
    pub cpu: String,
    /// Memory limit of each target pod.
    pub memory: String,
    /// Target replicas.
    pub replicas: i32,
    /// Connections (over all load pods).
    pub connections: i32,
    /// Fixed rate in requests per second (open model); absent for the closed model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<i64>,
    /// Requests the cell was bounded by (over all load pods); absent when it ran for
    /// `load.duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<i64>,
    /// `false` when the load opened a new connection per request; absent when it kept
    /// connections open (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<bool>,
}

impl Coordinates {
    /// Whether the load kept connections open between requests.
    pub fn keeps_alive(&self) -> bool {
        self.keep_alive != Some(false)
    }

    /// The `keepAlive` value to store for a cell: `Some(false)` when off, else absent.
    pub fn keep_alive_field(keep_alive: bool) -> Option<bool> {
        (!keep_alive).then_some(false)
    }
}

/// Errors by class, as counted by the load generator.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorCounts {
    /// Connection refused.
    #[serde(default)]
    pub connect_refused: i64,
    /// Connection attempt timed out.
    #[serde(default)]
    pub connect_timeout: i64,
    /// Request timed out.
    #[serde(default)]
    pub timeout: i64,
    /// Reset, read error or a body shorter than its Content-Length.
    #[serde(default)]
    pub read: i64,
    /// HTTP 4xx responses.
    #[serde(default)]
    pub status4xx: i64,
    /// HTTP 5xx responses.
    #[serde(default)]
    pub status5xx: i64,
}

/// Latency figures in milliseconds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Maximum.
    pub max: f64,
    /// The percentile table `ab` prints ("percentage of the requests served within a certain
    /// time"): 50, 66, 75, 80, 90, 95, 98, 99, 99.9 and 100 %, from the measurement's merged
    /// latency histogram (3 significant digits). Absent in statuses written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table: Vec<LatencyPercentile>,
}

/// One row of the latency percentile table.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LatencyPercentile {
    /// The percentage of requests, e.g. `66` or `99.9`.
    pub percent: f64,
    /// That share of the requests completed within this many milliseconds.
    pub ms: f64,
}

/// TCP connect times of a measurement in milliseconds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectTimes {
    /// Connections opened in the measured window.
    pub count: i64,
    /// Fastest connect.
    pub min: f64,
    /// Mean connect.
    pub mean: f64,
    /// Slowest connect.
    pub max: f64,
}

/// What the kernel's TCP stack counted in the load pods' network namespaces over the measured
/// window (`/proc/net/snmp` and `/proc/net/netstat` at its start and end, summed over the load
/// pods; each pod has its own namespace, so these are the generator's connections only). They
/// say whether a connect-time tail is the kernel's SYN retransmits, whether connections were
/// reset, and how close the generator came to running out of local ports.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TcpCounters {
    /// Connections the generator opened (`ActiveOpens`).
    pub connections_opened: i64,
    /// Connection attempts that failed (`AttemptFails`): refused, timed out or reset during
    /// the handshake.
    pub failed_connection_attempts: i64,
    /// Connections that ended by a reset while established (`EstabResets`): one received from
    /// the target, or sent by the generator aborting a connection (closing it with unread
    /// data, see `abortsOnClose`).
    pub resets_while_established: i64,
    /// Segments the generator sent with RST (`OutRsts`).
    pub resets_sent: i64,
    /// Connections the generator aborted on close because data was still unread
    /// (`TCPAbortOnClose`), e.g. after a request timeout.
    pub aborts_on_close: i64,
    /// Segments retransmitted (`RetransSegs`).
    pub retransmitted_segments: i64,
    /// SYNs retransmitted (`TCPSynRetrans`): each means a connect waited for the kernel's
    /// retransmission timeout, 1 s for the first, then 2 s, 4 s, ... more (a connect of about
    /// 1 s, 3 s, 7 s, 15 s). Typically the target's listen backlog overflowed and dropped the
    /// SYN (see `connectsAtRetransmitSteps`).
    pub syn_retransmits: i64,
    /// Retransmission timer expiries (`TCPTimeouts`).
    pub timeouts: i64,
    /// Connects whose time lay at one of the SYN retransmit steps (1 s, 3 s, 7 s, 15 s, 31 s,
    /// up to 20 % or 200 ms past it), per step, from the merged connect-time histogram; steps
    /// without any are left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connects_at_retransmit_steps: Vec<RetransmitStep>,
    /// Distinct local ports of the ephemeral range held by a socket (TIME_WAIT included) at
    /// the window's start or end, whichever held more, in the busiest load pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports_in_use: Option<i64>,
    /// Of the sockets holding those ports, those in TIME_WAIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_wait: Option<i64>,
    /// Size of the ephemeral port range (`net.ipv4.ip_local_port_range`, the narrowest of the
    /// load pods'): the most connections one pod can hold to one target address and port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral_ports: Option<i64>,
}

/// How many connects took about one SYN retransmit step.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetransmitStep {
    /// The step in seconds: 1, 3, 7, 15 or 31 (the kernel's initial 1 s timeout, doubling).
    pub seconds: i64,
    /// Connects in the measured window that took that long (to 20 % or 200 ms past it).
    pub connects: i64,
}

/// How late the open-model generator sent requests relative to their schedule, in
/// milliseconds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleLagMs {
    /// Mean lateness.
    pub mean: f64,
    /// Largest lateness.
    pub max: f64,
}

/// The end of the measured window: the requests still in flight when its sends ended, which
/// the generator waited for (the drain) and measured, while `throughput` counts them only as
/// far as they belong to the window (closed model: the share of their time inside it; open
/// model: those answered within `responseLagMs` after it).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Drain {
    /// Requests still in flight when the window ended.
    pub in_flight: i64,
    /// From the window's end to the end of its last request, milliseconds.
    pub ms: f64,
    /// Mean time from send to response of the requests sent in the window's first second,
    /// milliseconds: how far the window's responses trail its sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_lag_ms: Option<f64>,
    /// Open model: requests answered later than `responseLagMs` after the window's end (a
    /// backlog the target had not served by then, or time-outs), not in `throughput`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<i64>,
}

/// CPU and memory of the target pods over the measured window (from the raw cAdvisor samples
/// in Prometheus), and the CPU of the load pods (from the load generator's own accounting).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetUsage {
    /// Average CPU in cores, summed over the target pods: the CPU counter's increase from window
    /// start to window end (interpolated between its raw samples) over the window length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_avg_cores: Option<f64>,
    /// Peak CPU in cores, summed over the pods: the highest rate between consecutive samples
    /// within the window. Never below the average, which is a time-weighted mean of those rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_peak_cores: Option<f64>,
    /// Average CPU as a fraction of the pods' summed CPU limit (1.0 = at the limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_avg_of_limit: Option<f64>,
    /// Peak CPU as a fraction of the summed CPU limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_peak_of_limit: Option<f64>,
    /// Fraction of CFS periods in the window in which the target was throttled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_throttled: Option<f64>,
    /// Average memory working set in bytes, summed over the pods (mean of the samples inside
    /// the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_avg_bytes: Option<i64>,
    /// Peak memory working set in bytes, summed over the pods (highest sample inside the
    /// window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<i64>,
    /// Raw CPU samples of the target inside the window, over all its containers. The CPU
    /// figures need at least 2 (one whole sample interval); with fewer the cell carries a
    /// `WindowTooShort` warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_samples: Option<i32>,
    /// Raw working-set samples of the target inside the window (the memory figures rest on
    /// these; at least 1 is needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_samples: Option<i32>,
    /// Largest spacing, in seconds, between consecutive CPU samples of the target around the
    /// window: how often this cluster samples container CPU. A window of twice this holds at
    /// least 2 samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval_seconds: Option<f64>,
    /// Average CPU of the load pods in cores over the measured window, from the load
    /// generator's own CPU time (getrusage), summed over the load pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cpu_cores: Option<f64>,
    /// `loadCpuCores` as a fraction of the load pods' summed CPU limit; `GeneratorBound` is
    /// decided from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cpu_of_limit: Option<f64>,
    /// Average CPU of the load pods' containers in cores as cAdvisor saw it (a second opinion on
    /// `loadCpuCores`, same method as `cpuAvgCores`; absent when the window held too few
    /// samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_cpu_cores_prometheus: Option<f64>,
    /// Peak resident set size (cAdvisor `container_memory_rss`: anonymous memory, no page
    /// cache) in bytes, summed over the pods. Working set counts active page cache too; RSS is
    /// what a JVM heap or a Node process itself holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_rss_peak_bytes: Option<i64>,
    /// Working set in bytes, summed over the target pods, at the last sample before this
    /// measurement's load Job was created. For the first measurement of a target
    /// configuration this is its memory at idle after start-up; for later ones, what the
    /// earlier load left behind (warmed-up memory). Absent when the pods were too young to
    /// have a sample yet (cAdvisor reports a new container after up to ~15 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_before_load_bytes: Option<i64>,
    /// The same figures per target pod, by pod name, when the configuration has several
    /// replicas (the first 4 pods by name): two replicas of one service can use very different
    /// memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodUsage>,
    /// CPU and memory of each backing service (`spec.services`) over the same window, in the
    /// order of the spec. A service that was at its CPU limit is why the cell's throughput
    /// stopped there (`ServiceBound`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceUsage>,
}

/// CPU and memory of one target pod over a measured window.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUsage {
    /// Pod name.
    pub pod: String,
    /// Average CPU in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_avg_cores: Option<f64>,
    /// Average CPU as a fraction of the pod's CPU limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_avg_of_limit: Option<f64>,
    /// Peak working set in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<i64>,
    /// Peak resident set size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_rss_peak_bytes: Option<i64>,
}

/// CPU and memory of one backing service's pod over a measured window, read the same way as
/// the target's figures.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceUsage {
    /// `spec.services[].name`.
    pub name: String,
    /// Average CPU in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_avg_cores: Option<f64>,
    /// Peak CPU in cores (highest rate between consecutive samples in the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_peak_cores: Option<f64>,
    /// Average CPU as a fraction of the service's CPU limit (1.0 = at the limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_avg_of_limit: Option<f64>,
    /// Peak CPU as a fraction of its CPU limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_peak_of_limit: Option<f64>,
    /// Fraction of CFS periods in the window in which the service was throttled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_throttled: Option<f64>,
    /// Average memory working set in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_avg_bytes: Option<i64>,
    /// Peak memory working set in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_peak_bytes: Option<i64>,
}

/// The result of one measurement (one cell, one repeat).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CellResult {
    /// Index of the cell in matrix order (0-based).
    pub cell: i32,
    /// Repeat index (0-based).
    pub repeat: i32,
    /// The cell's coordinates.
    pub coordinates: Coordinates,
    /// `Measured` or `Failed`.
    pub outcome: Outcome,
    /// Why the measurement failed (image pull, crash loop, unschedulable, load Job failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Completed requests in the measured window (errors included, warm-up excluded).
    /// Absent, like every load figure, when the measurement failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<i64>,
    /// Requests sent during the warm-up (not part of any figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_requests: Option<i64>,
    /// Of the warm-up requests, those that ended without a complete response (refused, reset,
    /// timed out): like failed measured requests, they may never have reached the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_failed: Option<i64>,
    /// With `load.warmupUntilSteady`: how long the warm-up lasted, in seconds (after any
    /// ramp-up, to the start of the measured window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_seconds: Option<f64>,
    /// With `load.warmupUntilSteady`: `true` when the load generator found the target steady
    /// before `load.warmupUntilSteady.max`, `false` when that cap ended the warm-up (the
    /// result then has `NotSteady`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_steady: Option<bool>,
    /// Errors by class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<ErrorCounts>,
    /// Errors over requests, as a fraction (0.01 = 1 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_rate: Option<f64>,
    /// Response bytes received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<i64>,
    /// Requests per second over the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<f64>,
    /// Efficiency: requests per second per CPU core the target pods actually used
    /// (`throughput / usage.cpuAvgCores`). Absent without CPU figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_core: Option<f64>,
    /// Latency in milliseconds (corrected for coordinated omission in the open model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Latency>,
    /// Mean TCP connect time in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<f64>,
    /// TCP connect times (count, min, mean, max), when the window opened any connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_times_ms: Option<ConnectTimes>,
    /// What the kernel's TCP stack counted in the load pods over the window (connections,
    /// resets, SYN retransmits, local ports); absent when the generator could not read
    /// `/proc` or predates these counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpCounters>,
    /// Open model: how late the generator sent requests relative to their schedule. A lag
    /// near the request interval or more means requests waited for a free connection or for
    /// the generator's CPU (`RateNotMet` says which).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag_ms: Option<ScheduleLagMs>,
    /// The requests still in flight when the window's sends ended and how long they took
    /// (the window's `throughput` is over its sends, not this drain). Absent in results of
    /// generators before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain: Option<Drain>,
    /// With several load pods: how far apart (milliseconds) their measured windows began.
    /// They are told one start time; a pod that started late widens the merged window, which
    /// runs from the first start to the last end (`StaggeredStart` flags a large spread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_start_spread_ms: Option<i64>,
    /// CPU time the load generator itself spent per request, in microseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_cpu_us_per_request: Option<f64>,
    /// Target and load-pod resource usage over the window.
    #[serde(default)]
    pub usage: TargetUsage,
    /// Container restarts of the target pods during the measurement.
    #[serde(default)]
    pub restarts: i32,
    /// OOM kills of the target pods during the measurement.
    #[serde(default)]
    pub oom_kills: i32,
    /// Nodes the target pods ran on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_nodes: Vec<String>,
    /// Names of the target pods the load ran against: which deployment this measurement ran
    /// on. Repeats with the same pods shared a deployment; a comparison counts the distinct
    /// deployments of each side from these (absent in results of older operators).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_pods: Vec<String>,
    /// Nodes the load pods ran on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_nodes: Vec<String>,
    /// Seconds from the creation of the target configuration's slowest pod to its Ready
    /// condition: scheduling, image pull, process start and the first passing readiness
    /// probe (probed every 2 s, so up to 2 s late), in whole seconds because the apiserver's
    /// timestamps have second resolution: 0 means under a second. The same for every cell of
    /// one configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ready_seconds: Option<f64>,
    /// Size of the target's image in bytes as the node reports it (`node.status.images`,
    /// compressed layers as pulled); absent when the node does not list it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_image_bytes: Option<i64>,
    /// Where the measurement ran: the target's image by digest, the nodes with their kernel
    /// and runtime, the load generator's CPU model and the operator's version. A comparison
    /// across differing environments says so in its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::environment::Environment>,
    /// Start of the measured window (after warm-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_start: Option<Time>,
    /// End of the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_end: Option<Time>,
    /// `Met`, or `Violated` followed by what was violated; absent without SLOs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloVerdict>,
    /// Validity warnings, each `Code: explanation` (GeneratorBound, SameNode, HighErrorRate,
    /// Restarts, OOMKilled, NoWarmup, HighVariance, ConcurrencyBound, MetricsUnavailable,
    /// MetricsPending, WindowTooShort, StaggeredStart, RateNotMet, SynRetransmits,
    /// EphemeralPortsLow, Resets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// Coefficient of variation of the throughput of the whole seconds of the measured window
    /// from its first responses (`drain.responseLagMs` after its start) to its end (standard
    /// deviation over mean): how steady the target was within the window.
    /// Comparisons compare it across repeats (`comparisons[].spread`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_second_cv: Option<f64>,
    /// Values of `prometheus.extraQueries`, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, f64>,
    /// ConfigMap holding this measurement's histograms and per-second timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// This measurement against the cell of `spec.baseline` with the same coordinates (absent
    /// without a baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineComparison>,
    /// Present while the target's CPU and memory are still to be read: Prometheus could not be
    /// reached when the window was collected (transport error, timeout, HTTP 5xx). The load
    /// figures are final; the operator asks Prometheus again for the same window with backoff
    /// until `giveUpAt`, then fills the figures in (and recomputes the warnings and the SLO
    /// verdict) or records `MetricsUnavailable`. The run does not finish while any is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_pending: Option<MetricsPending>,
    /// Present from the end of the load until the target's CPU and memory have been read: the
    /// next measurement starts at once, and this window is read from Prometheus while it runs,
    /// once the samples after the window have been scraped (`at`). The load figures are final.
    /// The run does not finish while any is present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_due: Option<MetricsDue>,
}

/// When a measurement's CPU and memory are read from Prometheus (see `metricsDue`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricsDue {
    /// When the samples after the window have been scraped: the window's end plus one sample
    /// interval (10 s).
    pub at: Time,
    /// When the measurement's load began (its agreed start, else when its load Job was
    /// created): the target's memory is read at the last sample before it
    /// (`usage.memoryBeforeLoadBytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_created: Option<Time>,
}

/// A deferred reading of a measurement's CPU and memory from Prometheus.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricsPending {
    /// Attempts that found Prometheus unreachable so far.
    pub attempts: i32,
    /// When the first attempt failed.
    pub first_failure: Time,
    /// When the next attempt is due.
    pub next_attempt: Time,
    /// When the operator stops asking: the window's end plus its retry bound
    /// (`--metrics-retry-for`, 10 minutes by default).
    pub give_up_at: Time,
    /// Why the last attempt failed, e.g. `failed to reach Prometheus at …: connection refused`.
    pub last_error: String,
}

/// Headline figures of a run.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Highest throughput of any measurement that may headline (error rate within the SLO's
    /// `errorRate` and at most 50 %; see `bestLeftOut`), rounded to whole requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_throughput: Option<i64>,
    /// p99 latency of that measurement, e.g. `41ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_p99: Option<String>,
    /// Coordinates of that measurement, e.g. `express/hello cpu=1 c=100`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_cell: Option<String>,
    /// Measurements that were measured but may not headline, counted by reason, e.g.
    /// `2 with more than 50% errors: not considered for the best throughput`. A measurement
    /// whose error rate is above the SLO's `errorRate` or above 50 % is never the best (its
    /// throughput is a rate of failures). Absent when none was left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_left_out: Option<String>,
    /// Measurements that failed.
    #[serde(default)]
    pub failed: i32,
    /// Measurements with at least one validity warning.
    #[serde(default)]
    pub suspect: i32,
    /// `Met`, `Violated (n)` or absent without SLOs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloSummary>,
    /// The headline comparison: the first of `comparisons` within the run (along
    /// `spec.compare.along` first, then between targets), else the baseline comparison with
    /// the lowest throughput ratio, as `candidate/reference` (along an axis after the
    /// scenario), the throughput ratio and its 95 % interval and the verdict, e.g.
    /// `spring/express 1.21× [1.12–1.30] Faster` or `compute 500m/250m 2.02× [1.95–2.10] Faster`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
}

/// How far one target configuration scales as its load grows.
///
/// A configuration is a target, scenario, CPU and memory limit and replica count; its
/// measurements differ only in load (connections in the closed model, rate in the open model).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Capacity {
    /// Target name.
    pub target: String,
    /// Scenario name.
    pub scenario: String,
    /// CPU limit of each target pod.
    pub cpu: String,
    /// Memory limit of each target pod.
    pub memory: String,
    /// Target replicas.
    pub replicas: i32,
    /// Connections of the open-model rate sweep (absent for a closed-model connections sweep).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<i32>,
    /// `false` when the measurements opened a new connection per request; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<bool>,
    /// `USL` (closed model: throughput against connections) or `SLO` (open model: the rates
    /// against the SLOs).
    pub model: String,
    /// Measurements the figures rest on (repeats count separately).
    pub points: i32,
    /// Measurements of this configuration left out, and why (failed, generator-bound,
    /// still waiting for their CPU figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded: Option<String>,
    /// The Universal Scalability Law fit `X(N) = λN / (1 + σ(N−1) + κN(N−1))`, N = connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<UslFit>,
    /// Open model: the highest swept rate (requests per second) at which every measurement met
    /// the SLOs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate_meeting_slo: Option<i64>,
    /// Why there are no figures, e.g. too few measurements, or no SLOs to judge rates against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Closed model: where more connections stopped bringing more throughput, from as few as
    /// two connection counts (the fit needs more). The knee is the lowest count past which no
    /// count's throughput is more than 35 % above its own; set when the largest count swept is
    /// at least twice the knee's, the connections grew at least twice as much as the
    /// throughput, and mean latency grew at least half as fast as the connections: by Little's
    /// law (N = X·R) the added connections only queued. It names the counts, the throughputs and the latencies, e.g.
    /// `from 10 to 150 connections throughput stayed at 1210-1260 req/s while mean latency
    /// grew from 8.1 to 121 ms (x15): ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saturation: Option<String>,
}

/// Coefficients of a Universal Scalability Law fit and what follows from them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UslFit {
    /// Contention σ: the share of the work that is serialized (0 = none, 1 = all of it).
    pub contention: f64,
    /// Coherency κ: the cost of keeping shared state consistent, growing with N²; above 0
    /// throughput peaks and then falls as connections are added.
    pub coherency: f64,
    /// λ: the throughput of one connection (requests per second) as the fit sees it.
    pub throughput_at_one: f64,
    /// Connections at which the fitted throughput peaks (absent when κ ≤ 0: no peak, the fit
    /// still rises past every measured point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_connections: Option<i64>,
    /// The fitted throughput at `peakConnections`, requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_throughput: Option<f64>,
    /// Coefficient of determination of the fit over its points (1 = every point on the curve);
    /// read the coefficients with care below 0.9.
    pub r_squared: f64,
}

impl UslFit {
    /// The fitted throughput at `n` connections: `λn / (1 + σ(n−1) + κn(n−1))`.
    pub fn throughput(&self, n: f64) -> f64 {
        let (sigma, kappa) = (self.contention, self.coherency);
        self.throughput_at_one * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
    }
}

/// A measurement compared with its baseline cell: the throughputs of this cell's measured
/// repeats so far against those of the baseline cell's repeats, one value per window (see
/// `comparisons[]` for the whole comparison).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BaselineComparison {
    /// `Better`, `Same`, `Worse`, `Inconclusive` or `Unmatched`.
    pub verdict: Verdict,
    /// Throughput of this cell over the baseline cell's: the ratio of the geometric means of
    /// their repeats (0.9 = 10 % less). Earlier operators: of the median per-second throughputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ratio: Option<f64>,
    /// p99 latency of this measurement over the mean p99 of the baseline's repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ratio: Option<f64>,
    /// Two-sided p-value that the throughputs do not differ: Welch's t test on the logs of the
    /// per-repeat throughputs (earlier operators: the Mann-Whitney U test on per-second
    /// samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// Per-second samples of the baseline cell; written by operators before issue 33 only
    /// (now 0: the unit of replication is the repeat, see `baselineRepeats`).
    #[serde(default)]
    pub baseline_samples: i32,
    /// Per-second samples of this measurement; written by earlier operators only (now 0).
    #[serde(default)]
    pub samples: i32,
    /// Lower end of the 95 % interval of the throughput ratio over the repeats (this cell's
    /// measured repeats so far against the baseline cell's); absent with fewer than 2 a side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_low: Option<f64>,
    /// Upper end of that interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio_high: Option<f64>,
    /// Measured repeats of the baseline cell the verdict rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_repeats: Option<i32>,
    /// Measured repeats of this cell (this one and the earlier ones) the verdict rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<i32>,
    /// Why there is no comparison (`Unmatched`), or why it rests on few samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

// --- comparisons (issue 33) ---------------------------------------------------------------

/// Most entries of `status.comparisons`: the status stays far below the apiserver's object
/// limit however large the matrix (each entry is about 700 bytes).
pub const MAX_COMPARISONS: usize = 64;

/// One comparison of two cells over their repeats (see `docs/metrics.md`, Comparisons).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// `Target` (two targets of this run), `Scenario` (two scenarios of one target, with
    /// `spec.compare.along: scenario`), `Axis` (two values of the matrix axis
    /// `spec.compare.along` names, see `axis`) or `Baseline` (a cell against the cell of
    /// `spec.baseline` with the same coordinates).
    pub against: ComparisonKind,
    /// With `Axis`: the axis whose values are compared (`cpu`, `memory`, `replicas`,
    /// `connections`, `keepAlive`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<CompareAxis>,
    /// The candidate: a target name (`Target`, `Baseline`), a scenario name (`Scenario`) or
    /// the axis value (`Axis`: `500m`, `4`, `false`).
    pub candidate: String,
    /// The reference: the first target, scenario or axis value the spec lists (e.g.
    /// `matrix.cpu[0]`), or for `Baseline` the baseline run's name.
    pub reference: String,
    /// The candidate cell's coordinates; the reference cell's differ only in the target
    /// (`Target`), the scenario (`Scenario`) or the axis (`Axis`), or are the same
    /// (`Baseline`).
    pub coordinates: Coordinates,
    /// Measured repeats of the candidate the figures rest on.
    pub candidate_repeats: i32,
    /// Measured repeats of the reference.
    pub reference_repeats: i32,
    /// Distinct deployments (sets of target pods) the candidate's measured repeats ran on,
    /// counted from their `targetPods` ([`crate::deployments::distinct`]). Below 2 on either
    /// side the comparison is `Inconclusive` whatever its interval: its repeats shared one
    /// deployment (docs/metrics.md, Repeats and deployments). Absent in statuses of older
    /// operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_deployments: Option<i32>,
    /// The same for the reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_deployments: Option<i32>,
    /// The relative change that matters (0.05 = 5 %): `spec.baseline.tolerance`, else 5 %.
    pub tolerance: f64,
    /// `Slower` when throughput, p99, errors or spread is worse beyond its tolerance, `Faster`
    /// when some is better and none worse, `Equivalent` when the throughput is equivalent and
    /// nothing better or worse, `Inconclusive` otherwise; `NotCompared` when a side failed,
    /// was OOM-killed, generator-bound or had errors above the threshold (no figures, `reason`
    /// says why). Per comparison: summaries over many (`Regressed`) adjust for the family.
    pub verdict: ComparisonVerdict,
    /// Candidate over reference throughput as the ratio of their geometric means (the
    /// interval's point estimate), also with a single repeat (where there is no interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
    /// Throughput ratio with its 95 % interval over the repeats (higher is better); absent
    /// with fewer than 2 repeats a side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<RatioEstimate>,
    /// p99 latency ratio with its 95 % interval over the repeats (lower is better).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<RatioEstimate>,
    /// The per-second coefficient of variation compared over the repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<SpreadEstimate>,
    /// Error rates compared with Fisher's exact test (all repeats' requests together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<ErrorRateEstimate>,
    /// The chance of the throughput verdict the observed ratio points to (beyond the tolerance:
    /// `Faster`/`Slower`; inside: `Equivalent`) at the spread observed and the repeats used,
    /// and the repeats a side for 80 %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<PowerEstimate>,
    /// The precision of the throughput interval as a fraction: `p` such that the interval is
    /// `[ratio / (1 + p), ratio × (1 + p)]`, i.e. `√(high / low) − 1` (0.041 = ±4.1 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// With `spec.repeatsUntil`: whether `precision` is within `ratioWithin` (absent without
    /// `repeatsUntil`; `false` without an interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_met: Option<bool>,
    /// What differs between where the two sides ran (image digests, nodes, kernel, CPU model,
    /// operator version), one entry per difference (`target kernel 6.1 vs 6.2`); absent when
    /// the environments are alike. The reason says it in words too; `Regressed` reads this.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environment_change: Vec<String>,
    /// Why a figure is missing (too few repeats), or why the cells were not compared
    /// (`not compared: the reference (cell 3 had 100% errors (4xx), …)`), when one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Comparison {
    /// The axis along which the two cells differ: the target, the scenario or `axis`; `None`
    /// for `Baseline` (the same coordinates in another run).
    pub fn along(&self) -> Option<CompareAxis> {
        match self.against {
            ComparisonKind::Target => Some(CompareAxis::Target),
            ComparisonKind::Scenario => Some(CompareAxis::Scenario),
            ComparisonKind::Axis => self.axis,
            ComparisonKind::Baseline => None,
        }
    }

    /// The reference cell's coordinates within this run: the candidate's, moved to the
    /// reference value along [`Self::along`]; `None` for `Baseline`.
    pub fn reference_coordinates(&self) -> Option<Coordinates> {
        self.along()?.with(&self.coordinates, &self.reference)
    }

    /// A side's repeats ran on fewer than 2 distinct deployments (as counted when the
    /// comparison was made; unknown counts, from older operators, are not taken as shared): the
    /// comparison gives no verdict and no summary counts it as evidence.
    pub fn shared_deployment(&self) -> bool {
        let short =
            |n: Option<i32>| n.is_some_and(|n| (n as usize) < crate::deployments::MIN_DEPLOYMENTS);
        short(self.candidate_deployments) || short(self.reference_deployments)
    }
}

// --- end comparisons ------------------------------------------------------------------------

/// One configuration's search in `status.search`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    /// `capacity` or `demand`.
    pub kind: String,
    /// The searched coordinate: `rate` (req/s), `cpu` (millicores) or `replicas`.
    pub axis: String,
    /// The configuration: the coordinates of its first measurement (the searched coordinate
    /// as first measured).
    pub configuration: Coordinates,
    /// `Searching` while measuring, then `Bracketed` (the boundary lies between `passing` and
    /// `failing`), `AlwaysPasses` (even the far end passed), `NeverPasses` (even the near end
    /// failed) or `Unusable` (repeated unusable measurements stopped it).
    pub outcome: String,
    /// The answer: the passing value nearest the boundary (the capacity, or the demand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passing: Option<f64>,
    /// The failing value nearest the boundary, on its other side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failing: Option<f64>,
    /// The answer in one line.
    pub answer: String,
    /// The most measurements this search may take.
    pub worst_case: i32,
    /// Every measurement in the order taken, with its verdict as decided when it was recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measurements: Vec<SearchMeasurement>,
}

/// One measurement of a search.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchMeasurement {
    /// The value measured on the searched axis.
    pub value: f64,
    /// Its cell in `status.results`.
    pub cell: i32,
    /// Its repeat in `status.results`.
    pub repeat: i32,
    /// `Pass` (every SLO met), `Fail` (an SLO missed, or the offered rate not served) or
    /// `Unusable` (counts as neither: failed, generator-bound, OOM-killed).
    pub verdict: String,
    /// Why it failed or is unusable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
