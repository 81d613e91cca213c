//! `spec.compare`: the axis the run's own comparisons run along, besides the targets.
//!
//! Comparisons within a run set two cells side by side that differ in one coordinate only.
//! Targets are compared whenever two or more are measured; any other axis only when
//! `spec.compare.along` names it (a ratio of two different requests, or of two CPU limits, is
//! an answer only to someone who asked that question). Along an axis, each value is compared
//! with the *reference*: the first value of the axis as the spec lists it (`spec.targets`,
//! `spec.scenarios`, `matrix.cpu`, …), at the same other coordinates.
//!
//! This module holds the spec type, what each axis reads from a cell's coordinates, and the
//! pairing of cells along an axis ([`pairs`]). Pure; the statistics of each pair are the
//! operator's `src/comparisons.rs` and [`crate::compare`].

use crate::matrix::Cell;
use crate::spec::Matrix;
use crate::status::Coordinates;
use crate::vocab::{CompareAxis, ComparisonKind};

impl CompareAxis {
    /// The comparison kind of a pair along this axis: `Target`, `Scenario`, else `Axis`.
    pub fn kind(self) -> ComparisonKind {
        match self {
            CompareAxis::Target => ComparisonKind::Target,
            CompareAxis::Scenario => ComparisonKind::Scenario,
            _ => ComparisonKind::Axis,
        }
    }

    /// The matrix field that sweeps this axis, as a user writes it (`spec.matrix.cpu`).
    pub fn matrix_field(self) -> &'static str {
        match self {
            CompareAxis::Target => "spec.targets (or spec.matrix.targets)",
            CompareAxis::Scenario => "spec.scenarios (or spec.matrix.scenarios)",
            CompareAxis::Cpu => "spec.matrix.cpu",
            CompareAxis::Memory => "spec.matrix.memory",
            CompareAxis::Replicas => "spec.matrix.replicas",
            CompareAxis::Connections => "spec.matrix.connections",
            CompareAxis::KeepAlive => "spec.matrix.keepAlive",
        }
    }

    /// The cell's value on this axis, as the comparison's `candidate`/`reference` holds it:
    /// a name, a quantity as written (`500m`), a count, or `true`/`false`.
    pub fn value(self, c: &Coordinates) -> String {
        match self {
            CompareAxis::Target => c.target.clone(),
            CompareAxis::Scenario => c.scenario.clone(),
            CompareAxis::Cpu => c.cpu.clone(),
            CompareAxis::Memory => c.memory.clone(),
            CompareAxis::Replicas => c.replicas.to_string(),
            CompareAxis::Connections => c.connections.to_string(),
            CompareAxis::KeepAlive => c.keeps_alive().to_string(),
        }
    }

    /// `c` moved to `value` on this axis ([`Self::value`]'s form); `None` when `value` is not
    /// one (a count that does not parse).
    pub fn with(self, c: &Coordinates, value: &str) -> Option<Coordinates> {
        let mut out = c.clone();
        match self {
            CompareAxis::Target => out.target = value.to_string(),
            CompareAxis::Scenario => out.scenario = value.to_string(),
            CompareAxis::Cpu => out.cpu = value.to_string(),
            CompareAxis::Memory => out.memory = value.to_string(),
            CompareAxis::Replicas => out.replicas = value.parse().ok()?,
            CompareAxis::Connections => out.connections = value.parse().ok()?,
            CompareAxis::KeepAlive => {
                out.keep_alive = Coordinates::keep_alive_field(value.parse().ok()?)
            }
        }
        Some(out)
    }

    /// A value for people: `500m`, `2 replicas`, `16 connections`, `keep-alive off`.
    pub fn show(self, value: &str) -> String {
        match self {
            CompareAxis::Replicas if value == "1" => "1 replica".into(),
            CompareAxis::Replicas => format!("{value} replicas"),
            CompareAxis::Connections if value == "1" => "1 connection".into(),
            CompareAxis::Connections => format!("{value} connections"),
            CompareAxis::KeepAlive if value == "false" => "keep-alive off".into(),
            CompareAxis::KeepAlive => "keep-alive on".into(),
            _ => value.to_string(),
        }
    }
}

/// The values of `axis` in the order the spec lists them, the first being the reference:
/// `spec.targets` or `spec.scenarios` by name (`targets`, `scenarios`), else the matrix's list
/// of the axis (empty when the matrix does not sweep it).
pub fn listed(
    axis: CompareAxis,
    matrix: &Matrix,
    targets: &[&str],
    scenarios: &[&str],
) -> Vec<String> {
    let all = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect();
    match axis {
        CompareAxis::Target => all(targets),
        CompareAxis::Scenario => all(scenarios),
        CompareAxis::Cpu => matrix.cpu.clone(),
        CompareAxis::Memory => matrix.memory.clone(),
        CompareAxis::Replicas => matrix.replicas.iter().map(ToString::to_string).collect(),
        CompareAxis::Connections => matrix.connections.iter().map(ToString::to_string).collect(),
        CompareAxis::KeepAlive => matrix.keep_alive.iter().map(ToString::to_string).collect(),
    }
}

/// The coordinates of an expanded cell, target and scenario by name (`targets`,
/// `scenarios`: the spec's, in order).
pub fn cell_coordinates(cell: &Cell, targets: &[&str], scenarios: &[&str]) -> Coordinates {
    let name = |xs: &[&str], i: usize| xs.get(i).copied().unwrap_or_default().to_string();
    Coordinates {
        target: name(targets, cell.target),
        scenario: name(scenarios, cell.scenario),
        cpu: cell.cpu.clone(),
        memory: cell.memory.clone(),
        replicas: cell.replicas,
        connections: cell.connections,
        rate: cell.rate,
        requests: cell.requests,
        keep_alive: Coordinates::keep_alive_field(cell.keep_alive),
    }
}

