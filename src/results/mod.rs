//! Turning what was measured into the run's record: a [`CellResult`] per measurement, the
//! `HighVariance` check across repeats, the run summary and the result conditions.
//!
//! Pure: no client, no clock. The load figures come from the merged [`LoadResult`], the usage
//! from Prometheus ([`crate::prometheus`]) and the pod facts from the observed target pods.

use std::collections::BTreeMap;

use benchrun_api::{
    Cell, CellResult, Comparison, ComparisonKind, ComparisonVerdict, ConditionType, ConnectTimes,
    Coordinates, ErrorCounts, Latency, LatencyPercentile, Outcome, Reason, SloSummary, SloVerdict,
    Summary, TargetUsage, ValidatedRun, Verdict, Warning, WarningCode,
};
use benchrun_wire::{LatencyStats, LoadResult};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::num::round;

pub mod headline;
pub mod slo;
pub mod validity;
pub mod wire;

pub use headline::{headline_eligible, Ineligible};

/// What the observed target and load pods showed during the measurement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodFacts {
    /// Container restarts of the target pods during the measurement.
    pub restarts: i32,
    /// OOM kills of the target containers during the measurement.
    pub oom_kills: i32,
    /// Nodes of the target pods.
    pub target_nodes: Vec<String>,
    /// Names of the target pods (the deployment the measurement ran on).
    pub target_pods: Vec<String>,
    /// Nodes of the load pods that were observed (`spec.nodeName`); a fallback for results
    /// that do not name their node (see [`load_nodes`]).
    pub load_nodes: Vec<String>,
    /// Milliseconds from the slowest target pod's creation to its Ready condition.
    pub target_ready_ms: Option<i64>,
    /// Size of the target's image as its node reports it.
    pub target_image_bytes: Option<i64>,
    /// Backing services whose containers restarted since the run made them.
    pub service_restarts: Vec<ServiceRestart>,
    /// The images the target containers ran, by digest.
    pub target_images: Vec<String>,
    /// What the nodes cache said of the target and load nodes (roles not yet set).
    pub node_facts: Vec<benchrun_api::environment::NodeEnvironment>,
    /// The version of the operator that measured.
    pub operator: String,
}

/// A backing service whose container restarted since the run made it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceRestart {
    /// `spec.services[].name`.
    pub name: String,
    /// Terminations of its containers since they were created.
    pub terminations: i32,
    /// Reason of the last one (e.g. `OOMKilled`), when the kubelet reported it.
    pub last_reason: Option<String>,
}

/// Where the load ran: the nodes the load results name themselves (each load pod records
/// its `spec.nodeName`), joined with the nodes of the load pods that were observed. The
/// results keep the nodes when the pods are gone before the operator saw them; the pods
/// cover results written by a generator that did not record its node. Sorted, distinct.
pub fn load_nodes(load: &LoadResult, observed: &[String]) -> Vec<String> {
    let all: std::collections::BTreeSet<&String> = load.nodes.iter().chain(observed).collect();
    all.into_iter().cloned().collect()
}

/// The coordinates of a cell, with target and scenario by name
/// ([`benchrun_api::along::cell_coordinates`]).
pub fn coordinates(run: &ValidatedRun, cell: &Cell) -> Coordinates {
    let targets: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
    let scenarios: Vec<&str> = run.scenarios.iter().map(|s| s.name.as_str()).collect();
    benchrun_api::along::cell_coordinates(cell, &targets, &scenarios)
}

