//! The Prometheus client: instant queries against `/api/v1/query` for one measured window.
//!
//! I/O at the edge, on the `prometheus-http-query` crate: its [`Client`] builds and sends the
//! requests (a `GET` with `query`, `time` and `timeout`), over a `reqwest` client of ours; its
//! typed [`Data`] is what an answer's `data` is read into. The query strings come from
//! [`crate::promql`], the response parsing is pure ([`parse_response`] for one number,
//! [`parse_matrix`] for raw samples) and so is the arithmetic ([`crate::samples`], assembled
//! by [`usage_from`]). An empty result is missing data (`None`, never zero); a transport
//! failure, an HTTP error or a Prometheus error is a [`PromError`], which the caller records
//! as `MetricsUnavailable`.
//!
//! A [`PromError`] never carries bytes of the answer: it is shown in an event in the run's
//! namespace, and the URL may be one the run's author chose (within the operator's
//! allow-list). It says the HTTP status, Prometheus' error type (one of its documented
//! values) and what was malformed; the error message Prometheus sent is logged by the
//! operator only. Redirects are not followed (the `reqwest` client handed to the library
//! follows none), so an allowed URL cannot send the operator on to one that is not, and
//! answers are read up to [`MAX_BODY`].
//!
//! Why the answer is not read by the library's own `get()`: it reads the whole body whatever
//! its size, drops the HTTP status (a 503 and a 400 with the same error type would look
//! alike, and [`PromError::is_transient`] needs it), and fails on error types it does not know
//! (`not_acceptable`) or on a non-JSON proxy page without saying which it was. So the request
//! is sent with its `get_raw()`, the body is read here up to [`MAX_BODY`], the envelope
//! (`status`, `errorType`, `error`) is read here, and only `data` goes to the library's types.
//!
//! The operator keeps one [`Prometheus`] per URL for its lifetime
//! ([`crate::prometheus_clients`]), so connections are reused between query cycles.

use std::collections::BTreeMap;
use std::time::Duration;

use benchrun_api::{ExtraQuery, PodUsage, ServiceUsage, TargetUsage};
use prometheus_http_query::response::Data;
use prometheus_http_query::Client;
use serde::Deserialize;

use crate::num::round;
use crate::promql::{self, Raw, Selector};
use crate::samples::{self, Series, Span};

/// Timeout of one HTTP request to Prometheus (connect included).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Timeout of establishing the TCP connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Query evaluation timeout passed to Prometheus (below [`REQUEST_TIMEOUT`], so Prometheus
/// answers with its own error first).
const EVAL_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest answer read: one number's answer is a few hundred bytes, a window's raw samples
/// a few kilobytes per container.
pub const MAX_BODY: usize = 1024 * 1024;
/// The `errorType` values of the Prometheus HTTP API; any other is reported as `unknown`.
const ERROR_TYPES: &[&str] = &[
    "timeout",
    "canceled",
    "execution",
    "bad_data",
    "internal",
    "unavailable",
    "not_found",
    "not_acceptable",
];

/// What failed when talking to Prometheus.
#[derive(Debug, thiserror::Error)]
pub enum PromError {
    /// The base URL is not an http(s) URL.
    #[error("failed to use Prometheus URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("failed to build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// Connect, timeout or read failure.
    #[error("failed to reach Prometheus at {url}: {reason}")]
    Unreachable {
        /// The request URL (without the query).
        url: String,
        /// What failed, in fixed words: "could not connect", "timed out", "error sending
        /// request" or "the answer could not be read" (the transport error's own message may
        /// name the URL with its query, and the library only lends it).
        reason: &'static str,
    },
    /// Prometheus answered with an error (bad query, timeout, overload).
    #[error("failed to evaluate {query:?}: Prometheus answered HTTP {status} with error type {error_type}")]
    Query {
        /// The PromQL.
        query: String,
        /// HTTP status code.
        status: u16,
        /// Prometheus' `errorType` when it is one of the documented values (e.g. `bad_data`),
        /// else `unknown`.
        error_type: &'static str,
    },
    /// The answer was not a Prometheus API response of a usable type.
    #[error("failed to read the answer to {query:?} (HTTP {status}): {reason}")]
    BadResponse {
        /// The PromQL.
        query: String,
        /// HTTP status code.
        status: u16,
        /// What was wrong, in the operator's words (never the answer's bytes).
        reason: String,
    },
}

impl PromError {
    /// True when asking again later may succeed: Prometheus could not be reached, timed out,
    /// or answered 5xx or 429 (down, restarting, overloaded). A bad query, an answer of the
    /// wrong shape or an unusable URL stays wrong however often it is asked.
    pub fn is_transient(&self) -> bool {
        match self {
            PromError::Unreachable { .. } => true,
            PromError::Query { status, .. } => *status >= 500 || *status == 429,
            PromError::InvalidUrl { .. } | PromError::Client(_) | PromError::BadResponse { .. } => {
                false
            }
        }
    }
}

