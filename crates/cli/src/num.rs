//! Number and label formatting shared by the renderers. Pure.

use benchrun_api::{CellResult, Coordinates, Outcome, SloVerdict};

/// Shown where a figure is absent (no Prometheus data, failed measurement).
pub const NONE: &str = "-";

/// Whole numbers from 100 up, one decimal from 10, two below: `0.84`, `12.3`, `250`.
fn about_three_digits(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Requests per second: whole numbers from 100 up, more digits below.
pub fn rps(v: f64) -> String {
    about_three_digits(v)
}

/// An optional figure rendered with `render`, or [`NONE`] when it is absent.
pub fn or_none<T>(v: Option<T>, render: impl FnOnce(T) -> String) -> String {
    v.map_or_else(|| NONE.into(), render)
}

/// Milliseconds with three significant-ish digits: `0.84`, `12.3`, `250`.
pub fn ms(v: f64) -> String {
    about_three_digits(v)
}

/// A fraction as a percentage with two decimals (`0.0123` → `1.23`); zero stays `0`.
pub fn percent2(fraction: f64) -> String {
    if fraction == 0.0 {
        "0".into()
    } else {
        format!("{:.2}", fraction * 100.0)
    }
}

/// Average CPU in cores and, when known, as a share of the limit: `0.97 (97%)`.
pub fn cpu(avg_cores: Option<f64>, of_limit: Option<f64>) -> String {
    match (avg_cores, of_limit) {
        (Some(c), Some(f)) => format!("{c:.2} ({:.0}%)", f * 100.0),
        (Some(c), None) => format!("{c:.2}"),
        _ => NONE.into(),
    }
}

/// Bytes as whole MiB.
pub fn mib(bytes: Option<i64>) -> String {
    bytes.map_or_else(|| NONE.into(), |b| format!("{:.0}", b as f64 / 1048576.0))
}

/// `Met`, `Violated` or `-`: the SLO verdict without its details.
pub fn slo_verdict(slo: Option<&SloVerdict>) -> String {
    slo.map_or_else(|| NONE.into(), |s| s.word().to_string())
}

/// A one-line name for a cell: `express/hello cpu=1 mem=1Gi replicas=1 c=100 rate=500/s`,
/// with `n=` for a request-bounded cell and `keepalive=off` when it had none.
pub fn coordinates(c: &Coordinates) -> String {
    let mut s = format!(
        "{}/{} cpu={} mem={} replicas={} c={}",
        c.target, c.scenario, c.cpu, c.memory, c.replicas, c.connections
    );
    if let Some(n) = c.requests {
        s.push_str(&format!(" n={n}"));
    }
    s.push_str(&keep_alive_suffix(c.keep_alive));
    if let Some(r) = c.rate {
        s.push_str(&format!(" rate={r}/s"));
    }
    s
}

/// A capacity entry's configuration in one line: `express/hello cpu=1 mem=1Gi replicas=1`,
/// with `keepalive=off` when its measurements had none.
pub fn configuration(c: &benchrun_api::Capacity) -> String {
    format!(
        "{}/{} cpu={} mem={} replicas={}{}",
        c.target,
        c.scenario,
        c.cpu,
        c.memory,
        c.replicas,
        keep_alive_suffix(c.keep_alive)
    )
}

/// ` keepalive=off` for cells (or capacity entries) measured without keep-alive, else empty.
pub fn keep_alive_suffix(keep_alive: Option<bool>) -> String {
    if keep_alive == Some(false) {
        " keepalive=off".into()
    } else {
        String::new()
    }
}

/// `#3` or, for a repeat, `#3 r1`, followed by the coordinates.
pub fn measurement(r: &CellResult) -> String {
    if r.repeat > 0 {
        format!("#{} r{} {}", r.cell, r.repeat, coordinates(&r.coordinates))
    } else {
        format!("#{} {}", r.cell, coordinates(&r.coordinates))
    }
}

/// Whether the measurement produced figures (`outcome` is `Measured`). A failed one has
/// none: renderers show its figures as absent, also when an older operator stored zeros.
pub fn measured(r: &CellResult) -> bool {
    r.outcome != Outcome::Failed
}

/// The measured repeats among `results` of the cell at `coords`.
pub fn measured_repeats<'a>(
    results: &'a [CellResult],
    coords: &Coordinates,
) -> Vec<&'a CellResult> {
    results
        .iter()
        .filter(|r| measured(r) && r.coordinates == *coords)
        .collect()
}

/// Why the cell at `coords` in `results` may not be compared with another run's
/// ([`benchrun_api::healthy`]: a repeat failed every time, was OOM-killed, generator-bound or
/// had more than 1 % errors); `None` when it may, or when the run has no such cell.
pub fn not_comparable(results: &[CellResult], coords: &Coordinates) -> Option<String> {
    let repeats: Vec<&CellResult> = results
        .iter()
        .filter(|r| r.coordinates == *coords)
        .collect();
    if repeats.is_empty() {
        return None;
    }
    benchrun_api::healthy::side_unhealthy(&repeats, benchrun_api::healthy::DEFAULT_MAX_ERROR_RATE)
}

/// Mean throughput and p99 over the measured repeats of one cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Mean requests per second.
    pub throughput: f64,
    /// Mean p99 latency in milliseconds.
    pub p99_ms: f64,
    /// Mean requests per second per CPU core used, over the repeats that have CPU figures.
    pub per_core: Option<f64>,
}

impl Figures {
    /// The means over those of `repeats` (see [`measured_repeats`]) that have a throughput
    /// and a latency; `None` when none has.
    pub fn mean(repeats: &[&CellResult]) -> Option<Figures> {
        let pairs: Vec<(f64, f64)> = repeats
            .iter()
            .filter_map(|r| Some((r.throughput?, r.latency_ms.as_ref()?.p99)))
            .collect();
        let n = pairs.len() as f64;
        let per_core: Vec<f64> = repeats.iter().filter_map(|r| r.requests_per_core).collect();
        (!pairs.is_empty()).then(|| Figures {
            throughput: pairs.iter().map(|p| p.0).sum::<f64>() / n,
            p99_ms: pairs.iter().map(|p| p.1).sum::<f64>() / n,
            per_core: (!per_core.is_empty())
                .then(|| per_core.iter().sum::<f64>() / per_core.len() as f64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_about_three_significant_digits() {
        assert_eq!(rps(5405.4), "5405");
        assert_eq!(rps(42.25), "42.2");
        assert_eq!(ms(0.843), "0.84");
        assert_eq!(ms(250.4), "250");
        assert_eq!(percent2(0.0123), "1.23");
        assert_eq!(percent2(0.0), "0");
        assert_eq!(cpu(Some(0.972), Some(0.972)), "0.97 (97%)");
        assert_eq!(cpu(None, None), "-");
        assert_eq!(mib(Some(268_435_456)), "256");
    }

    #[test]
    fn slo_verdicts_show_without_their_details() {
        let violated = SloVerdict::Violated(vec!["p99 250ms > 200ms".into()]);
        assert_eq!(slo_verdict(Some(&violated)), "Violated");
        assert_eq!(slo_verdict(Some(&SloVerdict::Met)), "Met");
        assert_eq!(slo_verdict(None), "-");
    }
}