/// The result of a measurement that produced load figures, with its validity warnings and
/// SLO verdict (`HighVariance` is added later by [`apply_variance`]).
///
/// Errors map onto the status classes as: `connectRefused` ← connect refused;
/// `connectTimeout` ← connect timeout; `timeout` ← request timeout; `read` ← read error or
/// reset + body shorter than announced + invalid HTTP + other connect failures (e.g. no local
/// port); `status4xx`/`status5xx` ← the status classes. The classes add up to the generator's
/// error total. In the open model `latencyMs` is the coordinated-omission-corrected latency.
#[allow(clippy::too_many_arguments)] // the contract between the operator's halves
pub fn measured_result(
    run: &ValidatedRun,
    cell: &Cell,
    repeat: usize,
    load: &LoadResult,
    usage: Option<&TargetUsage>,
    extra: BTreeMap<String, f64>,
    pods: &PodFacts,
    detail: Option<String>,
) -> CellResult {
    let e = &load.errors;
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    let mut r = CellResult {
        cell: cell.index as i32,
        repeat: repeat as i32,
        coordinates: coordinates(run, cell),
        outcome: Outcome::Measured,
        reason: None,
        requests: Some(int(load.requests)),
        warmup_requests: Some(int(load.warmup_requests)),
        warmup_failed: Some(int(load.warmup_failed)),
        warmup_seconds: load
            .warmup_until_steady
            .as_ref()
            .map(|w| round(w.seconds, 1)),
        warmup_steady: load.warmup_until_steady.as_ref().map(|w| w.steady),
        errors: Some(ErrorCounts {
            connect_refused: int(e.connect_refused),
            connect_timeout: int(e.connect_timeout),
            timeout: int(e.timeout),
            // The classes the status has no field of its own for add up here, so that the
            // classes sum to the total; the TLS ones (tls_handshake, tls_certificate,
            // alpn_mismatch) until scenarios can ask for TLS (issue 51) and the status gains
            // their fields.
            read: int([
                e.body_mismatch,
                e.protocol,
                e.connect_other,
                e.tls_handshake,
                e.tls_certificate,
                e.alpn_mismatch,
            ]
            .into_iter()
            .fold(e.read, u64::saturating_add)),
            status4xx: int(e.status_4xx),
            status5xx: int(e.status_5xx),
        }),
        error_rate: Some(if load.requests == 0 {
            0.0
        } else {
            round(e.total as f64 / load.requests as f64, 6)
        }),
        bytes: Some(int(load.bytes)),
        throughput: Some(round(load.throughput, 3)),
        requests_per_core: usage.and_then(|u| requests_per_core(load.throughput, u.cpu_avg_cores?)),
        latency_ms: Some(Latency {
            table: latency_table(&load.histograms.latency),
            ..latency_ms(&load.latency)
        }),
        connect_ms: (load.connect.count > 0).then(|| us_to_ms(load.connect.mean_us)),
        connect_times_ms: (load.connect.count > 0).then(|| ConnectTimes {
            count: int(load.connect.count),
            min: us_to_ms(load.connect.min_us as f64),
            mean: us_to_ms(load.connect.mean_us),
            max: us_to_ms(load.connect.max_us as f64),
        }),
        generator_cpu_us_per_request: (load.requests > 0)
            .then(|| round(load.cpu.us_per_request, 3)),
        tcp: wire::tcp_counters(load),
        schedule_lag_ms: wire::schedule_lag_ms(load),
        drain: wire::drain(load),
        load_start_spread_ms: (run.load_pods > 1).then(|| int(load.window_start_spread_ms)),
        usage: with_generator_cpu(usage.cloned().unwrap_or_default(), run, load),
        restarts: pods.restarts,
        oom_kills: pods.oom_kills,
        target_nodes: pods.target_nodes.clone(),
        target_pods: pods.target_pods.clone(),
        load_nodes: load_nodes(load, &pods.load_nodes),
        target_ready_seconds: pods.target_ready_ms.map(|ms| round(ms as f64 / 1000.0, 3)),
        target_image_bytes: pods.target_image_bytes,
        environment: None,
        window_start: time(load.window_start_ms),
        window_end: time(load.window_end_ms),
        slo: None,
        warnings: Vec::new(),
        extra,
        detail,
        baseline: None,
        metrics_pending: None,
        metrics_due: None,
        per_second_cv: crate::comparisons::per_second_cv(load),
    };
    r.environment = crate::environment::environment(
        &pods.target_images,
        &pods.node_facts,
        &r.target_nodes,
        &r.load_nodes,
        &load.cpu_models,
        &pods.operator,
    );
    r.warnings = validity::warnings(run, &r, load.threads, usage.is_some());
    r.warnings.extend(validity::not_steady(load));
    r.warnings
        .extend(validity::service_restarted(&pods.service_restarts));
    r.slo = run.slo.as_ref().map(|s| slo::verdict(s, &r));
    r
}