/// The figures to read for one measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct UsageQuery {
    /// Namespace of the run (target and load pods).
    pub namespace: String,
    /// Regex of the target pod names.
    pub target_pods: String,
    /// Regex of the load pod names.
    pub load_pods: String,
    /// Start of the measured window.
    pub start: jiff::Timestamp,
    /// End of the measured window (queries are evaluated at this instant).
    pub end: jiff::Timestamp,
    /// CPU limit of the target summed over its replicas, in cores.
    pub target_cpu_limit_cores: f64,
    /// CPU limit of one target pod, in cores.
    pub target_pod_cpu_limit_cores: f64,
    /// When the load Job was created: the target's working set is read at the last sample
    /// before it (`memoryBeforeLoadBytes`); `None` leaves that figure out.
    pub before_load: Option<jiff::Timestamp>,
    /// The run's extra queries.
    pub extra: Vec<ExtraQuery>,
    /// Confine the extra queries to `namespace` ([`crate::promql_scope`]); false for an
    /// operator that allows cluster-wide queries.
    pub confine_extra: bool,
    /// The run's backing services.
    pub services: Vec<ServiceQuery>,
}

/// One backing service to read over the window.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceQuery {
    /// `spec.services[].name`.
    pub name: String,
    /// Regex of its pod name.
    pub pods: String,
    /// Its CPU limit in cores.
    pub cpu_limit_cores: f64,
}

/// A Prometheus HTTP API client (cheap to clone: clones share one connection pool).
#[derive(Clone)]
pub struct Prometheus {
    client: Client,
    query_url: String,
    sample_interval: Duration,
}

impl std::fmt::Debug for Prometheus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prometheus")
            .field("query_url", &self.query_url)
            .field("sample_interval", &self.sample_interval)
            .finish_non_exhaustive()
    }
}

