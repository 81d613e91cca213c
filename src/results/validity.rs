//! Validity checks: why a measured number may not mean what it seems to.
//!
//! Pure: each warning is a function of the run, the cell's result and what the load generator
//! reported. A warning is a [`Warning`]: its code and an explanation with the numbers behind it and what
//! to do about it; `docs/metrics.md` lists every code with its threshold.

use std::collections::BTreeMap;

use benchrun_api::validate::Warmup;
use benchrun_api::{CellResult, ErrorCounts, Outcome, ValidatedRun, Warning, WarningCode};
use benchrun_wire::steady::{self, Trend};
use benchrun_wire::{LoadResult, Model};

use crate::num::{format_ms, format_rate};

/// Load pods at or above this fraction of their CPU limit are generator-bound; so is a
/// generator whose own CPU time reaches this many cores per event-loop thread.
pub const GENERATOR_CPU: f64 = 0.9;
/// Error rates above this fraction are flagged.
pub const MAX_ERROR_RATE: f64 = 0.01;
/// A closed-model target below this fraction of its CPU limit is concurrency-bound.
pub const CONCURRENCY_CPU: f64 = 0.5;
/// Coefficients of variation of throughput above this are flagged.
pub const MAX_CV: f64 = 0.10;
/// CPU samples per target container the window must hold: one whole sample interval inside
/// it. With one, both edges are estimated from intervals reaching outside the window; with
/// none, there are no CPU figures.
pub const MIN_CPU_SAMPLES: i32 = 2;
/// Largest spread of the load pods' window starts, as a fraction of the window, before
/// `StaggeredStart` (with [`MAX_START_SPREAD_MS`] as a floor).
pub const MAX_START_SPREAD: f64 = 0.05;
/// Spreads up to this many milliseconds never raise `StaggeredStart`.
pub const MAX_START_SPREAD_MS: i64 = 1000;
/// A backing service at or above this fraction of its CPU limit, on average over the window,
/// raises `ServiceBound`.
pub const SERVICE_CPU: f64 = 0.9;

const ADVICE_GENERATOR: &str =
    "the generator, not the target, may have set the rate — add load pods or CPU";

/// Every warning that applies to one measurement except `HighVariance` (which needs the
/// other repeats; see [`variance_warning`]). `generator_threads` is the load generator's
/// event-loop thread count over all load pods; `prometheus_answered` is false when the usage
/// query failed.
pub fn warnings(
    run: &ValidatedRun,
    r: &CellResult,
    generator_threads: u64,
    prometheus_answered: bool,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let generator = generator_busy(r, generator_threads);
    out.extend(generator.as_ref().map(|busy| {
        Warning::new(
            WarningCode::GeneratorBound,
            format!("{busy}; {ADVICE_GENERATOR}"),
        )
    }));
    let shared: Vec<&str> = r
        .target_nodes
        .iter()
        .filter(|n| r.load_nodes.contains(n))
        .map(String::as_str)
        .collect();
    if !shared.is_empty() {
        out.push(Warning::new(WarningCode::SameNode, format!("target and load pods shared node {}; the generator took CPU from the target's node — use a cluster with more nodes or keep them apart with nodeSelector",
            shared.join(", ")
        )));
    }
    if let Some(rate) = r.error_rate.filter(|f| *f > MAX_ERROR_RATE) {
        let errors = r.errors.clone().unwrap_or_default();
        out.push(Warning::new(
            WarningCode::HighErrorRate,
            format!(
                "{} of requests failed ({} of {}{}); throughput and latency include the failures",
                format_rate(rate),
                error_total(&errors),
                r.requests.unwrap_or_default(),
                error_breakdown(&errors)
            ),
        ));
    }
    if r.restarts > 0 {
        out.push(Warning::new(WarningCode::Restarts, format!("target containers restarted {} during the measurement; the figures include a cold start — check `kubectl logs --previous`",
            times(r.restarts)
        )));
    }
    if r.oom_kills > 0 {
        out.push(Warning::new(WarningCode::OomKilled, format!("target containers were OOM-killed {} at the memory limit {}; raise the memory limit or lower the heap (e.g. -XX:MaxRAMPercentage)",
            times(r.oom_kills),
            r.coordinates.memory
        )));
    }
    if run.warmup == Warmup::None {
        out.push(Warning::new(WarningCode::NoWarmup, "no warm-up ran before the measured window; JIT compilation, connection setup and cold caches are in the figures — set load.warmup (e.g. 10s)"));
    }
    out.extend(concurrency_bound(r));
    out.extend(staggered_start(r));
    out.extend(service_bound(r));
    out.extend(super::wire::warnings(r, generator));
    let too_short = window_too_short(r);
    if !prometheus_answered {
        out.push(Warning::new(WarningCode::MetricsUnavailable, "Prometheus could not be queried; target CPU and memory are missing (the load figures are kept)"));
    } else if let Some(w) = too_short {
        out.push(w);
    } else if r.usage.cpu_avg_cores.is_none() || r.usage.memory_avg_bytes.is_none() {
        out.push(Warning::new(WarningCode::MetricsUnavailable, "Prometheus had no CPU or memory samples of the target pods in the window; check that it scrapes the kubelets' cAdvisor every 15s or less and that the window spans more than 2 scrape intervals"));
    }
    out
}

