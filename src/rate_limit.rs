//! Why an open-model window fell short of its offered rate: the generator's CPU, the target
//! (a backlog answered late, or its CPU at its limit) or the generator's connections. Pure
//! functions of a cell's result, shared by the `RateNotMet` warning (`results::wire`), the
//! searches and capacity fits, and the comparisons (a connection-bound side is not compared).

use benchrun_api::CellResult;

/// Open model: an achieved rate below this fraction of the offered rate raises `RateNotMet`.
pub const MIN_RATE_MET: f64 = 0.95;
/// A target at or above this fraction of its CPU limit was the limit of an unmet rate.
pub const TARGET_CPU: f64 = 0.9;
/// What kept an open-model window below its offered rate ([`rate_limit`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RateLimit {
    /// The generator's CPU was at its limit (`GeneratorBound`, described).
    GeneratorCpu(String),
    /// The target: the generator sent the requests on schedule and the target answered some
    /// too late (`late` of them: after the window's end plus its response lag).
    TargetBacklog {
        /// Requests answered too late.
        late: i64,
    },
    /// The target, at this fraction of its CPU limit (at least [`TARGET_CPU`]).
    TargetCpu(f64),
    /// The generator's connections: requests waited for a free one while neither CPU was at
    /// its limit.
    Connections,
}

impl RateLimit {
    /// Whether the limit was the generator's (its CPU or its connections): the window measured
    /// the generator, not the target.
    pub fn is_generator(&self) -> bool {
        matches!(self, RateLimit::GeneratorCpu(_) | RateLimit::Connections)
    }
}

/// The length of the measured window in seconds, from the result's window times.
fn window_secs(r: &CellResult) -> Option<f64> {
    let (a, b) = (r.window_start.as_ref()?, r.window_end.as_ref()?);
    let ms = b.0.as_millisecond() - a.0.as_millisecond();
    (ms > 0).then(|| ms as f64 / 1000.0)
}

/// Open model: how much of the shortfall the generator never sent and how much it sent that
/// the target answered too late, as (unsent, late). The window's due requests are its rate
/// times its length; those it did not send in the window were pushed out of it by the
/// schedule lag (they waited for a free connection or for the generator's CPU).
pub fn shortfall(r: &CellResult) -> Option<(f64, f64)> {
    let rate = r.coordinates.rate.filter(|n| *n > 0)? as f64;
    let sent = r.requests? as f64;
    let due = rate * window_secs(r)?;
    let late = r.drain.as_ref().and_then(|d| d.late).unwrap_or(0) as f64;
    Some(((due - sent).max(0.0), late))
}

/// The mean time a request of the window spent on its connection, milliseconds: its latency
/// from the due time less the time it waited to be sent (the schedule lag).
pub fn service_ms(r: &CellResult) -> Option<f64> {
    let latency = r.latency_ms.as_ref()?.mean;
    let lag = r.schedule_lag_ms.as_ref().map_or(0.0, |l| l.mean);
    let ms = latency - lag;
    (ms > 0.0).then_some(ms)
}

/// `RateNotMet`'s cause: `None` unless the open model's achieved throughput stayed below
/// [`MIN_RATE_MET`] of the offered rate. The schedule lag's share of the shortfall tells the
/// generator from the target: the generator's CPU when it was at its limit
/// (`generator_bound`); else the target when most of the shortfall was sent on schedule and
/// answered too late (a backlog, [`shortfall`]) or when its CPU was at [`TARGET_CPU`] of its
/// limit or more; else the connections (requests waited for a free one).
pub fn rate_limit(r: &CellResult, generator_bound: Option<String>) -> Option<RateLimit> {
    let rate = r.coordinates.rate.filter(|n| *n > 0)? as f64;
    let achieved = r.throughput?;
    if achieved >= MIN_RATE_MET * rate {
        return None;
    }
    if let Some(generator) = generator_bound {
        return Some(RateLimit::GeneratorCpu(generator));
    }
    if let Some((unsent, late)) = shortfall(r) {
        if late > 0.0 && unsent <= late {
            return Some(RateLimit::TargetBacklog { late: late as i64 });
        }
    }
    if let Some(f) = r.usage.cpu_avg_of_limit.filter(|f| *f >= TARGET_CPU) {
        return Some(RateLimit::TargetCpu(f));
    }
    Some(RateLimit::Connections)
}
