//! The load result and its JSON schema, `benchrun.dev/load-result/v1`; and [`merge`].
//!
//! Pure: no I/O. The operator reads these types from the JSON that each load pod prints
//! (`benchrun-load --output json`) and merges them with [`merge`]. Field names are stable
//! within `v1`; new optional fields may be added.
//!
//! ```text
//! {
//!   "schema": "benchrun.dev/load-result/v1",
//!   "url": "http://target:8080/hello", "method": "GET",
//!   "model": "closed" | "open", "rate": null | <req/s>,      // open model only
//!   "connections": 50, "threads": 2, "keepalive": true,
//!   "window_start_ms": <unix epoch ms>, "window_end_ms": <unix epoch ms>,
//!   "duration": <seconds, f64, = (end - start) of the measured window: its sends>,
//!   "requests": <requests sent in the window, each counted when it ended (response or
//!                error), in the drain after the window too>,
//!   "successes": <2xx/3xx with a complete body>,
//!   "errors": { "total", "connect_refused", "connect_timeout", "connect_other",
//!               "timeout", "read", "body_mismatch", "protocol",
//!               "tls_handshake", "tls_certificate", "alpn_mismatch",  // absent when 0
//!               "status_4xx", "status_5xx", "status_codes": { "500": 3, ... } },
//!   "bytes": <bytes received, headers + body>,
//!   "throughput": <window_counts.requests (else requests) / duration, req/s>,
//!   "window_counts": { "requests": <f64: the requests the throughput counts>,
//!                      "in_flight_at_end", "drain_ms", "late",
//!                      "response_lag_ms": null | <f64> },          // absent: older generators
//!   "warmup_requests": <requests sent during warm-up, not in any other figure>,
//!   "warmup_failed": <of those, requests that ended without a complete response>,
//!   "warmup_until_steady": null | { "seconds", "steady", "max_seconds", "figure",
//!                                   "trailing_seconds", "change" },  // --warmup-until-steady
//!   "latency": { "count", "mean_us", "stdev_us", "min_us", "p50_us", "p75_us",
//!                "p90_us", "p99_us", "p999_us", "p9999_us", "max_us" },
//!   "latency_uncorrected": null | <same shape>,              // open model: service time
//!   "connect": <same shape: TCP connect times>,
//!   "schedule_lag": null | { "count", "mean_us", "max_us" }, // open model
//!   "cpu": { "user_us", "system_us", "total_us", "us_per_request" },
//!   "timeline": [ { "second": <unix epoch s>, "requests", "errors",
//!                   "p50_us", "p99_us", "histogram": <base64> }, ... ],
//!   "histograms": { "latency": <base64>, "latency_uncorrected": null | <base64>,
//!                   "connect": <base64> },
//!   "scenarios": [ { "name", "method", "path", "weight", "requests", "successes",   // only
//!                    "errors", "latency", "histogram": <base64> }, ... ],      // when > 1
//!   "nodes": [ "node-a", ... ],        // absent when unknown; merged: every input's nodes
//!   "cpu_models": [ "AMD EPYC ...", ... ], // /proc/cpuinfo model names; merged: every input's
//!   "tcp": { "active_opens", "attempt_fails", "estab_resets", "out_rsts", "retrans_segs",
//!            "in_errs", "syn_retrans", "timeouts", "listen_overflows", "listen_drops",
//!            "abort_on_data", "abort_on_close", "abort_on_timeout",   // window increases
//!            "ports_in_use", "time_wait", "port_range": [first, last] }
//!                                      // absent without /proc; merged: counters summed,
//!                                      // ports the largest, range the narrowest
//!   "protocol": { "protocol": "http/1.1" | "h2", "tls": bool,   // absent: cleartext HTTP/1.1
//!                 "tls_stats": { "versions", "alpn", "handshakes", "resumed",
//!                                "handshake_total_us", "handshake_mean_us", "handshake_max_us" },
//!                 "h2": { "max_concurrent_streams", "rst_stream_received",
//!                         "goaway_received", "stream_waits" } }
//! }
//! ```
//!
//! Histograms are HDR V2 + deflate, base64-encoded, in microseconds (1 µs..60 s; 3
//! significant digits overall, 2 per timeline second), so merging is exact: the merged
//! percentiles are those of one histogram holding every sample of every input.
//! `latency` is measured from the moment a request was due: in the closed model when the
//! connection was free to send it, in the open model its *intended* send time
//! (coordinated-omission corrected). It includes TCP connect when a connection had to be
//! (re)opened for the request and covers every request that got a complete response,
//! whatever its status. A timeline entry counts the requests that completed in that second.
//!
//! **The window and its drain.** The measured window is the interval of sends: from the
//! common start to the instant no request may be sent any more (`--duration` after the start,
//! or the last send with a request count); in the open model, the interval of the due times.
//! Every request sent in it is measured (latency, errors, the timeline, `requests`) however
//! late it ends: the generator waits for the requests still in flight at the window's end (the
//! *drain*, up to the request timeout) before it reports. The drain's time is not in
//! `duration`, so `throughput` counts ([`WindowCounts::requests`]):
//! - closed model: a request that ended by the window's end counts 1; one still in flight
//!   then counts the share of its time on the connection that fell inside the window. Each
//!   connection is busy from the window's start, so this is its rate of completions whatever
//!   the latency distribution, and a straggler in the drain costs its own share only.
//! - open model: a request that ended by the window's end plus the *response lag* counts 1,
//!   one that ended later (a backlog the target had not served by then, a time-out) 0. The
//!   response lag is the mean time from send to response of the requests sent in the window's
//!   first second: the delay of the window's responses behind its sends, which the window
//!   began without (nothing was in flight at its start). A target that keeps up reads the
//!   offered rate whatever its latency; one that queues reads the rate it served.
use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hist;
use crate::tcp::TcpStats;

