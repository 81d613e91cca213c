//! Run configuration: the validated input of [`crate::run`], plus parsers for the
//! command-line forms of URLs, durations and warm-up specs. Pure: no I/O except name
//! resolution in [`Target::parse`].

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use benchrun_wire::request::{self, Request};

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::scenario::{self, Scenario};
use crate::template::{Template, ValueSpec};

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Exactly this many requests are sent in total across all connections.
    Requests(u64),
    /// New requests are sent until this much time has passed; in-flight ones then finish.
    Duration(Duration),
}

/// The warm-up phase, run before the measured window and not recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warmup {
    /// No warm-up.
    None,
    /// Warm up for this long.
    Duration(Duration),
    /// Warm up with this many requests in total.
    Requests(u64),
    /// Warm up for at least `min`, then until the per-second figure stops trending
    /// ([`benchrun_wire::steady`]: throughput in the closed model, the mean latency in the
    /// open), for at most `max` in all.
    UntilSteady {
        /// The least warm-up.
        min: Duration,
        /// The most: the warm-up ends here, steady or not.
        max: Duration,
    },
}

/// The longest warm-up until steady may last.
pub const MAX_STEADY_WARMUP: Duration = Duration::from_secs(30 * 60);

/// A parsed `http[s]://host[:port][/path]` target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as given.
    pub url: String,
    /// Host as written in the URL (used for the `Host` header).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// Path and query, at least `/`.
    pub path: String,
    /// Resolved address to connect to.
    pub addr: SocketAddr,
    /// `https://`: the connections are TLS.
    pub tls: bool,
}

impl Target {
    /// Parses and resolves an `http://` or `https://` URL.
    pub fn parse(url: &str) -> Result<Self> {
        let bad = |reason: &str| Error::InvalidUrl {
            url: url.to_string(),
            reason: reason.into(),
        };
        let (rest, tls) = if let Some(rest) = url.strip_prefix("http://") {
            (rest, false)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (rest, true)
        } else {
            return Err(bad("expected http[s]://host[:port][/path]"));
        };
        let default_port = if tls { 443 } else { 80 };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if authority.contains('@') {
            return Err(bad("user information in URLs is not supported"));
        }
        // Host and path are written into the request as they are: a space, CR or LF would
        // end the request line or start a header of the URL's choosing.
        if !authority.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad(
                "the host must hold only visible ASCII (no spaces or control characters)",
            ));
        }
        if !request::is_path(&path) {
            return Err(bad(&format!(
                "the path {path:?} must start with '/' and hold only visible ASCII: no spaces or \
                 control characters (percent-encode them, e.g. %20), e.g. /hello?x=1"
            )));
        }
        let (host, port) =
            split_host_port(authority, default_port).ok_or_else(|| bad("invalid host or port"))?;
        if host.is_empty() {
            return Err(bad("missing host"));
        }
        let lookup = format!("{}:{port}", host);
        let addr = lookup
            .to_socket_addrs()
            .map_err(|e| Error::Resolve {
                host: host.to_string(),
                reason: e.to_string(),
            })?
            .next()
            .ok_or_else(|| Error::Resolve {
                host: host.to_string(),
                reason: "no address".into(),
            })?;
        let host_header = if port == default_port {
            host.to_string()
        } else {
            format!("{host}:{port}")
        };
        Ok(Target {
            url: url.to_string(),
            host: host_header,
            port,
            path,
            addr,
            tls,
        })
    }
}

/// Splits `host[:port]` or `[v6][:port]`; the host keeps its brackets.
fn split_host_port(authority: &str, default_port: u16) -> Option<(&str, u16)> {
    if authority.starts_with('[') {
        let end = authority.find(']')?;
        let host = &authority[..=end];
        return match &authority[end + 1..] {
            "" => Some((host, default_port)),
            p => Some((host, p.strip_prefix(':')?.parse().ok()?)),
        };
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Some((h, p.parse().ok()?)),
        None => Some((authority, default_port)),
    }
}

/// Default [`Config::schedule_quantum`]: 250 µs, so a thread wakes at most 4000 times a
/// second to send (25 requests per wake-up at 100 000 req/s per thread). The grid adds no
/// lateness: each request leaves when due (see [`Config::schedule_quantum`]).
pub const DEFAULT_SCHEDULE_QUANTUM: Duration = Duration::from_micros(250);

