//! What the wire saw: the load pods' TCP counters in the status, and the warnings that name a
//! mechanism from them: `RateNotMet`, `SynRetransmits`, `EphemeralPortsLow` and `Resets`.
//!
//! Pure: the mapping is a function of the merged load result, each warning a function of the
//! cell's result; `docs/metrics.md` lists the thresholds.

use benchrun_api::{
    CellResult, Drain, RetransmitStep, ScheduleLagMs, TcpCounters, Warning, WarningCode,
};
use benchrun_wire::LoadResult;

use crate::num::{format_ms, format_rate, round};
pub use crate::rate_limit::{
    rate_limit, service_ms, shortfall, RateLimit, MIN_RATE_MET, TARGET_CPU,
};

/// Ports in use above this fraction of the ephemeral range raise `EphemeralPortsLow`.
pub const MAX_PORTS_IN_USE: f64 = 0.8;
/// Resets (established connections reset plus RSTs sent) above this fraction of the requests
/// and connections opened raise `Resets`...
pub const MAX_RESETS: f64 = 0.001;
/// ... when there are also more than this many.
pub const MIN_RESETS: i64 = 10;
/// The kernel's SYN retransmit steps in seconds: a connect whose SYN was retransmitted k
/// times took 2^(k+1) − 1 s (initial timeout 1 s, doubling).
pub const RETRANSMIT_STEPS: [i64; 5] = [1, 3, 7, 15, 31];

/// The status `tcp` of a measurement: the generator's counters over the window and the
/// connects at the SYN retransmit steps; `None` when the generator read no counters.
pub fn tcp_counters(load: &LoadResult) -> Option<TcpCounters> {
    let t = load.tcp.as_ref()?;
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    Some(TcpCounters {
        connections_opened: int(t.active_opens),
        failed_connection_attempts: int(t.attempt_fails),
        resets_while_established: int(t.estab_resets),
        resets_sent: int(t.out_rsts),
        aborts_on_close: int(t.abort_on_close),
        retransmitted_segments: int(t.retrans_segs),
        syn_retransmits: int(t.syn_retrans),
        timeouts: int(t.timeouts),
        connects_at_retransmit_steps: retransmit_steps(&load.histograms.connect),
        ports_in_use: t.ports_in_use.map(int),
        time_wait: t.time_wait.map(int),
        ephemeral_ports: t.port_range.map(|[a, b]| i64::from(b) - i64::from(a) + 1),
    })
}

/// Connects per SYN retransmit step (from the step to 20 % or 200 ms past it, whichever is
/// more) in a connect-time histogram (base64 HDR, µs); steps without any are left out, and an
/// unreadable histogram has none.
pub fn retransmit_steps(histogram: &str) -> Vec<RetransmitStep> {
    let Ok(h) = benchrun_wire::hist::decode(histogram) else {
        return Vec::new();
    };
    if h.is_empty() {
        return Vec::new();
    }
    RETRANSMIT_STEPS
        .iter()
        .filter_map(|&s| {
            let low = s as u64 * 1_000_000;
            if h.max() < low {
                return None;
            }
            let high = low + (low / 5).max(200_000);
            let n = h.count_between(h.lowest_equivalent(low), high.min(h.max()));
            (n > 0).then_some(RetransmitStep {
                seconds: s,
                connects: i64::try_from(n).unwrap_or(i64::MAX),
            })
        })
        .collect()
}

/// The open model's schedule lag in milliseconds.
pub fn schedule_lag_ms(load: &LoadResult) -> Option<ScheduleLagMs> {
    let lag = load.schedule_lag.as_ref()?;
    Some(ScheduleLagMs {
        mean: round(lag.mean_us / 1000.0, 3),
        max: round(lag.max_us as f64 / 1000.0, 3),
    })
}

/// The window's drain as the status shows it; `None` in results of generators without
/// window counts.
pub fn drain(load: &LoadResult) -> Option<Drain> {
    let c = load.window_counts.as_ref()?;
    let int = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
    Some(Drain {
        in_flight: int(c.in_flight_at_end),
        ms: c.drain_ms as f64,
        response_lag_ms: c.response_lag_ms.map(|l| round(l, 3)),
        late: (load.model == benchrun_wire::Model::Open).then(|| int(c.late)),
    })
}