/// The warning of a measurement whose CPU and memory wait for an unreachable Prometheus.
pub fn metrics_pending(error: &str, give_up_at: jiff::Timestamp) -> Warning {
    Warning::new(WarningCode::MetricsPending, format!("Prometheus could not be reached ({error}); target CPU and memory will be read for the same window when it answers, until {} (the load figures are final)",
        second(give_up_at)
    ))
}

/// The warning of a measurement whose CPU and memory were given up: Prometheus stayed
/// unreachable until `give_up_at`, or something else made the window unreadable (`why`).
pub fn metrics_given_up(why: &str) -> Warning {
    Warning::new(
        WarningCode::MetricsUnavailable,
        format!("{why}; target CPU and memory are missing (the load figures are kept)"),
    )
}

/// A time to the second, e.g. `2026-12-01T09:31:02Z`.
pub fn second(t: jiff::Timestamp) -> String {
    jiff::Timestamp::from_second(t.as_second())
        .unwrap_or(t)
        .to_string()
}

/// `ServiceBound` for each backing service that averaged [`SERVICE_CPU`] or more of its CPU
/// limit over the window: the service, not the target, may have set the throughput.
pub fn service_bound(r: &CellResult) -> Vec<Warning> {
    r.usage
        .services
        .iter()
        .filter_map(|s| {
            let of = s.cpu_avg_of_limit.filter(|f| *f >= SERVICE_CPU)?;
            Some(Warning::new(WarningCode::ServiceBound, format!("backing service {} averaged {} of its CPU limit ({:.2} cores); it, not the target, may have set the throughput — give it more CPU (services[].resources.cpu) if the target is what you measure",
                s.name,
                format_rate(of),
                s.cpu_avg_cores.unwrap_or_default()
            )))
        })
        .collect()
}

/// `ServiceRestarted` for each backing service whose container restarted since the run made
/// it: a store seeded once keeps its data in the container unless its image uses a volume,
/// so this cell (and every later one) may have read an empty or partial data set.
pub fn service_restarted(restarts: &[super::ServiceRestart]) -> Vec<Warning> {
    restarts
        .iter()
        .filter(|s| s.terminations > 0)
        .map(|s| {
            let last = s
                .last_reason
                .as_deref()
                .map_or(String::new(), |r| format!(", last: {r}"));
            Warning::new(WarningCode::ServiceRestarted, format!("backing service {} restarted {} time{} since the run made it{last}; what its seed Job wrote is gone unless the service keeps its data in a volume, so this cell may have read an empty store — give it more memory or CPU (services[].resources) and run again",
                s.name,
                s.terminations,
                if s.terminations == 1 { "" } else { "s" }
            ))
        })
        .collect()
}

/// `StaggeredStart` when the load pods' windows began further apart than
/// [`MAX_START_SPREAD_MS`] or [`MAX_START_SPREAD`] of the window, whichever is larger.
pub fn staggered_start(r: &CellResult) -> Option<Warning> {
    let spread = r.load_start_spread_ms?;
    let window_ms = match (&r.window_start, &r.window_end) {
        (Some(a), Some(b)) => b.0.as_millisecond() - a.0.as_millisecond(),
        _ => return None,
    };
    let allowed = (MAX_START_SPREAD * window_ms as f64).max(MAX_START_SPREAD_MS as f64);
    (spread as f64 > allowed).then(|| {
        Warning::new(WarningCode::StaggeredStart, format!("the load pods began their measured windows {:.1}s apart in a {:.1}s window; the merged window spans them all, so its edges ran with fewer connections and throughput is understated — check that every load pod is scheduled and started within the operator's 5s lead (image present, CPU free)",
            spread as f64 / 1000.0,
            window_ms as f64 / 1000.0
        ))
    })
}

