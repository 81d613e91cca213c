//! The `BenchmarkRun` spec: what a user declares.
//!
//! Every field's `///` doc becomes its `kubectl explain` text. Rules that CEL can express are
//! attached as `x-kubernetes-validations` so the apiserver rejects bad specs at admission with
//! a message that names the field; the rest is checked by [`crate::validate`].

use std::collections::BTreeMap;

use benchrun_wire::request::cel;
use k8s_openapi::api::core::v1::{EnvVar, Toleration};
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

pub use crate::resources::Resources;
use crate::status::BenchmarkRunStatus;

/// Largest number of measurements (cells × repeats) one run may hold. It keeps the status under
/// the apiserver's 1.5 MiB object limit: at most about 5 KiB per measurement with every figure
/// present, 1.04 MB for the largest run (measured by the operator's test
/// `the_status_of_the_largest_run_stays_far_below_the_object_limit`).
pub const MAX_MEASUREMENTS: usize = 200;

/// Highest request rate (req/s) of `load.rate` and of each `matrix.rate` entry.
/// Largest `load.requests`, `load.warmupRequests` and `matrix.requests` entry, as the CRD
/// schema states it.
pub const MAX_REQUESTS: i64 = 100_000_000;
pub const MAX_RATE: i64 = 10_000_000;

/// An experiment: targets × resources × scenarios × load settings, measured cell by cell.
///
/// The operator deploys each target with the requested CPU/memory and replicas, runs the load
/// generator against it as a Job, queries Prometheus for the target's CPU and memory over the
/// measured window and writes every cell's results into `status.results`.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "benchrun.dev",
    version = "v1alpha1",
    kind = "BenchmarkRun",
    plural = "benchmarkruns",
    singular = "benchmarkrun",
    shortname = "bmr",
    shortname = "bench",
    category = "benchrun",
    namespaced,
    cel,
    status = "BenchmarkRunStatus",
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Progress","type":"string","jsonPath":".status.progress"}"#,
    printcolumn = r#"{"name":"Best RPS","type":"integer","jsonPath":".status.summary.bestThroughput"}"#,
    printcolumn = r#"{"name":"P99","type":"string","jsonPath":".status.summary.bestP99"}"#,
    printcolumn = r#"{"name":"Compared","type":"string","jsonPath":".status.summary.headline"}"#,
    printcolumn = r#"{"name":"SLO","type":"string","priority":1,"jsonPath":".status.summary.slo"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    validation = Rule::new("!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase == 'Pending' || oldSelf.status.phase == 'Queued' || self.spec == oldSelf.spec").message("spec is immutable once the run has started (a run is a record): create a new BenchmarkRun instead"),
)]
#[x_kube(
    validation = Rule::new("self.targets.all(t, self.targets.exists_one(u, u.name == t.name))").message("targets: names must be unique"),
    validation = Rule::new("self.scenarios.all(s, self.scenarios.exists_one(u, u.name == s.name))").message("scenarios: names must be unique"),
    validation = Rule::new("!has(self.services) || self.services.all(s, self.services.exists_one(u, u.name == s.name))").message("services: names must be unique"),
    validation = Rule::new("!has(self.matrix) || !has(self.matrix.targets) || self.matrix.targets.all(n, self.targets.exists(t, t.name == n))").message("matrix.targets: every entry must name one of spec.targets"),
    validation = Rule::new("!has(self.matrix) || !has(self.matrix.scenarios) || self.matrix.scenarios.all(n, self.scenarios.exists(s, s.name == n))").message("matrix.scenarios: every entry must name one of spec.scenarios"),
    validation = Rule::new(format!("((has(self.matrix) && has(self.matrix.targets) && size(self.matrix.targets) > 0 ? size(self.matrix.targets) : size(self.targets)) * (has(self.matrix) && has(self.matrix.scenarios) && size(self.matrix.scenarios) > 0 ? size(self.matrix.scenarios) : size(self.scenarios)) * (has(self.matrix) && has(self.matrix.cpu) && size(self.matrix.cpu) > 0 ? size(self.matrix.cpu) : 1) * (has(self.matrix) && has(self.matrix.memory) && size(self.matrix.memory) > 0 ? size(self.matrix.memory) : 1) * (has(self.matrix) && has(self.matrix.replicas) && size(self.matrix.replicas) > 0 ? size(self.matrix.replicas) : 1) * (has(self.matrix) && has(self.matrix.connections) && size(self.matrix.connections) > 0 ? size(self.matrix.connections) : 1) * (has(self.matrix) && has(self.matrix.rate) && size(self.matrix.rate) > 0 ? size(self.matrix.rate) : 1) * (has(self.matrix) && has(self.matrix.requests) && size(self.matrix.requests) > 0 ? size(self.matrix.requests) : 1) * (has(self.matrix) && has(self.matrix.keepAlive) && size(self.matrix.keepAlive) > 0 ? size(self.matrix.keepAlive) : 1) + (has(self.matrix) && has(self.matrix.include) ? size(self.matrix.include) : 0)) * (has(self.repeatsUntil) ? self.repeatsUntil.maxRepeats : (has(self.repeats) ? self.repeats : 1)) <= {MAX_MEASUREMENTS}")).message(format!("the matrix is too large: cells × repeats (repeatsUntil.maxRepeats when set) must be at most {MAX_MEASUREMENTS}; excluded cells count here and each include entry counts as one cell; lower maxRepeats or split the experiment into several runs").as_str()),
    validation = Rule::new("!has(self.repeatsUntil) || self.repeatsUntil.maxRepeats >= (has(self.repeats) ? self.repeats : 1)").message("repeatsUntil.maxRepeats must be at least spec.repeats (the repeats every cell gets first): raise maxRepeats or lower repeats"),
    validation = Rule::new("!has(self.repeatsUntil) || has(self.baseline) || (has(self.matrix) && has(self.matrix.targets) && size(self.matrix.targets) > 0 ? size(self.matrix.targets) : size(self.targets)) >= 2 || has(self.compare) || (has(self.matrix) && has(self.matrix.include) && size(self.matrix.include) > 0)").message("repeatsUntil needs something to compare: measure 2 or more targets, or set spec.compare (e.g. {along: cpu}) or spec.baseline; otherwise remove repeatsUntil"),
    validation = Rule::new("!has(self.compare) || (has(self.matrix) && has(self.matrix.include) && size(self.matrix.include) > 0) || (self.compare.along == 'target' ? (has(self.matrix) && has(self.matrix.targets) && size(self.matrix.targets) > 0 ? size(self.matrix.targets) : size(self.targets)) >= 2 : self.compare.along == 'scenario' ? (has(self.matrix) && has(self.matrix.scenarios) && size(self.matrix.scenarios) > 0 ? size(self.matrix.scenarios) : size(self.scenarios)) >= 2 : has(self.matrix) && (self.compare.along == 'cpu' ? has(self.matrix.cpu) && size(self.matrix.cpu) >= 2 : self.compare.along == 'memory' ? has(self.matrix.memory) && size(self.matrix.memory) >= 2 : self.compare.along == 'replicas' ? has(self.matrix.replicas) && size(self.matrix.replicas) >= 2 : self.compare.along == 'connections' ? has(self.matrix.connections) && size(self.matrix.connections) >= 2 : has(self.matrix.keepAlive) && size(self.matrix.keepAlive) >= 2))").message("compare.along names an axis the run does not vary: list two or more values of it (matrix.cpu, matrix.memory, matrix.replicas, matrix.connections, matrix.keepAlive; two targets for target, two scenarios for scenario), or remove spec.compare"),
    validation = Rule::new("!has(self.matrix) || !has(self.matrix.rate) || size(self.matrix.rate) == 0 || has(self.load.duration)").message("matrix.rate needs load.duration (the open model runs for a duration, not a request count)"),
    validation = Rule::new("!has(self.matrix) || !has(self.matrix.connections) || !has(self.load.requests) || (has(self.matrix.requests) && size(self.matrix.requests) > 0) || (has(self.matrix.include) && size(self.matrix.include) > 0) || self.matrix.connections.all(c, c <= self.load.requests)").message("matrix.connections entries must not exceed load.requests so every connection sends a request: raise load.requests or lower the connections"),
    validation = Rule::new("!has(self.matrix) || !has(self.matrix.requests) || size(self.matrix.requests) == 0 || has(self.load.requests)").message("matrix.requests needs load.requests (cells bounded by a request count, not load.duration)"),
)]
#[serde(rename_all = "camelCase")]
pub struct BenchmarkRunSpec {
    /// The systems under test. Each is deployed as a Deployment plus a ClusterIP Service.
    /// Unless `matrix.targets` narrows them, every target is measured.
    #[schemars(length(min = 1, max = 8))]
    pub targets: Vec<Target>,