/// The schema identifier written into every result.
pub const SCHEMA: &str = "benchrun.dev/load-result/v1";

/// How requests are issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// Each connection sends its next request when the previous response has arrived.
    Closed,
    /// Requests are sent on a fixed schedule (`rate`), whatever the responses do.
    Open,
}

/// The result of one load run (or of several, merged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadResult {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Target URL.
    pub url: String,
    /// HTTP method.
    pub method: String,
    /// Closed or open model.
    pub model: Model,
    /// Target rate in requests per second (open model), summed over merged inputs.
    pub rate: Option<f64>,
    /// Number of connections (summed over merged inputs).
    pub connections: u64,
    /// Number of event-loop threads (summed over merged inputs).
    pub threads: u64,
    /// Whether connections were kept alive between requests.
    pub keepalive: bool,
    /// Start of the measured window, unix epoch milliseconds.
    pub window_start_ms: u64,
    /// End of the measured window, unix epoch milliseconds.
    pub window_end_ms: u64,
    /// Length of the measured window in seconds.
    pub duration: f64,
    /// Completed requests, errored ones included (each got a response or an error).
    pub requests: u64,
    /// Requests answered with a 2xx/3xx status and a complete body.
    pub successes: u64,
    /// Failed requests by class.
    pub errors: ErrorCounts,
    /// Bytes received (status line, headers and body).
    pub bytes: u64,
    /// The requests of the window per second of it: [`WindowCounts::requests`] over
    /// `duration` (`requests / duration` in results of generators without `window_counts`).
    pub throughput: f64,
    /// How the window's requests were counted into `throughput`, and its drain. Absent in
    /// results of generators before it existed (their window included the drain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_counts: Option<WindowCounts>,
    /// Requests sent during warm-up; these appear in no other figure.
    pub warmup_requests: u64,
    /// Of the warm-up requests, those that ended without a complete response (refused, reset,
    /// timed out): they may never have reached the target. Absent (0) in results of older
    /// generators.
    #[serde(default)]
    pub warmup_failed: u64,
    /// A warm-up that ran until the target was steady (`--warmup-until-steady`): how long it
    /// took and whether it got there. Absent for a warm-up by duration or count, and in results
    /// of generators before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_until_steady: Option<SteadyWarmup>,
    /// Response latency (open model: from the intended send time).
    pub latency: LatencyStats,
    /// Open model only: latency from the actual send time (service time).
    pub latency_uncorrected: Option<LatencyStats>,
    /// TCP connect time of every connection opened in the window.
    pub connect: LatencyStats,
    /// Open model only: how late requests were sent relative to their schedule.
    pub schedule_lag: Option<ScheduleLag>,
    /// CPU time the generator itself used during the window.
    pub cpu: CpuStats,
    /// Per-second figures, ordered by `second`.
    pub timeline: Vec<TimelineEntry>,
    /// The serialized histograms behind the statistics above.
    pub histograms: Histograms,
    /// Per-scenario figures of a run that mixed several scenarios (absent otherwise); the
    /// top-level figures cover all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioResult>,
    /// Nodes the load ran on (`--node`, in a pod its `spec.nodeName`), sorted and without
    /// duplicates; merged results hold the nodes of every input. Absent when unknown, as in
    /// results written before this field existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// CPU models of the machines the load ran on (`model name` of `/proc/cpuinfo`), sorted and
    /// without duplicates; merged results hold every input's. Absent when unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_models: Vec<String>,
    /// The agreed start (`--start-at`), unix epoch milliseconds; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_ms: Option<u64>,
    /// How late the generator began after `start_at_ms` (merged: the latest of the inputs),
    /// in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_late_ms: Option<u64>,
    /// Merged results: the latest minus the earliest start of the inputs' measured windows,
    /// in milliseconds. The merged window spans from the first start to the last end, so a
    /// spread leaves part of it with fewer generators running. Absent (0) for one generator.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub window_start_spread_ms: u64,
    /// Seed of the values drawn for request templates (`--seed`, or the one picked), when a
    /// scenario declared values; generators that share a seed merge to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The I/O back end that ran the load: `io-uring` or `epoll` (merged: the distinct
    /// ones, sorted, joined by commas). Absent in results of generators before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Whether latencies end at the kernel's receive timestamps of the responses (`true`)
    /// or when the generator read them (`false`: the kernel did not timestamp receives).
    /// With timestamps a thread may read several responses per wake-up without that wait
    /// being in their latencies. Merged: `false` if any part was `false`. Absent in results
    /// of generators before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_timestamps: Option<bool>,
    /// What the kernel's TCP stack counted in the generator's network namespace over the
    /// measured window (see [`crate::tcp`]). Absent where `/proc` could not be read, and in
    /// results of generators before it existed. Merged: counters summed over the inputs
    /// that have it, ports the largest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpStats>,
    /// TLS and HTTP/2 facts of a load that used them (see [`crate::proto`]). Absent for
    /// cleartext HTTP/1.1 and in results of generators before it existed. Merged: counts
    /// summed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<crate::proto::ProtocolStats>,
}