/// Efficiency: requests per second per CPU core the target used, to one decimal; `None`
/// when the target used no measurable CPU (a figure divided by nothing says nothing).
pub fn requests_per_core(throughput: f64, cpu_cores: f64) -> Option<f64> {
    (cpu_cores > 0.0 && throughput.is_finite() && cpu_cores.is_finite())
        .then(|| round(throughput / cpu_cores, 1))
}

/// A measured result again, now with the usage Prometheus gave late: every figure, warning
/// and the SLO verdict are computed afresh from the stored load result, while the pod facts
/// (restarts, OOM kills, nodes), the detail name and the baseline verdict stay those recorded at
/// the time.
pub fn with_late_usage(
    run: &ValidatedRun,
    cell: &Cell,
    recorded: &CellResult,
    load: &LoadResult,
    usage: &TargetUsage,
    extra: BTreeMap<String, f64>,
) -> CellResult {
    let pods = PodFacts {
        restarts: recorded.restarts,
        oom_kills: recorded.oom_kills,
        target_nodes: recorded.target_nodes.clone(),
        target_pods: recorded.target_pods.clone(),
        load_nodes: recorded.load_nodes.clone(),
        target_ready_ms: recorded
            .target_ready_seconds
            .map(|s| (s * 1000.0).round() as i64),
        target_image_bytes: recorded.target_image_bytes,
        service_restarts: Vec::new(),
        ..PodFacts::default()
    };
    let mut r = measured_result(
        run,
        cell,
        recorded.repeat.max(0) as usize,
        load,
        Some(usage),
        extra,
        &pods,
        recorded.detail.clone(),
    );
    // The baseline verdict rests on the load figures only, which have not changed.
    r.baseline = recorded.baseline.clone();
    // Where it ran was recorded with the measurement.
    r.environment = recorded.environment.clone();
    // So do the pod facts behind `ServiceRestarted`, seen when the result was recorded.
    r.warnings.extend(
        recorded
            .warnings
            .iter()
            .filter(|w| w.code == WarningCode::ServiceRestarted)
            .cloned(),
    );
    r
}

/// Replaces the result's `MetricsUnavailable` or `MetricsPending` warning with `warning`.
pub fn set_metrics_warning(r: &mut CellResult, warning: Warning) {
    clear_metrics_warning(r);
    r.warnings.push(warning);
}

/// Removes the result's `MetricsUnavailable` or `MetricsPending` warning: its CPU and memory
/// have not been asked for yet (they are due, see `metricsDue`).
pub fn clear_metrics_warning(r: &mut CellResult) {
    r.warnings.retain(|w| {
        !matches!(
            w.code,
            WarningCode::MetricsUnavailable | WarningCode::MetricsPending
        )
    });
}

/// `usage` with the load pods' CPU from the load generator's own accounting (getrusage over
/// the measured window, summed over the load pods) and its fraction of their summed CPU limit,
/// so `GeneratorBound` is decided in every measured cell, Prometheus or not.
pub fn with_generator_cpu(
    mut usage: TargetUsage,
    run: &ValidatedRun,
    load: &LoadResult,
) -> TargetUsage {
    let secs = load.window_end_ms.saturating_sub(load.window_start_ms) as f64 / 1000.0;
    let cores = (secs > 0.0).then(|| load.cpu.total_us as f64 / 1e6 / secs);
    let limit = run.load_resources.cpu_millis as f64 * f64::from(run.load_pods.max(1)) / 1000.0;
    usage.load_cpu_cores = cores.map(|c| round(c, 4));
    usage.load_cpu_of_limit = cores.filter(|_| limit > 0.0).map(|c| round(c / limit, 4));
    usage
}