/// `WindowTooShort` when the window held fewer than [`MIN_CPU_SAMPLES`] CPU samples of some
/// target container, naming the shortest `load.duration` that holds them at the sample spacing
/// seen (or [`crate::promql::DEFAULT_SAMPLE_INTERVAL`] when none was seen).
pub fn window_too_short(r: &CellResult) -> Option<Warning> {
    let n = r.usage.cpu_samples.filter(|n| *n < MIN_CPU_SAMPLES)?;
    let interval = r
        .usage
        .sample_interval_seconds
        .unwrap_or(crate::promql::DEFAULT_SAMPLE_INTERVAL.as_secs_f64());
    let min = crate::samples::min_window_secs(interval, MIN_CPU_SAMPLES as usize);
    let window = match (&r.window_start, &r.window_end) {
        (Some(a), Some(b)) => {
            let ms = b.0.as_millisecond() - a.0.as_millisecond();
            format!("{:.1}s", ms as f64 / 1000.0)
        }
        _ => "?".into(),
    };
    let what = if r.usage.cpu_avg_cores.is_some() {
        "its CPU figures rest on sample intervals reaching outside the window"
    } else {
        "there are no CPU figures"
    };
    Some(Warning::new(WarningCode::WindowTooShort, format!("the measured window of {window} held {n} CPU sample{} per target container (this cluster samples container CPU every {interval:.1}s at most), {} needed; {what} — measure for at least {min}s (load.duration, or more load.requests)",
        if n == 1 { "" } else { "s" },
        MIN_CPU_SAMPLES
    )))
}

/// What shows the generator at its CPU limit, e.g. `load pods used 96% of their CPU limit`:
/// the load pods at [`GENERATOR_CPU`] of their limit, or the generator's own CPU at that many
/// cores per event-loop thread; `None` when neither.
fn generator_busy(r: &CellResult, threads: u64) -> Option<String> {
    if let Some(f) = r.usage.load_cpu_of_limit.filter(|f| *f >= GENERATOR_CPU) {
        return Some(format!(
            "load pods used {:.0}% of their CPU limit",
            f * 100.0
        ));
    }
    let threads = threads.max(1) as f64;
    let cores = r.generator_cpu_us_per_request? * r.throughput? / 1e6;
    (cores / threads >= GENERATOR_CPU).then(|| {
        format!(
            "the load generator used {cores:.2} cores over {threads} threads ({:.2} per thread)",
            cores / threads
        )
    })
}

fn concurrency_bound(r: &CellResult) -> Option<Warning> {
    let of_limit = r.usage.cpu_avg_of_limit?;
    let (throughput, mean_ms) = (r.throughput?, r.latency_ms.as_ref()?.mean);
    if r.coordinates.rate.is_some() || of_limit >= CONCURRENCY_CPU || r.requests? == 0 {
        return None;
    }
    let n = r.coordinates.connections;
    let in_flight = throughput * mean_ms / 1000.0;
    Some(Warning::new(WarningCode::ConcurrencyBound, format!("the target used {:.0}% of its CPU limit with {n} connections (closed model); by Little's law N = X·R ({:.0} req/s × {} = {in_flight:.1} in flight) the connections, not the server, set the rate — raise connections to find its capacity, unless the target cannot use its limit (e.g. a single-threaded server)",
        of_limit * 100.0,
        throughput,
        format_ms(mean_ms),
    )))
}

fn error_total(e: &ErrorCounts) -> i64 {
    // Saturating: the counts come from a pod's log, not from arithmetic of our own.
    [
        e.connect_timeout,
        e.timeout,
        e.read,
        e.status4xx,
        e.status5xx,
    ]
    .into_iter()
    .fold(e.connect_refused, i64::saturating_add)
}

fn error_breakdown(e: &ErrorCounts) -> String {
    let classes = [
        ("connect refused", e.connect_refused),
        ("connect timeout", e.connect_timeout),
        ("timeout", e.timeout),
        ("read", e.read),
        ("4xx", e.status4xx),
        ("5xx", e.status5xx),
    ];
    let parts: Vec<String> = classes
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    }
}