    /// Backing services the targets call (databases, caches, other HTTP services), deployed
    /// once before the first measurement and kept for the whole run; see
    /// `spec.services[]` in the API reference. At most 4.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 4))]
    pub services: Vec<crate::services::BackingService>,

    /// The HTTP requests to measure, one scenario per cell. Unless `matrix.scenarios` narrows
    /// them, every scenario is measured.
    #[schemars(length(min = 1, max = 16))]
    pub scenarios: Vec<Scenario>,

    /// CPU and memory for every target pod (default 500m and 512Mi; requests equal limits
    /// unless set apart, which gives the Guaranteed QoS class). `matrix.cpu` and `matrix.memory` override the limits per cell;
    /// a `cpuRequest` or `memoryRequest` set here applies to every cell, so it must not exceed
    /// any swept limit.
    #[serde(default = "default_target_resources")]
    pub resources: Resources,

    /// Replicas of every target Deployment (default 1). `matrix.replicas` overrides it per cell.
    #[serde(default = "default_one")]
    #[schemars(range(min = 1, max = 32))]
    pub replicas: i32,

    /// How the load is generated: connections, a request count or a duration, an optional fixed
    /// rate (open model), warm-up, keep-alive, timeout and the load pods.
    pub load: Load,

    /// Axes to sweep. Cells are the cartesian product, in this order from outermost to
    /// innermost: target, cpu, memory, replicas, scenario, connections, rate; repeats run back to
    /// back for each cell. An empty or absent axis uses the value from the rest of the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Matrix>,