/// The result of a measurement that could not be carried out: its coordinates and reason,
/// and no load figure at all (absent, not zero: nothing was measured).
pub fn failed_result(run: &ValidatedRun, cell: &Cell, repeat: usize, reason: String) -> CellResult {
    CellResult {
        cell: cell.index as i32,
        repeat: repeat as i32,
        coordinates: coordinates(run, cell),
        outcome: Outcome::Failed,
        reason: Some(reason),
        ..CellResult::default()
    }
}

fn us_to_ms(us: f64) -> f64 {
    round(us / 1000.0, 3)
}

fn latency_ms(l: &LatencyStats) -> Latency {
    let ms = |us: u64| us_to_ms(us as f64);
    Latency {
        mean: us_to_ms(l.mean_us),
        p50: ms(l.p50_us),
        p90: ms(l.p90_us),
        p99: ms(l.p99_us),
        p999: ms(l.p999_us),
        max: ms(l.max_us),
        table: Vec::new(),
    }
}

/// The percentages of `ab`'s "served within a certain time" table.
pub const LATENCY_TABLE_PERCENTS: [f64; 10] =
    [50.0, 66.0, 75.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.9, 100.0];

/// The latency percentile table from the measurement's merged histogram (base64 HDR, µs);
/// empty when the histogram is missing, unreadable or holds no sample.
pub fn latency_table(histogram: &str) -> Vec<LatencyPercentile> {
    let Ok(h) = benchrun_wire::hist::decode(histogram) else {
        return Vec::new();
    };
    if h.is_empty() {
        return Vec::new();
    }
    LATENCY_TABLE_PERCENTS
        .iter()
        .map(|&percent| LatencyPercentile {
            percent,
            ms: us_to_ms(if percent >= 100.0 {
                h.max() as f64
            } else {
                h.value_at_quantile(percent / 100.0) as f64
            }),
        })
        .collect()
}

fn time(ms: u64) -> Option<Time> {
    let ms = i64::try_from(ms).ok().filter(|ms| *ms > 0)?;
    jiff::Timestamp::from_millisecond(ms).ok().map(Time)
}

/// Adds `HighVariance` to every measured repeat of each cell whose throughput's coefficient of
/// variation across its measured repeats exceeds 10 %, and `NotSteady` to every measured
/// repeat of each cell whose repeats trend in the order measured
/// ([`validity::repeats_not_steady`]), replacing earlier ones of both (so calling it again, or
/// after another repeat, never duplicates a warning; a window's own `NotSteady` stays).
pub fn apply_variance(results: &mut [CellResult], repeats: usize) {
    if repeats < 2 {
        return;
    }
    let found = validity::variance_warnings(results);
    let trending = validity::repeats_not_steady(results);
    for r in results.iter_mut() {
        r.warnings.retain(|w| {
            w.code != WarningCode::HighVariance
                && !(w.code == WarningCode::NotSteady
                    && w.message.starts_with(validity::ACROSS_REPEATS))
        });
        if r.outcome == Outcome::Measured {
            r.warnings.extend(found.get(&r.cell).cloned());
            r.warnings.extend(trending.get(&r.cell).cloned());
        }
    }
}

/// A cell's coordinates in one line, e.g. `express/hello cpu=1 c=100`; memory, replicas and
/// rate appear when the run sweeps or sets them.
pub fn describe(run: &ValidatedRun, c: &Coordinates) -> String {
    let m = &run.matrix;
    let mut s = format!("{}/{} cpu={}", c.target, c.scenario, c.cpu);
    if m.memory.len() > 1 {
        s += &format!(" mem={}", c.memory);
    }
    if m.replicas.len() > 1 || c.replicas != 1 {
        s += &format!(" replicas={}", c.replicas);
    }
    s += &format!(" c={}", c.connections);
    if !m.requests.is_empty() || !m.include.is_empty() {
        if let Some(n) = c.requests {
            s += &format!(" n={n}");
        }
    }
    if !c.keeps_alive() {
        s += " keepalive=off";
    }
    if let Some(rate) = c.rate {
        s += &format!(" rate={rate}");
    }
    s
}