/// What a warm-up until steady judged: the per-second figure the model leaves free.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SteadyFigure {
    /// Closed model: requests completed per second.
    Throughput,
    /// Open model (the schedule fixes the throughput): the mean latency of each second's
    /// responses, from their due times.
    Latency,
}

impl SteadyFigure {
    /// `throughput` or `latency`.
    pub fn as_str(self) -> &'static str {
        match self {
            SteadyFigure::Throughput => "throughput",
            SteadyFigure::Latency => "latency",
        }
    }
}

/// How a warm-up until steady went (see [`crate::steady`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyWarmup {
    /// Seconds the warm-up ran after any ramp-up, to the start of the measured window (the
    /// requests in flight when it ended included). Merged: the longest.
    pub seconds: f64,
    /// `true` when the figure stopped trending before the cap; `false` when the cap ended the
    /// warm-up. Merged: `true` only if every input's was.
    pub steady: bool,
    /// The cap (`--warmup-until-steady`), seconds.
    pub max_seconds: f64,
    /// The figure judged.
    pub figure: SteadyFigure,
    /// The trailing seconds the rule looked at ([`crate::steady::steady_seconds`]).
    pub trailing_seconds: u64,
    /// The change of the figure over those trailing seconds when the warm-up ended, as a
    /// fraction of their median (`0.08`: rose 8 %); absent when fewer seconds had passed.
    /// Merged: the largest either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<f64>,
}