/// Default [`Config::batch_wait`] when receives are timestamped: 50 µs, about that long
/// between a response and its connection's next request in the closed model.
pub const DEFAULT_BATCH_WAIT: Duration = Duration::from_micros(50);

/// Default [`Config::spin_polls`]: up to 50 non-blocking polls (~15 µs), adaptive.
pub const DEFAULT_SPIN_POLLS: u32 = 50;

/// Everything [`crate::run`] needs. Build it with [`Config::new`] and adjust the fields.
#[derive(Debug, Clone)]
pub struct Config {
    /// The target.
    pub target: Target,
    /// Number of connections (≥ 1).
    pub connections: usize,
    /// Number of event-loop threads (≥ 1; capped at `connections`).
    pub threads: usize,
    /// When the measured phase ends.
    pub limit: Limit,
    /// Open model: total requests per second across all connections.
    pub rate: Option<f64>,
    /// Open model: the step of the schedule's grid. One connection's requests are due
    /// every `connections / rate`; that interval is cut into as many equal slots as fit
    /// steps of at least this length, and each connection is due at the start of its slot,
    /// so the connections of a slot are due together and one wake-up sends them, each when
    /// it is due (the grid adds nothing to `schedule_lag` or to the corrected latency). A
    /// longer step: fewer, larger bursts and less CPU per request; a shorter one: a
    /// smoother arrival of requests. Zero gives every connection its own offset (evenly
    /// spread), at the cost of a wake-up per request at high rates.
    pub schedule_quantum: Duration,
    /// Closed model: how many times a thread polls without blocking, while responses are
    /// outstanding, before it sleeps (0: sleep at once). A few µs of polling keep the
    /// server's core from paying for a wake-up of this thread on every response.
    pub spin_polls: u32,
    /// The I/O back end of the event loops; `Auto` (the default) picks io_uring when the
    /// kernel allows it, else epoll.
    pub backend: Backend,
    /// A thread's blocking wait may sleep through several responses, so it wakes once per
    /// batch of responses rather than per response: less CPU per request, for both the
    /// generator and the server it no longer wakes as often. Closed model on io_uring: the
    /// wait is for the responses expected within this long (each request in flight counts
    /// for this over its connection's recent latency, at most one; at least one response,
    /// at most half of those in flight), with a 5 ms safety timeout for a server that
    /// stalls (see `crate::batch`); on epoll, which cannot wait for a count, until half
    /// are answered or this long has passed. Open model with timestamped receives: until
    /// the next send is due. Latencies end when the kernel timestamped each response's
    /// arrival, so the sleep is not in them; in the closed model a connection waits about
    /// this long before its next request. Without receive timestamps a latency may include
    /// the sleep. `None` (the default): [`DEFAULT_BATCH_WAIT`] when receives are
    /// timestamped and, in the closed model, the back end can wait for a count (io_uring),
    /// else off; zero: off.
    pub batch_wait: Option<Duration>,
    /// Warm-up before the measured window.
    pub warmup: Warmup,
    /// Per-request timeout (connect included).
    pub timeout: Duration,
    /// Reuse connections between requests (HTTP keep-alive).
    pub keepalive: bool,
    /// HTTP method.
    pub method: String,
    /// Extra request headers as (name, value).
    pub headers: Vec<(String, String)>,
    /// Request body.
    pub body: Option<Vec<u8>>,
    /// Several kinds of request mixed by weight. When empty (the default), every request is
    /// `method` on the URL's path with `body`. When set, the URL gives only host and port,
    /// `method` and `body` are not used, and `headers` are sent with every scenario.
    pub scenarios: Vec<Scenario>,
    /// Print a progress line on stderr once a second.
    pub progress: bool,
    /// The node this generator runs on (e.g. a pod's `spec.nodeName`), recorded in the
    /// result's `nodes`; `None` when unknown.
    pub node: Option<String>,
    /// Unix time in milliseconds at which to begin (the warm-up, if any, then the measured
    /// window). Several generators given the same time start together; a time already past
    /// starts at once, and one more than [`MAX_START_WAIT`] ahead is refused.
    pub start_at_ms: Option<u64>,
    /// Values of the `{{name}}` placeholders of the single request (`--value`); with
    /// `scenarios`, each scenario declares its own.
    pub values: BTreeMap<String, ValueSpec>,
    /// Seed of the values drawn for placeholders; `None` picks one (reported in the result).
    pub seed: Option<u64>,
    /// This generator's number among `instances` generators that share one seed (a
    /// Kubernetes indexed Job's completion index), so their connections draw different
    /// values and walk a sequence together.
    pub instance: u64,
    /// How many generators share the seed (at least 1).
    pub instances: u64,
    /// Before warm-up and measurement, connection `i` of `N` joins `ramp_up * i / N` after the
    /// start (closed model: its first request; open model: its schedule), so load rises
    /// linearly. Not recorded; its requests count in `warmup_requests`.
    pub ramp_up: Option<Duration>,
    /// Closed model: each connection waits this long after a response (or error) before its
    /// next request, like a user reading a page.
    pub think_time: Option<Duration>,
    /// The application protocol: HTTP/1.1 (the default) or HTTP/2 (by ALPN `h2` over TLS,
    /// with prior knowledge over cleartext: h2c).
    pub protocol: crate::protocol::Protocol,
    /// How `https://` targets are checked (server name, CA file, insecure skip).
    pub tls: crate::protocol::TlsOptions,
    /// HTTP/2: requests each connection keeps in flight at most (streams), lowered to the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS; `connections` × this is the concurrency.
    /// 1 for HTTP/1.1.
    pub max_concurrent_streams: usize,
}