/// The headline of the run: best throughput and its p99 and cell, failed and suspect counts,
/// and the SLO tally (absent without SLOs or before any verdict).
///
/// The best is the highest throughput among the measurements that may headline
/// ([`headline_eligible`]): a cell whose errors exceed the SLO's error rate or 50 % never
/// does, and `bestLeftOut` says how many were passed over and why.
pub fn summarize(run: &ValidatedRun, results: &[CellResult]) -> Summary {
    let mut left_out = Vec::new();
    let best = results
        .iter()
        .filter(|r| match headline_eligible(r, run.slo.as_ref()) {
            Ok(()) => true,
            Err(Ineligible::NoFigures) => false,
            Err(why) => {
                left_out.push(why);
                false
            }
        })
        .filter_map(|r| Some((r, r.throughput?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let verdicts: Vec<&SloVerdict> = results.iter().filter_map(|r| r.slo.as_ref()).collect();
    let violated = verdicts.iter().filter(|v| v.is_violated()).count();
    Summary {
        best_throughput: best.map(|(_, t)| t.round() as i64),
        best_p99: best
            .and_then(|(r, _)| r.latency_ms.as_ref())
            .map(|l| crate::num::format_latency(l.p99)),
        best_cell: best.map(|(r, _)| describe(run, &r.coordinates)),
        failed: results
            .iter()
            .filter(|r| r.outcome == Outcome::Failed)
            .count() as i32,
        suspect: results.iter().filter(|r| !r.warnings.is_empty()).count() as i32,
        best_left_out: headline::left_out_note(&left_out)
            .map(|note| format!("{note}: not considered for the best throughput")),
        slo: match (&run.slo, verdicts.is_empty(), violated) {
            (None, _, _) | (_, true, _) => None,
            (_, _, 0) => Some(SloSummary::Met),
            (_, _, n) => Some(SloSummary::Violated(n as u32)),
        },
        headline: None,
    }
}

/// The parts of one comparison `Regressed` weighs, each with its one-sided p-value of "worse
/// than the reference beyond the tolerance" (see [`benchrun_api::compare`]): throughput, p99
/// and spread (Welch's t against the margin), errors (Fisher's, on the same scale). A part
/// without an estimate is not in the family. A part stored by an older operator without a
/// p-value counts as 0 when its verdict is `Slower`, else 1. A comparison whose repeats shared
/// one deployment on a side ([`Comparison::shared_deployment`]) has no part in the family.
fn worse_p_values(c: &Comparison) -> Vec<(&'static str, f64)> {
    let ratio_p = |r: &benchrun_api::compare::RatioEstimate| {
        r.p_worse
            .unwrap_or(if r.verdict == ComparisonVerdict::Slower {
                0.0
            } else {
                1.0
            })
    };
    let mut out = Vec::new();
    if c.shared_deployment() {
        // Repeats on one deployment a side: no evidence of worse, whatever the figures.
        return out;
    }
    if let Some(t) = &c.throughput {
        out.push(("throughput", ratio_p(t)));
    }
    if let Some(p) = &c.p99 {
        out.push(("p99", ratio_p(p)));
    }
    if let Some(s) = &c.spread {
        out.push(("spread", ratio_p(&s.ratio)));
    }
    if let Some(e) = &c.errors {
        out.push(("errors", benchrun_api::compare::error_p_worse(e)));
    }
    out
}

/// `Regressed` from the cells' `Baseline` comparisons, one question with one error rate:
/// is any cell worse than its baseline cell beyond the tolerance? The family is every part
/// (throughput, p99, spread, errors) of every compared cell; Holm's procedure over their
/// one-sided p-values keeps the chance of a false `True` at most 2.5 % however many cells
/// ([`benchrun_api::compare::FAMILY_ALPHA`], the one side of a 95 % interval: with a family of
/// one, `True` exactly when that comparison is `Slower`). `True` (reason `Worse`) naming the
/// worst, also when a cell's own side is unhealthy where the baseline's is not (a build that
/// fails is worse whatever the statistics); `False` otherwise, reason `Inconclusive` while
/// some comparison cannot tell (or is `Slower` alone but not within the family), else
/// `NoneWorse`; with the tally of per-comparison verdicts (and of cells whose baseline could
/// not be read).
fn regressed(
    baseline: &str,
    measured: &[&CellResult],
    comparisons: &[Comparison],
) -> (ConditionType, bool, Reason, String) {
    use benchrun_api::compare::{holm, FAMILY_ALPHA};
    let against: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.against == ComparisonKind::Baseline)
        .collect();
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &against {
        *tally.entry(c.verdict.as_str()).or_default() += 1;
    }
    let mut unmatched: Vec<i32> = measured
        .iter()
        .filter(|r| {
            r.baseline
                .as_ref()
                .is_some_and(|b| b.verdict == Verdict::Unmatched)
        })
        .map(|r| r.cell)
        .collect();
    unmatched.dedup();
    // Cells whose comparison was not made are counted as NotCompared, not again as Unmatched.
    let not_compared = against
        .iter()
        .filter(|c| c.verdict == ComparisonVerdict::NotCompared)
        .count();
    if unmatched.len() > not_compared {
        tally.insert(Verdict::Unmatched.as_str(), unmatched.len() - not_compared);
    }
    let counts: Vec<String> = tally.iter().map(|(v, k)| format!("{v} ×{k}")).collect();
    let counts = if counts.is_empty() {
        "no verdict yet".to_string()
    } else {
        counts.join(", ")
    };
    // The family: every part of every compared cell.
    let family: Vec<(usize, &str, f64)> = against
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            worse_p_values(c)
                .into_iter()
                .map(move |(part, p)| (i, part, p))
        })
        .collect();
    let p: Vec<f64> = family.iter().map(|f| f.2).collect();
    let rejected = holm(&p, FAMILY_ALPHA);
    let k = family.len();
    let worse_parts = rejected.iter().filter(|r| **r).count();
    let mut worse_cells: Vec<usize> = family
        .iter()
        .zip(&rejected)
        .filter(|(_, r)| **r)
        .map(|(f, _)| f.0)
        .collect();
    worse_cells.dedup();
    let family_note = format!(
        "{worse_parts} of {k} comparisons (throughput, p99, spread and errors of {} cells) worse beyond the tolerance at a family-wise {} (Holm, one-sided)",
        against.len() - not_compared,
        benchrun_api::units::format_percent(FAMILY_ALPHA)
    );
    let mut worse: Vec<&Comparison> = worse_cells.iter().map(|&i| against[i]).collect();
    worse.sort_by(|a, b| a.ratio.unwrap_or(1.0).total_cmp(&b.ratio.unwrap_or(1.0)));
    let mut named: Vec<String> = worse.iter().map(|c| describe_comparison(c)).collect();
    // A cell of this run that is unhealthy where the baseline's is healthy: worse, no test.
    let broken: Vec<String> = against
        .iter()
        .filter(|c| c.verdict == ComparisonVerdict::NotCompared)
        .filter_map(|c| {
            let why = c.reason.as_deref()?;
            (why.contains("the candidate") && !why.contains("the reference"))
                .then(|| format!("{}/{}: {why}", c.coordinates.target, c.coordinates.scenario))
        })
        .collect();
    named.extend(broken);
    let alone = tally
        .get(ComparisonVerdict::Slower.as_str())
        .copied()
        .unwrap_or(0);
    let inconclusive = tally.contains_key(ComparisonVerdict::Inconclusive.as_str()) || alone > 0;
    if !named.is_empty() {
        // A regression that coincides with a new kernel, node kind or operator is reported as
        // that: the comparisons list what differs (`environmentChange`).
        let changed: Vec<String> = worse
            .iter()
            .filter(|c| !c.environment_change.is_empty())
            .map(|c| c.environment_change.join("; "))
            .collect();
        let (reason, note) = if !worse.is_empty() && changed.len() == worse.len() {
            (
                Reason::EnvironmentChanged,
                format!(
                    "; every worse cell ran in another environment than the baseline ({}): the change may be the environment's, not the code's",
                    changed[0]
                ),
            )
        } else {
            (Reason::Worse, String::new())
        };
        (
            ConditionType::Regressed,
            true,
            reason,
            format!(
                "against {baseline}: {counts}; {family_note}; worst: {}{note}",
                first(&named, 3)
            ),
        )
    } else if inconclusive {
        let need = against
            .iter()
            .filter(|c| {
                matches!(
                    c.verdict,
                    ComparisonVerdict::Inconclusive | ComparisonVerdict::Slower
                )
            })
            .filter_map(|c| c.power.as_ref())
            .filter(|p| p.within_cap != Some(false))
            .map(|p| p.repeats_needed)
            .max();
        let more = need.map_or(String::new(), |n| {
            format!(
                "; about {n} repeats a side would give the verdict the observed ratios point to"
            )
        });
        (
            ConditionType::Regressed,
            false,
            Reason::Inconclusive,
            format!("against {baseline}: {counts}; {family_note}{more}"),
        )
    } else {
        (
            ConditionType::Regressed,
            false,
            Reason::NoneWorse,
            format!("against {baseline}: {counts}; {family_note}"),
        )
    }
}

