//! `spec.repeatsUntil`: the precision goal of the comparisons and the most repeats spent on
//! it, checked against `spec.repeats` and against what the run compares (as the CRD's CEL
//! rules do at admission).

use super::field::{err, FieldError};
use crate::matrix::Cell;
use crate::repeats::{RepeatGoal, MAX_RATIO_WITHIN, MAX_REPEATS};
use crate::spec::BenchmarkRunSpec;
use crate::units;

/// Parses `spec.repeatsUntil`: `maxRepeats` between `spec.repeats` and 10, `ratioWithin` a
/// percentage in (0 %, 50 %].
pub(crate) fn parse(spec: &BenchmarkRunSpec, e: &mut Vec<FieldError>) -> Option<RepeatGoal> {
    let u = spec.repeats_until.as_ref()?;
    let min = spec.repeats.max(1);
    if !(1..=MAX_REPEATS).contains(&u.max_repeats) {
        e.push(err(
            "spec.repeatsUntil.maxRepeats",
            format!(
                "{} is out of range: use at most {MAX_REPEATS} (and at least spec.repeats), or split the experiment",
                u.max_repeats
            ),
        ));
    } else if u.max_repeats < min {
        e.push(err(
            "spec.repeatsUntil.maxRepeats",
            format!(
                "{} is below spec.repeats ({min}), the repeats every cell gets first: raise maxRepeats or lower repeats",
                u.max_repeats
            ),
        ));
    }
    let ratio_within = match units::percent(&u.ratio_within) {
        Ok(w) if w > 0.0 && w <= MAX_RATIO_WITHIN => w,
        Ok(_) => {
            e.push(err(
                "spec.repeatsUntil.ratioWithin",
                format!(
                    "{:?} must be above 0% and at most 50%, e.g. \"5%\"",
                    u.ratio_within
                ),
            ));
            MAX_RATIO_WITHIN
        }
        Err(x) => {
            e.push(err("spec.repeatsUntil.ratioWithin", x));
            MAX_RATIO_WITHIN
        }
    };
    Some(RepeatGoal {
        max_repeats: u.max_repeats.clamp(min, MAX_REPEATS) as usize,
        ratio_within,
    })
}