fn times(n: i32) -> String {
    if n == 1 {
        "once".into()
    } else {
        format!("{n} times")
    }
}

/// What a `NotSteady` warning of a cell's repeats begins with (`across its 3 repeats, ...`);
/// the one of a window does not, so [`super::apply_variance`] replaces only the former.
pub const ACROSS_REPEATS: &str = "across its ";

const ADVICE_STEADY: &str = "warm up longer, or until steady with load.warmupUntilSteady";

/// A figure the steady-state checks judge: its name, unit and how it is written.
#[derive(Clone, Copy)]
enum Figure {
    /// Closed model: requests per second.
    Throughput,
    /// Open model: the median latency (the schedule fixes the throughput).
    MedianLatency,
}

impl Figure {
    fn name(self) -> &'static str {
        match self {
            Figure::Throughput => "throughput",
            Figure::MedianLatency => "median latency",
        }
    }

    fn value(self, x: f64) -> String {
        match self {
            Figure::Throughput => format!("{x:.0} req/s"),
            Figure::MedianLatency => format_ms(x),
        }
    }

    fn moved(self, t: &Trend) -> &'static str {
        if t.slope >= 0.0 {
            "rose"
        } else {
            "fell"
        }
    }
}

/// A signed percentage: `+21%`, `-4.5%`.
fn signed_percent(f: f64) -> String {
    let p = f * 100.0;
    if p.abs() >= 10.0 {
        format!("{p:+.0}%")
    } else {
        format!("{p:+.1}%")
    }
}

/// `NotSteady` for one measurement: its window's per-second figure trended
/// ([`steady::window_trend`]: throughput in the closed model, the median latency of each
/// second in the open), or its warm-up until steady reached its cap; one warning saying
/// both when both hold.
pub fn not_steady(load: &LoadResult) -> Option<Warning> {
    let (figure, series) = match load.model {
        Model::Closed => (
            Figure::Throughput,
            crate::comparisons::per_second_throughput(load),
        ),
        Model::Open => (Figure::MedianLatency, per_second_p50_ms(load)),
    };
    let window = steady::window_trend(&series).map(|t| {
        let (lo, hi) = t.change_interval().unwrap_or((t.change(), t.change()));
        format!("{} {} within the measured window, from about {} to {} over its {} whole seconds ({} of its median by the Theil–Sen slope, 99 % interval {} to {}); the target was still warming up (JIT compilation, caches, pools) or drifting, so the window mixes two states — {ADVICE_STEADY}",
            figure.name(),
            figure.moved(&t),
            figure.value(t.intercept),
            figure.value(t.end()),
            t.n,
            signed_percent(t.change()),
            signed_percent(lo),
            signed_percent(hi),
        )
    });
    let cap = load
        .warmup_until_steady
        .as_ref()
        .filter(|w| !w.steady)
        .map(|w| {
            let still = match w.change {
                Some(c) => format!(
                    "with {} still changing ({} over its last {} s)",
                    w.figure.as_str(),
                    signed_percent(c),
                    w.trailing_seconds
                ),
                None => format!(
                    "before its {} s of {} could be judged",
                    w.trailing_seconds,
                    w.figure.as_str()
                ),
            };
            format!("the warm-up until steady reached its cap of {:.0}s {still}; the window may have begun before the target was steady — raise load.warmupUntilSteady.max",
                w.max_seconds
            )
        });
    let message = match (window, cap) {
        (Some(w), Some(c)) => format!("{w}; {c}"),
        (w, c) => w.or(c)?,
    };
    Some(Warning::new(WarningCode::NotSteady, message))
}

/// The median latency (ms) of each whole second inside the measured window.
fn per_second_p50_ms(load: &LoadResult) -> Vec<f64> {
    load.timeline
        .iter()
        .filter(|e| {
            let start = e.second.saturating_mul(1000);
            start >= load.window_start_ms && start.saturating_add(1000) <= load.window_end_ms
        })
        .map(|e| e.p50_us as f64 / 1000.0)
        .collect()
}