impl Prometheus {
    /// A client for the Prometheus at `base_url` (e.g. `http://prometheus:9090`, or with a path
    /// prefix such as `http://host/prometheus`).
    pub fn new(base_url: &str) -> Result<Self, PromError> {
        let trimmed = base_url.trim().trim_end_matches('/');
        let invalid = |reason: &str| PromError::InvalidUrl {
            url: base_url.to_string(),
            reason: reason.to_string(),
        };
        let parsed = reqwest::Url::parse(trimmed).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid("the scheme must be http or https"));
        }
        if parsed.query().is_some() {
            return Err(invalid("the URL must not have a query string"));
        }
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(PromError::Client)?;
        // The library appends `api/v1/query` to the base URL's path: without the trailing
        // slash, or a path prefix would get two.
        let client = Client::from(http, trimmed).map_err(|_| invalid("not a URL"))?;
        Ok(Prometheus {
            client,
            query_url: format!("{trimmed}/api/v1/query"),
            sample_interval: promql::DEFAULT_SAMPLE_INTERVAL,
        })
    }

    /// Sets the spacing of cAdvisor samples that the margins around the window are sized for
    /// (default [`promql::DEFAULT_SAMPLE_INTERVAL`]).
    pub fn with_sample_interval(mut self, interval: Duration) -> Self {
        self.sample_interval = interval;
        self
    }

    /// Evaluates one instant query at `time`. `Ok(None)` when the result is empty or not a
    /// number (NaN, e.g. a ratio over no CFS periods).
    pub async fn instant(
        &self,
        query: &str,
        time: jiff::Timestamp,
    ) -> Result<Option<f64>, PromError> {
        let (status, body) = self.get(query, time).await?;
        parse_response(query, status, &body).inspect_err(|e| log_refusal(e, query, &body))
    }

    /// The raw samples of a range selector (e.g. `metric{…}[60s]`) evaluated at `time`, one
    /// [`Series`] per matching series.
    pub async fn samples(
        &self,
        query: &str,
        time: jiff::Timestamp,
    ) -> Result<Vec<Series>, PromError> {
        let (status, body) = self.get(query, time).await?;
        parse_matrix(query, status, &body).inspect_err(|e| log_refusal(e, query, &body))
    }

    /// The HTTP status and body of the answer to `query` evaluated at `time`.
    async fn get(&self, query: &str, time: jiff::Timestamp) -> Result<(u16, Vec<u8>), PromError> {
        // The library's `at()` takes whole seconds; windows end at a millisecond.
        let time = format!("{:.3}", time.as_millisecond() as f64 / 1000.0);
        let response = self
            .client
            .query(query)
            .query("time", time)
            .timeout(EVAL_TIMEOUT.as_millis() as i64)
            .get_raw()
            .await
            .map_err(|e| self.unreachable(send_problem(&e)))?;
        let status = response.status().as_u16();
        let body = self.read_body(response, query, status).await?;
        Ok((status, body))
    }

    /// The answer's body, at most [`MAX_BODY`] bytes.
    async fn read_body(
        &self,
        mut response: reqwest::Response,
        query: &str,
        status: u16,
    ) -> Result<Vec<u8>, PromError> {
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.unreachable(transport_problem(&e, "the answer could not be read")))?
        {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(PromError::BadResponse {
                    query: query.to_string(),
                    status,
                    reason: format!("the answer is larger than {MAX_BODY} bytes"),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn unreachable(&self, reason: &'static str) -> PromError {
        PromError::Unreachable {
            url: self.query_url.clone(),
            reason,
        }
    }

    /// Reads the target's and the load pods' usage over the window from their raw samples,
    /// plus the extra queries. The load pods' `loadCpuCores` is left to the load generator's
    /// own figure ([`crate::results`]); Prometheus' view of it goes to
    /// `loadCpuCoresPrometheus`.
    ///
    /// Missing data leaves the figure `None`. Any transport or Prometheus error of the
    /// built-in queries fails the whole call. An extra query that fails or does not return
    /// exactly one number is left out of the map (and logged): a user's typo must not cost
    /// the CPU and memory figures.
    pub async fn usage(
        &self,
        q: &UsageQuery,
    ) -> Result<(TargetUsage, BTreeMap<String, f64>), PromError> {
        let (start_ms, end_ms) = (q.start.as_millisecond(), q.end.as_millisecond());
        let raw = Raw::around(start_ms, end_ms, self.sample_interval);
        let target = Selector {
            namespace: &q.namespace,
            pods: &q.target_pods,
        };
        let load = Selector {
            namespace: &q.namespace,
            pods: &q.load_pods,
        };
        let queries = [
            promql::raw(promql::CPU, &target, &raw),
            promql::raw(promql::WORKING_SET, &target, &raw),
            promql::raw(promql::THROTTLED_PERIODS, &target, &raw),
            promql::raw(promql::PERIODS, &target, &raw),
            promql::raw(promql::CPU, &load, &raw),
            promql::raw(promql::RSS, &target, &raw),
        ];
        let found =
            futures::future::try_join_all(queries.iter().map(|p| self.samples(p, raw.at())))
                .await?;
        let [cpu, memory, throttled, periods, load_cpu, rss]: [Vec<Series>; 6] =
            found.try_into().expect("six queries give six answers");
        let span = Span {
            start: start_ms as f64 / 1000.0,
            end: end_ms as f64 / 1000.0,
        };
        let raw_usage = RawUsage {
            cpu,
            memory,
            throttled,
            periods,
            load_cpu,
            rss,
        };
        let mut usage = usage_from(&raw_usage, span, q.target_cpu_limit_cores);
        usage.pods = pod_usages(&raw_usage, span, q.target_pod_cpu_limit_cores);
        if let Some(at) = q.before_load {
            // Two sample intervals back: the last sample before the Job, not one from an
            // earlier window.
            let lookback = (2 * self.sample_interval.as_secs()).max(1);
            let query = promql::last_sum(promql::WORKING_SET, &target, lookback);
            usage.memory_before_load_bytes =
                self.instant(&query, at).await?.map(|b| b.round() as i64);
        }
        for svc in &q.services {
            let sel = Selector {
                namespace: &q.namespace,
                pods: &svc.pods,
            };
            let queries = [
                promql::raw(promql::CPU, &sel, &raw),
                promql::raw(promql::WORKING_SET, &sel, &raw),
                promql::raw(promql::THROTTLED_PERIODS, &sel, &raw),
                promql::raw(promql::PERIODS, &sel, &raw),
            ];
            let found =
                futures::future::try_join_all(queries.iter().map(|p| self.samples(p, raw.at())))
                    .await?;
            let [cpu, memory, throttled, periods]: [Vec<Series>; 4] =
                found.try_into().expect("four queries give four answers");
            let raw_service = RawUsage {
                cpu,
                memory,
                throttled,
                periods,
                ..RawUsage::default()
            };
            let u = usage_from(&raw_service, span, svc.cpu_limit_cores);
            usage.services.push(service_usage(&svc.name, u));
        }
        let window = promql::window_range(start_ms, end_ms);
        let mut extra = BTreeMap::new();
        for e in &q.extra {
            let query = promql::extra(&e.query, &target, &window);
            let query = match q.confine_extra {
                true => match crate::promql_scope::confine(&query, &q.namespace) {
                    Ok(confined) => confined,
                    // Refused at validation; a query that fails here is skipped, not run wide.
                    Err(err) => {
                        let error = err.to_string();
                        let error = crate::logtext::cap(&error, crate::logtext::LOG_MAX);
                        tracing::warn!(name = %e.name, %error, "extra query not confined; skipped");
                        continue;
                    }
                },
                false => query,
            };
            match self.instant(&query, q.end).await {
                Ok(Some(v)) => {
                    extra.insert(e.name.clone(), v);
                }
                Ok(None) => {
                    let query = crate::logtext::cap(&query, crate::logtext::LOG_MAX);
                    tracing::warn!(name = %e.name, %query, "extra query returned no data")
                }
                Err(err) => {
                    let error = err.to_string();
                    let error = crate::logtext::cap(&error, crate::logtext::LOG_MAX);
                    tracing::warn!(name = %e.name, %error, "extra query failed")
                }
            }
        }
        Ok((usage, extra))
    }
}

/// The raw samples around one window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawUsage {
    /// CPU counters of the target containers.
    pub cpu: Vec<Series>,
    /// Working sets of the target containers.
    pub memory: Vec<Series>,
    /// Throttled CFS periods of the target containers.
    pub throttled: Vec<Series>,
    /// CFS periods of the target containers.
    pub periods: Vec<Series>,
    /// CPU counters of the load containers.
    pub load_cpu: Vec<Series>,
    /// Resident set sizes of the target containers.
    pub rss: Vec<Series>,
}

/// The window's [`TargetUsage`] from its raw samples (load CPU from Prometheus only as the
/// second opinion `loadCpuCoresPrometheus`), with the fractions of the target's limit and the
/// sample counts each figure rests on. The CPU figures need a sample inside the window from
/// every target container; memory one from any.
pub fn usage_from(raw: &RawUsage, span: Span, target_limit: f64) -> TargetUsage {
    let of = |x: Option<f64>| {
        x.filter(|_| target_limit > 0.0)
            .map(|x| round(x / target_limit, 4))
    };
    let cpu = samples::counter(&raw.cpu, span);
    let memory = samples::gauge(&raw.memory, span);
    let throttled = samples::counter(&raw.throttled, span);
    let periods = samples::counter(&raw.periods, span);
    let throttled = match (throttled, periods) {
        (Some(t), Some(p)) if p.increase > 0.0 => Some(round(t.increase / p.increase, 4)),
        _ => None,
    };
    let cpu_avg = cpu.map(|c| c.avg);
    let cpu_peak = cpu.map(|c| c.peak);
    TargetUsage {
        cpu_avg_cores: cpu_avg.map(|x| round(x, 4)),
        cpu_peak_cores: cpu_peak.map(|x| round(x, 4)),
        cpu_avg_of_limit: of(cpu_avg),
        cpu_peak_of_limit: of(cpu_peak),
        cpu_throttled: throttled,
        memory_avg_bytes: memory.map(|m| m.avg.round() as i64),
        memory_peak_bytes: memory.map(|m| m.peak.round() as i64),
        cpu_samples: samples::fewest_samples(&raw.cpu, span).map(|n| n as i32),
        memory_samples: (!raw.memory.is_empty()).then(|| memory.map_or(0, |m| m.samples) as i32),
        sample_interval_seconds: samples::sample_interval(&raw.cpu, span).map(|s| round(s, 1)),
        load_cpu_cores: None,
        load_cpu_of_limit: None,
        load_cpu_cores_prometheus: samples::counter(&raw.load_cpu, span).map(|c| round(c.avg, 4)),
        memory_rss_peak_bytes: samples::gauge(&raw.rss, span).map(|m| m.peak.round() as i64),
        ..TargetUsage::default()
    }
}

/// Most pods listed in `usage.pods` (the first by name): bounds a result's size whatever the
/// replica count, so that the largest run's status stays far below the object size limit.
pub const MAX_POD_ENTRIES: usize = 4;

/// Each target pod's CPU and memory, when the samples name two pods or more (one pod's
/// figures are the sums already), at most [`MAX_POD_ENTRIES`]; `pod_limit` is one pod's CPU
/// limit in cores.
pub fn pod_usages(raw: &RawUsage, span: Span, pod_limit: f64) -> Vec<PodUsage> {
    let names: std::collections::BTreeSet<&str> = raw
        .cpu
        .iter()
        .chain(&raw.memory)
        .map(|s| s.pod.as_str())
        .filter(|p| !p.is_empty())
        .collect();
    if names.len() < 2 {
        return Vec::new();
    }
    let of = |all: &[Series], pod: &str| -> Vec<Series> {
        all.iter().filter(|s| s.pod == pod).cloned().collect()
    };
    names
        .into_iter()
        .take(MAX_POD_ENTRIES)
        .map(|pod| {
            let one = RawUsage {
                cpu: of(&raw.cpu, pod),
                memory: of(&raw.memory, pod),
                rss: of(&raw.rss, pod),
                ..RawUsage::default()
            };
            let u = usage_from(&one, span, pod_limit);
            PodUsage {
                pod: pod.to_string(),
                cpu_avg_cores: u.cpu_avg_cores,
                cpu_avg_of_limit: u.cpu_avg_of_limit,
                memory_peak_bytes: u.memory_peak_bytes,
                memory_rss_peak_bytes: u.memory_rss_peak_bytes,
            }
        })
        .collect()
}

/// A backing service's figures, from [`usage_from`] of its samples.
pub fn service_usage(name: &str, u: TargetUsage) -> ServiceUsage {
    ServiceUsage {
        name: name.to_string(),
        cpu_avg_cores: u.cpu_avg_cores,
        cpu_peak_cores: u.cpu_peak_cores,
        cpu_avg_of_limit: u.cpu_avg_of_limit,
        cpu_peak_of_limit: u.cpu_peak_of_limit,
        cpu_throttled: u.cpu_throttled,
        memory_avg_bytes: u.memory_avg_bytes,
        memory_peak_bytes: u.memory_peak_bytes,
    }
}

/// What failed in sending a request, from the library's error.
fn send_problem(e: &prometheus_http_query::Error) -> &'static str {
    const SEND: &str = "error sending request";
    match e {
        prometheus_http_query::Error::Client(c) => c
            .inner()
            .map_or(SEND, |source| transport_problem(source, SEND)),
        _ => SEND,
    }
}