/// The pairs of cells to compare along `axis`: for each cell, the cell at the same other
/// coordinates whose value comes first in `order` (the spec's list of the axis), when that
/// value comes before the cell's own; as `(candidate, reference)` indices into `cells`, in the
/// order of the candidates. Values missing from `order` come after every listed one, in the
/// order of their first cell.
pub fn pairs(cells: &[&Coordinates], axis: CompareAxis, order: &[String]) -> Vec<(usize, usize)> {
    let mut values: Vec<String> = order.to_vec();
    for c in cells {
        let v = axis.value(c);
        if !values.contains(&v) {
            values.push(v);
        }
    }
    let rank = |c: &Coordinates| {
        let v = axis.value(c);
        values.iter().position(|x| *x == v).unwrap_or(usize::MAX)
    };
    // Everything but the axis: the reference value put in the candidate's place.
    let rest = |c: &Coordinates| axis.with(c, &values[0]);
    let mut out = Vec::new();
    for (i, cand) in cells.iter().enumerate() {
        let key = rest(cand);
        let reference = cells
            .iter()
            .enumerate()
            .filter(|(_, other)| rest(other) == key)
            .min_by_key(|(_, other)| rank(other));
        if let Some((j, refr)) = reference {
            if rank(refr) < rank(cand) {
                out.push((i, j));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(scenario: &str, cpu: &str, connections: i32) -> Coordinates {
        Coordinates {
            target: "demo".into(),
            scenario: scenario.into(),
            cpu: cpu.into(),
            memory: "128Mi".into(),
            replicas: 1,
            connections,
            ..Default::default()
        }
    }

    fn names(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn each_cpu_limit_is_paired_with_the_first_listed_at_the_same_other_coordinates() {
        // Matrix order: cpu outer, scenario, connections inner.
        let cells = [
            at("hello", "250m", 4),
            at("hello", "250m", 16),
            at("compute", "250m", 4),
            at("hello", "500m", 4),
            at("hello", "500m", 16),
            at("compute", "500m", 4),
            at("compute", "1", 4),
        ];
        let refs: Vec<&Coordinates> = cells.iter().collect();
        let p = pairs(&refs, CompareAxis::Cpu, &names(&["250m", "500m", "1"]));
        // Every value against 250m, never 1 against 500m; never across scenarios or connections.
        assert_eq!(p, vec![(3, 0), (4, 1), (5, 2), (6, 2)]);
    }

    #[test]
    fn the_reference_is_the_first_listed_value_not_the_first_measured() {
        let cells = [at("compute", "500m", 4), at("compute", "250m", 4)];
        let refs: Vec<&Coordinates> = cells.iter().collect();
        assert_eq!(
            pairs(&refs, CompareAxis::Cpu, &names(&["250m", "500m"])),
            vec![(0, 1)]
        );
        // A value the list lacks (added by matrix.include) comes after the listed ones.
        let cells = [at("compute", "750m", 4), at("compute", "250m", 4)];
        let refs: Vec<&Coordinates> = cells.iter().collect();
        assert_eq!(
            pairs(&refs, CompareAxis::Cpu, &names(&["250m"])),
            vec![(0, 1)]
        );
    }

    #[test]
    fn a_cell_without_a_partner_on_the_axis_is_not_paired() {
        // compute was measured at 500m only (matrix.exclude): nothing to compare it with.
        let cells = [
            at("hello", "250m", 4),
            at("hello", "500m", 4),
            at("compute", "500m", 4),
        ];
        let refs: Vec<&Coordinates> = cells.iter().collect();
        assert_eq!(
            pairs(&refs, CompareAxis::Cpu, &names(&["250m", "500m"])),
            vec![(1, 0)]
        );
    }

    #[test]
    fn along_the_scenarios_each_request_is_paired_with_the_first_scenario() {
        let cells = [
            at("hello", "250m", 4),
            at("compute", "250m", 4),
            at("hello", "500m", 4),
            at("compute", "500m", 4),
        ];
        let refs: Vec<&Coordinates> = cells.iter().collect();
        assert_eq!(
            pairs(&refs, CompareAxis::Scenario, &names(&["hello", "compute"])),
            vec![(1, 0), (3, 2)]
        );
    }

    #[test]
    fn values_round_trip_through_the_coordinates() {
        let c = at("compute", "250m", 4);
        for (axis, value) in [
            (CompareAxis::Cpu, "500m"),
            (CompareAxis::Memory, "1Gi"),
            (CompareAxis::Replicas, "3"),
            (CompareAxis::Connections, "16"),
            (CompareAxis::KeepAlive, "false"),
            (CompareAxis::Scenario, "hello"),
            (CompareAxis::Target, "other"),
        ] {
            let moved = axis.with(&c, value).unwrap();
            assert_eq!(axis.value(&moved), value, "{axis}");
        }
        assert_eq!(CompareAxis::KeepAlive.value(&c), "true");
        assert_eq!(CompareAxis::Replicas.with(&c, "two"), None);
        assert_eq!(CompareAxis::Cpu.show("500m"), "500m");
        assert_eq!(CompareAxis::Connections.show("16"), "16 connections");
        assert_eq!(CompareAxis::Replicas.show("1"), "1 replica");
        assert_eq!(CompareAxis::KeepAlive.show("false"), "keep-alive off");
    }
}
