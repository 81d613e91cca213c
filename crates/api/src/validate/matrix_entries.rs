//! Checks of `matrix.include` and `matrix.exclude` entries: each names values the experiment
//! has, an exclusion names only swept axes and their values, an added cell can be built, and
//! no two cells are the same. Pure; the caller collects the errors.

use std::collections::BTreeSet;

use super::field::{split_over_pods, FieldError};
use crate::matrix::{added_cell, expand, pairs_with_any, surviving_product, Cell, Swept};
use crate::spec::{BenchmarkRunSpec, MatrixEntry, MAX_RATE, MAX_REQUESTS};
use crate::units;

fn err(field: String, message: String) -> FieldError {
    FieldError { field, message }
}

/// The names of the entry's values, in `MatrixEntry` field order.
fn named(e: &MatrixEntry) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (set, name) in [
        (e.target.is_some(), "target"),
        (e.scenario.is_some(), "scenario"),
        (e.cpu.is_some(), "cpu"),
        (e.memory.is_some(), "memory"),
        (e.replicas.is_some(), "replicas"),
        (e.connections.is_some(), "connections"),
        (e.rate.is_some(), "rate"),
        (e.requests.is_some(), "requests"),
        (e.keep_alive.is_some(), "keepAlive"),
    ] {
        if set {
            out.push(name);
        }
    }
    out
}

/// Every value of an entry checked on its own: names that exist, quantities that parse,
/// counts within their bounds.
fn values(spec: &BenchmarkRunSpec, field: &str, e: &MatrixEntry, errors: &mut Vec<FieldError>) {
    if let Some(t) = &e.target {
        if !spec.targets.iter().any(|x| &x.name == t) {
            errors.push(err(
                format!("{field}.target"),
                format!("{t:?} names no target"),
            ));
        }
    }
    if let Some(s) = &e.scenario {
        if !spec.scenarios.iter().any(|x| &x.name == s) {
            errors.push(err(
                format!("{field}.scenario"),
                format!("{s:?} names no scenario"),
            ));
        }
    }
    if let Some(Err(x)) = e.cpu.as_deref().map(units::cpu_millis) {
        errors.push(err(format!("{field}.cpu"), x));
    }
    if let Some(Err(x)) = e.memory.as_deref().map(units::memory_bytes) {
        errors.push(err(format!("{field}.memory"), x));
    }
    let bounds = [
        ("replicas", e.replicas.map(i64::from), 32),
        ("connections", e.connections.map(i64::from), 20_000),
        ("rate", e.rate, MAX_RATE),
        ("requests", e.requests, MAX_REQUESTS),
    ];
    for (name, v, max) in bounds {
        if let Some(v) = v.filter(|v| !(1..=max).contains(v)) {
            errors.push(err(
                format!("{field}.{name}"),
                format!("{v} is out of range: use a value between 1 and {max}"),
            ));
        }
    }
}

/// The load values an include entry brings into its cells must fit the run as the axes'
/// values do: split evenly over the load pods, a rate only with `load.duration`, a request
/// count only with `load.requests`.
fn load_values(
    spec: &BenchmarkRunSpec,
    field: &str,
    e: &MatrixEntry,
    errors: &mut Vec<FieldError>,
) {
    let pods = i64::from(spec.load.pods.max(1));
    if let Some(c) = e.connections {
        let what = format!("{c} connections");
        split_over_pods(
            format!("{field}.connections"),
            &what,
            i64::from(c),
            pods,
            true,
            errors,
        );
    }
    if let Some(n) = e.requests {
        if spec.load.requests.is_none() {
            errors.push(err(
                format!("{field}.requests"),
                "a request count needs load.requests, but the run is bounded by load.duration"
                    .into(),
            ));
        }
        let what = format!("{n} requests");
        split_over_pods(format!("{field}.requests"), &what, n, pods, false, errors);
    }
    if let Some(r) = e.rate {
        if spec.load.duration.is_none() {
            errors.push(err(
                format!("{field}.rate"),
                "the open model needs load.duration, but the run is bounded by load.requests"
                    .into(),
            ));
        }
        let what = format!("a rate of {r} req/s");
        split_over_pods(format!("{field}.rate"), &what, r, pods, false, errors);
    }
}

/// An entry's value and its axis' list as text, for the checks and their messages.
fn texts<T: ToString>(value: Option<T>, list: &[T]) -> Option<(String, Vec<String>)> {
    value.map(|v| (v.to_string(), list.iter().map(T::to_string).collect()))
}