/// One comparison in a line: `express/hello cpu=1 c=100: throughput 0.80× [0.75–0.85],
/// p99 1.30× [1.10–1.52], spread grew, errors 2.0% vs 0.0% (3 vs 3 repeats)`.
pub fn describe_comparison(c: &Comparison) -> String {
    let k = &c.coordinates;
    let mut s = format!("{}/{} c={}", k.target, k.scenario, k.connections);
    if let Some(rate) = k.rate {
        s += &format!(" rate={rate}");
    }
    s += ":";
    match (&c.throughput, c.ratio) {
        (Some(t), _) => s += &format!(" throughput {}", benchrun_api::compare::format_ratio(t)),
        (None, Some(r)) => s += &format!(" throughput {r:.2}× (no interval)"),
        _ => {}
    }
    if let Some(p) = c
        .p99
        .as_ref()
        .filter(|p| p.verdict == ComparisonVerdict::Slower)
    {
        s += &format!(", p99 {}", benchrun_api::compare::format_ratio(p));
    }
    if let Some(sp) = c.spread.as_ref().filter(|s| s.increased) {
        s += &format!(
            ", per-second CV {:.1}% vs {:.1}%",
            sp.candidate_cv * 100.0,
            sp.reference_cv * 100.0
        );
    }
    if let Some(e) = c
        .errors
        .as_ref()
        .filter(|e| e.verdict == ComparisonVerdict::Slower)
    {
        s += &format!(
            ", errors {} vs {} (p={})",
            crate::num::format_rate(e.candidate_rate),
            crate::num::format_rate(e.reference_rate),
            e.p_value
        );
    }
    s + &format!(
        " ({} vs {} repeats)",
        c.candidate_repeats, c.reference_repeats
    )
}