    /// How many times each cell is measured (default 1, at most 10); with `repeatsUntil`, the
    /// repeats every cell gets before rounds are added. With two or more, the coefficient of
    /// variation of the throughput is checked (`HighVariance` warning).
    #[serde(default = "default_one")]
    #[schemars(range(min = 1, max = 10))]
    pub repeats: i32,

    /// As many repeats as the comparisons need: after `repeats` measurements of every cell,
    /// the operator adds rounds of one more repeat of each cell taking part in a comparison
    /// whose 95 % throughput interval is wider than `±ratioWithin`, until every comparison is
    /// that precise or `maxRepeats` is reached; `status.repeatsUntil` says what it reached.
    /// Needs something to compare (two targets, an axis named by `compare`, or `baseline`).
    /// The size limit of the run counts `maxRepeats`. See `docs/metrics.md`, Adaptive repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats_until: Option<crate::repeats::RepeatsUntil>,

    /// The order of the measurements. `Interleaved` measures in rounds, one repeat of every
    /// cell per round, the target configurations and each one's cells in a seeded random
    /// order each round, every round on a fresh deployment (new pods): each repeat is then an
    /// independent deployment, so the comparisons' intervals hold the pod-to-pod and placement
    /// variance the next run will differ by, and drift over the run falls on every target
    /// alike. It is the default of a run that compares something (two targets, an axis named
    /// by `compare`, or `baseline`) or measures two or more scenarios (a likely baseline of a
    /// later run), with 2 or more repeats; the Accepted condition says how many deployments
    /// that makes. `Sequential` (the default otherwise) measures each cell's repeats back to
    /// back, each target configuration deployed once: its repeats share one deployment, and a
    /// comparison of them shows its interval but stays `Inconclusive` (docs/metrics.md,
    /// Repeats and deployments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self in ['Sequential', 'Interleaved']").message("repeatOrder must be Sequential or Interleaved"))]
    pub repeat_order: Option<String>,

    /// The relative change that matters when this run's cells are compared with each other
    /// in `status.comparisons` (targets, or along `compare.along`) (default: `baseline.tolerance`, else `"5%"`):
    /// a change whose 95 % interval lies beyond it is `Faster` or `Slower`, one whose 90 %
    /// interval lies within it `Equivalent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) < 100.0").message("tolerance must be a percentage below 100% such as \"5%\""))]
    pub tolerance: Option<String>,

    /// What the run's own comparisons set side by side besides the targets: `{along: cpu}`
    /// compares each CPU limit of `matrix.cpu` with the first one, at the same other
    /// coordinates (`status.comparisons[]`, kind `Axis`). Without it only targets are compared
    /// with each other (never two scenarios: different requests are not alternatives to each
    /// other unless asked, `{along: scenario}`). The axis must vary among the cells. See
    /// `docs/experiments.md`, Comparing along an axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareSpec>,

    /// Seed of the `Interleaved` shuffle (default 1): the same seed gives the same order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub repeat_seed: Option<i64>,

    /// Service-level objectives evaluated per cell; a violation sets `SLOsMet=False`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,

    /// Where the targets' CPU and memory are read from. Defaults to the operator's
    /// `--prometheus-url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<PrometheusSpec>,

    /// What happens to the Deployments, Services and Jobs once the run is finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<Cleanup>,

    /// Time limits for the steps of a cell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<Timeouts>,

    /// An earlier run of this namespace to compare every cell with: each measurement gets a
    /// `baseline` verdict (`Better`, `Same` or `Worse`) and the run a `Regressed` condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineSpec>,

    /// Find a boundary by measuring instead of sweeping a grid: `capacity` (the highest rate
    /// meeting every SLO) or `demand` (the smallest CPU limit or replica count meeting every
    /// SLO at a rate), for each configuration of the matrix. Needs SLOs and `load.duration`;
    /// `status.search` holds each answer, its bracket and every measurement. See
    /// `docs/experiments.md`, Sizing searches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<crate::search::Search>,
}

/// The run a new run is compared with, and the change that matters.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct BaselineSpec {
    /// Name of a finished BenchmarkRun in the same namespace. Cells are matched by their
    /// coordinates (target and scenario names, CPU, memory, replicas, connections, rate), not
    /// by position; a cell without a measured match gets the verdict `Unmatched`.
    #[schemars(length(min = 1, max = 253))]
    #[x_kube(validation = Rule::new("self.matches('^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$')").message("baseline.run must be the name of a BenchmarkRun (lowercase letters, digits, '-' and '.')"))]
    pub run: String,
    /// Relative change of the median per-second throughput that matters (default `"5%"`):
    /// smaller changes are `Same` however certain. A larger change counts only when the
    /// Mann-Whitney U test on the per-second throughputs gives p < 0.01.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) < 100.0").message("baseline.tolerance must be a percentage below 100% such as \"5%\""))]
    pub tolerance: Option<String>,
}

