//! `spec.baseline`: the earlier run every cell is compared with.

use super::field::{err, FieldError};
use crate::spec::BaselineSpec;
use crate::units;

/// Tolerance of a baseline comparison when `baseline.tolerance` is not set.
pub const DEFAULT_BASELINE_TOLERANCE: f64 = 0.05;

/// `spec.baseline`, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselinePlan {
    /// Name of the earlier run, in the same namespace.
    pub run: String,
    /// Relative change that matters, as a fraction (0.05 = 5 %).
    pub tolerance: f64,
}

/// Parses `spec.baseline`: a run named, a tolerance below 100 %.
pub(crate) fn parse(
    baseline: Option<&BaselineSpec>,
    e: &mut Vec<FieldError>,
) -> Option<BaselinePlan> {
    let b = baseline?;
    let tolerance = parse_tolerance(b.tolerance.as_deref(), "spec.baseline.tolerance", e)
        .unwrap_or(DEFAULT_BASELINE_TOLERANCE);
    if b.run.trim().is_empty() {
        e.push(err(
            "spec.baseline.run",
            "must name an earlier BenchmarkRun of this namespace",
        ));
    }
    Some(BaselinePlan {
        run: b.run.clone(),
        tolerance,
    })
}

/// A tolerance such as `"5%"` as a fraction below 1; `None` when absent (or refused, with the
/// error naming `field`).
pub(crate) fn parse_tolerance(
    tolerance: Option<&str>,
    field: &str,
    e: &mut Vec<FieldError>,
) -> Option<f64> {
    match tolerance.map(units::percent)? {
        Ok(t) if t < 1.0 => Some(t),
        Ok(_) => {
            e.push(err(
                field,
                "must be below 100%: a change of 100% or more always matters, e.g. \"5%\"",
            ));
            None
        }
        Err(x) => {
            e.push(err(field, x));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::spec;
    use crate::validate;

    #[test]
    fn a_baseline_defaults_to_a_five_percent_tolerance_and_refuses_a_bad_one() {
        let mut s = spec(r#"{"connections": 4, "duration": "20s"}"#);
        s.baseline = Some(serde_json::from_str(r#"{"run": "last-week"}"#).unwrap());
        let b = validate(&s).unwrap().baseline.unwrap();
        assert_eq!((b.run.as_str(), b.tolerance), ("last-week", 0.05));
        s.baseline =
            Some(serde_json::from_str(r#"{"run": "last-week", "tolerance": "2.5%"}"#).unwrap());
        assert_eq!(validate(&s).unwrap().baseline.unwrap().tolerance, 0.025);
        for bad in ["100%", "five", "-1%"] {
            s.baseline = Some(
                serde_json::from_value(serde_json::json!({"run": "x", "tolerance": bad})).unwrap(),
            );
            let e = validate(&s).unwrap_err();
            assert_eq!(e[0].field, "spec.baseline.tolerance", "{bad}");
        }
        s.baseline = None;
        s.tolerance = Some("10%".into());
        assert_eq!(validate(&s).unwrap().tolerance, Some(0.1));
        s.tolerance = Some("100%".into());
        assert_eq!(validate(&s).unwrap_err()[0].field, "spec.tolerance");
    }
}