impl SteadyWarmup {
    /// Both inputs' warm-ups as one: the longest, steady only if both were, the largest
    /// change.
    fn merge(a: Option<Self>, b: Option<&Self>) -> Option<Self> {
        let (Some(mut a), Some(b)) = (a.clone(), b) else {
            return a.or_else(|| b.cloned());
        };
        a.seconds = a.seconds.max(b.seconds);
        a.steady &= b.steady;
        a.max_seconds = a.max_seconds.max(b.max_seconds);
        a.trailing_seconds = a.trailing_seconds.max(b.trailing_seconds);
        a.change = match (a.change, b.change) {
            (Some(x), Some(y)) => Some(if y.abs() > x.abs() { y } else { x }),
            (x, y) => x.or(y),
        };
        Some(a)
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// How the requests of the measured window were counted (see the module documentation, "The
/// window and its drain"), and its drain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowCounts {
    /// The requests `throughput` counts over `duration`: the requests that ended in the
    /// window, and of those still in flight at its end, the closed model's shares of their
    /// time inside it, the open model's that ended within the response lag after it. Merged:
    /// summed.
    pub requests: f64,
    /// Requests still in flight when the window ended (they are in `requests` and every
    /// figure but `throughput`'s time). Merged: summed.
    pub in_flight_at_end: u64,
    /// From the window's end to the end of its last request, milliseconds. Merged: to the
    /// last end of any input.
    pub drain_ms: u64,
    /// Open model: requests that ended more than the response lag after the window's end
    /// (not in [`Self::requests`]); 0 in the closed model. Merged: summed.
    #[serde(default)]
    pub late: u64,
    /// Mean time from send to response of the requests sent in the window's first second,
    /// milliseconds; `None` when none of them got a response. Merged: the mean weighted by
    /// each input's `requests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_lag_ms: Option<f64>,
}

impl LoadResult {
    /// When the window's last request ended, unix epoch milliseconds: the window's end plus
    /// its drain (the window's end in results without `window_counts`, whose window held it).
    pub fn last_end_ms(&self) -> u64 {
        self.window_end_ms + self.window_counts.as_ref().map_or(0, |w| w.drain_ms)
    }

    /// The requests `throughput` counts: [`WindowCounts::requests`], or `requests` in results
    /// without `window_counts`.
    pub fn counted_requests(&self) -> f64 {
        self.window_counts
            .as_ref()
            .map_or(self.requests as f64, |w| w.requests)
    }

    /// The response lag in milliseconds (see [`WindowCounts::response_lag_ms`]), 0 when not
    /// known.
    pub fn response_lag_ms(&self) -> f64 {
        self.window_counts
            .as_ref()
            .and_then(|w| w.response_lag_ms)
            .unwrap_or(0.0)
    }
}

/// What one scenario of a multi-scenario run got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// Scenario name, unique in the run.
    pub name: String,
    /// HTTP method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Relative share of the requests it was given.
    pub weight: u32,
    /// Completed requests of this scenario, errored ones included.
    pub requests: u64,
    /// Requests answered with a 2xx/3xx status and a complete body.
    pub successes: u64,
    /// Failed requests by class.
    pub errors: ErrorCounts,
    /// Latency of this scenario's responses (same definition as the top-level one).
    pub latency: LatencyStats,
    /// base64 HDR V2 deflate histogram behind `latency`.
    pub histogram: String,
}

