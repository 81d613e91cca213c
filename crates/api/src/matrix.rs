//! Expansion of the matrix into cells, in a documented and stable order.
//!
//! Order, outermost to innermost: target, cpu, memory, replicas, scenario, connections, rate.
//! Cells that differ only in the inner three (scenario, connections, rate) share one target
//! deployment, so the operator deploys each target configuration once and measures all of its
//! load settings back to back.

use crate::spec::{BenchmarkRunSpec, Matrix};

/// One cell of the experiment: a value for every axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Position in matrix order.
    pub index: usize,
    /// Index into `spec.targets`.
    pub target: usize,
    /// CPU limit as written in the spec (e.g. `"500m"`).
    pub cpu: String,
    /// Memory limit as written in the spec.
    pub memory: String,
    /// Target replicas.
    pub replicas: i32,
    /// Index into `spec.scenarios`.
    pub scenario: usize,
    /// Connections over all load pods.
    pub connections: i32,
    /// Open-model rate, if any.
    pub rate: Option<i64>,
}

impl Cell {
    /// True when both cells run the same target with the same resources and replicas, so the
    /// second can reuse the first one's deployment.
    pub fn same_deployment(&self, other: &Cell) -> bool {
        self.target == other.target
            && self.cpu == other.cpu
            && self.memory == other.memory
            && self.replicas == other.replicas
    }
}

fn axis<T: Clone>(values: &[T], default: T) -> Vec<T> {
    if values.is_empty() {
        vec![default]
    } else {
        values.to_vec()
    }
}

/// Expands the spec into its cells. Names in `matrix.targets`/`matrix.scenarios` that match no
/// target or scenario are skipped here; [`crate::validate`] reports them.
pub fn expand(spec: &BenchmarkRunSpec) -> Vec<Cell> {
    let m = spec.matrix.clone().unwrap_or_default();
    let targets = select(&m.targets, spec.targets.iter().map(|t| t.name.as_str()));
    let scenarios = select(&m.scenarios, spec.scenarios.iter().map(|s| s.name.as_str()));
    let cpus = axis(&m.cpu, spec.resources.cpu.clone());
    let mems = axis(&m.memory, spec.resources.memory.clone());
    let replicas = axis(&m.replicas, spec.replicas);
    let conns = axis(&m.connections, spec.load.connections);
    let rates: Vec<Option<i64>> = axis(
        &m.rate.iter().copied().map(Some).collect::<Vec<_>>(),
        spec.load.rate,
    );
    let mut cells = Vec::new();
    for &target in &targets {
        for cpu in &cpus {
            for memory in &mems {
                for &r in &replicas {
                    for &scenario in &scenarios {
                        for &connections in &conns {
                            for &rate in &rates {
                                cells.push(Cell {
                                    index: cells.len(),
                                    target,
                                    cpu: cpu.clone(),
                                    memory: memory.clone(),
                                    replicas: r,
                                    scenario,
                                    connections,
                                    rate,
                                });
                            }
                        }
                    }
                }
            }
        }
    }
    cells
}

/// Number of cells the matrix expands to, without building them. Saturates at `usize::MAX`
/// rather than wrapping, so a spec that skipped admission with huge axes cannot pass the
/// size check by overflow and then be expanded.
pub fn cell_count(spec: &BenchmarkRunSpec) -> usize {
    let m: Matrix = spec.matrix.clone().unwrap_or_default();
    let n = |len: usize, default: usize| if len == 0 { default } else { len };
    [
        n(m.targets.len(), spec.targets.len()),
        n(m.scenarios.len(), spec.scenarios.len()),
        n(m.cpu.len(), 1),
        n(m.memory.len(), 1),
        n(m.replicas.len(), 1),
        n(m.connections.len(), 1),
        n(m.rate.len(), 1),
    ]
    .into_iter()
    .fold(1, usize::saturating_mul)
}

/// Indices of the named entries, in the order the matrix lists them (all when none listed).
fn select<'a>(wanted: &[String], names: impl Iterator<Item = &'a str>) -> Vec<usize> {
    let names: Vec<&str> = names.collect();
    if wanted.is_empty() {
        return (0..names.len()).collect();
    }
    wanted
        .iter()
        .filter_map(|w| names.iter().position(|n| n == w))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_the_documented_order_with_load_axes_innermost() {
        let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
            "targets": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": {"connections": 1, "duration": "10s"},
            "matrix": {"cpu": ["1", "2"], "connections": [10, 100]}
        }))
        .unwrap();
        let cells = expand(&spec);
        assert_eq!(cells.len(), cell_count(&spec));
        let coords: Vec<(usize, &str, i32)> = cells
            .iter()
            .map(|c| (c.target, c.cpu.as_str(), c.connections))
            .collect();
        assert_eq!(
            coords,
            vec![
                (0, "1", 10),
                (0, "1", 100),
                (0, "2", 10),
                (0, "2", 100),
                (1, "1", 10),
                (1, "1", 100),
                (1, "2", 10),
                (1, "2", 100)
            ]
        );
        assert!(cells[0].same_deployment(&cells[1]));
        assert!(!cells[1].same_deployment(&cells[2]));
        assert!(cells.iter().enumerate().all(|(i, c)| c.index == i));
    }

    #[test]
    fn matrix_targets_narrow_and_order_the_target_axis() {
        let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
            "targets": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": {"connections": 1, "duration": "10s"},
            "matrix": {"targets": ["b"]}
        }))
        .unwrap();
        let cells = expand(&spec);
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].target, 1);
    }
}
