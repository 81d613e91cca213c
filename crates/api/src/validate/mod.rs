//! Validation that CEL cannot express (or that must also hold for objects created before a
//! rule existed), producing a [`ValidatedRun`]: the only input the operator's planner and
//! builders accept ("parse, don't validate").

use std::fmt;
use std::time::Duration;

use crate::matrix::{self, Cell};
use crate::spec::{BenchmarkRunSpec, Resources, MAX_MEASUREMENTS, MAX_RATE, MAX_REQUESTS};
use crate::units;

mod matrix_entries;

/// Shortest non-zero duration handed to the load generator: [`units::format_duration`] has
/// millisecond resolution, so anything shorter would reach it as `0s`.
const MIN_DURATION: Duration = Duration::from_millis(1);

/// Shortest `load.duration` whose windows hold at least 2 CPU samples of each target container
/// wherever they fall, when the kubelet's cAdvisor samples container CPU every 10 s (typical;
/// 6–10 s on the local cluster). Shorter durations are accepted — clusters differ — but warned
/// about, and their cells get `WindowTooShort` when a window did hold too few.
pub const MIN_SAMPLED_DURATION: Duration = Duration::from_secs(20);

/// Bounds of `load.duration`, as the CRD schema's CEL rule states them.
const MIN_LOAD_DURATION: Duration = Duration::from_secs(1);
const MAX_LOAD_DURATION: Duration = Duration::from_secs(3600);

/// A problem with one field of the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Path of the field, e.g. `spec.load.duration`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Joins field errors into one condition message.
pub fn describe(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// How the warm-up is bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warmup {
    /// No warm-up (flagged as `NoWarmup`).
    None,
    /// Run for a duration.
    Duration(Duration),
    /// Send a number of requests.
    Requests(i64),
}

/// How a measurement is bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A request count over all load pods.
    Requests(i64),
    /// A duration.
    Duration(Duration),
}

/// Parsed resource settings: limits plus requests (defaulting to the limits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePlan {
    /// CPU limit as written.
    pub cpu: String,
    /// CPU limit in millicores.
    pub cpu_millis: i64,
    /// CPU request as written (equal to `cpu` unless set apart).
    pub cpu_request: String,
    /// Memory limit as written.
    pub memory: String,
    /// Memory request as written.
    pub memory_request: String,
}

/// What happens to children when the run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CleanupPolicy {
    /// Delete Deployments, Services and Jobs.
    Delete,
    /// Keep them when the run failed.
    KeepOnFailure,
    /// Always keep them.
    Keep,
}

/// Pod Security Standard a target's pods are built to (`targets[].podSecurity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PodSecurity {
    /// Non-root, no privilege escalation, no capabilities, RuntimeDefault seccomp.
    #[default]
    Restricted,
    /// For images that must run as root: only the seccomp profile is set.
    Baseline,
}

/// Parsed SLOs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SloPlan {
    /// Bound on p99 latency.
    pub p99: Option<Duration>,
    /// Bound on p50 latency.
    pub p50: Option<Duration>,
    /// Bound on the error rate (fraction).
    pub error_rate: Option<f64>,
    /// Lower bound on throughput (req/s).
    pub min_throughput: Option<f64>,
}

/// A spec that passed validation, with every unit parsed and the matrix expanded.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatedRun {
    /// The spec as written.
    pub spec: BenchmarkRunSpec,
    /// The cells in matrix order.
    pub cells: Vec<Cell>,
    /// Measurements per cell.
    pub repeats: usize,
    /// Measurement bound.
    pub limit: Limit,
    /// Warm-up bound.
    pub warmup: Warmup,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Load pods per measurement.
    pub load_pods: i32,
    /// Resources of each load pod.
    pub load_resources: ResourcePlan,
    /// SLOs, if any.
    pub slo: Option<SloPlan>,
    /// Cleanup policy.
    pub cleanup: CleanupPolicy,
    /// Delete the run this long after it finished.
    pub ttl_after_finished: Option<Duration>,
    /// Readiness timeout of a target.
    pub ready_timeout: Duration,
    /// Grace beyond the expected load time before a Job counts as stuck.
    pub load_grace: Duration,
    /// Pod Security Standard of each target, in the order of `spec.targets`.
    pub pod_security: Vec<PodSecurity>,
    /// The run to compare with, if any.
    pub baseline: Option<BaselinePlan>,
    /// Each backing service of `spec.services`, parsed, in order.
    pub services: Vec<crate::services::ServicePlan>,
}

