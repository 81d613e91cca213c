//! `spec.matrix` and `spec.repeats`: the swept axes, checked against the rest of the spec and
//! the load pods, and the size of the experiment. The cells themselves are expanded once the
//! whole spec passed ([`crate::matrix::expand`]).

use super::field::{count_in_range, err, split_over_pods, FieldError};
use super::matrix_entries;
use super::resources::request_within_swept_limits;
use crate::matrix;
use crate::spec::{BenchmarkRunSpec, Matrix, MAX_MEASUREMENTS, MAX_RATE, MAX_REQUESTS};
use crate::units;

/// Checks `spec.matrix` and returns the measurements per cell (`spec.repeats`, at least 1).
pub(crate) fn parse(spec: &BenchmarkRunSpec, e: &mut Vec<FieldError>) -> usize {
    let m = spec.matrix.clone().unwrap_or_default();
    counts_in_range(&m, e);
    swept_names_and_limits(spec, &m, e);
    let r = &spec.resources;
    request_within_swept_limits(
        "cpu",
        r.cpu_request.as_deref(),
        &m.cpu,
        units::cpu_millis,
        e,
    );
    request_within_swept_limits(
        "memory",
        r.memory_request.as_deref(),
        &m.memory,
        units::memory_bytes,
        e,
    );
    let pods = i64::from(spec.load.pods.max(1));
    load_axes(spec, &m, pods, e);
    connections_split(spec, &m, pods, e);
    matrix_entries::check(spec, e);
    let repeats = spec.repeats.max(1) as usize;
    // With repeatsUntil the run may grow to maxRepeats per cell: that is what must fit.
    let (most, which) = match &spec.repeats_until {
        Some(u) => (
            u.max_repeats.max(spec.repeats).max(1) as usize,
            " (repeatsUntil.maxRepeats)",
        ),
        None => (repeats, ""),
    };
    let count = matrix::cell_count(spec);
    let measurements = count.saturating_mul(most);
    if measurements > MAX_MEASUREMENTS {
        e.push(err(
            "spec.matrix",
            format!(
                "{count} cells × {most} repeats{which} = {measurements} measurements, more than the maximum of {MAX_MEASUREMENTS}; lower the repeats or split the experiment into several runs"
            ),
        ));
    }
    repeats
}

/// The bounds of the swept counts, as the CRD schema declares them.
fn counts_in_range(m: &Matrix, e: &mut Vec<FieldError>) {
    for (i, r) in m.replicas.iter().enumerate() {
        count_in_range(&format!("spec.matrix.replicas[{i}]"), (*r).into(), 1, 32, e);
    }
    for (i, c) in m.connections.iter().enumerate() {
        let field = format!("spec.matrix.connections[{i}]");
        count_in_range(&field, (*c).into(), 1, 20_000, e);
    }
}

/// Swept target and scenario names name one of the spec's; swept limits are quantities.
fn swept_names_and_limits(spec: &BenchmarkRunSpec, m: &Matrix, e: &mut Vec<FieldError>) {
    for n in &m.targets {
        if !spec.targets.iter().any(|t| &t.name == n) {
            e.push(err("spec.matrix.targets", format!("{n:?} names no target")));
        }
    }
    for n in &m.scenarios {
        if !spec.scenarios.iter().any(|s| &s.name == n) {
            e.push(err(
                "spec.matrix.scenarios",
                format!("{n:?} names no scenario"),
            ));
        }
    }
    for (i, q) in m.cpu.iter().enumerate() {
        if let Err(x) = units::cpu_millis(q) {
            e.push(err(format!("spec.matrix.cpu[{i}]"), x));
        }
    }
    for (i, q) in m.memory.iter().enumerate() {
        if let Err(x) = units::memory_bytes(q) {
            e.push(err(format!("spec.matrix.memory[{i}]"), x));
        }
    }
}

/// Swept rates and request counts: within bounds, split evenly over the `pods` load pods, and
/// each with the bound of the run it needs; swept keep-alive settings differ.
fn load_axes(spec: &BenchmarkRunSpec, m: &Matrix, pods: i64, e: &mut Vec<FieldError>) {
    let load = &spec.load;
    for (i, r) in m.rate.iter().enumerate() {
        if !(1..=MAX_RATE).contains(r) {
            e.push(err(
                format!("spec.matrix.rate[{i}]"),
                format!("{r} req/s is out of range: use a rate between 1 and {MAX_RATE}"),
            ));
        }
    }
    for r in &m.rate {
        let what = format!("a rate of {r} req/s");
        split_over_pods("spec.load.rate", &what, *r, pods, false, e);
    }
    if !m.rate.is_empty() && load.duration.is_none() {
        e.push(err(
            "spec.matrix.rate",
            "the open model needs load.duration",
        ));
    }
    if !m.requests.is_empty() && load.requests.is_none() {
        e.push(err(
            "spec.matrix.requests",
            "a request-count axis needs load.requests (the run is bounded by load.duration)",
        ));
    }
    for (i, n) in m.requests.iter().enumerate() {
        count_in_range(
            &format!("spec.matrix.requests[{i}]"),
            *n,
            1,
            MAX_REQUESTS,
            e,
        );
        let field = format!("spec.matrix.requests[{i}]");
        split_over_pods(field, &format!("{n} requests"), *n, pods, false, e);
    }
    let mut distinct = m.keep_alive.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() != m.keep_alive.len() {
        e.push(err(
            "spec.matrix.keepAlive",
            "the entries must differ: use [true, false]",
        ));
    }
}

/// Every connection count of the run (swept or `load.connections`) splits over the `pods`
/// load pods, at least one each, and gets a request of `load.requests`.
fn connections_split(spec: &BenchmarkRunSpec, m: &Matrix, pods: i64, e: &mut Vec<FieldError>) {
    let conns: Vec<i32> = if m.connections.is_empty() {
        vec![spec.load.connections]
    } else {
        m.connections.clone()
    };
    // With a request-count axis or include entries, each cell's pair is checked instead
    // (matrix_entries).
    let per_cell = !m.requests.is_empty() || !m.include.is_empty();
    for c in &conns {
        let what = format!("{c} connections");
        split_over_pods("spec.load.connections", &what, i64::from(*c), pods, true, e);
        if let Some(n) = spec.load.requests.filter(|_| !per_cell) {
            if n < i64::from(*c) {
                e.push(err(
                    "spec.load.requests",
                    format!("{n} requests is fewer than {c} connections; raise load.requests"),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::spec;
    use super::super::{describe, validate};
    use super::*;

    #[test]
    fn rates_above_the_cap_are_rejected_naming_the_entry() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s", "rate": 20000000}"#);
        s.matrix = Some(crate::Matrix {
            rate: vec![1000, MAX_RATE + 1],
            ..Default::default()
        });
        let errs = validate(&s).unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.load.rate", "spec.matrix.rate[1]"],
            "{}",
            describe(&errs)
        );
        assert!(
            errs[1].message.contains("between 1 and 10000000"),
            "{}",
            errs[1]
        );
    }
}
