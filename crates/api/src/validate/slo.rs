//! `spec.slo`: the objectives every cell is held to, parsed.

use std::time::Duration;

use super::field::{err, parse_duration, FieldError};
use crate::spec::Slo;
use crate::units;

/// Parsed SLOs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SloPlan {
    /// Bound on p99 latency.
    pub p99: Option<Duration>,
    /// Bound on p50 latency.
    pub p50: Option<Duration>,
    /// Bound on the error rate (fraction).
    pub error_rate: Option<f64>,
    /// Lower bound on throughput (req/s).
    pub min_throughput: Option<f64>,
}

/// Parses `spec.slo`: latencies as durations, the error rate as a percentage.
pub(crate) fn parse(slo: Option<&Slo>, e: &mut Vec<FieldError>) -> Option<SloPlan> {
    let s = slo?;
    Some(SloPlan {
        p99: s
            .p99
            .as_deref()
            .map(|d| parse_duration("spec.slo.p99", d, e)),
        p50: s
            .p50
            .as_deref()
            .map(|d| parse_duration("spec.slo.p50", d, e)),
        error_rate: s.error_rate.as_deref().map(|p| {
            units::percent(p).unwrap_or_else(|x| {
                e.push(err("spec.slo.errorRate", x));
                0.0
            })
        }),
        min_throughput: s.min_throughput.map(|t| t as f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_are_parsed_and_bad_ones_named() {
        let slo: Slo =
            serde_json::from_str(r#"{"p99": "200ms", "errorRate": "0.5%", "minThroughput": 100}"#)
                .unwrap();
        let mut e = Vec::new();
        let plan = parse(Some(&slo), &mut e).unwrap();
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(plan.p99, Some(Duration::from_millis(200)));
        assert_eq!((plan.p50, plan.error_rate), (None, Some(0.005)));
        assert_eq!(plan.min_throughput, Some(100.0));
        let bad: Slo = serde_json::from_str(r#"{"p50": "fast", "errorRate": "1"}"#).unwrap();
        parse(Some(&bad), &mut e);
        let fields: Vec<&str> = e.iter().map(|x| x.field.as_str()).collect();
        assert_eq!(fields, ["spec.slo.p50", "spec.slo.errorRate"]);
        assert_eq!(parse(None, &mut e), None);
    }
}