/// A system under test: one container image serving HTTP.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// Name of the target, unique in the run; used in child object names, so it must be a
    /// lowercase DNS label of at most 20 characters.
    #[x_kube(validation = Rule::new("self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')").message("targets[].name must be a lowercase DNS label (a-z, 0-9, '-'), starting with a letter"))]
    #[schemars(length(min = 1, max = 20))]
    pub name: String,

    /// Container image, e.g. `registry.example.com/bench/express:1.4`. Prefer a tag or digest
    /// over `latest` so that runs are reproducible.
    #[schemars(length(min = 1))]
    pub image: String,

    /// TCP port the container serves HTTP on (default 8080).
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,

    /// Overrides the image's entrypoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,

    /// Arguments to the entrypoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,

    /// Environment variables of the container (e.g. `JAVA_OPTS`), at most 128. Before them the
    /// operator sets the container's own limits from the Downward API:
    /// `BENCHRUN_CPU_LIMIT_MILLICORES` (the CPU limit in millicores, `500` for `500m`) and
    /// `BENCHRUN_MEMORY_LIMIT_BYTES`, so a runtime can size its worker pool from the limit
    /// (`$(BENCHRUN_CPU_LIMIT_MILLICORES)` works here); then the backing services' addresses.
    /// Names starting with `BENCHRUN_` are reserved for the variables the operator injects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Item bound: keeps the apiserver's CEL cost estimate of the rule below within its budget.
    #[schemars(length(max = 128))]
    #[x_kube(validation = Rule::new("self.all(v, !v.name.startsWith('BENCHRUN_'))").message("targets[].env: names starting with BENCHRUN_ are reserved for the variables the operator injects (service addresses, the container's limits): rename the variable; its value may still refer to them, e.g. $(BENCHRUN_SERVICE_DB_ADDR)"))]
    pub env: Vec<EnvVar>,

    /// HTTP path of the readiness probe, e.g. `/healthz`. When absent, readiness is a TCP
    /// connect to `port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.startsWith('/')").message("targets[].readinessPath must start with '/'"))]
    pub readiness_path: Option<String>,

    /// Image pull policy (`Always`, `IfNotPresent`, `Never`); defaults to the operator's setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self in ['Always', 'IfNotPresent', 'Never']").message("targets[].imagePullPolicy must be Always, IfNotPresent or Never"))]
    pub image_pull_policy: Option<String>,

    /// Node labels the target pods must match. Absent: where some node is labelled
    /// `benchrun.dev/role=target`, the target pods run on such nodes; elsewhere on any node.
    /// The operator's placement policy decides which labels a run may select: by default only
    /// `benchrun.dev/role: target`; others need the administrator's
    /// `--allowed-node-selector-keys` (else the run is refused, reason `NotAllowed`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,

    /// Tolerations of the target pods. Each needs its taint key in the operator's
    /// `--allowed-toleration-keys` (default: none, so a run with a toleration is refused,
    /// reason `NotAllowed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,

    /// Service account of the target pods (default: the namespace's `default`). Its token is
    /// mounted only when this is set; without it the pods get no API credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,

    /// Pod Security Standard the target pods are built to (default `Restricted`).
    ///
    /// `Restricted`: the container runs as a non-root user, without privilege escalation,
    /// with every capability dropped and the runtime's default seccomp profile, so the pods are
    /// admitted in namespaces that enforce the `restricted` standard. The image's user must be
    /// numeric and not 0 (or set `runAsUser`); otherwise the kubelet refuses to start it.
    ///
    /// `Baseline`: for images that must run as root (e.g. to bind a port below 1024 or to
    /// switch users): no `runAsNonRoot`, the runtime's default capabilities, privilege
    /// escalation allowed; the seccomp profile stays `RuntimeDefault`. Such pods are refused in
    /// namespaces that enforce `restricted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self in ['Restricted', 'Baseline']").message("targets[].podSecurity must be Restricted or Baseline"))]
    pub pod_security: Option<String>,

    /// User id the target container runs as, overriding the image's `USER` (e.g. for an image
    /// whose user is a name, which the kubelet cannot check against `runAsNonRoot`). Must not
    /// be 0: an image that needs root sets `podSecurity: Baseline` instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2147483647))]
    pub run_as_user: Option<i64>,
}

/// One named HTTP request. Method, path and headers go into the request as written, so each
/// must keep to its HTTP grammar (no CR, LF or other control characters that could start a
/// header or request of its own); see [`crate::request`].
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new(cel::CONTENT_LENGTH).message(cel::CONTENT_LENGTH_MESSAGE),
    validation = Rule::new(cel::TRANSFER_ENCODING).message(cel::TRANSFER_ENCODING_MESSAGE),
)]
pub struct Scenario {
    /// Name of the scenario, unique in the run (a lowercase DNS label, at most 20 characters).
    #[x_kube(validation = Rule::new("self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')").message("scenarios[].name must be a lowercase DNS label (a-z, 0-9, '-'), starting with a letter"))]
    #[schemars(length(min = 1, max = 20))]
    pub name: String,

    /// HTTP method (default `GET`).
    #[serde(default = "default_method")]
    #[x_kube(validation = Rule::new("self in ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']").message("scenarios[].method must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS"))]
    pub method: String,

    /// Path and query, e.g. `/compute?n=10000`: at most 2048 visible ASCII characters, no
    /// spaces or control characters (percent-encode them, e.g. `%20`).
    #[schemars(length(max = benchrun_wire::request::MAX_PATH_LEN))]
    #[x_kube(validation = Rule::new(cel::PATH).message(cel::PATH_MESSAGE))]
    pub path: String,

