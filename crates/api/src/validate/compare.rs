//! `spec.compare`: the axis the run's comparisons run along must be one the cells vary, with
//! at least one pair of cells that differ in it alone (as the CRD's CEL rule checks the lists
//! at admission; here on the expanded cells, after `exclude` and `include`).

use super::field::{err, FieldError};
use crate::along;
use crate::matrix::Cell;
use crate::spec::BenchmarkRunSpec;
use crate::vocab::CompareAxis;

/// Parses `spec.compare.along` against the expanded `cells`; `None` without `spec.compare`
/// (or when it is refused, the error added to `e`).
pub(crate) fn parse(
    spec: &BenchmarkRunSpec,
    cells: &[Cell],
    e: &mut Vec<FieldError>,
) -> Option<CompareAxis> {
    let c = spec.compare.as_ref()?;
    let Ok(axis) = c.along.parse::<CompareAxis>() else {
        let words: Vec<&str> = CompareAxis::ALL.iter().map(|a| a.as_str()).collect();
        e.push(err(
            "spec.compare.along",
            format!(
                "{:?} is not an axis: use one of {}",
                c.along,
                words.join(", ")
            ),
        ));
        return None;
    };
    if spec.search.is_some() {
        e.push(err(
            "spec.compare",
            "a search measures a boundary per configuration and compares no cells: remove spec.compare",
        ));
        return None;
    }
    let targets: Vec<&str> = spec.targets.iter().map(|t| t.name.as_str()).collect();
    let scenarios: Vec<&str> = spec.scenarios.iter().map(|s| s.name.as_str()).collect();
    let coords: Vec<_> = cells
        .iter()
        .map(|c| along::cell_coordinates(c, &targets, &scenarios))
        .collect();
    let refs: Vec<_> = coords.iter().collect();
    let listed = along::listed(
        axis,
        &spec.matrix.clone().unwrap_or_default(),
        &targets,
        &scenarios,
    );
    if !along::pairs(&refs, axis, &listed).is_empty() {
        return Some(axis);
    }
    let mut values: Vec<String> = coords.iter().map(|c| axis.value(c)).collect();
    values.sort();
    values.dedup();
    let why = if values.len() < 2 {
        format!(
            "{axis} does not vary: every cell has {}",
            values.first().map_or("no value".into(), |v| axis.show(v))
        )
    } else {
        format!("no two cells differ in {axis} alone (matrix.exclude or matrix.include left none)")
    };
    e.push(err(
        "spec.compare.along",
        format!(
            "{why}: list two or more values in {}, or remove spec.compare",
            axis.matrix_field()
        ),
    ));
    None
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::spec;
    use crate::validate;
    use crate::vocab::CompareAxis;

    fn with(compare: &str, matrix: serde_json::Value) -> crate::BenchmarkRunSpec {
        let mut s = spec(r#"{"connections": 4, "duration": "20s"}"#);
        s.compare = Some(serde_json::from_str(compare).unwrap());
        s.matrix = Some(serde_json::from_value(matrix).unwrap());
        s
    }

    #[test]
    fn an_axis_the_matrix_sweeps_is_accepted() {
        let s = with(
            r#"{"along": "cpu"}"#,
            serde_json::json!({"cpu": ["250m", "500m"]}),
        );
        let run = validate(&s).unwrap();
        assert_eq!(run.compare_along, Some(CompareAxis::Cpu));
        assert_eq!(run.compare_order(CompareAxis::Cpu), vec!["250m", "500m"]);
    }

    #[test]
    fn an_axis_the_matrix_does_not_vary_is_refused_naming_the_field_and_the_fix() {
        let s = with(
            r#"{"along": "replicas"}"#,
            serde_json::json!({"cpu": ["250m", "500m"]}),
        );
        let e = validate(&s).unwrap_err();
        assert_eq!(e[0].field, "spec.compare.along");
        assert_eq!(
            e[0].message,
            "replicas does not vary: every cell has 1 replica: list two or more values in spec.matrix.replicas, or remove spec.compare"
        );
        let s = with(r#"{"along": "scenario"}"#, serde_json::json!({}));
        let e = validate(&s).unwrap_err();
        assert!(
            e[0].message
                .contains("spec.scenarios (or spec.matrix.scenarios)"),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn values_that_never_meet_at_the_same_other_coordinates_are_refused() {
        // Each CPU limit only with its own connection count: no pair differs in cpu alone.
        let s = with(
            r#"{"along": "cpu"}"#,
            serde_json::json!({"cpu": ["250m", "500m"], "connections": [4, 16],
                "exclude": [{"cpu": "250m", "connections": 16}, {"cpu": "500m", "connections": 4}]}),
        );
        let e = validate(&s).unwrap_err();
        assert_eq!(e[0].field, "spec.compare.along");
        assert!(
            e[0].message.starts_with("no two cells differ in cpu alone"),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn a_word_that_is_not_an_axis_is_refused() {
        let s = with(
            r#"{"along": "rate"}"#,
            serde_json::json!({"rate": [10, 20]}),
        );
        let e = validate(&s).unwrap_err();
        assert_eq!(e[0].field, "spec.compare.along");
        assert!(
            e[0].message.contains("use one of target, scenario, cpu"),
            "{}",
            e[0].message
        );
    }
}