/// `NotSteady` for each cell whose measured repeats, in the order measured (their window
/// starts), trend ([`steady::repeats_trend`]: throughput, or the median latency of an
/// open-model cell), by cell index.
pub fn repeats_not_steady(results: &[CellResult]) -> BTreeMap<i32, Warning> {
    // Per cell: its figure and, per measured repeat, (window start, repeat, value).
    type Repeats = (Figure, Vec<(i64, i32, f64)>);
    let mut by_cell: BTreeMap<i32, Repeats> = BTreeMap::new();
    for r in results.iter().filter(|r| r.outcome == Outcome::Measured) {
        let figure = match r.coordinates.rate {
            None => Figure::Throughput,
            Some(_) => Figure::MedianLatency,
        };
        let value = match figure {
            Figure::Throughput => r.throughput,
            Figure::MedianLatency => r.latency_ms.as_ref().map(|l| l.p50),
        };
        let Some(value) = value else { continue };
        let at = r
            .window_start
            .as_ref()
            .map_or(i64::MAX, |t| t.0.as_millisecond());
        by_cell
            .entry(r.cell)
            .or_insert((figure, Vec::new()))
            .1
            .push((at, r.repeat, value));
    }
    by_cell
        .into_iter()
        .filter_map(|(cell, (figure, mut repeats))| {
            repeats.sort_by_key(|&(at, repeat, _)| (at, repeat));
            let values: Vec<f64> = repeats.iter().map(|r| r.2).collect();
            let t = steady::repeats_trend(&values)?;
            let shown: Vec<String> = values
                .iter()
                .map(|v| match figure {
                    Figure::Throughput => format!("{v:.0}"),
                    Figure::MedianLatency => format!("{v:.2}"),
                })
                .collect();
            let unit = match figure {
                Figure::Throughput => "req/s",
                Figure::MedianLatency => "ms",
            };
            Some((cell, Warning::new(WarningCode::NotSteady, format!("{ACROSS_REPEATS}{} repeats, in the order measured, {} {} {} {unit} ({} of their median by the Theil–Sen slope); repeats that trend are not exchangeable: their spread, and any comparison resting on them, measure the trend rather than the target — {ADVICE_STEADY}, or measure each repeat on fresh pods",
                values.len(),
                figure.name(),
                figure.moved(&t),
                shown.join(" → "),
                signed_percent(t.change()),
            ))))
        })
        .collect()
}

/// Coefficient of variation (sample standard deviation over mean); `None` for fewer than two
/// values or a zero mean.
pub fn coefficient_of_variation(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if mean == 0.0 {
        return None;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean)
}

/// The `HighVariance` warning for each cell whose measured repeats' throughput varies by more
/// than [`MAX_CV`], by cell index.
pub fn variance_warnings(results: &[CellResult]) -> BTreeMap<i32, Warning> {
    let mut by_cell: BTreeMap<i32, Vec<f64>> = BTreeMap::new();
    for r in results.iter().filter(|r| r.outcome == Outcome::Measured) {
        if let Some(t) = r.throughput {
            by_cell.entry(r.cell).or_default().push(t);
        }
    }
    by_cell
        .into_iter()
        .filter_map(|(cell, tps)| {
            let cv = coefficient_of_variation(&tps).filter(|cv| *cv > MAX_CV)?;
            Some((cell, variance_warning(cv, tps.len())))
        })
        .collect()
}

/// `HighVariance: throughput varied by CV 14% across 3 repeats`.
pub fn variance_warning(cv: f64, repeats: usize) -> Warning {
    Warning::new(WarningCode::HighVariance, format!("throughput varied by CV {:.0}% across {repeats} repeats; the result is noisy — add repeats, lengthen the duration or quiet the nodes",
        cv * 100.0
    ))
}

#[cfg(test)]
mod tests {
    use benchrun_api::CellResult;

    use super::*;
    use crate::results::tests::{measured, run, spec_yaml};