/// `spec.baseline`, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselinePlan {
    /// Name of the earlier run, in the same namespace.
    pub run: String,
    /// Relative change that matters, as a fraction (0.05 = 5 %).
    pub tolerance: f64,
}

/// Tolerance of a baseline comparison when `baseline.tolerance` is not set.
pub const DEFAULT_BASELINE_TOLERANCE: f64 = 0.05;

impl ValidatedRun {
    /// Number of measurements (cells × repeats).
    pub fn total(&self) -> usize {
        self.cells.len() * self.repeats
    }

    /// The resources of a cell's target pods.
    pub fn target_resources(&self, cell: &Cell) -> ResourcePlan {
        let r = &self.spec.resources;
        // A swept limit replaces the limit. A request set apart applies to every cell (validation
        // checked it against every swept limit); otherwise the request follows the cell's limit.
        ResourcePlan {
            cpu_millis: units::cpu_millis(&cell.cpu).unwrap_or(0),
            cpu: cell.cpu.clone(),
            memory: cell.memory.clone(),
            cpu_request: r.cpu_request.clone().unwrap_or_else(|| cell.cpu.clone()),
            memory_request: r
                .memory_request
                .clone()
                .unwrap_or_else(|| cell.memory.clone()),
        }
    }

    /// Why `load.duration` may be too short for the CPU figures, or `None`: durations below
    /// [`MIN_SAMPLED_DURATION`]. Request counts cannot be judged before they run (their cells
    /// are checked when measured).
    pub fn short_window_warning(&self) -> Option<String> {
        let Limit::Duration(d) = self.limit else {
            return None;
        };
        (d < MIN_SAMPLED_DURATION).then(|| {
            format!(
                "spec.load.duration {} is shorter than {}s: kubelets sample container CPU about every 10s, so a window may hold fewer than 2 CPU samples and its cells then get WindowTooShort instead of trustworthy CPU figures; measure for at least {}s unless this cluster samples faster",
                units::format_duration(d),
                MIN_SAMPLED_DURATION.as_secs(),
                MIN_SAMPLED_DURATION.as_secs()
            )
        })
    }

    /// Upper bound of how long one load Job should run (warm-up + measurement), used with
    /// `load_grace` to detect a stuck Job. Request-count limits get a generous allowance.
    pub fn expected_load_time(&self) -> Duration {
        // With think time, a request count takes at least one pause per request of a
        // connection (the fewest connections of any cell is the slowest).
        let conns = self
            .cells
            .iter()
            .map(|c| c.connections)
            .min()
            .unwrap_or(1)
            .max(1);
        let paused = |n: i64| {
            self.think_time().map_or(Duration::ZERO, |t| {
                t * (n / i64::from(conns) + 1).min(u32::MAX.into()) as u32
            })
        };
        let warm = match self.warmup {
            Warmup::Duration(d) => d,
            Warmup::Requests(n) => Duration::from_secs(30).max(paused(n)),
            Warmup::None => Duration::from_secs(30),
        };
        let most = self.cells.iter().filter_map(|c| c.requests);
        let measure = match self.limit {
            Limit::Duration(d) => d,
            Limit::Requests(n) => {
                Duration::from_secs(300).max(paused(most.max().unwrap_or(n).max(n)))
            }
        };
        self.ramp_up().unwrap_or_default() + warm + measure
    }

    /// `load.rampUp`, parsed (validation refused one that does not parse).
    pub fn ramp_up(&self) -> Option<Duration> {
        self.spec
            .load
            .ramp_up
            .as_deref()
            .and_then(|d| units::duration(d).ok())
    }

    /// `load.thinkTime`, parsed (validation refused one that does not parse).
    pub fn think_time(&self) -> Option<Duration> {
        self.spec
            .load
            .think_time
            .as_deref()
            .and_then(|d| units::duration(d).ok())
    }
}

/// `what` (e.g. "100 requests") must split evenly over `pods` load pods: `n` a multiple of
/// `pods` and, with `at_least_one`, at least one per pod.
pub(crate) fn split_over_pods(
    field: impl Into<String>,
    what: &str,
    n: i64,
    pods: i64,
    at_least_one: bool,
    errors: &mut Vec<FieldError>,
) {
    if n % pods != 0 || (at_least_one && n < pods) {
        errors.push(err(
            field,
            format!(
                "{what} cannot be split evenly over {pods} load pods; use a multiple of load.pods"
            ),
        ));
    }
}

fn err(field: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
    }
}