/// `repeatsUntil` needs a comparison to make precise: `spec.baseline`, or two targets among
/// the cells, or an axis named by `spec.compare` (the comparisons within a run compare targets,
/// and other axes only when asked).
pub(crate) fn check_comparable(
    spec: &BenchmarkRunSpec,
    cells: &[Cell],
    along: Option<crate::vocab::CompareAxis>,
    e: &mut Vec<FieldError>,
) {
    if spec.repeats_until.is_none() || spec.baseline.is_some() || along.is_some() {
        return;
    }
    if !super::targets_compared(cells) && spec.compare.is_none() {
        e.push(err(
            "spec.repeatsUntil",
            "needs something to compare: measure 2 or more targets, or set spec.compare (e.g. {along: cpu}) or spec.baseline; otherwise remove repeatsUntil",
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::spec;
    use crate::repeats::RepeatGoal;
    use crate::validate;

    fn two_scenarios(until: serde_json::Value, repeats: i32) -> crate::BenchmarkRunSpec {
        let mut s = spec(r#"{"connections": 4, "duration": "20s"}"#);
        s.scenarios.push(crate::Scenario {
            name: "other".into(),
            ..s.scenarios[0].clone()
        });
        s.repeats = repeats;
        s.repeats_until = Some(serde_json::from_value(until).unwrap());
        // Two scenarios are compared only when asked.
        s.compare = Some(serde_json::from_str(r#"{"along": "scenario"}"#).unwrap());
        s
    }

    fn fields(s: &crate::BenchmarkRunSpec) -> Vec<(String, String)> {
        validate(s)
            .unwrap_err()
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect()
    }

    #[test]
    fn a_goal_parses_into_the_most_repeats_and_a_fraction() {
        let s = two_scenarios(serde_json::json!({"maxRepeats": 6, "ratioWithin": "5%"}), 3);
        let run = validate(&s).unwrap();
        assert_eq!(
            run.until,
            Some(RepeatGoal {
                max_repeats: 6,
                ratio_within: 0.05
            })
        );
        assert_eq!((run.repeats, run.max_repeats()), (3, 6));
        // The size of the run counts the most repeats.
        assert_eq!(run.max_total(), 12);
        assert_eq!(run.total(), 6);
    }

    #[test]
    fn max_repeats_must_lie_between_repeats_and_ten() {
        let below = two_scenarios(serde_json::json!({"maxRepeats": 2, "ratioWithin": "5%"}), 3);
        let e = fields(&below);
        assert_eq!(e[0].0, "spec.repeatsUntil.maxRepeats");
        assert!(e[0].1.contains("below spec.repeats (3)"), "{}", e[0].1);
        let above = two_scenarios(
            serde_json::json!({"maxRepeats": 11, "ratioWithin": "5%"}),
            3,
        );
        let e = fields(&above);
        assert_eq!(e[0].0, "spec.repeatsUntil.maxRepeats");
        assert!(e[0].1.contains("at most 10"), "{}", e[0].1);
    }

    #[test]
    fn ratio_within_must_be_a_percentage_above_zero_and_at_most_fifty() {
        for bad in ["0%", "50.5%", "five", "5"] {
            let s = two_scenarios(serde_json::json!({"maxRepeats": 6, "ratioWithin": bad}), 3);
            let e = fields(&s);
            assert_eq!(e[0].0, "spec.repeatsUntil.ratioWithin", "{bad}");
        }
        let s = two_scenarios(
            serde_json::json!({"maxRepeats": 6, "ratioWithin": "50%"}),
            3,
        );
        assert_eq!(validate(&s).unwrap().until.unwrap().ratio_within, 0.5);
    }

    #[test]
    fn the_size_limit_counts_max_repeats() {
        // 2 scenarios × 32 connection counts = 64 cells: 256 measurements at 4 repeats.
        let mut s = two_scenarios(serde_json::json!({"maxRepeats": 4, "ratioWithin": "5%"}), 1);
        s.matrix = Some(crate::Matrix {
            connections: (1..=32).collect(),
            ..Default::default()
        });
        let e = fields(&s);
        assert_eq!(e[0].0, "spec.matrix", "{e:?}");
        assert!(e[0].1.contains("64 cells × 4 repeats"), "{}", e[0].1);
        s.repeats_until = Some(
            serde_json::from_value(serde_json::json!({"maxRepeats": 3, "ratioWithin": "5%"}))
                .unwrap(),
        );
        assert!(validate(&s).is_ok());
    }

    #[test]
    fn a_goal_needs_something_to_compare() {
        let mut s = spec(r#"{"connections": 4, "duration": "20s"}"#);
        s.repeats = 3;
        s.repeats_until = Some(
            serde_json::from_value(serde_json::json!({"maxRepeats": 6, "ratioWithin": "5%"}))
                .unwrap(),
        );
        let e = fields(&s);
        assert_eq!(e[0].0, "spec.repeatsUntil");
        assert!(e[0].1.contains("needs something to compare"), "{}", e[0].1);
        // A baseline is something to compare with.
        s.baseline = Some(serde_json::from_str(r#"{"run": "last-week"}"#).unwrap());
        assert!(validate(&s).is_ok());
        // So are two targets, unless the matrix narrows them to one.
        s.baseline = None;
        s.targets.push(crate::Target {
            name: "b".into(),
            ..s.targets[0].clone()
        });
        assert!(validate(&s).is_ok());
        s.matrix = Some(crate::Matrix {
            targets: vec!["b".into()],
            ..Default::default()
        });
        assert_eq!(fields(&s)[0].0, "spec.repeatsUntil");
    }
}