/// What kind of transport failure `e` is, in fixed words (`otherwise` unless it timed out or
/// could not connect); its own message may name the request's URL with the query.
fn transport_problem(e: &reqwest::Error, otherwise: &'static str) -> &'static str {
    if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        otherwise
    }
}

/// Logs Prometheus' own message for a refused query: it helps the operator's administrator and
/// stays in the operator's log (see the module docs).
fn log_refusal(e: &PromError, query: &str, body: &[u8]) {
    if let PromError::Query { status, .. } = e {
        let message = serde_json::from_slice::<ApiResponse>(body)
            .ok()
            .and_then(|a| a.error)
            .unwrap_or_default();
        let query = crate::logtext::cap(query, crate::logtext::LOG_MAX);
        let message = crate::logtext::cap(&message, crate::logtext::LOG_MAX);
        tracing::warn!(%query, status, %message, "Prometheus refused a query");
    }
}

/// The envelope of an API answer (the library's own fails on error types it does not know).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ApiResponse {
    status: String,
    #[serde(default)]
    data: Option<serde_json::Value>,
    #[serde(default)]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

fn bad(query: &str, status: u16, reason: String) -> PromError {
    PromError::BadResponse {
        query: query.to_string(),
        status,
        reason,
    }
}

/// The data of a successful API answer as the library's [`Data`], or the error it carries;
/// `expected` names what the caller wanted, for the error on a string result (a type the
/// library does not read).
///
/// Errors describe the answer in fixed words (see the module docs): serde's messages are left
/// out because they quote the input, and so is a result type that is not one of Prometheus'.
fn parse_api(query: &str, status: u16, body: &[u8], expected: &str) -> Result<Data, PromError> {
    let api: ApiResponse = serde_json::from_slice(body).map_err(|e| {
        if status >= 500 || status == 429 {
            // Not an API answer, e.g. "Service Unavailable" while Prometheus replays its WAL,
            // or a proxy's error page: unavailable, not a bad query (and worth asking again).
            return PromError::Query {
                query: query.to_string(),
                status,
                error_type: "unavailable",
            };
        }
        bad(
            query,
            status,
            format!(
                "not a Prometheus API answer ({} bytes, {})",
                body.len(),
                json_problem(&e)
            ),
        )
    })?;
    if api.status != "success" || !(200..300).contains(&status) {
        let error_type = api.error_type.as_deref().unwrap_or_default();
        return Err(PromError::Query {
            query: query.to_string(),
            status,
            error_type: ERROR_TYPES
                .iter()
                .find(|t| **t == error_type)
                .copied()
                .unwrap_or("unknown"),
        });
    }
    let data = api
        .data
        .ok_or_else(|| bad(query, status, "no data in a success answer".into()))?;
    let bad = |reason: String| bad(query, status, reason);
    let result_type = match data.get("resultType").and_then(|t| t.as_str()) {
        Some(t @ ("vector" | "matrix" | "scalar")) => t,
        Some("string") => return Err(bad(format!("a string where {expected} was expected"))),
        _ => {
            return Err(bad(format!(
                "a result of unknown type where {expected} was expected"
            )))
        }
    };
    let malformed = format!("malformed {result_type}");
    serde_json::from_value(data).map_err(|_| bad(malformed))
}