/// Failed requests by class. A request lands in exactly one class.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// Sum of all classes below (not of `status_codes`, which details the status classes).
    pub total: u64,
    /// The connection was refused (nothing listening).
    pub connect_refused: u64,
    /// The connection was not established within the timeout.
    pub connect_timeout: u64,
    /// Any other connect failure (e.g. no local port available).
    pub connect_other: u64,
    /// No complete response within the timeout.
    pub timeout: u64,
    /// Reset, read error, or the connection closed before a complete response head.
    pub read: u64,
    /// The connection closed before the body announced by Content-Length or chunked
    /// encoding was complete.
    pub body_mismatch: u64,
    /// The response was not valid HTTP/1.x (or HTTP/2: a frame or header block the
    /// generator could not parse, a stream the server refused).
    pub protocol: u64,
    /// The TLS handshake failed for another reason than the two below (alert, closed
    /// connection, no common version or cipher suite).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tls_handshake: u64,
    /// The server's certificate was not accepted (unknown issuer, wrong name, expired).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tls_certificate: u64,
    /// The server did not agree to the application protocol asked for by ALPN (e.g. `h2`
    /// asked, the server speaks only `http/1.1`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub alpn_mismatch: u64,
    /// Complete responses with a 4xx status.
    pub status_4xx: u64,
    /// Complete responses with a 5xx status.
    pub status_5xx: u64,
    /// Count per status code of complete responses that were not 2xx/3xx.
    pub status_codes: BTreeMap<u16, u64>,
}

/// Summary statistics of a histogram, in microseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Number of samples.
    pub count: u64,
    /// Mean.
    pub mean_us: f64,
    /// Standard deviation.
    pub stdev_us: f64,
    /// Smallest sample.
    pub min_us: u64,
    /// Median.
    pub p50_us: u64,
    /// 75th percentile.
    pub p75_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
    /// 99.99th percentile.
    pub p9999_us: u64,
    /// Largest sample.
    pub max_us: u64,
}

impl LatencyStats {
    /// Computes the statistics of a histogram (all zero when it is empty).
    pub fn from_histogram(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            count: h.len(),
            mean_us: h.mean(),
            stdev_us: h.stdev(),
            min_us: h.min(),
            p50_us: h.value_at_quantile(0.50),
            p75_us: h.value_at_quantile(0.75),
            p90_us: h.value_at_quantile(0.90),
            p99_us: h.value_at_quantile(0.99),
            p999_us: h.value_at_quantile(0.999),
            p9999_us: h.value_at_quantile(0.9999),
            max_us: h.max(),
        }
    }
}

/// How late the open-model generator sent requests relative to their intended time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleLag {
    /// Number of requests sent.
    pub count: u64,
    /// Mean lateness in microseconds.
    pub mean_us: f64,
    /// Largest lateness in microseconds.
    pub max_us: u64,
}

/// CPU time of the generator process (getrusage RUSAGE_SELF) over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuStats {
    /// User-space CPU time, microseconds.
    pub user_us: u64,
    /// Kernel CPU time, microseconds.
    pub system_us: u64,
    /// `user_us + system_us`.
    pub total_us: u64,
    /// `total_us / requests` (0 when there were no requests).
    pub us_per_request: f64,
}

impl CpuStats {
    /// Builds the stats from user and system time and the request count.
    pub fn new(user_us: u64, system_us: u64, requests: u64) -> Self {
        let total_us = user_us + system_us;
        let us_per_request = if requests == 0 {
            0.0
        } else {
            total_us as f64 / requests as f64
        };
        Self {
            user_us,
            system_us,
            total_us,
            us_per_request,
        }
    }
}

