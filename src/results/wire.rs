//! What the wire saw: the load pods' TCP counters in the status, and the warnings that name a
//! mechanism from them: `RateNotMet`, `SynRetransmits`, `EphemeralPortsLow` and `Resets`.
//!
//! Pure: the mapping is a function of the merged load result, each warning a function of the
//! cell's result; `docs/metrics.md` lists the thresholds.

use benchrun_api::{CellResult, RetransmitStep, ScheduleLagMs, TcpCounters, Warning, WarningCode};
use benchrun_wire::LoadResult;

use crate::num::{format_ms, format_rate, round};

/// Open model: an achieved rate below this fraction of the offered rate raises `RateNotMet`.
pub const MIN_RATE_MET: f64 = 0.95;
/// A target at or above this fraction of its CPU limit was the limit of an unmet rate.
pub const TARGET_CPU: f64 = 0.9;
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
/// rate; says what limited it — the generator's CPU (`generator_bound` describes it), the
/// target's CPU (at [`TARGET_CPU`] of its limit or more), or else the connections (each
/// carries one request at a time, so requests waited for a free one: the schedule lag).
pub fn rate_not_met(r: &CellResult, generator_bound: Option<String>) -> Option<Warning> {
    let rate = r.coordinates.rate.filter(|n| *n > 0)? as f64;
    let achieved = r.throughput?;
    if achieved >= MIN_RATE_MET * rate {
        return None;
    }
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
    let target = r.usage.cpu_avg_of_limit;
    let why = if let Some(generator) = generator_bound {
        format!("the generator was the limit: {generator}{lag} — add load pods (load.pods) or CPU (load.resources.cpu)")
    } else if let Some(f) = target.filter(|f| *f >= TARGET_CPU) {
        format!(
            "the target was the limit: it used {:.0}% of its CPU limit ({:.2} cores){lag} — this is its capacity at cpu={}; offer less, or give it more CPU or replicas",
            f * 100.0,
            r.usage.cpu_avg_cores.unwrap_or_default(),
            r.coordinates.cpu
        )
    } else {
        let n = r.coordinates.connections;
        let latency = r.latency_ms.as_ref().map_or(0.0, |l| l.mean);
        let target = target.map_or("not known (no CPU figures)".into(), |f| {
            format!("at {:.0}% of its CPU limit", f * 100.0)
        });
        format!(
            "the generator's connections were the limit: the target was {target} and the generator's CPU below its limit, but each of the {n} connections carries one request at a time (HTTP/1.1), so requests waited for a free one{lag}; by Little's law {achieved:.0} req/s × {} = {:.1} in flight — add connections (load.connections)",
            format_ms(latency),
            achieved * latency / 1000.0
        )
    };
    Some(Warning::new(
        WarningCode::RateNotMet,
        format!("{head}: {why}"),
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
