//! The SLO verdict of one measurement, and the formatting of its figures.
//!
//! Pure: a function of the parsed SLOs and the cell's result.

use benchrun_api::validate::SloPlan;
use benchrun_api::{units, CellResult, SloVerdict};

/// `Met`, or `Violated: ` followed by each objective that does not hold, e.g.
/// `Violated: p99 250.1ms > 200ms; error rate 2.0% > 1%`. An objective whose figure is absent
/// is not judged (only measured results carry figures and get a verdict).
pub fn verdict(slo: &SloPlan, r: &CellResult) -> SloVerdict {
    let mut broken = Vec::new();
    let latency = [
        ("p99", slo.p99, r.latency_ms.as_ref().map(|l| l.p99)),
        ("p50", slo.p50, r.latency_ms.as_ref().map(|l| l.p50)),
    ];
    for (name, bound, value) in latency {
        if let (Some(bound), Some(value)) = (bound, value) {
            if value > bound.as_secs_f64() * 1000.0 {
                broken.push(format!(
                    "{name} {} > {}",
                    format_ms(value),
                    units::format_duration(bound)
                ));
            }
        }
    }
    if let (Some(bound), Some(rate)) = (slo.error_rate, r.error_rate) {
        if rate > bound {
            broken.push(format!(
                "error rate {} > {}",
                format_rate(rate),
                format_bound(bound)
            ));
        }
    }
    if let (Some(min), Some(throughput)) = (slo.min_throughput, r.throughput) {
        if throughput < min {
            broken.push(format!("throughput {throughput:.1} req/s < {min} req/s"));
        }
    }
    if broken.is_empty() {
        SloVerdict::Met
    } else {
        SloVerdict::Violated(broken)
    }
}

/// A measured latency in milliseconds with one decimal: `250.1ms`.
pub fn format_ms(ms: f64) -> String {
    format!("{ms:.1}ms")
}

/// A measured fraction as a percentage with enough decimals to tell it from a bound:
/// `2.0%`, `0.15%`, `0.004%`.
pub fn format_rate(fraction: f64) -> String {
    let pct = fraction * 100.0;
    if pct >= 1.0 || pct == 0.0 {
        format!("{pct:.1}%")
    } else if pct >= 0.01 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.3}%")
    }
}

/// A bound as the user wrote it: `1%`, `0.5%`.
fn format_bound(fraction: f64) -> String {
    let pct = (fraction * 100.0 * 10_000.0).round() / 10_000.0;
    format!("{pct}%")
}

/// A latency for a headline: `850µs`, `2.5ms`, `41ms`, `1.2s`, `12s`.
pub fn format_latency(ms: f64) -> String {
    if ms < 1.0 {
        format!("{}µs", (ms * 1000.0).round() as i64)
    } else if ms < 10.0 {
        trim(format!("{ms:.1}")) + "ms"
    } else if ms < 999.5 {
        format!("{}ms", ms.round() as i64)
    } else if ms < 9_950.0 {
        trim(format!("{:.1}", ms / 1000.0)) + "s"
    } else {
        format!("{}s", (ms / 1000.0).round() as i64)
    }
}

fn trim(s: String) -> String {
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use benchrun_api::Latency;

    use super::*;

    fn result(p50: f64, p99: f64, error_rate: f64, throughput: f64) -> CellResult {
        CellResult {
            latency_ms: Some(Latency {
                p50,
                p99,
                ..Latency::default()
            }),
            error_rate: Some(error_rate),
            throughput: Some(throughput),
            ..CellResult::default()
        }
    }

    fn slo() -> SloPlan {
        SloPlan {
            p99: Some(Duration::from_millis(200)),
            error_rate: Some(0.01),
            ..SloPlan::default()
        }
    }

    #[test]
    fn a_cell_within_every_objective_meets_the_slo() {
        assert_eq!(
            verdict(&slo(), &result(5.0, 200.0, 0.01, 100.0)).to_string(),
            "Met"
        );
    }

    #[test]
    fn a_violation_names_each_broken_objective_with_its_numbers() {
        assert_eq!(
            verdict(&slo(), &result(5.0, 250.12, 0.02, 100.0)).to_string(),
            "Violated: p99 250.1ms > 200ms; error rate 2.0% > 1%"
        );
    }

    #[test]
    fn median_and_minimum_throughput_are_checked_too() {
        let slo = SloPlan {
            p50: Some(Duration::from_millis(20)),
            min_throughput: Some(1000.0),
            ..SloPlan::default()
        };
        assert_eq!(
            verdict(&slo, &result(25.0, 90.0, 0.0, 950.33)).to_string(),
            "Violated: p50 25.0ms > 20ms; throughput 950.3 req/s < 1000 req/s"
        );
        assert!(verdict(&slo, &result(25.0, 90.0, 0.0, 950.33)).is_violated());
    }

    #[test]
    fn small_error_rates_keep_enough_decimals() {
        let slo = SloPlan {
            error_rate: Some(0.001),
            ..SloPlan::default()
        };
        assert_eq!(
            verdict(&slo, &result(1.0, 1.0, 0.0015, 1.0)).to_string(),
            "Violated: error rate 0.15% > 0.1%"
        );
    }

    #[test]
    fn headline_latencies_use_the_natural_unit() {
        assert_eq!(format_latency(0.85), "850µs");
        assert_eq!(format_latency(2.5), "2.5ms");
        assert_eq!(format_latency(3.0), "3ms");
        assert_eq!(format_latency(41.3), "41ms");
        assert_eq!(format_latency(1234.0), "1.2s");
        assert_eq!(format_latency(12_400.0), "12s");
    }
}