/// One second of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    /// Unix epoch second in which these requests completed.
    pub second: u64,
    /// Requests completed in this second, errored ones included.
    pub requests: u64,
    /// Errors among them.
    pub errors: u64,
    /// Median latency of the responses of this second (2 significant digits).
    pub p50_us: u64,
    /// 99th percentile latency of the responses of this second (2 significant digits).
    pub p99_us: u64,
    /// base64 HDR V2 deflate histogram of this second's latencies.
    pub histogram: String,
}

/// Serialized histograms (base64 of HDR V2 + deflate, microseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histograms {
    /// Overall latency (open model: corrected).
    pub latency: String,
    /// Open model only: uncorrected service time.
    pub latency_uncorrected: Option<String>,
    /// TCP connect times.
    pub connect: String,
}

impl ErrorCounts {
    /// Adds another set of counts into this one.
    pub fn add(&mut self, o: &ErrorCounts) {
        self.total += o.total;
        self.connect_refused += o.connect_refused;
        self.connect_timeout += o.connect_timeout;
        self.connect_other += o.connect_other;
        self.timeout += o.timeout;
        self.read += o.read;
        self.body_mismatch += o.body_mismatch;
        self.protocol += o.protocol;
        self.tls_handshake += o.tls_handshake;
        self.tls_certificate += o.tls_certificate;
        self.alpn_mismatch += o.alpn_mismatch;
        self.status_4xx += o.status_4xx;
        self.status_5xx += o.status_5xx;
        for (code, n) in &o.status_codes {
            *self.status_codes.entry(*code).or_default() += n;
        }
    }
}