pub(crate) fn resources(field: &str, r: &Resources, errors: &mut Vec<FieldError>) -> ResourcePlan {
    let cpu_millis = units::cpu_millis(&r.cpu).unwrap_or_else(|e| {
        errors.push(err(format!("{field}.cpu"), e));
        0
    });
    let memory_bytes = units::memory_bytes(&r.memory).unwrap_or_else(|e| {
        errors.push(err(format!("{field}.memory"), e));
        0
    });
    if let Some(req) = &r.cpu_request {
        match units::cpu_millis(req) {
            Ok(m) if m > cpu_millis && cpu_millis > 0 => errors.push(err(
                format!("{field}.cpuRequest"),
                format!(
                    "{req} is above the limit {}: lower the request or raise the limit",
                    r.cpu
                ),
            )),
            Err(e) => errors.push(err(format!("{field}.cpuRequest"), e)),
            _ => {}
        }
    }
    if let Some(req) = &r.memory_request {
        match units::memory_bytes(req) {
            Ok(b) if b > memory_bytes && memory_bytes > 0 => errors.push(err(
                format!("{field}.memoryRequest"),
                format!(
                    "{req} is above the limit {}: lower the request or raise the limit",
                    r.memory
                ),
            )),
            Err(e) => errors.push(err(format!("{field}.memoryRequest"), e)),
            _ => {}
        }
    }
    ResourcePlan {
        cpu: r.cpu.clone(),
        cpu_millis,
        cpu_request: r.cpu_request.clone().unwrap_or_else(|| r.cpu.clone()),
        memory: r.memory.clone(),
        memory_request: r.memory_request.clone().unwrap_or_else(|| r.memory.clone()),
    }
}

/// A request set apart in `spec.resources` applies to every cell, so it must not exceed any
/// limit the matrix sweeps. `name` is `cpu` or `memory`; unparsable values were reported
/// elsewhere.
fn request_within_swept_limits(
    name: &str,
    request: Option<&str>,
    swept: &[String],
    parse: fn(&str) -> Result<i64, String>,
    errors: &mut Vec<FieldError>,
) {
    let Some((req, value)) = request.and_then(|r| Some((r, parse(r).ok()?))) else {
        return;
    };
    for (i, limit) in swept.iter().enumerate() {
        if parse(limit).is_ok_and(|l| value > l) {
            errors.push(err(
                format!("spec.resources.{name}Request"),
                format!(
                    "{req} is above the swept limit {limit} (spec.matrix.{name}[{i}]) and applies to every cell: \
                     lower resources.{name}Request to at most the smallest swept limit, or remove it so each cell's request follows its limit"
                ),
            ));
        }
    }
}

/// A count outside the bounds the CRD schema declares for it. The apiserver refuses these at
/// admission; an object that skipped admission (an older CRD, a direct write) is refused here
/// too, so no Deployment with 0 replicas or load Job with 0 connections is ever built.
fn count_in_range(field: &str, value: i64, min: i64, max: i64, errors: &mut Vec<FieldError>) {
    if !(min..=max).contains(&value) {
        errors.push(err(
            field,
            format!("{value} is out of range: use a value between {min} and {max}"),
        ));
    }
}

/// The bounds of every count in the spec, as the CRD schema declares them.
fn counts_in_range(spec: &BenchmarkRunSpec, errors: &mut Vec<FieldError>) {
    let load = &spec.load;
    count_in_range("spec.replicas", spec.replicas.into(), 1, 32, errors);
    count_in_range(
        "spec.load.connections",
        load.connections.into(),
        1,
        20_000,
        errors,
    );
    if let Some(n) = load.requests {
        count_in_range("spec.load.requests", n, 1, MAX_REQUESTS, errors);
    }
    if let Some(n) = load.warmup_requests {
        count_in_range("spec.load.warmupRequests", n, 1, MAX_REQUESTS, errors);
    }
    if let Some(seed) = load.seed {
        count_in_range("spec.load.seed", seed, 0, i64::MAX, errors);
    }
    let Some(m) = &spec.matrix else { return };
    for (i, r) in m.replicas.iter().enumerate() {
        count_in_range(
            &format!("spec.matrix.replicas[{i}]"),
            (*r).into(),
            1,
            32,
            errors,
        );
    }
    for (i, c) in m.connections.iter().enumerate() {
        let field = format!("spec.matrix.connections[{i}]");
        count_in_range(&field, (*c).into(), 1, 20_000, errors);
    }
}

fn parse_duration(field: &str, s: &str, errors: &mut Vec<FieldError>) -> Duration {
    units::duration(s).unwrap_or_else(|e| {
        errors.push(err(field, e));
        Duration::ZERO
    })
}