/// The most HTTP/2 streams per connection [`Config::max_concurrent_streams`] may ask for.
pub const MAX_STREAMS: usize = 1000;

/// The longest ramp-up or think time.
pub const MAX_PAUSE: Duration = Duration::from_secs(3600);

/// The longest [`Config::start_at_ms`] may lie ahead: a bound on a generator idling.
pub const MAX_START_WAIT: Duration = Duration::from_secs(300);

impl Config {
    /// A closed-model config with 50 connections, 10 s, keep-alive, GET, 10 s timeout and
    /// one thread per available CPU (which respects affinity and cgroup quotas).
    pub fn new(target: Target) -> Self {
        Config {
            target,
            connections: 50,
            threads: default_threads(),
            limit: Limit::Duration(Duration::from_secs(10)),
            rate: None,
            schedule_quantum: DEFAULT_SCHEDULE_QUANTUM,
            spin_polls: DEFAULT_SPIN_POLLS,
            backend: Backend::Auto,
            batch_wait: None,
            warmup: Warmup::None,
            timeout: Duration::from_secs(10),
            keepalive: true,
            method: "GET".into(),
            headers: Vec::new(),
            body: None,
            scenarios: Vec::new(),
            progress: false,
            node: None,
            start_at_ms: None,
            values: BTreeMap::new(),
            seed: None,
            instance: 0,
            instances: 1,
            ramp_up: None,
            think_time: None,
            protocol: crate::protocol::Protocol::Http1,
            tls: crate::protocol::TlsOptions::default(),
            max_concurrent_streams: 1,
        }
    }

    /// Whether the run needs the TLS/HTTP/2 worker ([`crate::proto`]) rather than the
    /// cleartext HTTP/1.1 one.
    pub fn uses_proto_worker(&self) -> bool {
        self.target.tls || self.protocol == crate::protocol::Protocol::H2
    }