/// The result conditions as (type, status, reason, message): `SLOsMet` (only when the run has
/// SLOs), `ResultsValid` and `MetricsAvailable` (`MetricsMissing` for figures lost for good
/// before `MetricsPending` for figures still to be read).
pub fn result_conditions(
    run: &ValidatedRun,
    results: &[CellResult],
    comparisons: &[Comparison],
) -> Vec<(ConditionType, bool, Reason, String)> {
    let measured: Vec<&CellResult> = results
        .iter()
        .filter(|r| r.outcome == Outcome::Measured)
        .collect();
    let n = measured.len();
    let mut out = Vec::new();
    if run.slo.is_some() {
        let violated: Vec<String> = measured
            .iter()
            .filter_map(|r| {
                let v = r.slo.as_ref().filter(|v| v.is_violated())?;
                Some(format!(
                    "{} r{}: {v}",
                    describe(run, &r.coordinates),
                    r.repeat
                ))
            })
            .collect();
        out.push(match (n, violated.len()) {
            (0, _) => (
                ConditionType::SlosMet,
                false,
                Reason::NoMeasurements,
                "no cell has been measured".into(),
            ),
            (_, 0) => (
                ConditionType::SlosMet,
                true,
                Reason::AllCellsMet,
                format!("all {n} measurements met the SLOs"),
            ),
            (_, v) => (
                ConditionType::SlosMet,
                false,
                Reason::SloViolated,
                format!(
                    "{v} of {n} measurements violated the SLOs: {}",
                    first(&violated, 3)
                ),
            ),
        });
    }
    if let Some(plan) = &run.baseline {
        out.push(regressed(&plan.run, &measured, comparisons));
    }
    // By the code's word, so they are listed alphabetically.
    let mut codes: BTreeMap<&str, usize> = BTreeMap::new();
    for w in measured.iter().flat_map(|r| &r.warnings) {
        *codes.entry(w.code.as_str()).or_default() += 1;
    }
    let suspect = measured.iter().filter(|r| !r.warnings.is_empty()).count();
    out.push(if suspect == 0 {
        (
            ConditionType::ResultsValid,
            true,
            Reason::NoWarnings,
            format!("no validity warning in {n} measurements"),
        )
    } else {
        let list: Vec<String> = codes.iter().map(|(c, k)| format!("{c} ×{k}")).collect();
        (
            ConditionType::ResultsValid,
            false,
            Reason::SuspectResults,
            format!(
                "{suspect} of {n} measurements have validity warnings: {}",
                list.join(", ")
            ),
        )
    });
    let missing: Vec<String> = measured
        .iter()
        .filter(|r| {
            r.warnings
                .iter()
                .any(|w| w.code == WarningCode::MetricsUnavailable)
        })
        .map(|r| format!("cell {} r{}", r.cell, r.repeat))
        .collect();
    let pending: Vec<String> = measured
        .iter()
        .filter(|r| r.metrics_pending.is_some())
        .map(|r| format!("cell {} r{}", r.cell, r.repeat))
        .collect();
    let due = measured
        .iter()
        .filter(|r| r.metrics_pending.is_none() && r.metrics_due.is_some())
        .count();
    let waiting = match pending.len() {
        0 => String::new(),
        k => format!(
            "; {k} more wait for Prometheus, which could not be reached ({})",
            first(&pending, 5)
        ),
    };
    let read = n - pending.len() - due;
    let scraping = match due {
        0 => String::new(),
        k => format!("; {k} more are read once their windows have been scraped"),
    };
    out.push(if !missing.is_empty() {
        (ConditionType::MetricsAvailable, false, Reason::MetricsMissing, format!("Prometheus gave no CPU or memory for {} of {n} measurements ({}); their load figures are kept{waiting}", missing.len(), first(&missing, 5)))
    } else if !pending.is_empty() {
        (ConditionType::MetricsAvailable, false, Reason::MetricsPending, format!("CPU and memory of {} of {n} measurements wait for Prometheus, which could not be reached ({}); they are read for the same windows when it answers", pending.len(), first(&pending, 5)))
    } else {
        (ConditionType::MetricsAvailable, true, Reason::MetricsRead, format!("Prometheus gave CPU and memory for {read} measurements{scraping}"))
    });
    out
}

fn first(items: &[String], k: usize) -> String {
    let mut s = items.iter().take(k).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > k {
        s += &format!("; and {} more", items.len() - k);
    }
    s
}

#[cfg(test)]
pub(crate) mod tests;