    /// Extra request headers, at most 16. Names are RFC 9110 tokens (e.g. `X-Request-Id`);
    /// values hold at most 4096 bytes and no control characters but tab. A `Content-Length`
    /// must equal the body's length; `Transfer-Encoding` is refused (bodies are sent with
    /// `Content-Length`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = benchrun_wire::request::MAX_HEADERS, "additionalProperties" = {
        "type": "string",
        "maxLength": benchrun_wire::request::MAX_HEADER_VALUE_LEN,
        "x-kubernetes-validations": [{
            "rule": cel::HEADER_VALUE,
            "message": cel::HEADER_VALUE_MESSAGE
        }]
    }))]
    #[x_kube(validation = Rule::new(cel::HEADER_NAMES).message(cel::HEADER_NAMES_MESSAGE))]
    pub headers: BTreeMap<String, String>,

    /// Request body (sent with `Content-Length`), at most 16 KiB.
    // Length bounds here and on `headers`: the apiserver's CEL cost estimate of the
    // Content-Length rule grows with both and rejected the CRD at 32 headers and 64 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16384))]
    pub body: Option<String>,

    /// Values drawn per request for the `{{name}}` placeholders of `path`, `headers` values
    /// and `body`, at most 16: e.g. `path: /docs/{{id}}` with `values: {id: {random: {min: 1,
    /// max: 10000}}}` asks for a random document of 10 000. Every placeholder must name a value
    /// and every value be used. Each connection draws from its own generator seeded from
    /// `load.seed`, so a run sends the same values again. A body with placeholders gets its
    /// `Content-Length` per request (do not set one). Without values, `{{` is sent as it is.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 16))]
    #[x_kube(validation = Rule::new("self.all(k, k.matches('^[A-Za-z_][A-Za-z0-9_]{0,63}$'))").message("scenarios[].values names must start with a letter or '_' and hold only letters, digits and '_' (at most 64), e.g. id"))]
    pub values: BTreeMap<String, RequestValue>,
}

/// How the value of one placeholder is drawn for each request: set exactly one of `random`,
/// `sequence` and `pick`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("[has(self.random), has(self.sequence), has(self.pick)].filter(x, x).size() == 1").message("scenarios[].values entries must set exactly one of random ({min, max}), sequence ({start, end}) or pick (a list)"),
)]
pub struct RequestValue {
    /// An integer drawn uniformly from `min` to `max`, both included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random: Option<RandomRange>,
    /// `start`, `start + 1`, …, `end`, then `start` again. Connection `i` of `N` (over all
    /// load pods) sends `start + i`, `start + i + N`, …, so together the connections walk the
    /// sequence in about its order, each value once per lap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<SequenceRange>,
    /// One of these items, drawn uniformly (1 to 1000 items of at most 1024 bytes). An item
    /// used in the path must be visible ASCII, one used in a header must hold no control
    /// characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1000), inner(length(max = 1024)))]
    pub pick: Option<Vec<String>>,
}

impl RequestValue {
    /// The load generator's form of this value; `None` unless exactly one kind is set.
    pub fn to_spec(&self) -> Option<benchrun_wire::ValueSpec> {
        use benchrun_wire::ValueSpec;
        match (&self.random, &self.sequence, &self.pick) {
            (Some(r), None, None) => Some(ValueSpec::Random {
                min: r.min,
                max: r.max,
            }),
            (None, Some(q), None) => Some(ValueSpec::Sequence {
                start: q.start,
                end: q.end,
            }),
            (None, None, Some(items)) => Some(ValueSpec::Pick(items.clone())),
            _ => None,
        }
    }
}

/// The range of a random integer.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[x_kube(validation = Rule::new("self.min <= self.max").message("scenarios[].values[].random: min must not be above max"))]
pub struct RandomRange {
    /// Smallest value.
    pub min: i64,
    /// Largest value.
    pub max: i64,
}

/// The range of a sequence.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[x_kube(validation = Rule::new("self.start <= self.end").message("scenarios[].values[].sequence: start must not be above end"))]
pub struct SequenceRange {
    /// First value.
    pub start: i64,
    /// Last value.
    pub end: i64,
}

/// The load: what the generator does in each cell.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(
    validation = Rule::new("has(self.requests) != has(self.duration)").message("load: set exactly one of load.requests (a count) or load.duration (e.g. \"30s\")"),
    validation = Rule::new("!has(self.rate) || has(self.duration)").message("load.rate (open model) needs load.duration instead of load.requests"),
    validation = Rule::new("!(has(self.warmup) && has(self.warmupRequests))").message("load: set at most one of load.warmup (a duration) or load.warmupRequests (a count)"),
    validation = Rule::new("!has(self.requests) || self.requests >= self.connections").message("load.requests must be at least load.connections so every connection sends a request"),
    validation = Rule::new("!(has(self.rate) && has(self.thinkTime))").message("load.thinkTime is for the closed model: remove it or load.rate (the open model's schedule sets the pace)"),
    validation = Rule::new("!has(self.warmupUntilSteady) || !has(self.warmupRequests)").message("load.warmupUntilSteady warms up by time: remove load.warmupRequests (load.warmup, a duration, is then the least warm-up)"),
    validation = Rule::new("!has(self.warmupUntilSteady) || !has(self.pods) || self.pods == 1").message("load.warmupUntilSteady needs load.pods: 1 (each load pod would end its warm-up on its own and their windows would begin apart): remove load.pods or load.warmupUntilSteady"),
    validation = Rule::new("!has(self.warmupUntilSteady) || !has(self.warmup) || duration(self.warmup) <= duration(has(self.warmupUntilSteady.max) ? self.warmupUntilSteady.max : '1m')").message("load.warmup (with load.warmupUntilSteady, the least warm-up) must not exceed load.warmupUntilSteady.max (the most, default 1m)"),
)]
pub struct Load {
    /// Concurrent connections (closed model: requests in flight), summed over the load pods.
    /// `matrix.connections` overrides it per cell.
    #[serde(default = "default_connections")]
    #[schemars(range(min = 1, max = 20000))]
    pub connections: i32,