pub(crate) fn unique<'a>(
    field: &str,
    names: impl Iterator<Item = &'a str>,
    errors: &mut Vec<FieldError>,
) {
    let mut seen = std::collections::BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            errors.push(err(
                field,
                format!("{n:?} appears twice; names must be unique"),
            ));
        }
    }
}

/// Validates a spec, returning every problem found (not just the first).
pub fn validate(spec: &BenchmarkRunSpec) -> Result<ValidatedRun, Vec<FieldError>> {
    let mut errors = Vec::new();
    let e = &mut errors;
    if spec.targets.is_empty() {
        e.push(err("spec.targets", "at least one target is required"));
    }
    if spec.scenarios.is_empty() {
        e.push(err("spec.scenarios", "at least one scenario is required"));
    }
    unique(
        "spec.targets",
        spec.targets.iter().map(|t| t.name.as_str()),
        e,
    );
    unique(
        "spec.scenarios",
        spec.scenarios.iter().map(|s| s.name.as_str()),
        e,
    );
    for (i, t) in spec.targets.iter().enumerate() {
        if !is_dns_label(&t.name) || t.name.len() > 20 {
            e.push(err(
                format!("spec.targets[{i}].name"),
                "must be a lowercase DNS label of at most 20 characters",
            ));
        }
        if t.image.trim().is_empty() {
            e.push(err(format!("spec.targets[{i}].image"), "must not be empty"));
        }
    }
    let pod_security = spec
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| target_security(i, t, e))
        .collect();
    for (i, s) in spec.scenarios.iter().enumerate() {
        e.extend(crate::request::scenario_errors(i, s));
    }
    let services = crate::services::check(&spec.services, e);
    resources("spec.resources", &spec.resources, e);
    let load = &spec.load;
    let load_resources = resources("spec.load.resources", &load.resources, e);
    counts_in_range(spec, e);
    let limit = match (load.requests, &load.duration) {
        (Some(n), None) => Limit::Requests(n),
        (None, Some(d)) => {
            let parsed = parse_duration("spec.load.duration", d, e);
            if units::duration(d).is_ok()
                && !(MIN_LOAD_DURATION..=MAX_LOAD_DURATION).contains(&parsed)
            {
                e.push(err(
                    "spec.load.duration",
                    format!(
                        "{d:?} is out of range: use a duration between 1s and 1h, e.g. \"30s\""
                    ),
                ));
            }
            Limit::Duration(parsed)
        }
        _ => {
            e.push(err(
                "spec.load",
                "set exactly one of load.requests (a count) or load.duration (e.g. \"30s\")",
            ));
            Limit::Requests(0)
        }
    };
    if load.rate.is_some() && load.duration.is_none() {
        e.push(err("spec.load.rate", "the open model needs load.duration"));
    }
    let warmup = match (&load.warmup, load.warmup_requests) {
        (Some(_), Some(_)) => {
            e.push(err(
                "spec.load",
                "set at most one of warmup and warmupRequests",
            ));
            Warmup::None
        }
        (Some(text), None) => match parse_duration("spec.load.warmup", text, e) {
            Duration::ZERO => Warmup::None,
            d if d < MIN_DURATION => {
                e.push(err(
                    "spec.load.warmup",
                    format!("{text:?} is below 1ms and would reach the load generator as 0s: use 0s for no warm-up or at least \"1ms\", e.g. \"10s\""),
                ));
                Warmup::None
            }
            d => Warmup::Duration(d),
        },
        (None, Some(n)) => Warmup::Requests(n),
        (None, None) => Warmup::None,
    };
    for (field, text) in [
        ("spec.load.rampUp", &load.ramp_up),
        ("spec.load.thinkTime", &load.think_time),
    ] {
        let Some(text) = text else { continue };
        let d = parse_duration(field, text, e);
        if !(MIN_DURATION..=Duration::from_secs(3600)).contains(&d) {
            e.push(err(
                field,
                format!("{text:?} must be between 1ms and 1h, e.g. \"10s\""),
            ));
        }
    }
    if load.think_time.is_some() && load.rate.is_some() {
        e.push(err(
            "spec.load.thinkTime",
            "think time is for the closed model: remove it or load.rate (the open model's schedule sets the pace)",
        ));
    }
    let timeout = match units::duration(&load.timeout) {
        Ok(d) if d < MIN_DURATION => {
            e.push(err(
                "spec.load.timeout",
                format!(
                    "{:?} is below 1ms and would reach the load generator as 0s: use at least \"1ms\", e.g. \"10s\"",
                    load.timeout
                ),
            ));
            d
        }
        Ok(d) => d,
        Err(x) => {
            e.push(err("spec.load.timeout", x));
            Duration::ZERO
        }
    };
    let m = spec.matrix.clone().unwrap_or_default();
    for n in &m.targets {
        if !spec.targets.iter().any(|t| &t.name == n) {
            e.push(err("spec.matrix.targets", format!("{n:?} names no target")));
        }
    }
    for n in &m.scenarios {
        if !spec.scenarios.iter().any(|s| &s.name == n) {
            e.push(err(
                "spec.matrix.scenarios",
                format!("{n:?} names no scenario"),
            ));
        }
    }
    for (i, q) in m.cpu.iter().enumerate() {
        if let Err(x) = units::cpu_millis(q) {
            e.push(err(format!("spec.matrix.cpu[{i}]"), x));
        }
    }
    for (i, q) in m.memory.iter().enumerate() {
        if let Err(x) = units::memory_bytes(q) {
            e.push(err(format!("spec.matrix.memory[{i}]"), x));
        }
    }
    let r = &spec.resources;
    request_within_swept_limits(
        "cpu",
        r.cpu_request.as_deref(),
        &m.cpu,
        units::cpu_millis,
        e,
    );
    request_within_swept_limits(
        "memory",
        r.memory_request.as_deref(),
        &m.memory,
        units::memory_bytes,
        e,
    );
    let rates = load.rate.iter().map(|r| ("spec.load.rate".to_string(), r));
    let swept = m.rate.iter().enumerate();
    let swept = swept.map(|(i, r)| (format!("spec.matrix.rate[{i}]"), r));
    for (field, r) in rates.chain(swept) {
        if !(1..=MAX_RATE).contains(r) {
            e.push(err(
                field,
                format!("{r} req/s is out of range: use a rate between 1 and {MAX_RATE}"),
            ));
        }
    }
    let pods = i64::from(load.pods.max(1));
    for r in load.rate.iter().chain(m.rate.iter()) {
        let what = format!("a rate of {r} req/s");
        split_over_pods("spec.load.rate", &what, *r, pods, false, e);
    }
    if let Some(n) = load.requests {
        split_over_pods(
            "spec.load.requests",
            &format!("{n} requests"),
            n,
            pods,
            false,
            e,
        );
    }
    if !m.rate.is_empty() && load.duration.is_none() {
        e.push(err(
            "spec.matrix.rate",
            "the open model needs load.duration",
        ));
    }
    if !m.requests.is_empty() && load.requests.is_none() {
        e.push(err(
            "spec.matrix.requests",
            "a request-count axis needs load.requests (the run is bounded by load.duration)",
        ));
    }
    for (i, n) in m.requests.iter().enumerate() {
        count_in_range(
            &format!("spec.matrix.requests[{i}]"),
            *n,
            1,
            MAX_REQUESTS,
            e,
        );
        let field = format!("spec.matrix.requests[{i}]");
        split_over_pods(field, &format!("{n} requests"), *n, pods, false, e);
    }
    let mut distinct = m.keep_alive.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != m.keep_alive.len() {
        e.push(err(
            "spec.matrix.keepAlive",
            "the entries must differ: use [true, false]",
        ));
    }
    let conns: Vec<i32> = if m.connections.is_empty() {
        vec![load.connections]
    } else {
        m.connections.clone()
    };
    for c in &conns {
        let what = format!("{c} connections");
        split_over_pods("spec.load.connections", &what, i64::from(*c), pods, true, e);
        // With a request-count axis or include entries, each cell's pair is checked instead
        // (matrix_entries).
        let per_cell = !m.requests.is_empty() || !m.include.is_empty();
        if let Some(n) = load.requests.filter(|_| !per_cell) {
            if n < i64::from(*c) {
                e.push(err(
                    "spec.load.requests",
                    format!("{n} requests is fewer than {c} connections; raise load.requests"),
                ));
            }
        }
    }
    matrix_entries::check(spec, e);
    let repeats = spec.repeats.max(1) as usize;
    let count = matrix::cell_count(spec);
    let measurements = count.saturating_mul(repeats);
    if measurements > MAX_MEASUREMENTS {
        e.push(err(
            "spec.matrix",
            format!(
                "{count} cells × {repeats} repeats = {measurements} measurements, more than the maximum of {MAX_MEASUREMENTS}; split the experiment into several runs"
            ),
        ));
    }
    let slo = spec.slo.as_ref().map(|s| SloPlan {
        p99: s
            .p99
            .as_deref()
            .map(|d| parse_duration("spec.slo.p99", d, e)),
        p50: s
            .p50
            .as_deref()
            .map(|d| parse_duration("spec.slo.p50", d, e)),
        error_rate: s.error_rate.as_deref().map(|p| {
            units::percent(p).unwrap_or_else(|x| {
                e.push(err("spec.slo.errorRate", x));
                0.0
            })
        }),
        min_throughput: s.min_throughput.map(|t| t as f64),
    });
    let cleanup_spec = spec.cleanup.clone().unwrap_or_default();
    let cleanup = match cleanup_spec.policy.as_deref() {
        None | Some("Delete") => CleanupPolicy::Delete,
        Some("KeepOnFailure") => CleanupPolicy::KeepOnFailure,
        Some("Keep") => CleanupPolicy::Keep,
        Some(other) => {
            e.push(err(
                "spec.cleanup.policy",
                format!("{other:?} is not one of Delete, KeepOnFailure, Keep"),
            ));
            CleanupPolicy::Delete
        }
    };
    let timeouts = spec.timeouts.clone().unwrap_or_default();
    let ready_timeout = parse_duration(
        "spec.timeouts.ready",
        timeouts.ready.as_deref().unwrap_or("3m"),
        e,
    );
    let load_grace = parse_duration(
        "spec.timeouts.loadGrace",
        timeouts.load_grace.as_deref().unwrap_or("2m"),
        e,
    );
    let baseline = spec.baseline.as_ref().map(|b| BaselinePlan {
        run: b.run.clone(),
        tolerance: match b.tolerance.as_deref().map(units::percent) {
            None => DEFAULT_BASELINE_TOLERANCE,
            Some(Ok(t)) if t < 1.0 => t,
            Some(Ok(_)) => {
                e.push(err(
                    "spec.baseline.tolerance",
                    "must be below 100%: a change of 100% or more always matters, e.g. \"5%\"",
                ));
                DEFAULT_BASELINE_TOLERANCE
            }
            Some(Err(x)) => {
                e.push(err("spec.baseline.tolerance", x));
                DEFAULT_BASELINE_TOLERANCE
            }
        },
    });
    if spec
        .baseline
        .as_ref()
        .is_some_and(|b| b.run.trim().is_empty())
    {
        e.push(err(
            "spec.baseline.run",
            "must name an earlier BenchmarkRun of this namespace",
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(ValidatedRun {
        baseline,
        spec: spec.clone(),
        cells: matrix::expand(spec),
        repeats,
        limit,
        warmup,
        timeout,
        load_pods: load.pods.max(1),
        load_resources,
        slo,
        cleanup,
        ttl_after_finished: cleanup_spec
            .ttl_seconds_after_finished
            .map(|s| Duration::from_secs(s.max(0) as u64)),
        ready_timeout,
        load_grace,
        pod_security,
        services,
    })
}

/// Parses `targets[i].podSecurity` and checks `runAsUser` against it.
fn target_security(i: usize, t: &crate::spec::Target, e: &mut Vec<FieldError>) -> PodSecurity {
    let field = format!("spec.targets[{i}]");
    pod_security(&field, t.pod_security.as_deref(), t.run_as_user, e)
}

/// Parses the `podSecurity` of the object at `field` and checks its `runAsUser`.
pub(crate) fn pod_security(
    field: &str,
    level: Option<&str>,
    run_as_user: Option<i64>,
    e: &mut Vec<FieldError>,
) -> PodSecurity {
    let level = match level {
        None | Some("Restricted") => PodSecurity::Restricted,
        Some("Baseline") => PodSecurity::Baseline,
        Some(other) => {
            e.push(err(
                format!("{field}.podSecurity"),
                format!("{other:?} is not one of Restricted, Baseline"),
            ));
            PodSecurity::Restricted
        }
    };
    if let Some(uid) = run_as_user {
        if uid < 1 {
            e.push(err(
                format!("{field}.runAsUser"),
                format!("{uid} is not a non-root user id: use 1 or more, or leave runAsUser out and set podSecurity: Baseline for an image that must run as root"),
            ));
        }
    }
    level
}

pub(crate) fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[b.len() - 1] != b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(extra: &str) -> BenchmarkRunSpec {
        serde_json::from_value(serde_json::json!({
            "targets": [{"name": "a", "image": "img:1"}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": serde_json::from_str::<serde_json::Value>(extra).unwrap(),
        }))
        .unwrap()
    }

    #[test]
    fn connections_not_divisible_by_load_pods_are_rejected_naming_the_field() {
        let errs = validate(&spec(
            r#"{"connections": 10, "pods": 3, "duration": "10s"}"#,
        ))
        .unwrap_err();
        assert_eq!(errs[0].field, "spec.load.connections");
        assert!(
            errs[0].message.contains("multiple of load.pods"),
            "{}",
            errs[0]
        );
    }

    #[test]
    fn rate_not_divisible_by_load_pods_is_rejected() {
        let errs = validate(&spec(
            r#"{"connections": 4, "pods": 2, "duration": "10s", "rate": 1001}"#,
        ))
        .unwrap_err();
        assert_eq!(errs[0].field, "spec.load.rate");
    }

    #[test]
    fn valid_spec_expands_with_defaults() {
        let run = validate(&spec(r#"{"connections": 4, "pods": 2, "duration": "10s"}"#)).unwrap();
        assert_eq!(run.cells.len(), 1);
        assert_eq!(run.limit, Limit::Duration(Duration::from_secs(10)));
        assert_eq!(run.warmup, Warmup::None);
        assert_eq!(run.cleanup, CleanupPolicy::Delete);
        assert_eq!(run.ready_timeout, Duration::from_secs(180));
    }

    #[test]
    fn swept_cpu_limit_carries_its_request() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.matrix = Some(crate::Matrix {
            cpu: vec!["250m".into(), "2".into()],
            ..Default::default()
        });
        let run = validate(&s).unwrap();
        let r = run.target_resources(&run.cells[1]);
        assert_eq!(
            (r.cpu.as_str(), r.cpu_request.as_str(), r.cpu_millis),
            ("2", "2", 2000)
        );
    }

    #[test]
    fn requests_set_apart_apply_to_every_swept_cell() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.resources.cpu_request = Some("250m".into());
        s.resources.memory_request = Some("256Mi".into());
        s.matrix = Some(crate::Matrix {
            cpu: vec!["500m".into(), "1".into(), "2".into()],
            memory: vec!["512Mi".into(), "1Gi".into()],
            ..Default::default()
        });
        let run = validate(&s).unwrap();
        assert_eq!(run.cells.len(), 6);
        for cell in &run.cells {
            let r = run.target_resources(cell);
            assert_eq!(
                (r.cpu.as_str(), r.memory.as_str()),
                (cell.cpu.as_str(), cell.memory.as_str())
            );
            assert_eq!(
                (r.cpu_request.as_str(), r.memory_request.as_str()),
                ("250m", "256Mi"),
                "cell {}",
                cell.index
            );
        }
    }

    #[test]
    fn requests_above_a_swept_limit_are_rejected_naming_the_field_and_fix() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.resources.cpu_request = Some("1".into());
        s.resources.memory_request = Some("512Mi".into());
        s.matrix = Some(crate::Matrix {
            cpu: vec!["500m".into(), "2".into()],
            memory: vec!["256Mi".into(), "1Gi".into()],
            ..Default::default()
        });
        let errs = validate(&s).unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.resources.cpuRequest", "spec.resources.memoryRequest"],
            "{}",
            describe(&errs)
        );
        assert!(
            errs[0]
                .message
                .contains("swept limit 500m (spec.matrix.cpu[0])"),
            "{}",
            errs[0]
        );
        assert!(
            errs[0].message.contains("lower resources.cpuRequest"),
            "{}",
            errs[0]
        );
        assert!(
            errs[1]
                .message
                .contains("swept limit 256Mi (spec.matrix.memory[0])"),
            "{}",
            errs[1]
        );
    }

    #[test]
    fn zero_load_pods_are_treated_as_one_without_panicking() {
        let run = validate(&spec(r#"{"connections": 4, "pods": 0, "duration": "10s"}"#)).unwrap();
        assert_eq!(run.load_pods, 1);
    }

    #[test]
    fn rates_above_the_cap_are_rejected_naming_the_entry() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s", "rate": 20000000}"#);
        s.matrix = Some(crate::Matrix {
            rate: vec![1000, MAX_RATE + 1],
            ..Default::default()
        });
        let errs = validate(&s).unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.load.rate", "spec.matrix.rate[1]"],
            "{}",
            describe(&errs)
        );
        assert!(
            errs[1].message.contains("between 1 and 10000000"),
            "{}",
            errs[1]
        );
    }

    #[test]
    fn timeout_and_warmup_below_a_millisecond_are_rejected() {
        // format_duration has millisecond resolution: these would reach the load generator as 0s.
        let errs = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "timeout": "500us", "warmup": "999us"}"#,
        ))
        .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.load.warmup", "spec.load.timeout"],
            "{}",
            describe(&errs)
        );
        assert!(errs[1].message.contains("at least \"1ms\""), "{}", errs[1]);
        let errs = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "timeout": "0s"}"#,
        ))
        .unwrap_err();
        assert_eq!(errs[0].field, "spec.load.timeout");
        let run = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "timeout": "1ms", "warmup": "0s"}"#,
        ))
        .unwrap();
        assert_eq!((run.timeout, run.warmup), (MIN_DURATION, Warmup::None));
        assert_eq!(units::format_duration(run.timeout), "1ms");
    }

    #[test]
    fn targets_default_to_restricted_and_may_opt_into_baseline() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        let mut root = s.targets[0].clone();
        root.name = "root".into();
        root.pod_security = Some("Baseline".into());
        s.targets.push(root);
        let run = validate(&s).unwrap();
        assert_eq!(
            run.pod_security,
            vec![PodSecurity::Restricted, PodSecurity::Baseline]
        );
    }

    #[test]
    fn unknown_pod_security_and_root_user_ids_are_rejected_naming_the_field() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.targets[0].pod_security = Some("Privileged".into());
        s.targets[0].run_as_user = Some(0);
        let errs = validate(&s).unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.targets[0].podSecurity", "spec.targets[0].runAsUser"]
        );
        assert!(errs[0].message.contains("Restricted, Baseline"), "{errs:?}");
        assert!(
            errs[1].message.contains("podSecurity: Baseline"),
            "{errs:?}"
        );
    }

    #[test]
    fn a_baseline_defaults_to_a_five_percent_tolerance_and_refuses_a_bad_one() {
        let mut s = spec(r#"{"connections": 4, "duration": "20s"}"#);
        s.baseline = Some(serde_json::from_str(r#"{"run": "last-week"}"#).unwrap());
        let b = validate(&s).unwrap().baseline.unwrap();
        assert_eq!((b.run.as_str(), b.tolerance), ("last-week", 0.05));
        s.baseline =
            Some(serde_json::from_str(r#"{"run": "last-week", "tolerance": "2.5%"}"#).unwrap());
        assert_eq!(validate(&s).unwrap().baseline.unwrap().tolerance, 0.025);
        for bad in ["100%", "five", "-1%"] {
            s.baseline = Some(
                serde_json::from_value(serde_json::json!({"run": "x", "tolerance": bad})).unwrap(),
            );
            let e = validate(&s).unwrap_err();
            assert_eq!(e[0].field, "spec.baseline.tolerance", "{bad}");
        }
    }

    #[test]
    fn counts_and_durations_only_the_schema_bounded_are_refused_here_too() {
        // Found by the property tests: an object that skipped admission passed validate() with
        // these and would have become a Deployment of 0 replicas or a load of 0 connections.
        let mut s = spec(r#"{"connections": 0, "duration": "0s", "warmupRequests": 0}"#);
        s.replicas = 0;
        s.resources.cpu = "0.0001".into();
        s.matrix = Some(
            serde_json::from_str(r#"{"replicas": [1, -2], "connections": [4, 20001]}"#).unwrap(),
        );
        let fields: Vec<_> = validate(&s)
            .unwrap_err()
            .into_iter()
            .map(|e| e.field)
            .collect();
        for f in [
            "spec.replicas",
            "spec.load.connections",
            "spec.load.warmupRequests",
            "spec.load.duration",
            "spec.resources.cpu",
            "spec.matrix.replicas[1]",
            "spec.matrix.connections[1]",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
        }
        assert!(!fields.contains(&"spec.matrix.replicas[0]".to_string()));
        let long = validate(&spec(r#"{"connections": 4, "duration": "61m"}"#)).unwrap_err();
        assert_eq!(long[0].field, "spec.load.duration");
        assert!(
            long[0].message.contains("between 1s and 1h"),
            "{}",
            long[0].message
        );
        let many = validate(&spec(r#"{"connections": 4, "requests": 100000001}"#)).unwrap_err();
        assert_eq!(many[0].field, "spec.load.requests");
    }

    #[test]
    fn a_duration_below_twenty_seconds_is_accepted_with_a_warning() {
        let run = validate(&spec(r#"{"connections": 4, "duration": "15s"}"#)).unwrap();
        let w = run.short_window_warning().unwrap();
        assert!(
            w.starts_with("spec.load.duration 15s is shorter than 20s"),
            "{w}"
        );
        let run = validate(&spec(r#"{"connections": 4, "duration": "20s"}"#)).unwrap();
        assert_eq!(run.short_window_warning(), None);
        let run = validate(&spec(r#"{"connections": 4, "requests": 100}"#)).unwrap();
        assert_eq!(run.short_window_warning(), None);
    }
}
