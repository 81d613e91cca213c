//! The SLO verdict of one measurement.
//!
//! Pure: a function of the parsed SLOs and the cell's result.

use benchrun_api::validate::SloPlan;
use benchrun_api::{units, CellResult, SloVerdict};

use crate::num::{format_bound, format_ms, format_rate};

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
}