/// An axis, whether the matrix sweeps it, and the entry's value with the axis' list.
type AxisCheck<'a> = (&'a str, bool, Option<(String, Vec<String>)>);

/// An exclusion that could match nothing is a mistake: it names no value, an axis the matrix
/// does not sweep, or a value that axis does not have.
fn exclusion(spec: &BenchmarkRunSpec, field: &str, e: &MatrixEntry, errors: &mut Vec<FieldError>) {
    let m = spec.matrix.clone().unwrap_or_default();
    if named(e).is_empty() {
        errors.push(err(
            field.to_string(),
            "names no value, so it excludes nothing: name the values of the cells to remove".into(),
        ));
        return;
    }
    let swept = Swept::of(&m);
    let listed = |list: Vec<String>, v: String| list.is_empty() || list.contains(&v);
    let checks: [AxisCheck; 9] = [
        ("targets", true, texts(e.target.clone(), &m.targets)),
        ("scenarios", true, texts(e.scenario.clone(), &m.scenarios)),
        ("cpu", swept.cpu, texts(e.cpu.clone(), &m.cpu)),
        ("memory", swept.memory, texts(e.memory.clone(), &m.memory)),
        ("replicas", swept.replicas, texts(e.replicas, &m.replicas)),
        (
            "connections",
            swept.connections,
            texts(e.connections, &m.connections),
        ),
        ("rate", swept.rate, texts(e.rate, &m.rate)),
        ("requests", swept.requests, texts(e.requests, &m.requests)),
        (
            "keepAlive",
            swept.keep_alive,
            texts(e.keep_alive, &m.keep_alive),
        ),
    ];
    for (axis, is_swept, value) in checks {
        let Some((v, list)) = value else { continue };
        // The entry's key: singular for the two name lists, the axis' own name otherwise.
        let key = match axis {
            "targets" | "scenarios" => axis.trim_end_matches('s'),
            _ => axis,
        };
        if !is_swept {
            errors.push(err(
                format!("{field}.{key}"),
                format!("the matrix does not sweep {axis} (spec.matrix.{axis} is not a list), so no cell differs in it: remove it from the entry"),
            ));
        } else if !listed(list.clone(), v.clone()) {
            errors.push(err(
                format!("{field}.{key}"),
                format!(
                    "{v} is not one of spec.matrix.{axis} [{}], so the entry excludes nothing",
                    list.join(", ")
                ),
            ));
        }
    }
}

/// Checks every include and exclude entry, then that an include entry that pairs with no cell
/// can add one and that no two cells of the expanded matrix are the same.
pub fn check(spec: &BenchmarkRunSpec, errors: &mut Vec<FieldError>) {
    let Some(m) = &spec.matrix else { return };
    let before = errors.len();
    for (i, e) in m.exclude.iter().enumerate() {
        let field = format!("spec.matrix.exclude[{i}]");
        values(spec, &field, e, errors);
        exclusion(spec, &field, e, errors);
    }
    for (i, e) in m.include.iter().enumerate() {
        let field = format!("spec.matrix.include[{i}]");
        if named(e).is_empty() {
            errors.push(err(
                field.clone(),
                "names no value: give the values of the cell to add or pair".into(),
            ));
        }
        values(spec, &field, e, errors);
        load_values(spec, &field, e, errors);
    }
    // The exact expansion below is only for matrices the size check lets through.
    if errors.len() > before || crate::matrix::cell_count(spec) > crate::spec::MAX_MEASUREMENTS {
        return;
    }
    if !m.exclude.is_empty() && m.include.is_empty() && surviving_product(spec).is_empty() {
        errors.push(err(
            "spec.matrix.exclude".into(),
            "removes every combination of the matrix, so the run would measure nothing: \
             remove an entry, or add a cell with matrix.include"
                .into(),
        ));
        return;
    }
    if !m.include.is_empty() {
        let surviving = surviving_product(spec);
        for (i, e) in m.include.iter().enumerate() {
            if !pairs_with_any(spec, &surviving, e) {
                if let Err(why) = added_cell(spec, m, e) {
                    errors.push(err(format!("spec.matrix.include[{i}]"), why));
                }
            }
        }
    }
    if m.include.is_empty() && m.requests.is_empty() {
        // Nothing pairs values per cell: the axes' own checks cover every cell.
        return;
    }
    let cells = expand(spec);
    cells_send_every_connection(&cells, errors);
    if !m.include.is_empty() {
        no_cell_twice(spec, &cells, errors);
    }
}