    /// Number of measured requests per cell (closed model). Exactly one of `requests` and
    /// `duration` must be set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100000000))]
    pub requests: Option<i64>,

    /// Measured duration per cell, e.g. `"30s"`, `"2m"` (at most 1h). CPU figures come from
    /// cAdvisor samples, which kubelets take about every 10s by default: a window holds 2 CPU
    /// samples wherever it falls when it lasts two of the operator's `--sample-interval` (default
    /// 10s, so 20s; 3s on the local cluster, so 6s). Shorter durations are accepted with a
    /// warning event, and cells whose window held too few samples get `WindowTooShort` naming
    /// the duration that would work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1s') && duration(self) <= duration('1h')").message("load.duration must be a duration between 1s and 1h, e.g. \"30s\""))]
    pub duration: Option<String>,

    /// Fixed request rate in requests per second over all connections (open model, latency
    /// corrected for coordinated omission). Absent: closed model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = MAX_RATE))]
    pub rate: Option<i64>,

    /// Warm-up before each measurement, run but not recorded, as a duration (e.g. `"10s"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) == duration('0s') || (duration(self) >= duration('1ms') && duration(self) <= duration('30m'))").message("load.warmup must be 0s (none) or a duration between 1ms and 30m, e.g. \"10s\""))]
    pub warmup: Option<String>,

    /// Warm-up as a request count instead of a duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100000000))]
    pub warmup_requests: Option<i64>,

    /// Warm up until the target is steady rather than for a fixed time, as JMH's warm-up
    /// iterations do: the load generator goes on warming up until the per-second throughput
    /// (open model: latency) of its last seconds, as many as `load.duration` lasts (10 to 60),
    /// no longer trends, for at least `load.warmup` (when set) and at most `max`. Each result
    /// records how long its warm-up took (`results[].warmupSeconds`); one that reached `max`
    /// gets the warning `NotSteady`. `{}` takes the defaults. Needs one load pod. See
    /// `docs/metrics.md`, Steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_until_steady: Option<WarmupUntilSteady>,

    /// Seed of the values drawn for `scenarios[].values`. Set, every measurement draws the
    /// same values (repeats send the same requests); absent, each measurement's seed comes
    /// from the run's name, cell and repeat, so a rerun under the same name draws the same
    /// values again. The seed used is in each cell's load detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub seed: Option<i64>,

    /// Raise the load linearly over this time before the warm-up and the measured window, e.g.
    /// `"10s"` (JMeter's ramp-up): connection `i` of `N` (over all load pods) sends its first
    /// request `i/N` of the way in; in the open model it begins its schedule then, so the rate
    /// rises in `N` steps. Not measured; its requests count as warm-up requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1ms') && duration(self) <= duration('1h')").message("load.rampUp must be a duration between 1ms and 1h, e.g. \"10s\""))]
    pub ramp_up: Option<String>,

    /// Closed model: each connection pauses this long after a response before its next
    /// request, like a user reading a page (e.g. `"500ms"`). Latency counts from the send, so
    /// the pause is not in it; throughput is then bounded by connections / (latency + think
    /// time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1ms') && duration(self) <= duration('1h')").message("load.thinkTime must be a duration between 1ms and 1h, e.g. \"500ms\""))]
    pub think_time: Option<String>,

    /// HTTP keep-alive (default true). False opens a new connection per request, like `ab`
    /// without `-k`.
    #[serde(default = "default_true")]
    pub keep_alive: bool,

    /// Per-request timeout (default `"10s"`); a request that takes longer counts as a timeout
    /// error.
    #[serde(default = "default_timeout")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('1ms') && duration(self) <= duration('5m')").message("load.timeout must be a duration between 1ms and 5m, e.g. \"10s\""))]
    pub timeout: String,

    /// Number of load pods (default 1). Connections and rate are split evenly over them and
    /// their results are merged exactly (histograms, not averaged percentiles).
    #[serde(default = "default_one")]
    #[schemars(range(min = 1, max = 16))]
    pub pods: i32,

    /// CPU and memory of each load pod (default: limit 1 CPU, request 400m, 256Mi, so that two
    /// load pods fit a node of 1 CPU). A load pod above ~90 % of its CPU limit is flagged as
    /// generator-bound.
    #[serde(default = "default_load_resources")]
    pub resources: Resources,

