//! Expansion of the matrix into cells, in a documented and stable order.
//!
//! Order, outermost to innermost: target, cpu, memory, replicas, scenario, connections,
//! requests, keepAlive, rate. Cells that differ only in the load settings (scenario and the
//! axes after it) share one target deployment, so the operator deploys each target
//! configuration once and measures all of its load settings back to back.
//!
//! `matrix.exclude` then removes cells and `matrix.include` pairs values with cells or adds
//! cells, as GitHub Actions does with its job matrix: an include entry whose *swept* values
//! (targets, scenarios and every axis given as a list) match cells of the product sets its
//! other values on each of them; one that matches none becomes a cell of its own after the
//! product's, the values it leaves out being the spec's single values.

use crate::spec::{BenchmarkRunSpec, Matrix, MatrixEntry};

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
    /// Measured requests over all load pods when the run is bounded by a count (`None`: by
    /// `load.duration`).
    pub requests: Option<i64>,
    /// Whether the load keeps connections open between requests.
    pub keep_alive: bool,
}

impl Cell {
    /// The cell moved to `value` on a searched axis (`spec.search`), which keeps every value
    /// whole: a rate in req/s, a CPU limit in millicores, a replica count.
    pub fn with_searched(&self, axis: crate::search::SearchAxis, value: f64) -> Cell {
        use crate::search::SearchAxis;
        let mut c = self.clone();
        let whole = value.round();
        match axis {
            SearchAxis::Rate => c.rate = Some(whole as i64),
            SearchAxis::Cpu => c.cpu = format!("{whole}m"),
            SearchAxis::Replicas => c.replicas = whole as i32,
        }
        c
    }

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

/// Expands the spec into its cells. Names in `matrix.targets`/`matrix.scenarios` (and in
/// include and exclude entries) that match no target or scenario are skipped here, as are
/// include entries that cannot form a cell; [`crate::validate`] reports them.
pub fn expand(spec: &BenchmarkRunSpec) -> Vec<Cell> {
    let m = spec.matrix.clone().unwrap_or_default();
    let mut cells = surviving_product(spec);
    let swept = Swept::of(&m);
    let original = cells.len();
    for entry in &m.include {
        let mut paired = false;
        for cell in &mut cells[..original] {
            if swept_values_match(spec, &swept, entry, cell) {
                pair(&swept, entry, cell);
                paired = true;
            }
        }
        if !paired {
            if let Ok(cell) = added_cell(spec, &m, entry) {
                cells.push(cell);
            }
        }
    }
    for (i, c) in cells.iter_mut().enumerate() {
        c.index = i;
    }
    cells
}

/// The product of the axes without the excluded cells, in matrix order.
pub fn surviving_product(spec: &BenchmarkRunSpec) -> Vec<Cell> {
    let m = spec.matrix.clone().unwrap_or_default();
    let mut cells = product(spec, &m);
    cells.retain(|c| !m.exclude.iter().any(|e| matches(spec, e, c)));
    cells
}

/// Whether an include entry pairs with at least one of `cells` (else it adds a cell).
pub fn pairs_with_any(spec: &BenchmarkRunSpec, cells: &[Cell], entry: &MatrixEntry) -> bool {
    let swept = Swept::of(&spec.matrix.clone().unwrap_or_default());
    cells
        .iter()
        .any(|c| swept_values_match(spec, &swept, entry, c))
}

/// The full product of the axes, in matrix order.
fn product(spec: &BenchmarkRunSpec, m: &Matrix) -> Vec<Cell> {
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
    let requests: Vec<Option<i64>> = axis(
        &m.requests.iter().copied().map(Some).collect::<Vec<_>>(),
        spec.load.requests,
    );
    let keep_alives = axis(&m.keep_alive, spec.load.keep_alive);
    let mut cells = Vec::new();
    for &target in &targets {
        for cpu in &cpus {
            for memory in &mems {
                for &r in &replicas {
                    for &scenario in &scenarios {
                        for &connections in &conns {
                            for &requests in &requests {
                                for &keep_alive in &keep_alives {
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
                                            requests,
                                            keep_alive,
                                        });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    cells
}

/// Which axes the matrix sweeps with a list (targets and scenarios always count as swept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Swept {
    /// `matrix.cpu` is a list.
    pub cpu: bool,
    /// `matrix.memory` is a list.
    pub memory: bool,
    /// `matrix.replicas` is a list.
    pub replicas: bool,
    /// `matrix.connections` is a list.
    pub connections: bool,
    /// `matrix.rate` is a list.
    pub rate: bool,
    /// `matrix.requests` is a list.
    pub requests: bool,
    /// `matrix.keepAlive` is a list.
    pub keep_alive: bool,
}

impl Swept {
    /// The swept axes of `m`.
    pub fn of(m: &Matrix) -> Self {
        Swept {
            cpu: !m.cpu.is_empty(),
            memory: !m.memory.is_empty(),
            replicas: !m.replicas.is_empty(),
            connections: !m.connections.is_empty(),
            rate: !m.rate.is_empty(),
            requests: !m.requests.is_empty(),
            keep_alive: !m.keep_alive.is_empty(),
        }
    }
}

fn target_index(spec: &BenchmarkRunSpec, name: &str) -> Option<usize> {
    spec.targets.iter().position(|t| t.name == name)
}

fn scenario_index(spec: &BenchmarkRunSpec, name: &str) -> Option<usize> {
    spec.scenarios.iter().position(|s| s.name == name)
}

/// Whether `cell` has every value `entry` names (an empty entry matches nothing).
pub fn matches(spec: &BenchmarkRunSpec, entry: &MatrixEntry, cell: &Cell) -> bool {
    entry != &MatrixEntry::default()
        && entry
            .target
            .as_deref()
            .is_none_or(|t| target_index(spec, t) == Some(cell.target))
        && entry
            .scenario
            .as_deref()
            .is_none_or(|s| scenario_index(spec, s) == Some(cell.scenario))
        && entry.cpu.as_ref().is_none_or(|v| *v == cell.cpu)
        && entry.memory.as_ref().is_none_or(|v| *v == cell.memory)
        && entry.replicas.is_none_or(|v| v == cell.replicas)
        && entry.connections.is_none_or(|v| v == cell.connections)
        && entry.rate.is_none_or(|v| Some(v) == cell.rate)
        && entry.requests.is_none_or(|v| Some(v) == cell.requests)
        && entry.keep_alive.is_none_or(|v| v == cell.keep_alive)
}

/// Whether the values `entry` names on swept axes are those of `cell` (so its other values can
/// be paired with it).
fn swept_values_match(
    spec: &BenchmarkRunSpec,
    s: &Swept,
    entry: &MatrixEntry,
    cell: &Cell,
) -> bool {
    let swept_only = MatrixEntry {
        target: entry.target.clone(),
        scenario: entry.scenario.clone(),
        cpu: entry.cpu.clone().filter(|_| s.cpu),
        memory: entry.memory.clone().filter(|_| s.memory),
        replicas: entry.replicas.filter(|_| s.replicas),
        connections: entry.connections.filter(|_| s.connections),
        rate: entry.rate.filter(|_| s.rate),
        requests: entry.requests.filter(|_| s.requests),
        keep_alive: entry.keep_alive.filter(|_| s.keep_alive),
    };
    if swept_only == MatrixEntry::default() {
        // Names no swept axis: pairs with every cell.
        return true;
    }
    matches(spec, &swept_only, cell)
}

/// Sets the entry's values on axes the matrix does not sweep.
fn pair(s: &Swept, entry: &MatrixEntry, cell: &mut Cell) {
    if let Some(v) = entry.cpu.clone().filter(|_| !s.cpu) {
        cell.cpu = v;
    }
    if let Some(v) = entry.memory.clone().filter(|_| !s.memory) {
        cell.memory = v;
    }
    if let Some(v) = entry.replicas.filter(|_| !s.replicas) {
        cell.replicas = v;
    }
    if let Some(v) = entry.connections.filter(|_| !s.connections) {
        cell.connections = v;
    }
    if let Some(v) = entry.rate.filter(|_| !s.rate) {
        cell.rate = Some(v);
    }
    if let Some(v) = entry.requests.filter(|_| !s.requests) {
        cell.requests = Some(v);
    }
    if let Some(v) = entry.keep_alive.filter(|_| !s.keep_alive) {
        cell.keep_alive = v;
    }
}

/// The cell an include entry that paired with nothing adds, or why it cannot: a target or
/// scenario it must name (the spec has several) or names wrongly.
pub fn added_cell(
    spec: &BenchmarkRunSpec,
    m: &Matrix,
    entry: &MatrixEntry,
) -> Result<Cell, String> {
    let pick = |named: Option<&String>,
                listed: &[String],
                all: Vec<&str>,
                what: &str|
     -> Result<usize, String> {
        let candidates: Vec<&str> = if listed.is_empty() {
            all.clone()
        } else {
            listed.iter().map(String::as_str).collect()
        };
        match named {
            Some(n) => all
                .iter()
                .position(|a| a == n)
                .ok_or_else(|| format!("{n:?} names no {what}")),
            None if candidates.len() == 1 => all
                .iter()
                .position(|a| *a == candidates[0])
                .ok_or_else(|| format!("{:?} names no {what}", candidates[0])),
            None => Err(format!(
                "adds a cell of its own (it matches no cell of the matrix) but does not say which {what}: name one of {}",
                candidates.join(", ")
            )),
        }
    };
    let target = pick(
        entry.target.as_ref(),
        &m.targets,
        spec.targets.iter().map(|t| t.name.as_str()).collect(),
        "target",
    )?;
    let scenario = pick(
        entry.scenario.as_ref(),
        &m.scenarios,
        spec.scenarios.iter().map(|s| s.name.as_str()).collect(),
        "scenario",
    )?;
    Ok(Cell {
        index: 0,
        target,
        cpu: entry
            .cpu
            .clone()
            .unwrap_or_else(|| spec.resources.cpu.clone()),
        memory: entry
            .memory
            .clone()
            .unwrap_or_else(|| spec.resources.memory.clone()),
        replicas: entry.replicas.unwrap_or(spec.replicas),
        scenario,
        connections: entry.connections.unwrap_or(spec.load.connections),
        rate: entry.rate.or(spec.load.rate),
        requests: entry.requests.or(spec.load.requests),
        keep_alive: entry.keep_alive.unwrap_or(spec.load.keep_alive),
    })
}

/// Number of cells the matrix expands to. The product of the axes is counted without
/// building it and saturates at `usize::MAX` rather than wrapping, so a spec that skipped
/// admission with huge axes cannot pass the size check by overflow; only a product of at most
/// [`EXACT_COUNT_LIMIT`] cells is expanded to subtract exclusions exactly, a larger one counts
/// in full (plus one per include entry) and is refused as too large anyway.
pub fn cell_count(spec: &BenchmarkRunSpec) -> usize {
    let m: Matrix = spec.matrix.clone().unwrap_or_default();
    let n = |len: usize, default: usize| if len == 0 { default } else { len };
    let product = [
        n(m.targets.len(), spec.targets.len()),
        n(m.scenarios.len(), spec.scenarios.len()),
        n(m.cpu.len(), 1),
        n(m.memory.len(), 1),
        n(m.replicas.len(), 1),
        n(m.connections.len(), 1),
        n(m.rate.len(), 1),
        n(m.requests.len(), 1),
        n(m.keep_alive.len(), 1),
    ]
    .into_iter()
    .fold(1, usize::saturating_mul);
    if m.include.is_empty() && m.exclude.is_empty() {
        return product;
    }
    if product > EXACT_COUNT_LIMIT {
        return product.saturating_add(m.include.len());
    }
    expand(spec).len()
}

/// The largest product of the axes that [`cell_count`] expands to count exactly.
pub const EXACT_COUNT_LIMIT: usize = 100_000;

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

    fn spec(matrix: serde_json::Value) -> BenchmarkRunSpec {
        serde_json::from_value(serde_json::json!({
            "targets": [{"name": "node", "image": "x"}, {"name": "java", "image": "y"}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "resources": {"cpu": "1", "memory": "1Gi"},
            "load": {"connections": 50, "duration": "10s"},
            "matrix": matrix
        }))
        .unwrap()
    }

    fn coords(cells: &[Cell]) -> Vec<(usize, &str, i32, i32)> {
        cells
            .iter()
            .map(|c| (c.target, c.cpu.as_str(), c.replicas, c.connections))
            .collect()
    }

    #[test]
    fn exclude_removes_every_cell_with_all_the_named_values_and_keeps_the_order() {
        let s = spec(serde_json::json!({
            "cpu": ["1", "3500m"], "replicas": [1, 2],
            "exclude": [{"cpu": "3500m", "replicas": 2}]
        }));
        let cells = expand(&s);
        assert_eq!(
            coords(&cells),
            vec![
                (0, "1", 1, 50),
                (0, "1", 2, 50),
                (0, "3500m", 1, 50),
                (1, "1", 1, 50),
                (1, "1", 2, 50),
                (1, "3500m", 1, 50),
            ]
        );
        assert!(cells.iter().enumerate().all(|(i, c)| c.index == i));
        assert_eq!(cell_count(&s), 6);
    }

    #[test]
    fn include_pairs_unswept_values_with_the_cells_its_swept_values_match() {
        // replicas is not swept: every 3500m cell runs 2 replicas; nothing is added.
        let s = spec(serde_json::json!({
            "cpu": ["1", "3500m"],
            "include": [{"cpu": "3500m", "replicas": 2}]
        }));
        assert_eq!(
            coords(&expand(&s)),
            vec![
                (0, "1", 1, 50),
                (0, "3500m", 2, 50),
                (1, "1", 1, 50),
                (1, "3500m", 2, 50)
            ]
        );
    }

    #[test]
    fn include_that_matches_no_cell_adds_one_after_the_product_with_the_spec_defaults() {
        // "50 connections for both, and 500 connections for java only".
        let s = spec(serde_json::json!({
            "connections": [50],
            "include": [{"target": "java", "connections": 500}]
        }));
        let cells = expand(&s);
        assert_eq!(
            coords(&cells),
            vec![(0, "1", 1, 50), (1, "1", 1, 50), (1, "1", 1, 500)]
        );
        assert_eq!(cells[2].index, 2);
        assert_eq!(cell_count(&s), 3);
    }

    #[test]
    fn an_added_cell_must_name_its_target_when_there_are_several() {
        let s = spec(serde_json::json!({
            "connections": [50],
            "include": [{"connections": 500}]
        }));
        let m = s.matrix.clone().unwrap();
        let why = added_cell(&s, &m, &m.include[0]).unwrap_err();
        assert!(
            why.contains("which target: name one of node, java"),
            "{why}"
        );
        assert_eq!(
            expand(&s).len(),
            2,
            "the entry adds nothing until it names a target"
        );
        let wrong = MatrixEntry {
            target: Some("go".into()),
            ..m.include[0].clone()
        };
        assert_eq!(
            added_cell(&s, &m, &wrong).unwrap_err(),
            "\"go\" names no target"
        );
    }

    #[test]
    fn exclude_then_include_follow_github_actions_order() {
        // An include entry pairs only with cells that survived the exclusions.
        let s = spec(serde_json::json!({
            "targets": ["node"], "cpu": ["1", "2"],
            "exclude": [{"cpu": "2"}],
            "include": [{"cpu": "2", "replicas": 3}]
        }));
        assert_eq!(coords(&expand(&s)), vec![(0, "1", 1, 50), (0, "2", 3, 50)]);
    }

    #[test]
    fn an_empty_exclude_entry_removes_nothing() {
        let s = spec(serde_json::json!({"exclude": [{}]}));
        assert_eq!(expand(&s).len(), 2);
    }

    fn counted(matrix: serde_json::Value) -> BenchmarkRunSpec {
        serde_json::from_value(serde_json::json!({
            "targets": [{"name": "express", "image": "x"}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": {"connections": 50, "requests": 1000},
            "matrix": matrix
        }))
        .unwrap()
    }

    #[test]
    fn requests_and_keep_alive_are_axes_inside_connections() {
        let s = counted(serde_json::json!({
            "connections": [10, 50], "requests": [1000, 5000], "keepAlive": [true, false]
        }));
        let cells = expand(&s);
        assert_eq!(cells.len(), 8);
        assert_eq!(cell_count(&s), 8);
        let got: Vec<(i32, Option<i64>, bool)> = cells
            .iter()
            .map(|c| (c.connections, c.requests, c.keep_alive))
            .collect();
        assert_eq!(
            got[..4],
            [
                (10, Some(1000), true),
                (10, Some(1000), false),
                (10, Some(5000), true),
                (10, Some(5000), false)
            ]
        );
        assert!(cells.windows(2).all(|w| w[0].same_deployment(&w[1])));
    }

    #[test]
    fn include_pairs_a_request_count_with_each_connection_count() {
        // The comparison "50 connections × 1 000 requests and 500 connections × 1 000 000".
        let s = counted(serde_json::json!({
            "connections": [50, 500],
            "include": [
                {"connections": 50, "requests": 1000},
                {"connections": 500, "requests": 1000000, "keepAlive": false}
            ]
        }));
        let got: Vec<(i32, Option<i64>, bool)> = expand(&s)
            .iter()
            .map(|c| (c.connections, c.requests, c.keep_alive))
            .collect();
        assert_eq!(got, [(50, Some(1000), true), (500, Some(1_000_000), false)]);
    }

    #[test]
    fn a_duration_bounded_run_has_no_request_count_per_cell() {
        let s = spec(serde_json::json!({"keepAlive": [false]}));
        let cells = expand(&s);
        assert!(cells.iter().all(|c| c.requests.is_none() && !c.keep_alive));
    }
}