/// Every cell bounded by a request count has at least one request per connection.
fn cells_send_every_connection(cells: &[Cell], errors: &mut Vec<FieldError>) {
    let mut seen = BTreeSet::new();
    for c in cells {
        let Some(n) = c.requests.filter(|n| *n < i64::from(c.connections)) else {
            continue;
        };
        if seen.insert((n, c.connections)) {
            errors.push(err(
                "spec.matrix".into(),
                format!(
                    "cell {} ({} connections, {n} requests) has fewer requests than connections, so some connections would send nothing: pair it with more requests (matrix.include) or exclude it",
                    c.index, c.connections
                ),
            ));
        }
    }
}

/// No include entry adds a cell the matrix already has.
fn no_cell_twice(spec: &BenchmarkRunSpec, cells: &[Cell], errors: &mut Vec<FieldError>) {
    let mut seen = BTreeSet::new();
    for c in cells {
        let key = (
            c.target,
            c.cpu.clone(),
            c.memory.clone(),
            c.replicas,
            c.scenario,
            c.connections,
            c.rate,
            c.requests,
            c.keep_alive,
        );
        if !seen.insert(key) {
            errors.push(err(
                "spec.matrix.include".into(),
                format!(
                    "cell {} repeats an earlier cell ({} cpu={} memory={} replicas={} connections={}): remove the entry that adds it again",
                    c.index, spec.targets[c.target].name, c.cpu, c.memory, c.replicas, c.connections
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{validate, BenchmarkRunSpec};

    fn errors(matrix: serde_json::Value) -> Vec<(String, String)> {
        let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
            "targets": [{"name": "node", "image": "x"}, {"name": "java", "image": "y"}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "resources": {"cpu": "1", "memory": "1Gi"},
            "load": {"connections": 50, "duration": "30s"},
            "matrix": matrix
        }))
        .unwrap();
        match validate(&spec) {
            Ok(_) => Vec::new(),
            Err(es) => es.into_iter().map(|e| (e.field, e.message)).collect(),
        }
    }

    fn only(es: &[(String, String)]) -> (&str, &str) {
        assert_eq!(es.len(), 1, "{es:?}");
        (es[0].0.as_str(), es[0].1.as_str())
    }

    #[test]
    fn valid_entries_pass() {
        let es = errors(serde_json::json!({
            "cpu": ["1", "3500m"], "replicas": [1, 2],
            "exclude": [{"cpu": "3500m", "replicas": 2}],
            "include": [{"target": "java", "cpu": "1", "replicas": 1, "connections": 500}]
        }));
        assert!(es.is_empty(), "{es:?}");
    }

    #[test]
    fn exclusions_that_leave_no_cell_are_refused_unless_an_include_adds_one() {
        // Found by the planner's property test: a run of zero cells passed validation.
        let es = errors(serde_json::json!({"replicas": [1], "exclude": [{"replicas": 1}]}));
        let (field, message) = only(&es);
        assert_eq!(field, "spec.matrix.exclude");
        assert!(message.contains("removes every combination"), "{message}");
        let es = errors(serde_json::json!({
            "replicas": [1, 2], "exclude": [{"replicas": 1}, {"replicas": 2}],
            "include": [{"target": "node", "cpu": "500m"}]
        }));
        assert!(es.is_empty(), "{es:?}");
    }

    #[test]
    fn an_exclusion_of_an_unswept_axis_or_an_absent_value_is_refused() {
        let es = errors(serde_json::json!({"exclude": [{"cpu": "2"}]}));
        let (field, message) = only(&es);
        assert_eq!(field, "spec.matrix.exclude[0].cpu");
        assert!(message.contains("does not sweep cpu"), "{message}");
        let es =
            errors(serde_json::json!({"connections": [50, 100], "exclude": [{"connections": 70}]}));
        let (field, message) = only(&es);
        assert_eq!(field, "spec.matrix.exclude[0].connections");
        assert!(
            message.contains("70 is not one of spec.matrix.connections [50, 100]"),
            "{message}"
        );
        let es = errors(serde_json::json!({"exclude": [{}]}));
        assert_eq!(only(&es).0, "spec.matrix.exclude[0]");
    }

    #[test]
    fn entries_naming_unknown_targets_or_values_out_of_range_are_refused() {
        let es = errors(serde_json::json!({"include": [{"target": "go", "connections": 500}]}));
        assert_eq!(
            only(&es),
            ("spec.matrix.include[0].target", "\"go\" names no target")
        );
        let es = errors(serde_json::json!({"include": [{"target": "java", "replicas": 0}]}));
        assert_eq!(only(&es).0, "spec.matrix.include[0].replicas");
        let es = errors(serde_json::json!({"include": [{"target": "java", "cpu": "lots"}]}));
        assert_eq!(only(&es).0, "spec.matrix.include[0].cpu");
    }

    #[test]
    fn an_added_cell_without_its_target_or_a_repeated_cell_is_refused() {
        let es =
            errors(serde_json::json!({"connections": [50], "include": [{"connections": 500}]}));
        let (field, message) = only(&es);
        assert_eq!(field, "spec.matrix.include[0]");
        assert!(message.contains("name one of node, java"), "{message}");
        let es = errors(serde_json::json!({
            "connections": [50],
            "include": [{"target": "java", "connections": 500}, {"target": "java", "connections": 500}]
        }));
        let (field, message) = only(&es);
        assert_eq!(field, "spec.matrix.include");
        assert!(
            message.contains("cell 3 repeats an earlier cell"),
            "{message}"
        );
    }

    #[test]
    fn load_values_an_entry_brings_must_fit_the_load_pods_and_the_bound() {
        let spec = |load: serde_json::Value, include: serde_json::Value| -> Vec<(String, String)> {
            let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
                "targets": [{"name": "node", "image": "x"}],
                "scenarios": [{"name": "hello", "path": "/hello"}],
                "load": load,
                "matrix": {"include": include}
            }))
            .unwrap();
            validate(&spec)
                .err()
                .unwrap_or_default()
                .into_iter()
                .map(|e| (e.field, e.message))
                .collect()
        };
        let es = spec(
            serde_json::json!({"connections": 4, "pods": 2, "duration": "30s"}),
            serde_json::json!([{"connections": 5, "rate": 101}]),
        );
        let fields: Vec<&str> = es.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.matrix.include[0].connections",
                "spec.matrix.include[0].rate"
            ],
            "{es:?}"
        );
        let es = spec(
            serde_json::json!({"connections": 4, "requests": 100}),
            serde_json::json!([{"rate": 10}]),
        );
        assert_eq!(es.len(), 1, "{es:?}");
        assert!(es[0].1.contains("needs load.duration"), "{es:?}");
        // An entry that pairs 500 connections with every cell of a 100-request run.
        let es = spec(
            serde_json::json!({"connections": 4, "requests": 100}),
            serde_json::json!([{"connections": 500}]),
        );
        assert_eq!(es.len(), 1, "{es:?}");
        assert!(
            es[0].1.contains("cell 0 (500 connections, 100 requests)"),
            "{es:?}"
        );
    }

    #[test]
    fn request_counts_are_checked_per_cell_and_need_a_counted_run() {
        let check = |load: serde_json::Value, matrix: serde_json::Value| -> Vec<(String, String)> {
            let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
                "targets": [{"name": "node", "image": "x"}],
                "scenarios": [{"name": "hello", "path": "/hello"}],
                "load": load,
                "matrix": matrix
            }))
            .unwrap();
            validate(&spec)
                .err()
                .unwrap_or_default()
                .into_iter()
                .map(|e| (e.field, e.message))
                .collect()
        };
        let counted = serde_json::json!({"connections": 50, "requests": 1000});
        // 500 connections paired with 1 000 000 requests: fine although load.requests is 1000.
        let es = check(
            counted.clone(),
            serde_json::json!({"connections": [50, 500],
                "include": [{"connections": 500, "requests": 1000000}]}),
        );
        assert!(es.is_empty(), "{es:?}");
        // The same without the pairing: 500 connections would share 1000 requests.
        let es = check(
            counted.clone(),
            serde_json::json!({"connections": [50, 500], "requests": [100, 2000]}),
        );
        assert_eq!(es.len(), 1, "{es:?}");
        assert_eq!(es[0].0, "spec.matrix");
        assert!(
            es[0].1.contains("cell 2 (500 connections, 100 requests)"),
            "{es:?}"
        );
        let es = check(
            serde_json::json!({"connections": 50, "duration": "30s"}),
            serde_json::json!({"requests": [1000], "include": [{"requests": 5000}]}),
        );
        let fields: Vec<&str> = es.iter().map(|e| e.0.as_str()).collect();
        assert!(fields.contains(&"spec.matrix.requests"), "{es:?}");
        assert!(
            fields.contains(&"spec.matrix.include[0].requests"),
            "{es:?}"
        );
        let es = check(counted, serde_json::json!({"keepAlive": [false, false]}));
        assert_eq!(es.len(), 1, "{es:?}");
        assert_eq!(es[0].0, "spec.matrix.keepAlive");
    }
}