    /// Node labels the load pods must match, e.g. `{pool: load}`. Absent: where some node is
    /// labelled `benchrun.dev/role=load`, the load pods run on such nodes; elsewhere they only
    /// prefer nodes without target pods. (Targets likewise go to `benchrun.dev/role=target`
    /// nodes unless `targets[].nodeSelector` is set.) By default the load may select only
    /// `benchrun.dev/role: load`; other labels need the operator's
    /// `--allowed-node-selector-keys` (else the run is refused, reason `NotAllowed`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
}

/// `load.warmupUntilSteady`: a warm-up that lasts until the target is steady.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct WarmupUntilSteady {
    /// The longest the warm-up may last (default `"1m"`, between `"15s"` and `"30m"`): then
    /// the measured window begins, steady or not, and the result says it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('15s') && duration(self) <= duration('30m')").message("load.warmupUntilSteady.max must be a duration between 15s and 30m, e.g. \"1m\""))]
    pub max: Option<String>,
}

/// The axes of the experiment. Each non-empty list replaces the corresponding single value.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Matrix {
    /// Target names to measure (default: all of `spec.targets`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    pub targets: Vec<String>,
    /// Scenario names to measure (default: all of `spec.scenarios`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    pub scenarios: Vec<String>,
    /// CPU limits to sweep, e.g. `["1", "2", "3500m"]`. Each cell's request is its limit unless
    /// `resources.cpuRequest` is set, which then applies to every cell and must not exceed any
    /// of these limits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Item length bound: without it the apiserver's CEL cost estimate of the rule below
    // exceeds its budget and the CRD is rejected.
    #[schemars(length(max = 16), inner(length(max = 32)))]
    #[x_kube(validation = Rule::new("self.all(q, isQuantity(q) && quantity(q).isGreaterThan(quantity('0')))").message("matrix.cpu entries must be positive quantities such as \"500m\" or \"2\""))]
    pub cpu: Vec<String>,
    /// Memory limits to sweep, e.g. `["512Mi", "1Gi"]`. Each cell's request is its limit unless
    /// `resources.memoryRequest` is set, which then applies to every cell and must not exceed
    /// any of these limits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Item length bound: without it the apiserver's CEL cost estimate of the rule below
    // exceeds its budget and the CRD is rejected.
    #[schemars(length(max = 16), inner(length(max = 32)))]
    #[x_kube(validation = Rule::new("self.all(q, isQuantity(q) && quantity(q).isGreaterThan(quantity('0')))").message("matrix.memory entries must be positive quantities such as \"512Mi\""))]
    pub memory: Vec<String>,
    /// Replica counts to sweep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[x_kube(validation = Rule::new("self.all(r, r >= 1 && r <= 32)").message("matrix.replicas entries must be between 1 and 32"))]
    pub replicas: Vec<i32>,
    /// Connection counts to sweep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    #[x_kube(validation = Rule::new("self.all(c, c >= 1 && c <= 20000)").message("matrix.connections entries must be between 1 and 20000"))]
    pub connections: Vec<i32>,
    /// Request rates (open model) to sweep; needs `load.duration`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    #[x_kube(validation = Rule::new(format!("self.all(r, r >= 1 && r <= {MAX_RATE})")).message(format!("matrix.rate entries must be between 1 and {MAX_RATE} requests per second (the bounds of load.rate)").as_str()))]
    pub rate: Vec<i64>,
    /// Request counts to sweep (closed model bounded by a count, like `ab -n`); needs
    /// `load.requests`, and every count must be at least its cell's connections.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    #[x_kube(validation = Rule::new("self.all(n, n >= 1 && n <= 100000000)").message("matrix.requests entries must be between 1 and 100000000 (the bounds of load.requests)"))]
    pub requests: Vec<i64>,
    /// Keep-alive settings to sweep: `[true, false]` measures every cell with persistent
    /// connections and with a new connection per request (`ab` with and without `-k`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 2))]
    #[x_kube(validation = Rule::new("size(self) < 2 || self[0] != self[1]").message("matrix.keepAlive entries must differ: use [true, false]"))]
    pub keep_alive: Vec<bool>,
    /// Combinations to remove from the product of the axes, in the convention of GitHub
    /// Actions: a cell is removed when it has every value an entry names. An entry may name
    /// only swept axes (`targets`, `scenarios` and any axis given as a list above) and only
    /// values of those axes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub exclude: Vec<MatrixEntry>,
    /// Combinations to add or to pair, in the convention of GitHub Actions, applied after
    /// `exclude`: an entry whose swept values match cells of the product sets its other
    /// values on all of them (e.g. `{cpu: "3500m", replicas: 1}` with `cpu` swept and
    /// `replicas` not: every 3500m cell runs one replica); an entry that matches no cell adds
    /// one cell, the values it leaves out taken from the spec's single values. Added cells come
    /// after the product's, in the order of the entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    pub include: Vec<MatrixEntry>,
}

/// A partial combination of matrix values, for `matrix.include` and `matrix.exclude`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct MatrixEntry {
    /// A target name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// A scenario name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// A CPU limit, e.g. `"3500m"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// A memory limit, e.g. `"1Gi"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// A replica count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// A connection count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<i32>,
    /// A request rate (open model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<i64>,
    /// A request count (with `load.requests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<i64>,
    /// Keep-alive on or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_alive: Option<bool>,
}

