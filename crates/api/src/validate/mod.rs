//! Validation that CEL cannot express (or that must also hold for objects created before a
//! rule existed), producing a [`ValidatedRun`]: the only input the operator's planner and
//! builders accept ("parse, don't validate").
//!
//! One parser per section of the spec, each a pure function from its section to its part of
//! the plan that adds what is wrong to one list of [`FieldError`]s, so that every problem is
//! reported at once; [`validate`] runs them in the order of the spec and assembles the plan
//! when the list stayed empty.

mod baseline;
mod cleanup;
mod compare;
mod field;
#[cfg(test)]
pub(crate) mod fixtures;
mod load;
mod matrix;
mod matrix_entries;
mod plan;
mod repeats;
pub mod request;
mod resources;
mod scenarios;
mod search;
mod services;
mod slo;
mod targets;
mod timeouts;

pub use baseline::{BaselinePlan, DEFAULT_BASELINE_TOLERANCE};
pub use cleanup::CleanupPolicy;
pub use field::{describe, FieldError, RESERVED_ENV_PREFIX};
pub use load::{Limit, Warmup};
pub use plan::ValidatedRun;
pub use resources::{ResourcePlan, TargetRequests};
pub use scenarios::ScenarioPlan;
pub use services::{SeedPlan, ServicePlan};
pub use slo::SloPlan;
pub use targets::{PodSecurity, TargetPlan};

use crate::spec::BenchmarkRunSpec;

/// Validates a spec, returning every problem found (not just the first).
pub fn validate(spec: &BenchmarkRunSpec) -> Result<ValidatedRun, Vec<FieldError>> {
    let mut errors = Vec::new();
    let e = &mut errors;
    let targets = targets::parse(&spec.targets, e);
    let scenarios = scenarios::parse(&spec.scenarios, e);
    let services = services::parse(&spec.services, e);
    let target_requests = resources::target_pods(spec, e);
    let load = load::parse(&spec.load, e);
    let repeats = matrix::parse(spec, e);
    let slo = slo::parse(spec.slo.as_ref(), e);
    let cleanup = cleanup::parse(spec.cleanup.as_ref(), e);
    let timeouts = timeouts::parse(spec.timeouts.as_ref(), e);
    let baseline = baseline::parse(spec.baseline.as_ref(), e);
    let tolerance = baseline::parse_tolerance(spec.tolerance.as_deref(), "spec.tolerance", e);
    let until = repeats::parse(spec, e);
    let mut search = search::parse(spec, e);
    if !errors.is_empty() {
        return Err(errors);
    }
    // Only now: a matrix that failed its size checks could expand without bound.
    let mut cells = crate::matrix::expand(spec);
    let compare_along = compare::parse(spec, &cells, &mut errors);
    repeats::check_comparable(spec, &cells, compare_along, &mut errors);
    if let Some(plan) = &mut search {
        search::finish(plan, &cells, &mut errors);
        let rate = spec
            .search
            .as_ref()
            .and_then(|s| s.demand.as_ref())
            .map(|d| d.rate);
        cells = search::first_cells(plan, cells, rate);
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let compares = search.is_none() && compares(spec, &cells, compare_along);
    Ok(ValidatedRun {
        spec: spec.clone(),
        matrix: spec.matrix.clone().unwrap_or_default(),
        prometheus: spec.prometheus.clone(),
        targets,
        scenarios,
        target_requests,
        cells,
        repeats,
        until,
        limit: load.limit,
        warmup: load.warmup,
        timeout: load.timeout,
        ramp_up: load.ramp_up,
        think_time: load.think_time,
        seed: load.seed,
        load_pods: load.pods,
        load_resources: load.resources,
        load_node_selector: load.node_selector,
        slo,
        cleanup: cleanup.policy,
        ttl_after_finished: cleanup.ttl_after_finished,
        ready_timeout: timeouts.ready,
        load_grace: timeouts.load_grace,
        baseline,
        tolerance,
        compare_along,
        repeat_order: crate::order::RepeatOrder::parse(
            spec.repeat_order.as_deref(),
            spec.repeat_seed,
            compares,
            repeats,
        ),
        repeat_order_explicit: spec.repeat_order.is_some(),
        services,
        search,
    })
}

/// Whether the run's repeats default to independent deployments (`Interleaved`): when it
/// compares something — two or more targets among its cells, an axis named by `spec.compare`
/// (validated to vary), a baseline (the comparisons within the run, see the operator's
/// `src/comparisons.rs`) — or measures two or more scenarios. Such a run is typically the
/// baseline of a later one, or compared with another by `kubectl benchrun compare`, and those
/// comparisons need two deployments a side as much as the run's own.
fn compares(
    spec: &BenchmarkRunSpec,
    cells: &[crate::Cell],
    along: Option<crate::vocab::CompareAxis>,
) -> bool {
    spec.baseline.is_some()
        || along.is_some()
        || targets_compared(cells)
        || spec.scenarios.len() >= 2
}

/// Two or more targets among the cells: the run compares them with each other.
pub(crate) fn targets_compared(cells: &[crate::Cell]) -> bool {
    let mut v: Vec<usize> = cells.iter().map(|c| c.target).collect();
    v.sort_unstable();
    v.dedup();
    v.len() >= 2
}

#[cfg(test)]
mod tests {
    use super::fixtures::spec;
    use super::*;
    use std::time::Duration;

    #[test]
    fn valid_spec_expands_with_defaults() {
        let run = validate(&spec(r#"{"connections": 4, "pods": 2, "duration": "10s"}"#)).unwrap();
        assert_eq!(run.cells.len(), 1);
        assert_eq!(run.limit, Limit::Duration(Duration::from_secs(10)));
        assert_eq!(run.warmup, Warmup::None);
        assert_eq!(run.cleanup, CleanupPolicy::Delete);
        assert_eq!(run.ready_timeout, Duration::from_secs(180));
    }

    #[test]
    fn counts_and_durations_only_the_schema_bounded_are_refused_here_too() {
        // Found by the property tests: an object that skipped admission passed validate() with
        // these and would have become a Deployment of 0 replicas or a load of 0 connections.
        let mut s = spec(r#"{"connections": 0, "duration": "0s", "warmupRequests": 0}"#);
        s.replicas = 0;
        s.resources.cpu = "0.0001".into();
        s.matrix = Some(
            serde_json::from_str(r#"{"replicas": [1, -2], "connections": [4, 20001]}"#).unwrap(),
        );
        let fields: Vec<_> = validate(&s)
            .unwrap_err()
            .into_iter()
            .map(|e| e.field)
            .collect();
        for f in [
            "spec.replicas",
            "spec.load.connections",
            "spec.load.warmupRequests",
            "spec.load.duration",
            "spec.resources.cpu",
            "spec.matrix.replicas[1]",
            "spec.matrix.connections[1]",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
        }
        assert!(!fields.contains(&"spec.matrix.replicas[0]".to_string()));
        let long = validate(&spec(r#"{"connections": 4, "duration": "61m"}"#)).unwrap_err();
        assert_eq!(long[0].field, "spec.load.duration");
        assert!(
            long[0].message.contains("between 1s and 1h"),
            "{}",
            long[0].message
        );
        let many = validate(&spec(r#"{"connections": 4, "requests": 100000001}"#)).unwrap_err();
        assert_eq!(many[0].field, "spec.load.requests");
    }
}