/// Merges the results of several load runs (e.g. one per load pod) into one.
///
/// Counts, bytes, errors and CPU are summed; histograms are merged exactly and the
/// percentiles recomputed from them; the window is [earliest start, latest end] and the
/// throughput is the total request count over that window; timeline entries are aligned by
/// absolute second and their histograms merged; `nodes` is the sorted union of the inputs'
/// nodes. Fails on an empty input, a schema other than
/// [`SCHEMA`], or an undecodable histogram.
pub fn merge(results: &[LoadResult]) -> Result<LoadResult> {
    let first = results
        .first()
        .ok_or_else(|| Error::Merge("no results given".into()))?;
    if let Some(bad) = results.iter().find(|r| r.schema != SCHEMA) {
        return Err(Error::Merge(format!("unsupported schema {:?}", bad.schema)));
    }
    let mut out = first.clone();
    let mut latency = hist::decode(&first.histograms.latency)?;
    let mut connect = hist::decode(&first.histograms.connect)?;
    let mut uncorrected = first
        .histograms
        .latency_uncorrected
        .as_deref()
        .map(hist::decode)
        .transpose()?;
    let mut lag_sum = lag_total(first);
    let (mut user, mut system) = (first.cpu.user_us, first.cpu.system_us);
    let mut counted = first.counted_requests();
    for r in &results[1..] {
        out.rate = match (out.rate, r.rate) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        if r.model != out.model {
            return Err(Error::Merge(
                "cannot merge closed- and open-model results".into(),
            ));
        }
        out.connections += r.connections;
        out.threads += r.threads;
        out.keepalive &= r.keepalive;
        out.window_start_ms = out.window_start_ms.min(r.window_start_ms);
        out.start_at_ms = out.start_at_ms.or(r.start_at_ms);
        out.seed = out.seed.or(r.seed);
        out.backend = merge_backends(out.backend.take(), r.backend.as_deref());
        out.rx_timestamps = merge_timestamps(out.rx_timestamps, r.rx_timestamps);
        out.tcp = match (out.tcp.take(), &r.tcp) {
            (Some(mut a), Some(b)) => {
                a.add(b);
                Some(a)
            }
            (a, b) => a.or_else(|| b.clone()),
        };
        out.protocol = crate::proto::ProtocolStats::merge(out.protocol.take(), r.protocol.as_ref());
        out.start_late_ms = out.start_late_ms.max(r.start_late_ms);
        out.window_end_ms = out.window_end_ms.max(r.window_end_ms);
        out.requests += r.requests;
        counted += r.counted_requests();
        out.successes += r.successes;
        out.errors.add(&r.errors);
        out.bytes += r.bytes;
        out.warmup_requests += r.warmup_requests;
        out.warmup_failed += r.warmup_failed;
        out.warmup_until_steady = SteadyWarmup::merge(
            out.warmup_until_steady.take(),
            r.warmup_until_steady.as_ref(),
        );
        user += r.cpu.user_us;
        system += r.cpu.system_us;
        hist::add(&mut latency, &hist::decode(&r.histograms.latency)?)?;
        hist::add(&mut connect, &hist::decode(&r.histograms.connect)?)?;
        if let Some(text) = &r.histograms.latency_uncorrected {
            let h = hist::decode(text)?;
            match &mut uncorrected {
                Some(u) => hist::add(u, &h)?,
                None => uncorrected = Some(h),
            }
        }
        if let (Some(a), Some(b)) = (&mut out.schedule_lag, &r.schedule_lag) {
            a.count += b.count;
            a.max_us = a.max_us.max(b.max_us);
        } else if out.schedule_lag.is_none() {
            out.schedule_lag = r.schedule_lag.clone();
        }
        lag_sum += lag_total(r);
    }
    if let Some(lag) = &mut out.schedule_lag {
        lag.mean_us = if lag.count == 0 {
            0.0
        } else {
            lag_sum / lag.count as f64
        };
    }
    let starts = results.iter().map(|r| r.window_start_ms);
    out.window_start_spread_ms = starts.clone().max().unwrap_or(0) - starts.min().unwrap_or(0);
    out.duration = out.window_end_ms.saturating_sub(out.window_start_ms) as f64 / 1000.0;
    out.throughput = if out.duration > 0.0 {
        counted / out.duration
    } else {
        0.0
    };
    out.window_counts = merge_window_counts(results, out.window_end_ms, counted);
    out.cpu = CpuStats::new(user, system, out.requests);
    out.latency = LatencyStats::from_histogram(&latency);
    out.connect = LatencyStats::from_histogram(&connect);
    out.latency_uncorrected = uncorrected.as_ref().map(LatencyStats::from_histogram);
    out.histograms = Histograms {
        latency: hist::encode(&latency),
        latency_uncorrected: uncorrected.as_ref().map(hist::encode),
        connect: hist::encode(&connect),
    };
    out.timeline = merge_timeline_entries(results.iter().flat_map(|r| &r.timeline))?;
    out.scenarios = merge_scenarios(results.iter().flat_map(|r| &r.scenarios))?;
    out.nodes = merge_nodes(results.iter().flat_map(|r| &r.nodes));
    out.cpu_models = merge_nodes(results.iter().flat_map(|r| &r.cpu_models));
    Ok(out)
}

/// The window counts of merged results ending at `end_ms`: counts summed, the drain to the
/// last end of any input, the response lag weighted by requests; `None` when no input has
/// them (older generators).
fn merge_window_counts(results: &[LoadResult], end_ms: u64, counted: f64) -> Option<WindowCounts> {
    if results.iter().all(|r| r.window_counts.is_none()) {
        return None;
    }
    let last_end = results
        .iter()
        .map(LoadResult::last_end_ms)
        .max()
        .unwrap_or(end_ms);
    let (mut lag, mut weight) = (0.0, 0.0);
    for r in results {
        if let Some(l) = r.window_counts.as_ref().and_then(|w| w.response_lag_ms) {
            lag += l * r.requests as f64;
            weight += r.requests as f64;
        }
    }
    let sum = |f: fn(&WindowCounts) -> u64| {
        results
            .iter()
            .filter_map(|r| r.window_counts.as_ref())
            .map(f)
            .sum()
    };
    Some(WindowCounts {
        requests: counted,
        in_flight_at_end: sum(|w| w.in_flight_at_end),
        drain_ms: last_end.saturating_sub(end_ms),
        late: sum(|w| w.late),
        response_lag_ms: (weight > 0.0).then(|| lag / weight),
    })
}