    /// The checks of TLS and HTTP/2 runs: what their worker does not do (yet).
    fn validate_proto(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::InvalidConfig(m.into()));
        let h2 = self.protocol == crate::protocol::Protocol::H2;
        if self.max_concurrent_streams == 0 || self.max_concurrent_streams > MAX_STREAMS {
            return bad("max concurrent streams must be between 1 and 1000");
        }
        if !h2 && self.max_concurrent_streams > 1 {
            return bad("max concurrent streams above 1 need --protocol h2 (HTTP/1.1 has one request per connection at a time)");
        }
        if !self.uses_proto_worker() {
            if self.tls != crate::protocol::TlsOptions::default() {
                return bad("TLS options need an https:// URL");
            }
            return Ok(());
        }
        let templated =
            !self.values.is_empty() || self.scenarios.iter().any(|s| !s.values.is_empty());
        if templated || self.ramp_up.is_some() || self.think_time.is_some() || !self.keepalive {
            return bad(
                "request templates, ramp-up, think time and no keep-alive are for cleartext \
                 HTTP/1.1 only (not yet over TLS or HTTP/2)",
            );
        }
        if h2
            && self
                .effective_scenarios()
                .iter()
                .any(|s| s.body.as_ref().is_some_and(|b| b.len() > 65_535))
        {
            return bad("HTTP/2 request bodies must fit the initial stream window (64 KiB)");
        }
        Ok(())
    }

    /// Checks the combination of settings; [`crate::run`] calls it first.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::InvalidConfig(m.into()));
        self.validate_proto()?;
        if self.connections == 0 {
            return bad("connections must be at least 1");
        }
        if self.threads == 0 {
            return bad("threads must be at least 1");
        }
        match self.limit {
            Limit::Requests(0) => return bad("requests must be at least 1"),
            Limit::Duration(d) if d.is_zero() => return bad("duration must be positive"),
            _ => {}
        }
        if let Some(rate) = self.rate {
            if !(rate.is_finite() && rate > 0.0) {
                return bad("rate must be a positive number of requests per second");
            }
            if !matches!(self.limit, Limit::Duration(_)) {
                return bad("--rate needs a duration (-d), not a request count");
            }
        }
        if self.schedule_quantum > Duration::from_millis(10) {
            return bad(
                "schedule quantum must be at most 10ms (requests leave in bursts up to that far apart)",
            );
        }
        if self
            .batch_wait
            .is_some_and(|d| d > Duration::from_millis(10))
        {
            return bad("batch wait must be at most 10ms (it may add that much to a latency)");
        }
        if self.timeout.is_zero() {
            return bad("timeout must be positive");
        }
        if let Warmup::UntilSteady { min, max } = self.warmup {
            if max.is_zero() || max > MAX_STEADY_WARMUP {
                return bad("the warm-up until steady needs a cap above 0 and at most 30m");
            }
            if min > max {
                return bad(
                    "--warmup (the least warm-up) must not exceed --warmup-until-steady (the most)",
                );
            }
        }
        if self.ramp_up.is_some_and(|r| r.is_zero() || r > MAX_PAUSE) {
            return bad("ramp-up must be positive and at most 1h");
        }
        if let Some(t) = self.think_time {
            if self.rate.is_some() {
                return bad(
                    "think time is for the closed model: with --rate the schedule sets the pace",
                );
            }
            if t.is_zero() || t > MAX_PAUSE {
                return bad("think time must be positive and at most 1h");
            }
        }
        // Only drawn values use the instance: an indexed Job sets JOB_COMPLETION_INDEX for
        // every generator, templated or not.
        let templated =
            !self.values.is_empty() || self.scenarios.iter().any(|s| !s.values.is_empty());
        if templated && (self.instances == 0 || self.instance >= self.instances) {
            return Err(Error::InvalidConfig(format!(
                "instance {} must be below instances {} (numbered from 0)",
                self.instance, self.instances
            )));
        }
        if !self.values.is_empty() && !self.scenarios.is_empty() {
            return bad(
                "with scenarios, declare values in each scenario of the file, not with --value",
            );
        }
        for s in self.effective_scenarios() {
            // The common headers (-H) go into every scenario's request before its own.
            let headers: Vec<(String, String)> =
                self.headers.iter().chain(&s.headers).cloned().collect();
            let request = Request {
                method: &s.method,
                path: &s.path,
                headers: &headers,
                body: s.body.as_deref(),
                values: &s.values,
            };
            if let Some(p) = request::problems(&request).into_iter().next() {
                return Err(Error::InvalidConfig(if self.scenarios.is_empty() {
                    p.message
                } else {
                    format!("{:?}: {}", s.name, p.message)
                }));
            }
            self.request_template_for(&s)
                .map_err(|why| Error::InvalidConfig(format!("{:?}: {why}", s.name)))?;
        }
        if !self.scenarios.is_empty() {
            scenario::validate(&self.scenarios)?;
            if self.target.path != "/" {
                return bad(
                    "with scenarios, give the URL without a path (http://host:port): \
                     each scenario has its own path",
                );
            }
        }
        Ok(())
    }

    /// The scenarios the run sends: `scenarios`, or the single request described by
    /// `method`, the URL's path and `body` (named `default`).
    pub fn effective_scenarios(&self) -> Vec<Scenario> {
        if !self.scenarios.is_empty() {
            return self.scenarios.clone();
        }
        vec![Scenario {
            name: "default".into(),
            method: self.method.clone(),
            path: self.target.path.clone(),
            headers: Vec::new(),
            body: self.body.clone(),
            weight: 1,
            values: self.values.clone(),
        }]
    }

    /// The request bytes of one scenario: its request line, `Host`, default `User-Agent`
    /// and `Accept` unless given, the common headers, the scenario's headers, `Connection:
    /// close` without keep-alive, `Content-Length` for a body, and the body.
    pub fn request_bytes_for(&self, s: &Scenario) -> Vec<u8> {
        let mut bytes = self.request_head_for(s, true).into_bytes();
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(s.body.as_deref().unwrap_or_default());
        bytes
    }

    /// The HTTP/2 header block of one scenario (HPACK, see [`crate::hpack`]): the
    /// pseudo-headers, default `user-agent` and `accept` unless given, the common headers and
    /// the scenario's, `content-length` for a body.
    pub(crate) fn h2_block_for(&self, s: &Scenario) -> Vec<u8> {
        let mut headers: Vec<(String, String)> =
            self.headers.iter().chain(&s.headers).cloned().collect();
        let has = |h: &[(String, String)], name: &str| {
            h.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
        };
        if !has(&headers, "user-agent") {
            let ua = concat!("benchrun-load/", env!("CARGO_PKG_VERSION"));
            headers.push(("user-agent".into(), ua.into()));
        }
        if !has(&headers, "accept") {
            headers.push(("accept".into(), "*/*".into()));
        }
        if let Some(body) = &s.body {
            if !has(&headers, "content-length") {
                headers.push(("content-length".into(), body.len().to_string()));
            }
        }
        crate::hpack::encode_request(
            &s.method,
            self.target.tls,
            &self.target.host,
            &s.path,
            &headers,
        )
    }

    /// The template of a scenario that declares values (`None` for one that does not),
    /// or why it cannot be sent.
    pub(crate) fn request_template_for(
        &self,
        s: &Scenario,
    ) -> std::result::Result<Option<Template>, String> {
        if s.values.is_empty() {
            return Ok(None);
        }
        let body = s.body.as_deref();
        let head = self.request_head_for(s, !crate::template::body_has_values(body));
        Template::compile(&head, body, &s.values).map(Some)
    }

    /// The request line and header lines of a scenario, each ending in CRLF, without the
    /// blank line; `Content-Length` for a body only when `length` is set.
    fn request_head_for(&self, s: &Scenario, length: bool) -> String {
        let mut r = format!("{} {} HTTP/1.1\r\n", s.method, s.path);
        let all = || self.headers.iter().chain(&s.headers);
        let has = |name: &str| all().any(|(k, _)| k.eq_ignore_ascii_case(name));
        if !has("host") {
            r.push_str(&format!("Host: {}\r\n", self.target.host));
        }
        if !has("user-agent") {
            r.push_str(concat!(
                "User-Agent: benchrun-load/",
                env!("CARGO_PKG_VERSION"),
                "\r\n"
            ));
        }
        if !has("accept") {
            r.push_str("Accept: */*\r\n");
        }
        for (k, v) in all() {
            r.push_str(&format!("{k}: {v}\r\n"));
        }
        if !self.keepalive {
            r.push_str("Connection: close\r\n");
        }
        if let (Some(body), true) = (&s.body, length) {
            if !has("content-length") {
                r.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
        }
        r
    }
}