    fn codes(ws: &[Warning]) -> Vec<&'static str> {
        ws.iter().map(|w| w.code.as_str()).collect()
    }

    fn texts(ws: &[Warning]) -> Vec<String> {
        ws.iter().map(ToString::to_string).collect()
    }

    fn check(r: &CellResult) -> Vec<Warning> {
        warnings(&run(), r, 2, true)
    }

    #[test]
    fn load_pods_near_their_cpu_limit_are_generator_bound() {
        let mut r = measured();
        r.usage.load_cpu_of_limit = Some(0.962);
        assert_eq!(
            texts(&check(&r)),
            vec!["GeneratorBound: load pods used 96% of their CPU limit; the generator, not the target, may have set the rate — add load pods or CPU"]
        );
    }

    #[test]
    fn a_generator_busy_on_every_thread_is_generator_bound_without_prometheus() {
        let mut r = measured();
        r.usage.load_cpu_of_limit = None;
        r.generator_cpu_us_per_request = Some(950.0);
        r.throughput = Some(2000.0);
        assert_eq!(
            texts(&check(&r)),
            vec!["GeneratorBound: the load generator used 1.90 cores over 2 threads (0.95 per thread); the generator, not the target, may have set the rate — add load pods or CPU"]
        );
        r.generator_cpu_us_per_request = Some(800.0);
        assert!(check(&r).is_empty());
    }

    #[test]
    fn a_node_shared_by_target_and_load_is_named() {
        let mut r = measured();
        r.load_nodes = vec!["node-b".into(), "node-a".into()];
        let w = check(&r);
        assert_eq!(codes(&w), vec!["SameNode"]);
        assert!(w[0].message.contains("shared node node-a;"), "{}", w[0]);
    }

    #[test]
    fn error_rates_above_one_percent_are_flagged_with_their_classes() {
        let mut r = measured();
        let errors = r.errors.as_mut().unwrap();
        errors.timeout = 100;
        errors.status5xx = 20;
        r.requests = Some(6000);
        r.error_rate = Some(0.02);
        assert_eq!(
            texts(&check(&r)),
            vec!["HighErrorRate: 2.0% of requests failed (120 of 6000: timeout 100, 5xx 20); throughput and latency include the failures"]
        );
        r.error_rate = Some(0.01);
        assert!(check(&r).is_empty());
    }

    #[test]
    fn restarts_and_oom_kills_are_flagged() {
        let mut r = measured();
        r.restarts = 2;
        r.oom_kills = 1;
        let w = check(&r);
        assert_eq!(codes(&w), vec!["Restarts", "OOMKilled"]);
        assert!(w[0].message.contains("restarted 2 times"), "{}", w[0]);
        assert!(
            w[1].message
                .contains("OOM-killed once at the memory limit 1Gi"),
            "{}",
            w[1]
        );
    }

    #[test]
    fn a_backing_service_at_its_cpu_limit_is_named() {
        let mut r = measured();
        r.usage.services = vec![
            benchrun_api::ServiceUsage {
                name: "store".into(),
                cpu_avg_cores: Some(0.97),
                cpu_avg_of_limit: Some(0.97),
                ..Default::default()
            },
            benchrun_api::ServiceUsage {
                name: "cache".into(),
                cpu_avg_of_limit: Some(0.89),
                ..Default::default()
            },
        ];
        let w = check(&r);
        assert_eq!(codes(&w), vec!["ServiceBound"]);
        assert!(
            w[0].message
                .contains("backing service store averaged 97.0% of its CPU limit (0.97 cores)"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn a_run_without_warmup_is_flagged() {
        let mut spec = spec_yaml("");
        spec.load.warmup = None;
        let run = benchrun_api::validate(&spec).unwrap();
        assert_eq!(
            codes(&warnings(&run, &measured(), 2, true)),
            vec!["NoWarmup"]
        );
    }

    #[test]
    fn a_closed_model_target_far_below_its_limit_is_concurrency_bound() {
        let mut r = measured();
        r.usage.cpu_avg_of_limit = Some(0.32);
        r.coordinates.connections = 10;
        r.throughput = Some(5000.0);
        r.latency_ms.as_mut().unwrap().mean = 2.0;
        assert_eq!(
            texts(&check(&r)),
            vec!["ConcurrencyBound: the target used 32% of its CPU limit with 10 connections (closed model); by Little's law N = X·R (5000 req/s × 2.0ms = 10.0 in flight) the connections, not the server, set the rate — raise connections to find its capacity, unless the target cannot use its limit (e.g. a single-threaded server)"]
        );
        r.coordinates.rate = Some(5000);
        assert!(check(&r).is_empty(), "the open model sets its own rate");
    }

    #[test]
    fn missing_samples_are_metrics_unavailable() {
        let mut r = measured();
        r.usage.cpu_avg_cores = None;
        r.usage.cpu_avg_of_limit = None;
        let w = check(&r);
        assert_eq!(codes(&w), vec!["MetricsUnavailable"]);
        assert!(
            w[0].message.contains("no CPU or memory samples"),
            "{}",
            w[0]
        );
    }

    fn short(samples: i32, cpu: Option<f64>) -> CellResult {
        let mut r = measured();
        r.usage.cpu_samples = Some(samples);
        r.usage.sample_interval_seconds = Some(9.6);
        r.usage.cpu_avg_cores = cpu;
        r.window_start = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-11-30T14:00:00Z".parse().unwrap(),
        ));
        r.window_end = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-11-30T14:00:05.020Z".parse().unwrap(),
        ));
        r
    }

    #[test]
    fn a_window_without_cpu_samples_is_too_short_not_metrics_unavailable() {
        let w = check(&short(0, None));
        assert_eq!(
            texts(&w),
            vec!["WindowTooShort: the measured window of 5.0s held 0 CPU samples per target container (this cluster samples container CPU every 9.6s at most), 2 needed; there are no CPU figures — measure for at least 20s (load.duration, or more load.requests)"]
        );
    }

    #[test]
    fn a_window_with_one_cpu_sample_keeps_its_figures_and_says_what_they_rest_on() {
        let w = check(&short(1, Some(0.4)));
        assert_eq!(codes(&w), vec!["WindowTooShort"]);
        assert!(w[0].message.contains("held 1 CPU sample per"), "{}", w[0]);
        assert!(
            w[0].message.contains("reaching outside the window"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn two_cpu_samples_are_enough() {
        assert!(check(&short(2, Some(0.4))).is_empty());
        assert!(
            window_too_short(&measured()).is_none(),
            "no count: nothing to say"
        );
    }

    #[test]
    fn coefficient_of_variation_uses_the_sample_deviation() {
        let cv = coefficient_of_variation(&[1000.0, 800.0, 1200.0]).unwrap();
        assert!((cv - 0.2).abs() < 1e-12, "{cv}");
        assert_eq!(coefficient_of_variation(&[1000.0]), None);
        assert_eq!(coefficient_of_variation(&[0.0, 0.0]), None);
    }

    /// [`crate::results::tests::load`] (ten whole seconds) with these per-second request
    /// counts and median latencies (ms).
    fn seconds(requests: &[u64], p50_ms: &[f64]) -> benchrun_wire::LoadResult {
        let mut load = crate::results::tests::load();
        let first = load.window_start_ms / 1000;
        load.timeline = requests
            .iter()
            .zip(p50_ms)
            .enumerate()
            .map(|(i, (n, ms))| {
                let mut h = benchrun_wire::hist::new_timeline();
                h.record((ms * 1000.0) as u64).unwrap();
                benchrun_wire::result::timeline_entry(first + i as u64, *n, 0, &h)
            })
            .collect();
        load
    }

    const FLAT: [u64; 10] = [1003, 996, 1010, 990, 1001, 1007, 994, 1000, 1005, 998];

    #[test]
    fn a_window_whose_throughput_rises_is_not_steady_and_a_flat_one_is() {
        let rising: Vec<u64> = (0..10).map(|i| 800 + 30 * i).collect();
        let w = not_steady(&seconds(&rising, &[2.0; 10])).expect("rising");
        assert_eq!(w.code, WarningCode::NotSteady);
        assert!(
            w.message.starts_with("throughput rose within the measured window, from about 800 req/s to 1070 req/s over its 10 whole seconds (+29% of its median by the Theil–Sen slope, 99 % interval +29% to +29%)"),
            "{w}"
        );
        assert!(
            w.message
                .ends_with("warm up longer, or until steady with load.warmupUntilSteady"),
            "{w}"
        );
        assert_eq!(not_steady(&seconds(&FLAT, &[2.0; 10])), None);
        // Seconds outside the window do not count: the same rise, all but 4 s outside it.
        let mut short = seconds(&rising, &[2.0; 10]);
        short.window_start_ms += 6_000;
        assert_eq!(not_steady(&short), None);
    }

    #[test]
    fn an_open_model_window_is_judged_by_its_median_latency() {
        let p50: Vec<f64> = (0..10).map(|i| 12.0 - 0.5 * i as f64).collect();
        let mut load = seconds(&[500; 10], &p50);
        load.model = benchrun_wire::Model::Open;
        let w = not_steady(&load).expect("falling latency");
        assert!(
            w.message
                .starts_with("median latency fell within the measured window, from about 12"),
            "{w}"
        );
        load.model = benchrun_wire::Model::Closed;
        assert_eq!(not_steady(&load), None, "the throughput was flat");
    }

    #[test]
    fn a_warm_up_that_reached_its_cap_is_not_steady_and_says_so_with_the_window() {
        let cap = |change| benchrun_wire::SteadyWarmup {
            seconds: 60.4,
            steady: false,
            max_seconds: 60.0,
            figure: benchrun_wire::SteadyFigure::Throughput,
            trailing_seconds: 10,
            change,
        };
        let mut load = seconds(&FLAT, &[2.0; 10]);
        load.warmup_until_steady = Some(cap(Some(0.079)));
        assert_eq!(
            not_steady(&load).unwrap().to_string(),
            "NotSteady: the warm-up until steady reached its cap of 60s with throughput still changing (+7.9% over its last 10 s); the window may have begun before the target was steady — raise load.warmupUntilSteady.max"
        );
        load.warmup_until_steady = Some(cap(None));
        assert!(not_steady(&load)
            .unwrap()
            .message
            .contains("before its 10 s of throughput could be judged"));
        // Both: one warning.
        let rising: Vec<u64> = (0..10).map(|i| 800 + 30 * i).collect();
        let mut both = seconds(&rising, &[2.0; 10]);
        both.warmup_until_steady = Some(cap(Some(0.079)));
        let w = not_steady(&both).unwrap();
        assert!(w.message.starts_with("throughput rose within"), "{w}");
        assert!(
            w.message
                .contains("; the warm-up until steady reached its cap"),
            "{w}"
        );
        // A warm-up that found the target steady says nothing.
        let mut fine = seconds(&FLAT, &[2.0; 10]);
        fine.warmup_until_steady = Some(benchrun_wire::SteadyWarmup {
            steady: true,
            ..cap(Some(0.01))
        });
        assert_eq!(not_steady(&fine), None);
    }

    fn repeat(cell: i32, repeat: i32, second: i64, throughput: f64) -> CellResult {
        let mut r = measured();
        r.cell = cell;
        r.repeat = repeat;
        r.throughput = Some(throughput);
        r.window_start = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            jiff::Timestamp::from_second(1_764_511_200 + second).unwrap(),
        ));
        r
    }

    #[test]
    fn repeats_that_trend_in_the_order_measured_are_not_steady() {
        // Issue 52's Spring MVC cell, its repeats stored out of order (interleaved rounds).
        let results = vec![
            repeat(0, 2, 60, 936.0),
            repeat(0, 0, 0, 251.0),
            repeat(0, 1, 30, 770.0),
            repeat(1, 0, 10, 1000.0),
            repeat(1, 1, 40, 1010.0),
            repeat(1, 2, 70, 990.0),
        ];
        let found = repeats_not_steady(&results);
        assert_eq!(found.keys().copied().collect::<Vec<_>>(), [0]);
        assert_eq!(
            found[&0].to_string(),
            "NotSteady: across its 3 repeats, in the order measured, throughput rose 251 → 770 → 936 req/s (+89% of their median by the Theil–Sen slope); repeats that trend are not exchangeable: their spread, and any comparison resting on them, measure the trend rather than the target — warm up longer, or until steady with load.warmupUntilSteady, or measure each repeat on fresh pods"
        );
        // In repeat order (not time order) they would not have been one way.
        let shuffled = vec![
            repeat(0, 0, 0, 251.0),
            repeat(0, 1, 60, 770.0),
            repeat(0, 2, 30, 936.0),
        ];
        assert!(repeats_not_steady(&shuffled).is_empty());
    }

    #[test]
    fn load_pods_that_began_far_apart_are_staggered() {
        let mut r = measured();
        let window_ms = r.window_end.as_ref().unwrap().0.as_millisecond()
            - r.window_start.as_ref().unwrap().0.as_millisecond();
        let limit = ((window_ms as f64 * MAX_START_SPREAD) as i64).max(MAX_START_SPREAD_MS);
        r.load_start_spread_ms = Some(limit);
        assert!(staggered_start(&r).is_none(), "at the limit");
        r.load_start_spread_ms = Some(limit + 1);
        let w = staggered_start(&r).expect("past the limit");
        assert!(
            w.to_string()
                .starts_with("StaggeredStart: the load pods began their measured windows"),
            "{w}"
        );
        assert_eq!(codes(&check(&r)), ["StaggeredStart"]);
        r.load_start_spread_ms = None;
        assert!(staggered_start(&r).is_none(), "one load pod");
    }
}