/// Parses a `/api/v1/query` answer into its single number.
///
/// A vector with one sample or a scalar gives its value; an empty vector, NaN or ±Inf gives
/// `None`; a vector of several series, a matrix or a string is an error (the built-in
/// queries are sums, so they never return several series).
pub fn parse_response(query: &str, status: u16, body: &[u8]) -> Result<Option<f64>, PromError> {
    let bad = |reason: String| bad(query, status, reason);
    let v = match parse_api(query, status, body, "one number")? {
        Data::Scalar(sample) => sample.value(),
        Data::Vector(series) => match series.as_slice() {
            [] => return Ok(None),
            [one] => one.sample().value(),
            many => {
                return Err(bad(format!(
                    "{} series where one number was expected",
                    many.len()
                )))
            }
        },
        Data::Matrix(_) => return Err(bad("a matrix where one number was expected".into())),
    };
    Ok(v.is_finite().then_some(v))
}

/// What kind of JSON problem `e` is, without its message (which may quote the input).
fn json_problem(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Io => "unreadable",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Data => "JSON of another shape",
        serde_json::error::Category::Eof => "truncated JSON",
    }
}

/// Parses the answer to a range selector into one [`Series`] per series, its points in
/// ascending time; values that are not finite numbers are dropped. An empty matrix is no
/// series (missing data); any other result type is an error.
pub fn parse_matrix(query: &str, status: u16, body: &[u8]) -> Result<Vec<Series>, PromError> {
    let found = match parse_api(query, status, body, "raw samples")? {
        Data::Matrix(found) => found,
        other => {
            let kind = if other.is_vector() {
                "a vector"
            } else {
                "a scalar"
            };
            return Err(bad(
                query,
                status,
                format!("{kind} where raw samples were expected"),
            ));
        }
    };
    Ok(found
        .into_iter()
        .map(|m| {
            let (metric, samples) = m.into_inner();
            let mut points: Vec<(f64, f64)> = samples
                .iter()
                .map(|s| (s.timestamp(), s.value()))
                .filter(|(_, v)| v.is_finite())
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let pod = metric.get("pod").cloned().unwrap_or_default();
            Series { points, pod }
        })
        .filter(|s| !s.points.is_empty())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(status: u16, body: &str) -> Result<Option<f64>, PromError> {
        parse_response("up", status, body.as_bytes())
    }

    #[test]
    fn a_one_sample_vector_gives_its_value() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1764511200.5,"0.4987"]}]}}"#;
        assert_eq!(parse(200, body).unwrap(), Some(0.4987));
    }

    #[test]
    fn an_empty_vector_is_missing_data_not_zero() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        assert_eq!(parse(200, body).unwrap(), None);
    }

    #[test]
    fn a_scalar_gives_its_value() {
        let body =
            r#"{"status":"success","data":{"resultType":"scalar","result":[1764511200,"42"]}}"#;
        assert_eq!(parse(200, body).unwrap(), Some(42.0));
    }

    #[test]
    fn nan_and_infinity_are_missing_data() {
        for v in ["NaN", "+Inf", "-Inf"] {
            let body = format!(
                r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{}},"value":[1,"{v}"]}}]}}}}"#
            );
            assert_eq!(parse(200, &body).unwrap(), None, "{v}");
        }
    }

    #[test]
    fn several_series_are_an_error() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"1"},"value":[1,"1"]},{"metric":{"a":"2"},"value":[1,"2"]}]}}"#;
        let err = parse(200, body).unwrap_err().to_string();
        assert!(err.contains("2 series"), "{err}");
    }

    #[test]
    fn a_prometheus_error_names_the_query_status_and_type_but_not_its_message() {
        let body = r#"{"status":"error","errorType":"bad_data","error":"parse error at char 3"}"#;
        let err = parse(400, body).unwrap_err();
        assert!(matches!(err, PromError::Query { status: 400, .. }));
        assert_eq!(
            err.to_string(),
            r#"failed to evaluate "up": Prometheus answered HTTP 400 with error type bad_data"#
        );
    }

    #[test]
    fn an_undocumented_error_type_is_reported_as_unknown() {
        let body = r#"{"status":"SECRET-1","errorType":"SECRET-2","error":"SECRET-3"}"#;
        let err = parse(500, body).unwrap_err().to_string();
        assert!(err.ends_with("HTTP 500 with error type unknown"), "{err}");
        assert!(!err.contains("SECRET"), "{err}");
    }

    #[test]
    fn a_non_json_answer_is_a_bad_response_without_its_bytes() {
        let err = parse(200, "<html>SECRET Bad Gateway</html>").unwrap_err();
        assert!(!err.is_transient());
        assert_eq!(
            err.to_string(),
            r#"failed to read the answer to "up" (HTTP 200): not a Prometheus API answer (31 bytes, not JSON)"#
        );
    }

    #[test]
    fn no_part_of_a_malformed_answer_reaches_the_error() {
        for body in [
            r#"{"status":"success","data":{"resultType":"SECRET","result":[]}}"#,
            r#"{"status":"success","data":{"resultType":"vector","result":[{"value":[1,"SECRET"]}]}}"#,
            r#"{"status":"success","data":{"resultType":"vector","result":"SECRET"}}"#,
            r#"{"status":"success","data":{"resultType":"scalar","result":{"SECRET":1}}}"#,
            r#"{"status":{"SECRET":1}}"#,
            r#"{"status":"succ"#,
        ] {
            let err = parse(200, body).unwrap_err().to_string();
            assert!(!err.contains("SECRET"), "{body} gave {err}");
        }
    }

    #[test]
    fn a_5xx_page_means_unavailable_and_is_worth_asking_again() {
        let err = parse(502, "<html>Bad Gateway</html>").unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert!(err
            .to_string()
            .ends_with("HTTP 502 with error type unavailable"));
        let timeout = r#"{"status":"error","errorType":"timeout","error":"query timed out"}"#;
        assert!(parse(503, timeout).unwrap_err().is_transient());
    }

    #[test]
    fn a_bad_query_is_not_worth_asking_again() {
        let body = r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#;
        assert!(!parse(400, body).unwrap_err().is_transient());
        let exec = r#"{"status":"error","errorType":"execution","error":"many-to-many"}"#;
        assert!(!parse(422, exec).unwrap_err().is_transient());
    }

    #[tokio::test]
    async fn a_closed_port_is_unreachable_and_worth_asking_again() {
        // A loopback port that was just free: nothing listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let prom = Prometheus::new(&format!("http://127.0.0.1:{port}")).unwrap();
        let err = prom
            .instant("up", jiff::Timestamp::now())
            .await
            .unwrap_err();
        assert!(matches!(err, PromError::Unreachable { .. }), "{err}");
        assert!(err.is_transient());
        assert!(err.to_string().ends_with(": could not connect"), "{err}");
    }

    /// A one-connection HTTP server on 127.0.0.1 that answers `response` (whole, as bytes):
    /// its base URL, and the request's head once it was answered.
    async fn serve_once(response: Vec<u8>) -> (String, tokio::task::JoinHandle<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            // The client may hang up before the end of a long answer.
            let _ = conn.write_all(&response).await;
            let _ = conn.shutdown().await;
            String::from_utf8_lossy(&head).into_owned()
        });
        (url, task)
    }

    fn http(status: &str, extra_headers: &str, body: &str) -> Vec<u8> {
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra_headers}Connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    fn at() -> jiff::Timestamp {
        jiff::Timestamp::from_millisecond(1_764_511_200_500).unwrap()
    }

    #[tokio::test]
    async fn the_query_is_a_get_under_the_path_prefix_with_its_instant_and_timeout() {
        let body = r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1764511200.5,"0.25"]}]}}"#;
        let (url, server) = serve_once(http("200 OK", "", body)).await;
        let prom = Prometheus::new(&format!("{url}/prom/")).unwrap();
        assert_eq!(prom.instant("sum(up)", at()).await.unwrap(), Some(0.25));
        let head = server.await.unwrap();
        let line = head.lines().next().unwrap();
        assert_eq!(
            line,
            "GET /prom/api/v1/query?query=sum%28up%29&time=1764511200.500&timeout=10000ms HTTP/1.1"
        );
    }

    #[tokio::test]
    async fn an_empty_answer_over_http_is_missing_data() {
        let body = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        let (url, _server) = serve_once(http("200 OK", "", body)).await;
        let prom = Prometheus::new(&url).unwrap();
        assert!(prom.samples("x[1m]", at()).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_redirect_is_not_followed() {
        let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let location = format!(
            "Location: http://{}/api/v1/query\r\n",
            elsewhere.local_addr().unwrap()
        );
        let (url, _server) = serve_once(http("302 Found", &location, "")).await;
        let err = Prometheus::new(&url)
            .unwrap()
            .instant("up", at())
            .await
            .unwrap_err();
        assert!(
            matches!(err, PromError::BadResponse { status: 302, .. }),
            "{err}"
        );
        assert!(!err.is_transient());
        let followed = tokio::time::timeout(Duration::from_millis(200), elsewhere.accept()).await;
        assert!(followed.is_err(), "the redirect's target was asked");
    }

    #[tokio::test]
    async fn an_answer_larger_than_max_body_is_refused() {
        let big = format!(
            r#"{{"status":"success","data":{{"resultType":"matrix","result":[]}},"pad":"{}"}}"#,
            "x".repeat(MAX_BODY)
        );
        let (url, _server) = serve_once(http("200 OK", "", &big)).await;
        let err = Prometheus::new(&url)
            .unwrap()
            .samples("x[1m]", at())
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                r#"failed to read the answer to "x[1m]" (HTTP 200): the answer is larger than {MAX_BODY} bytes"#
            )
        );
    }

    #[tokio::test]
    async fn a_prometheus_timeout_over_http_keeps_its_status_and_is_transient() {
        let body = r#"{"status":"error","errorType":"timeout","error":"SECRET query timed out"}"#;
        let (url, _server) = serve_once(http("503 Service Unavailable", "", body)).await;
        let err = Prometheus::new(&url)
            .unwrap()
            .instant("up", at())
            .await
            .unwrap_err();
        assert!(err.is_transient(), "{err}");
        assert_eq!(
            err.to_string(),
            r#"failed to evaluate "up": Prometheus answered HTTP 503 with error type timeout"#
        );
    }

    #[test]
    fn an_undocumented_result_type_is_not_quoted_where_samples_were_expected() {
        let body = r#"{"status":"success","data":{"resultType":"SECRET","result":[]}}"#;
        let err = parse_matrix("x", 200, body.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(!err.contains("SECRET"), "{err}");
        let string = r#"{"status":"success","data":{"resultType":"string","result":[1,"a"]}}"#;
        let err = parse_response("x", 200, string.as_bytes()).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("a string where one number was expected"),
            "{err}"
        );
    }

    #[test]
    fn a_matrix_gives_each_series_its_raw_points() {
        let body = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"pod":"a"},"values":[[1764511200.5,"1.5"],[1764511208.25,"2.5"]]},
            {"metric":{"pod":"b"},"values":[[1764511201,"NaN"],[1764511203,"7"]]}]}}"#;
        let s = parse_matrix("x[1m]", 200, body.as_bytes()).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].points, vec![(1764511200.5, 1.5), (1764511208.25, 2.5)]);
        assert_eq!(s[1].points, vec![(1764511203.0, 7.0)]);
    }

    #[test]
    fn an_empty_matrix_is_no_series_and_a_vector_is_an_error() {
        let empty = r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#;
        assert!(parse_matrix("x", 200, empty.as_bytes()).unwrap().is_empty());
        let vector = r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#;
        let err = parse_matrix("x", 200, vector.as_bytes()).unwrap_err();
        assert!(
            err.to_string().contains("a vector where raw samples"),
            "{err}"
        );
    }

    fn steady(from: f64, every: f64, n: usize, rate: f64, base: f64) -> Series {
        Series {
            points: (0..n)
                .map(|i| {
                    let t = from + every * i as f64;
                    (t, base + rate * (t - from))
                })
                .collect(),
            ..Series::default()
        }
    }

    #[test]
    fn usage_comes_from_the_raw_samples_with_their_counts() {
        let span = Span {
            start: 100.0,
            end: 130.0,
        };
        let raw = RawUsage {
            cpu: vec![steady(72.0, 8.0, 10, 0.45, 300.0)],
            memory: vec![steady(72.0, 8.0, 10, 0.0, 1.5e6)],
            throttled: vec![steady(72.0, 8.0, 10, 2.0, 0.0)],
            periods: vec![steady(72.0, 8.0, 10, 10.0, 0.0)],
            load_cpu: vec![steady(73.0, 8.0, 10, 0.2, 0.0)],
            rss: vec![steady(72.0, 8.0, 10, 0.0, 1.2e6)],
        };
        let u = usage_from(&raw, span, 0.5);
        assert_eq!(u.memory_rss_peak_bytes, Some(1_200_000));
        assert!(
            pod_usages(&raw, span, 0.5).is_empty(),
            "unnamed series: one pod"
        );
        assert_eq!(u.cpu_avg_cores, Some(0.45));
        assert_eq!(u.cpu_peak_cores, Some(0.45));
        assert_eq!(u.cpu_avg_of_limit, Some(0.9));
        assert_eq!(u.cpu_throttled, Some(0.2));
        assert_eq!(u.memory_avg_bytes, Some(1_500_000));
        assert_eq!(u.memory_peak_bytes, Some(1_500_000));
        // Samples at 104, 112, 120, 128.
        assert_eq!(u.cpu_samples, Some(4));
        assert_eq!(u.memory_samples, Some(4));
        assert_eq!(u.sample_interval_seconds, Some(8.0));
        assert_eq!(u.load_cpu_cores_prometheus, Some(0.2));
        assert_eq!(u.load_cpu_cores, None, "the generator's own figure is used");
    }

    #[test]
    fn two_pods_get_figures_of_their_own_and_the_sums_stay_sums() {
        let span = Span {
            start: 100.0,
            end: 130.0,
        };
        let pod = |name: &str, s: Series| Series {
            pod: name.into(),
            ..s
        };
        let raw = RawUsage {
            cpu: vec![
                pod("web-a", steady(72.0, 8.0, 10, 0.45, 300.0)),
                pod("web-b", steady(73.0, 8.0, 10, 0.15, 100.0)),
            ],
            memory: vec![
                pod("web-a", steady(72.0, 8.0, 10, 0.0, 3e6)),
                pod("web-b", steady(73.0, 8.0, 10, 0.0, 1e6)),
            ],
            rss: vec![pod("web-a", steady(72.0, 8.0, 10, 0.0, 2e6))],
            ..RawUsage::default()
        };
        let u = usage_from(&raw, span, 1.0);
        assert_eq!(u.cpu_avg_cores, Some(0.6));
        assert_eq!(u.memory_peak_bytes, Some(4_000_000));
        let pods = pod_usages(&raw, span, 0.5);
        let names: Vec<&str> = pods.iter().map(|p| p.pod.as_str()).collect();
        assert_eq!(names, ["web-a", "web-b"]);
        assert_eq!(pods[0].cpu_avg_cores, Some(0.45));
        assert_eq!(pods[0].cpu_avg_of_limit, Some(0.9));
        assert_eq!(pods[0].memory_peak_bytes, Some(3_000_000));
        assert_eq!(pods[0].memory_rss_peak_bytes, Some(2_000_000));
        assert_eq!(pods[1].cpu_avg_cores, Some(0.15));
        assert_eq!(pods[1].memory_peak_bytes, Some(1_000_000));
        assert_eq!(pods[1].memory_rss_peak_bytes, None);
    }

    #[test]
    fn the_pod_label_of_a_matrix_series_is_kept() {
        let body = r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"pod":"web-a","container":"target"},"values":[[1,"2"]]}]}}"#;
        let series = parse_matrix("q", 200, body.as_bytes()).unwrap();
        assert_eq!(series[0].pod, "web-a");
    }

    #[test]
    fn a_window_between_two_samples_has_no_cpu_and_says_it_held_none() {
        // Samples at 104 and 112: none inside.
        let span = Span {
            start: 105.0,
            end: 111.0,
        };
        let raw = RawUsage {
            cpu: vec![steady(72.0, 8.0, 10, 0.45, 300.0)],
            memory: vec![steady(72.0, 8.0, 10, 0.0, 1.5e6)],
            ..RawUsage::default()
        };
        let u = usage_from(&raw, span, 0.5);
        assert_eq!((u.cpu_avg_cores, u.memory_avg_bytes), (None, None));
        assert_eq!((u.cpu_samples, u.memory_samples), (Some(0), Some(0)));
        assert_eq!(u.sample_interval_seconds, Some(8.0));
        assert_eq!(u.cpu_throttled, None);
    }

    #[test]
    fn usage_without_series_has_no_counts() {
        let span = Span {
            start: 100.0,
            end: 130.0,
        };
        let u = usage_from(&RawUsage::default(), span, 0.5);
        assert_eq!(u, TargetUsage::default());
    }

    #[test]
    fn new_rejects_urls_that_are_not_http() {
        assert!(Prometheus::new("ftp://x").is_err());
        assert!(Prometheus::new("not a url").is_err());
        assert!(Prometheus::new("http://p:9090/?x=1").is_err());
    }

    #[test]
    fn new_accepts_a_path_prefix_and_a_trailing_slash() {
        let p = Prometheus::new("http://host/prometheus/").unwrap();
        assert_eq!(p.query_url, "http://host/prometheus/api/v1/query");
    }
}