/// Threads to use by default: `available_parallelism` (affinity- and cgroup-aware).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Parses a duration such as `10s`, `500ms`, `2m`, `1h`, `250us` or `1.5s`.
pub fn parse_duration(text: &str) -> Result<Duration> {
    let bad = || Error::InvalidValue {
        value: text.to_string(),
        reason: "expected a duration like 10s, 500ms or 2m".into(),
    };
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "us" | "µs" => n / 1e6,
        "ms" => n / 1e3,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || !(0.0..=1e9).contains(&secs) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a warm-up spec: a duration (`5s`) or a plain request count (`1000`).
pub fn parse_warmup(text: &str) -> Result<Warmup> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let n: u64 = t.parse().map_err(|_| Error::InvalidValue {
            value: text.to_string(),
            reason: "request count out of range".into(),
        })?;
        return Ok(if n == 0 {
            Warmup::None
        } else {
            Warmup::Requests(n)
        });
    }
    let d = parse_duration(t)?;
    Ok(if d.is_zero() {
        Warmup::None
    } else {
        Warmup::Duration(d)
    })
}

/// The warm-up of `--warmup` and `--warmup-until-steady`: `until_steady` (the cap) turns the
/// warm-up into one that lasts until the target is steady, `warmup` (a duration, if given)
/// then being the least; a request count cannot be combined with it.
pub fn parse_warmups(warmup: Option<&str>, until_steady: Option<&str>) -> Result<Warmup> {
    let least = warmup
        .map(parse_warmup)
        .transpose()?
        .unwrap_or(Warmup::None);
    let Some(cap) = until_steady else {
        return Ok(least);
    };
    let max = parse_duration(cap)?;
    let min = match least {
        Warmup::None => Duration::ZERO,
        Warmup::Duration(d) => d,
        _ => {
            return Err(Error::InvalidValue {
                value: warmup.unwrap_or_default().to_string(),
                reason: "with --warmup-until-steady, --warmup is the least warm-up: a duration, not a request count".into(),
            })
        }
    };
    Ok(Warmup::UntilSteady { min, max })
}