/// Every warning of this module that applies. `generator_bound` is whether the generator's
/// CPU was at its limit (decided with `GeneratorBound`).
pub fn warnings(r: &CellResult, generator_bound: Option<String>) -> Vec<Warning> {
    [
        rate_not_met(r, generator_bound),
        syn_retransmits(r),
        ephemeral_ports_low(r),
        resets(r),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `RateNotMet`: open model, the achieved throughput below [`MIN_RATE_MET`] of the offered
/// rate; says what limited it ([`rate_limit`]) with the figures behind it and what to do.
pub fn rate_not_met(r: &CellResult, generator_bound: Option<String>) -> Option<Warning> {
    let limit = rate_limit(r, generator_bound)?;
    let rate = r.coordinates.rate.unwrap_or_default() as f64;
    let achieved = r.throughput.unwrap_or_default();
    let head = format!(
        "achieved {achieved:.0} req/s of the {rate:.0} req/s offered ({})",
        format_rate(achieved / rate)
    );
    let lag = r.schedule_lag_ms.as_ref().map_or(String::new(), |l| {
        format!(
            "; requests were sent {} late on average (at most {})",
            format_ms(l.mean),
            format_ms(l.max)
        )
    });
    let unsent = shortfall(r).map_or(String::new(), |(unsent, _)| {
        if unsent >= 1.0 {
            format!(", and {unsent:.0} requests due in the window were never sent in it")
        } else {
            String::new()
        }
    });
    let n = r.coordinates.connections;
    let service = service_ms(r).unwrap_or_default();
    let target = r.usage.cpu_avg_of_limit;
    let why = match limit {
        RateLimit::GeneratorCpu(generator) => format!("the generator was the limit: {generator}{lag}{unsent} — add load pods (load.pods) or CPU (load.resources.cpu)"),
        RateLimit::TargetBacklog { late } => {
            let cpu = target.map_or(String::new(), |f| format!(" (at {:.0}% of its CPU limit)", f * 100.0));
            let response_lag = r.drain.as_ref().and_then(|d| d.response_lag_ms).unwrap_or_default();
            format!(
                "the target was the limit{cpu}: the generator sent the requests on schedule{lag}, but the target answered {late} of the {} sent later than {} after the window's end (the time its first responses took): it queued what it could not serve — this is above its capacity; offer less, or give it more CPU or replicas",
                r.requests.unwrap_or_default(),
                format_ms(response_lag)
            )
        }
        RateLimit::TargetCpu(f) => format!(
            "the target was the limit: it used {:.0}% of its CPU limit ({:.2} cores){lag}{unsent} — this is its capacity at cpu={}; offer less, or give it more CPU or replicas",
            f * 100.0,
            r.usage.cpu_avg_cores.unwrap_or_default(),
            r.coordinates.cpu
        ),
        RateLimit::Connections => {
            let target = target.map_or("not known (no CPU figures)".into(), |f| {
                format!("at {:.0}% of its CPU limit", f * 100.0)
            });
            let ceiling = if service > 0.0 { n as f64 * 1000.0 / service } else { 0.0 };
            format!(
                "the generator's connections were the limit: the target was {target} and the generator's CPU below its limit, but each of the {n} connections carries one request at a time (HTTP/1.1), so requests waited for a free one{lag}{unsent}; at {} per request on a connection they carry at most {n} ÷ {} = {ceiling:.0} req/s — add connections (load.connections ≥ {:.0}, the rate × that time), unless the target's responses slowed under this load",
                format_ms(service),
                format_ms(service),
                (rate * service / 1000.0).ceil()
            )
        }
    };
    Some(Warning::new(
        WarningCode::RateNotMet,
        format!("{head}: {why}"),
    ))
}

/// Why an open-model measurement measured the generator's connections rather than the
/// target, for a search or a capacity figure; `None` when it did not. Each connection carries
/// one request at a time, so `connections` carry at most `connections ÷ time per request`;
/// when that ceiling, at the fastest mean time on a connection measured for the target
/// configuration (this measurement's and its `peers'`, its other measurements: a lighter one
/// shows the target unloaded), is below the offered rate, the requests queued in the
/// generator whatever the target did: the rate reached is the connections' ceiling and the
/// latency includes the wait for a free connection. A target whose responses slowed under
/// the load (a queue, as at its capacity) was faster in a lighter measurement, has a ceiling
/// above the rate there, and is not excused.
pub fn connection_bound(r: &CellResult, peers: &[&CellResult]) -> Option<String> {
    let rate = r.coordinates.rate.filter(|n| *n > 0)? as f64;
    let n = r.coordinates.connections;
    let (fastest, at) = std::iter::once(r)
        .chain(peers.iter().copied())
        .filter(|p| p.outcome == benchrun_api::Outcome::Measured)
        .filter_map(|p| Some((service_ms(p)?, p.coordinates.rate)))
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    let ceiling = f64::from(n) * 1000.0 / fastest;
    if ceiling >= rate {
        return None;
    }
    let at = match at {
        Some(a) if a as f64 != rate => format!(" (measured at {a} req/s)"),
        _ => String::new(),
    };
    Some(format!(
        "the generator's {n} connections could not carry {rate:.0} req/s: each carries one request at a time, and at the fastest mean time per request measured for this configuration, {}{at}, {n} connections carry at most {ceiling:.1} req/s (connections ÷ time), so requests waited for a free connection and this measurement shows the connections' ceiling, not the target's capacity — add connections (load.connections ≥ {:.0}, the rate × that time)",
        format_ms(fastest),
        (rate * fastest / 1000.0).ceil()
    ))
}

/// `SynRetransmits`: the kernel retransmitted SYNs and connects took its retransmit steps.
pub fn syn_retransmits(r: &CellResult) -> Option<Warning> {
    let t = r.tcp.as_ref().filter(|t| t.syn_retransmits > 0)?;
    let at_steps: i64 = t
        .connects_at_retransmit_steps
        .iter()
        .map(|s| s.connects)
        .sum();
    if at_steps == 0 {
        return None;
    }
    let steps: Vec<String> = t
        .connects_at_retransmit_steps
        .iter()
        .map(|s| format!("{} s: {}", s.seconds, s.connects))
        .collect();
    let connects = r.connect_times_ms.as_ref().map_or(0, |c| c.count);
    Some(Warning::new(WarningCode::SynRetransmits, format!(
        "the kernel retransmitted {} SYNs and {at_steps} of {connects} connects took one of its retransmit steps ({}): SYNs were dropped, most likely by a full listen backlog on the target (its accept queue: the server's backlog setting and net.core.somaxconn), so these connect times are the kernel's timeouts, not the server's work — raise the target's backlog, accept faster, or keep connections alive",
        t.syn_retransmits,
        steps.join(", ")
    )))
}

/// `EphemeralPortsLow`: a load pod held more than [`MAX_PORTS_IN_USE`] of its ephemeral range.
pub fn ephemeral_ports_low(r: &CellResult) -> Option<Warning> {
    let t = r.tcp.as_ref()?;
    let (used, range) = (t.ports_in_use?, t.ephemeral_ports.filter(|n| *n > 0)?);
    let share = used as f64 / range as f64;
    if share <= MAX_PORTS_IN_USE {
        return None;
    }
    let advice = if r.coordinates.keeps_alive() {
        "add load pods (each has its own ports) or widen net.ipv4.ip_local_port_range"
    } else {
        "each request without keep-alive leaves its port in TIME_WAIT for 60 s: keep connections alive, add load pods (each has its own ports), or widen net.ipv4.ip_local_port_range"
    };
    Some(Warning::new(WarningCode::EphemeralPortsLow, format!(
        "a load pod held {used} of its {range} ephemeral ports ({:.0}%, {} in TIME_WAIT); past the range connects fail at once (connect errors, counted as read) and the rate is the port supply's — {advice}",
        share * 100.0,
        t.time_wait.unwrap_or_default()
    )))
}

/// `Resets`: connections reset while established plus RSTs sent above [`MAX_RESETS`] of the
/// requests and connections opened, and more than [`MIN_RESETS`].
pub fn resets(r: &CellResult) -> Option<Warning> {
    let t = r.tcp.as_ref()?;
    let resets = t.resets_while_established.saturating_add(t.resets_sent);
    let base = r
        .requests
        .unwrap_or_default()
        .saturating_add(t.connections_opened);
    if resets <= MIN_RESETS || (resets as f64) <= MAX_RESETS * base as f64 {
        return None;
    }
    Some(Warning::new(WarningCode::Resets, format!(
        "{} connections were reset while established and the generator sent {} RSTs ({} of them aborting connections it closed with unread data, e.g. after a timeout) against {} requests: connections were torn down rather than closed, and the figures include what that cost — read the error classes (read, timeout), and check the target's connection limits, idle timeouts and any proxy in the path",
        t.resets_while_established,
        t.resets_sent,
        t.aborts_on_close,
        r.requests.unwrap_or_default()
    )))
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