/// The sorted, distinct node names among `nodes`.
fn merge_nodes<'a>(nodes: impl Iterator<Item = &'a String>) -> Vec<String> {
    let set: std::collections::BTreeSet<&String> = nodes.collect();
    set.into_iter().cloned().collect()
}

/// Merges per-scenario results by name, in order of first appearance.
pub fn merge_scenarios<'a>(
    entries: impl Iterator<Item = &'a ScenarioResult>,
) -> Result<Vec<ScenarioResult>> {
    let mut merged: Vec<(ScenarioResult, Histogram<u64>)> = Vec::new();
    for s in entries {
        let h = hist::decode(&s.histogram)?;
        match merged.iter_mut().find(|(m, _)| m.name == s.name) {
            Some((m, mh)) => {
                m.requests += s.requests;
                m.successes += s.successes;
                m.errors.add(&s.errors);
                hist::add(mh, &h)?;
            }
            None => merged.push((s.clone(), h)),
        }
    }
    Ok(merged
        .into_iter()
        .map(|(mut m, h)| {
            m.latency = LatencyStats::from_histogram(&h);
            m.histogram = hist::encode(&h);
            m
        })
        .collect())
}

/// The back ends of two results to merge: one name when they agree, else the distinct
/// names sorted and joined by commas.
fn merge_backends(a: Option<String>, b: Option<&str>) -> Option<String> {
    let Some(b) = b else { return a };
    let Some(a) = a else { return Some(b.into()) };
    let mut names: Vec<&str> = a.split(',').chain(b.split(',')).collect();
    names.sort_unstable();
    names.dedup();
    Some(names.join(","))
}

/// Whether both parts' latencies end at receive timestamps: `false` if either's do not,
/// unknown if either is unknown and neither is `false`.
fn merge_timestamps(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a && b),
        (Some(false), None) | (None, Some(false)) => Some(false),
        _ => None,
    }
}

fn lag_total(r: &LoadResult) -> f64 {
    r.schedule_lag
        .as_ref()
        .map_or(0.0, |l| l.mean_us * l.count as f64)
}

/// Merges timeline entries by absolute second (their histograms exactly).
pub fn merge_timeline_entries<'a>(
    entries: impl Iterator<Item = &'a TimelineEntry>,
) -> Result<Vec<TimelineEntry>> {
    let mut by_second: BTreeMap<u64, (u64, u64, Histogram<u64>)> = BTreeMap::new();
    for entry in entries {
        let h = hist::decode(&entry.histogram)?;
        let slot = by_second
            .entry(entry.second)
            .or_insert_with(|| (0, 0, hist::new_timeline()));
        slot.0 += entry.requests;
        slot.1 += entry.errors;
        hist::add(&mut slot.2, &h)?;
    }
    Ok(by_second
        .into_iter()
        .map(|(second, (requests, errors, h))| timeline_entry(second, requests, errors, &h))
        .collect())
}

/// Builds a timeline entry from one second's counts and latency histogram.
pub fn timeline_entry(
    second: u64,
    requests: u64,
    errors: u64,
    h: &Histogram<u64>,
) -> TimelineEntry {
    TimelineEntry {
        second,
        requests,
        errors,
        p50_us: if h.is_empty() {
            0
        } else {
            h.value_at_quantile(0.5)
        },
        p99_us: if h.is_empty() {
            0
        } else {
            h.value_at_quantile(0.99)
        },
        histogram: hist::encode(h),
    }
}

#[cfg(test)]
#[path = "result_tests.rs"]
mod tests;

/// Test helpers shared with other modules' unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    pub(crate) use super::tests::result_from;

    /// A small closed-model result with one 500.
    pub(crate) fn sample() -> super::LoadResult {
        result_from(&[100, 200, 300], 1_000, 2_000, 1)
    }
}