/// Parses a `Name: value` header.
pub fn parse_header(text: &str) -> Result<(String, String)> {
    let (k, v) = text.split_once(':').ok_or_else(|| Error::InvalidValue {
        value: text.to_string(),
        reason: "expected a header like \"Name: value\"".into(),
    })?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_common_units() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("10").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn warmup_is_a_duration_or_a_count() {
        assert_eq!(
            parse_warmup("5s").unwrap(),
            Warmup::Duration(Duration::from_secs(5))
        );
        assert_eq!(parse_warmup("1000").unwrap(), Warmup::Requests(1000));
        assert_eq!(parse_warmup("0").unwrap(), Warmup::None);
        assert!(parse_warmup("five").is_err());
    }

    #[test]
    fn a_warmup_until_steady_has_a_cap_and_a_duration_at_least() {
        let s = Duration::from_secs;
        assert_eq!(
            parse_warmups(Some("5s"), None).unwrap(),
            Warmup::Duration(s(5))
        );
        assert_eq!(
            parse_warmups(None, Some("1m")).unwrap(),
            Warmup::UntilSteady {
                min: Duration::ZERO,
                max: s(60)
            }
        );
        assert_eq!(
            parse_warmups(Some("5s"), Some("1m")).unwrap(),
            Warmup::UntilSteady {
                min: s(5),
                max: s(60)
            }
        );
        let e = parse_warmups(Some("1000"), Some("1m"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a duration, not a request count"), "{e}");
        let mut c = Config::new(Target::parse("http://127.0.0.1:1/").unwrap());
        c.warmup = parse_warmups(Some("2m"), Some("1m")).unwrap();
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("must not exceed"));
        c.warmup = parse_warmups(None, Some("0s")).unwrap();
        assert!(c.validate().is_err());
        c.warmup = parse_warmups(None, Some("31m")).unwrap();
        assert!(c.validate().is_err());
    }

    #[test]
    fn http_and_https_urls_parse_with_their_default_ports() {
        let t = Target::parse("http://127.0.0.1:8080/a?b=1").unwrap();
        assert_eq!(
            (t.port, t.path.as_str(), t.host.as_str()),
            (8080, "/a?b=1", "127.0.0.1:8080")
        );
        let t = Target::parse("http://127.0.0.1").unwrap();
        assert_eq!((t.port, t.path.as_str()), (80, "/"));
        assert!(!t.tls);
        let t = Target::parse("https://127.0.0.1/").unwrap();
        assert_eq!((t.port, t.tls, t.host.as_str()), (443, true, "127.0.0.1"));
        let t = Target::parse("https://127.0.0.1:8443").unwrap();
        assert_eq!((t.port, t.host.as_str()), (8443, "127.0.0.1:8443"));
        assert!(Target::parse("ftp://x/").is_err());
        assert!(Target::parse("http://127.0.0.1:99999/").is_err());
        assert!(Target::parse("http://[::1]:8080/").is_ok());
    }

    #[test]
    fn tls_and_http2_runs_refuse_what_their_worker_does_not_do() {
        let mut c = Config::new(Target::parse("https://127.0.0.1:1/").unwrap());
        assert!(c.uses_proto_worker() && c.validate().is_ok());
        c.max_concurrent_streams = 2;
        assert!(c.validate().is_err(), "streams need h2");
        c.protocol = crate::protocol::Protocol::H2;
        assert!(c.validate().is_ok());
        c.max_concurrent_streams = MAX_STREAMS + 1;
        assert!(c.validate().is_err());
        c.max_concurrent_streams = 10;
        c.think_time = Some(Duration::from_millis(5));
        assert!(
            c.validate().is_err(),
            "think time is cleartext HTTP/1.1 only"
        );
        let mut plain = Config::new(Target::parse("http://127.0.0.1:1/").unwrap());
        assert!(!plain.uses_proto_worker());
        plain.tls.insecure_skip_verify = true;
        assert!(plain.validate().is_err(), "TLS options need https");
    }

    #[test]
    fn urls_that_would_break_the_request_line_are_rejected() {
        for bad in [
            "http://127.0.0.1:8080/a b",
            "http://127.0.0.1:8080/a\r\nX-Injected: 1",
            "http://127.0.0.1:8080/?q=a\tb",
            "http://127.0.0.1:8080/\0",
            "http://local\r\nhost:8080/",
        ] {
            let e = Target::parse(bad).unwrap_err().to_string();
            assert!(e.contains("visible ASCII"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn headers_that_would_inject_or_misframe_are_rejected_before_sending() {
        let mut c = Config::new(Target::parse("http://127.0.0.1:1/").unwrap());
        let check = |c: &Config, want: &str| {
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        };
        c.headers = vec![parse_header("X-A: b\r\nX-Injected: 1").unwrap()];
        check(&c, "no control characters");
        c.headers = vec![("X A".into(), "1".into())];
        check(&c, "must be an RFC 9110 token");
        c.headers = vec![parse_header("Content-Length: 5").unwrap()];
        c.body = Some(b"{}".to_vec());
        check(&c, "does not match the body (2 bytes)");
        c.headers = vec![parse_header("Transfer-Encoding: chunked").unwrap()];
        check(&c, "Transfer-Encoding");
        c.headers = vec![parse_header("Content-Length: 2").unwrap()];
        assert!(c.validate().is_ok());
        c.method = "GET / HTTP/1.1\r\nX:".into();
        check(&c, "must be an RFC 9110 token");
    }

    #[test]
    fn rate_without_duration_and_zero_connections_are_rejected() {
        let mut c = Config::new(Target::parse("http://127.0.0.1:1/").unwrap());
        assert!(c.validate().is_ok());
        c.connections = 0;
        assert!(c.validate().is_err());
        c.connections = 1;
        c.rate = Some(10.0);
        c.limit = Limit::Requests(10);
        assert!(c.validate().is_err());
    }

    #[test]
    fn request_is_serialized_once_with_close_when_keepalive_is_off() {
        let mut c = Config::new(Target::parse("http://127.0.0.1:8080/x").unwrap());
        c.keepalive = false;
        c.method = "POST".into();
        c.body = Some(b"hi".to_vec());
        let r = String::from_utf8(c.request_bytes_for(&c.effective_scenarios()[0])).unwrap();
        assert!(r.starts_with("POST /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
        assert!(r.contains("Connection: close\r\n"));
        assert!(r.ends_with("Content-Length: 2\r\n\r\nhi"));
    }
}