/// Objectives per cell. All set objectives must hold for a cell to meet its SLO.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Slo {
    /// Upper bound of the 99th-percentile latency, e.g. `"200ms"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) > duration('0s')").message("slo.p99 must be a positive duration such as \"200ms\""))]
    pub p99: Option<String>,
    /// Upper bound of the median latency, e.g. `"20ms"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) > duration('0s')").message("slo.p50 must be a positive duration such as \"20ms\""))]
    pub p50: Option<String>,
    /// Upper bound of the error rate as a percentage, e.g. `"1%"` or `"0.1%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) <= 100.0").message("slo.errorRate must be a percentage such as \"1%\" or \"0.5%\""))]
    pub error_rate: Option<String>,
    /// Lower bound of the throughput in requests per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_throughput: Option<i64>,
}

/// Prometheus settings for this run.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct PrometheusSpec {
    /// Base URL of the Prometheus HTTP API, e.g. `http://prometheus.monitoring:9090`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.startsWith('http://') || self.startsWith('https://')").message("prometheus.url must start with http:// or https://"))]
    pub url: Option<String>,
    /// Extra instant queries evaluated at the end of each measured window; each scalar result
    /// is stored in the cell's `extra` map under its name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    pub extra_queries: Vec<ExtraQuery>,
}

/// A PromQL query recorded per cell.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ExtraQuery {
    /// Name under which the value is stored.
    #[schemars(length(min = 1, max = 40))]
    pub name: String,
    /// PromQL returning one number. `$namespace`, `$pods` (a regex of the target pods) and
    /// `$window` (the measured window, e.g. `30s`) are substituted first.
    #[schemars(length(min = 1, max = 2000))]
    pub query: String,
}

/// What to keep when the run is finished. Results in status and the detail ConfigMaps are
/// always kept until the run itself is deleted.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Cleanup {
    /// `Delete` (default): delete the Deployments, Services and Jobs when the run ends.
    /// `KeepOnFailure`: keep them when the run failed, for debugging. `Keep`: always keep them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self in ['Delete', 'KeepOnFailure', 'Keep']").message("cleanup.policy must be Delete, KeepOnFailure or Keep"))]
    pub policy: Option<String>,
    /// Delete the whole BenchmarkRun this many seconds after it finished (default: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub ttl_seconds_after_finished: Option<i64>,
}

/// Time limits of a cell's steps.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct Timeouts {
    /// How long the target may take to become ready (default `"3m"`). Past it the cell fails
    /// with the reason (image pull, crash loop, unschedulable, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('5s')").message("timeouts.ready must be a duration of at least 5s, e.g. \"3m\""))]
    pub ready: Option<String>,
    /// Extra time beyond the expected warm-up plus load duration before a load Job is
    /// considered stuck (default `"2m"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("duration(self) >= duration('10s')").message("timeouts.loadGrace must be a duration of at least 10s, e.g. \"2m\""))]
    pub load_grace: Option<String>,
}

fn default_one() -> i32 {
    1
}
fn default_port() -> i32 {
    8080
}
fn default_connections() -> i32 {
    50
}
fn default_true() -> bool {
    true
}
fn default_method() -> String {
    "GET".into()
}
fn default_timeout() -> String {
    "10s".into()
}
/// `spec.resources` when not set: 500m CPU and 512Mi, requests equal to the limits
/// (Guaranteed). Sized for the smallest cluster benchrun is made for, the local one (1 CPU
/// allocatable per node): the target pod fits its node beside a backing service of the
/// default size.
pub fn default_target_resources() -> Resources {
    Resources {
        cpu: "500m".into(),
        memory: "512Mi".into(),
        cpu_request: None,
        memory_request: None,
    }
}
/// `load.resources` when not set: a limit of 1 CPU, a request of 400m, 256Mi. The request is
/// below the limit so that two load pods (the next cell's is made while the current one runs)
/// fit a node of 1 CPU beside the operator; the limit lets one pod use the whole CPU.
pub fn default_load_resources() -> Resources {
    Resources {
        cpu: "1".into(),
        memory: "256Mi".into(),
        cpu_request: Some("400m".into()),
        memory_request: None,
    }
}

/// `spec.compare`: what the run's own comparisons set side by side besides the targets.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CompareSpec {
    /// The axis to compare along: `cpu`, `memory`, `replicas`, `connections`, `keepAlive`
    /// (a matrix axis with two or more values), `scenario` (two or more scenarios: different
    /// requests of one target) or `target`. Each pair of cells that differ only in this axis
    /// is compared, each value against the first value the spec lists for the axis (e.g.
    /// `matrix.cpu[0]`), with an interval and a verdict (`status.comparisons[]`, kind `Axis`,
    /// or `Scenario`/`Target`). Targets are compared whenever two or more are measured; the
    /// other axes only when named here. `rate` and `requests` are not comparable: a closed
    /// loop's request count and an open loop's offered rate set the throughput themselves.
    #[x_kube(validation = Rule::new("self in ['target', 'scenario', 'cpu', 'memory', 'replicas', 'connections', 'keepAlive']").message("compare.along must be one of target, scenario, cpu, memory, replicas, connections, keepAlive"))]
    pub along: String,
}
