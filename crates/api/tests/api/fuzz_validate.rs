//! Property tests: `validate()` never panics on any spec that deserializes, however hostile,
//! and what the operator derives from a spec that passed (matrix expansion, resources, unit
//! conversions, time limits) never panics either and stays within the bounds it relies on.
//!
//! 256 cases per property by default (quick enough for every `cargo test`); set
//! `PROPTEST_CASES` for a longer run, e.g. `PROPTEST_CASES=100000`.

#[path = "fuzz/json.rs"]
mod json;
#[path = "fuzz/leaves.rs"]
mod leaves;
#[path = "fuzz/mutate.rs"]
mod mutate;

use benchrun_api::validate::{describe, Limit, Warmup};
use benchrun_api::{expand, matrix, units, validate, BenchmarkRunSpec, ValidatedRun};
use benchrun_api::{request, MAX_MEASUREMENTS};
use proptest::prelude::*;

/// The properties below run in `make unit`'s release profile; they only find an overflow if
/// that profile checks for it (Cargo.toml: `overflow-checks` for this package).
#[test]
fn the_property_tests_run_with_overflow_checks() {
    let max = std::hint::black_box(u32::MAX);
    let sum = std::panic::catch_unwind(|| max + std::hint::black_box(1));
    assert!(
        sum.is_err(),
        "u32::MAX + 1 wrapped: overflow checks are off"
    );
}

/// Validates `spec` and checks the result: errors that name a field, or a run whose derived
/// values the operator can use without a panic.
fn check(spec: &BenchmarkRunSpec) -> Result<(), TestCaseError> {
    match validate(spec) {
        Err(errors) => {
            prop_assert!(!errors.is_empty(), "an error result lists its errors");
            for e in &errors {
                prop_assert!(e.field.starts_with("spec."), "field {:?}", e.field);
                prop_assert!(!e.message.is_empty(), "{}: no message", e.field);
            }
            describe(&errors);
            Ok(())
        }
        Ok(run) => check_run(spec, &run),
    }
}

fn check_run(spec: &BenchmarkRunSpec, run: &ValidatedRun) -> Result<(), TestCaseError> {
    prop_assert_eq!(run.cells.len(), matrix::cell_count(spec));
    prop_assert_eq!(&expand(spec), &run.cells);
    prop_assert!((1..=MAX_MEASUREMENTS).contains(&run.total()));
    // One parsed entry per entry of the spec: cells index these.
    prop_assert_eq!(run.targets.len(), spec.targets.len());
    prop_assert_eq!(run.scenarios.len(), spec.scenarios.len());
    prop_assert_eq!(run.services.len(), spec.services.len());
    prop_assert!(run.load_pods >= 1);
    prop_assert!(run.load_resources.cpu_millis >= 0);
    for (i, cell) in run.cells.iter().enumerate() {
        // The operator indexes `spec.targets` and `spec.scenarios` with these.
        prop_assert_eq!(cell.index, i);
        prop_assert!(cell.target < spec.targets.len());
        prop_assert!(cell.scenario < spec.scenarios.len());
        prop_assert!(cell.connections >= run.load_pods);
        prop_assert!((1..=20_000).contains(&cell.connections));
        prop_assert!(
            (1..=32).contains(&cell.replicas),
            "replicas {}",
            cell.replicas
        );
        prop_assert!(cell.same_deployment(cell));
        let r = run.target_resources(cell);
        prop_assert!(r.cpu_millis >= 1, "cell {}: {:?}", i, r);
        prop_assert!(
            units::cpu_millis(&r.cpu_request).is_ok(),
            "cell {}: {:?}",
            i,
            r
        );
        prop_assert!(
            units::memory_bytes(&r.memory).is_ok(),
            "cell {}: {:?}",
            i,
            r
        );
        prop_assert!(units::memory_bytes(&r.memory_request).is_ok(), "{:?}", r);
    }
    for (i, s) in spec.scenarios.iter().enumerate() {
        prop_assert!(request::scenario_errors(i, s).is_empty());
    }
    // The load Job's deadline and the planner's stage limits add these up.
    let load_time = run.expected_load_time() + run.load_grace + run.ready_timeout;
    units::format_duration(load_time + run.timeout);
    match run.limit {
        Limit::Requests(n) => prop_assert!(n >= 1, "requests {}", n),
        Limit::Duration(d) => prop_assert!((1..=3600).contains(&d.as_secs()), "duration {:?}", d),
    }
    if let Warmup::Requests(n) = run.warmup {
        prop_assert!(n >= 1, "warm-up requests {}", n);
    }
    if let Warmup::Duration(d) = run.warmup {
        prop_assert!(
            !units::format_duration(d).starts_with('0'),
            "warm-up {:?}",
            d
        );
    }
    prop_assert_ne!(units::format_duration(run.timeout), "0s");
    if let Some(slo) = &run.slo {
        prop_assert!(slo.error_rate.is_none_or(|r| (0.0..=1.0).contains(&r)));
    }
    // Validation is a function of the spec.
    let again = validate(spec);
    prop_assert_eq!(again.as_ref(), Ok(run));
    Ok(())
}

proptest! {
    /// Any JSON shaped like a spec that deserializes validates without a panic.
    #[test]
    fn arbitrary_json_specs_validate_without_panicking(value in json::spec_json()) {
        if let Ok(spec) = serde_json::from_value::<BenchmarkRunSpec>(value) {
            check(&spec)?;
        }
    }

    /// Examples with hostile fields validate without a panic, and the many that still pass
    /// expand into cells the operator can use.
    #[test]
    fn mutated_examples_validate_and_expand_without_panicking(
        spec in mutate::near_valid_spec()
    ) {
        check(&spec)?;
    }

    /// The unit parsers return a value in range or an error for any string.
    #[test]
    fn units_parse_any_string_without_panicking(s in leaves::string()) {
        if let Ok(m) = units::cpu_millis(&s) {
            prop_assert!(m >= 1, "{:?} -> {}", s, m);
        }
        if let Ok(b) = units::memory_bytes(&s) {
            prop_assert!(b >= 0, "{:?} -> {}", s, b);
        }
        if let Ok(d) = units::duration(&s) {
            units::format_duration(d);
        }
        if let Ok(p) = units::percent(&s) {
            prop_assert!((0.0..=1.0).contains(&p), "{:?} -> {}", s, p);
        }
    }
}
