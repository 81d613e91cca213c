//! Property tests of the planner: for any validated run and any status and observation, even
//! ones that disagree with the run, deciding never panics and every action names a cell and
//! repeat of the run (the I/O layer indexes `run.cells` with them). The result mapping and the
//! builders the I/O layer calls on those actions are exercised on the same inputs.
//!
//! 256 cases per property by default; set `PROPTEST_CASES` for a longer run.

use benchrun_api::validate::FieldError;
use benchrun_api::{Phase, Stage};
use proptest::prelude::*;

use super::*;
use crate::builders::{self, fixtures::owner, LoadSettings};
use crate::names;
use crate::observed::JobObserved;
use crate::results::{self, validity};

#[path = "fuzz_observed.rs"]
mod observed_inputs;
#[path = "fuzz_runs.rs"]
mod runs;
#[path = "fuzz_status.rs"]
mod status_inputs;

use observed_inputs::{extra, load_result, observed};
use runs::run;
use status_inputs::{index, index32, status, timestamp, usage};

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

/// Checks that every action of `d` can be carried out: its cell and repeat are in range, and
/// the child it applies builds.
fn check_decision(run: &ValidatedRun, d: &Decision) -> Result<(), TestCaseError> {
    let settings = LoadSettings {
        image: "benchrun.local/benchrun-load:0.1.0".into(),
        pull_policy: "IfNotPresent".into(),
    };
    let owner = owner();
    for a in &d.actions {
        match a {
            Action::ApplyTarget {
                cell,
                round,
                services,
                node_selector,
            } => {
                prop_assert!(*cell < run.cells.len(), "{:?}", a);
                let c = &run.cells[*cell];
                builders::build_target_deployment(
                    &owner,
                    run,
                    c,
                    *round,
                    services,
                    node_selector,
                    "IfNotPresent",
                );
                builders::build_target_service(&owner, run, c, *round);
            }
            Action::CreateJob {
                cell,
                repeat,
                cluster_ip,
                restarts_baseline,
                start_at_ms,
                node_selector,
            } => {
                prop_assert!(*cell < run.cells.len() && *repeat < run.repeats, "{:?}", a);
                // Several pods always begin together; one pod is told when only when its Job
                // is made ahead of its turn.
                prop_assert!(start_at_ms.is_some() || run.load_pods == 1, "{:?}", a);
                let c = &run.cells[*cell];
                let baseline = restarts_baseline;
                let start = *start_at_ms;
                builders::build_load_job(
                    &owner,
                    run,
                    c,
                    *repeat,
                    cluster_ip,
                    baseline,
                    start,
                    0,
                    node_selector,
                    &settings,
                );
            }
            Action::StoreDetail { cell, repeat, json } => {
                prop_assert!(*cell < run.cells.len() && *repeat < run.repeats, "{:?}", a);
                builders::build_detail_configmap(&owner, *cell, *repeat, json.clone());
            }
            Action::ApplyServices { node_selector } => {
                for i in 0..run.services.len() {
                    builders::build_service_deployment(
                        &owner,
                        run,
                        i,
                        node_selector,
                        "IfNotPresent",
                    );
                    builders::build_service_service(&owner, run, i);
                }
            }
            Action::CreateSeedJob { service, addresses } => {
                prop_assert!(*service < run.services.len(), "{:?}", a);
                prop_assert!(run.services[*service].seed.is_some(), "{:?}", a);
                builders::build_seed_job(&owner, run, *service, addresses, "IfNotPresent");
            }
            Action::DeleteTargets { .. }
            | Action::DeleteJobs(_)
            | Action::DeleteRun
            | Action::DeleteServices => {}
            Action::TakeSlot => prop_assert_eq!(d.actions.len(), 1, "{:?}", d.actions),
        }
    }
    Ok(())
}

/// Makes the inputs agree on one measurement in `stage` (when given) so that the steps past
/// deploying are reached: the status is on the focus measurement, the observation names its
/// children and its load window ended long enough before `now` to be collected.
fn align(
    run: &ValidatedRun,
    status: &mut BenchmarkRunStatus,
    obs: &mut Observed,
    now: Timestamp,
    stage: Option<Stage>,
) {
    let Some((cell, repeat)) = focus(run, status) else {
        return;
    };
    let c = &run.cells[cell];
    obs.target_configs = vec![names::config_hash(&run.targets[c.target].name, c)];
    obs.jobs = vec![names::job_name(&obs.run_name, cell, repeat)];
    let Some(stage) = stage else {
        return;
    };
    status.phase = Some(Phase::Running);
    status.current = Some(CurrentMeasurement {
        cell: cell as i32,
        repeat: repeat as i32,
        stage,
        since: Time(now),
        job: obs.jobs.first().cloned(),
    });
    let end = now.as_millisecond().saturating_sub(60_000).max(10_000) as u64;
    let windows = obs.detail.iter_mut().chain(match &mut obs.job {
        JobObserved::Succeeded(pods) => pods.iter_mut().flatten().collect(),
        _ => Vec::new(),
    });
    for load in windows {
        (load.window_start_ms, load.window_end_ms) = (end - 10_000, end);
    }
}

/// An action the apiserver may have refused, naming any cell and repeat.
fn refused_action() -> impl Strategy<Value = Action> {
    prop_oneof![
        index().prop_map(|cell| Action::ApplyTarget {
            cell,
            round: None,
            services: vec![],
            node_selector: Default::default(),
        }),
        (index(), index()).prop_map(|(cell, repeat)| Action::CreateJob {
            cell,
            repeat,
            cluster_ip: "10.96.0.7".into(),
            restarts_baseline: Default::default(),
            start_at_ms: None,
            node_selector: Default::default(),
        }),
        (index(), index()).prop_map(|(cell, repeat)| Action::StoreDetail {
            cell,
            repeat,
            json: "{}".into(),
        }),
        Just(Action::DeleteRun),
        Just(Action::DeleteTargets { except: None }),
    ]
}

proptest! {
    /// Any status and observation: `focus` stays in range, `collections_due` and the planner
    /// decide without a panic, and so do three further reconciles on the planner's own status.
    #[test]
    fn planner_decides_any_status_and_observation_without_panicking(
        run in run(),
        status in status(),
        mut obs in observed(),
        agree in prop::option::of(prop::option::of(prop::sample::select(Stage::ALL))),
        now in timestamp(),
    ) {
        let mut status = status;
        let mut now = now;
        if let Some(stage) = agree {
            align(&run, &mut status, &mut obs, now, stage);
        }
        for _ in 0..4 {
            if let Some((cell, repeat)) = focus(&run, &status) {
                prop_assert!(cell < run.cells.len() && repeat < run.repeats);
            }
            collections_due(&status, now);
            let d = plan(&run, &status, &obs, now);
            check_decision(&run, &d)?;
            prop_assert_eq!(d.status.total, Some(crate::adaptive::total(&run, &d.status.results) as i32));
            let wait = d.requeue.unwrap_or(Duration::from_secs(1));
            now = now
                .checked_add(wait.min(Duration::from_secs(3600)))
                .unwrap_or(now);
            status = d.status;
        }
    }

    /// A refused child of any cell: the planner fails what needed it, or waits, without a
    /// panic, and every action it then takes is in range.
    #[test]
    fn refusals_of_any_action_are_planned_without_panicking(
        run in run(),
        status in status(),
        obs in observed(),
        action in refused_action(),
        code in any::<u16>(),
        now in timestamp(),
    ) {
        let refusal = Refusal {
            action,
            child: "Deployment x".into(),
            code,
            message: "\r\nrefused\u{0}".into(),
            foreign: code == 409,
        };
        let d = plan_refused(&run, &status, &obs, &refusal, now);
        check_decision(&run, &d)?;
        let errors = [FieldError { field: "spec.x".into(), message: "\u{0}".into() }];
        let g = obs.generation;
        prop_assert!(plan_invalid(&status, &errors, g, now).actions.is_empty());
        prop_assert!(plan_not_allowed(&status, &errors, g, now).actions.is_empty());
    }

    /// Any load result, usage and pod facts map into a result, warnings, an SLO verdict, the
    /// summary and the conditions without a panic, whatever results the status already holds.
    #[test]
    fn results_map_any_measurement_without_panicking(
        run in run(),
        status in status(),
        (cell, repeat) in (index(), index()),
        load in load_result(),
        usage in usage(),
        extra in extra(),
        restarts in index32(),
        nodes in prop::collection::vec(prop::sample::select(vec!["node-a", "node-b"]), 0..3),
        retry in index32(),
    ) {
        let c = &run.cells[cell % run.cells.len()];
        let pods = results::PodFacts {
            restarts,
            oom_kills: restarts,
            target_nodes: nodes.iter().map(|n| n.to_string()).collect(),
            target_pods: nodes.iter().map(|n| format!("{n}-pod")).collect(),
            load_nodes: vec!["node-a".into()],
            target_ready_ms: Some(i64::from(restarts) * 1000),
            target_image_bytes: Some(4_200_000),
            service_restarts: Vec::new(),
            ..results::PodFacts::default()
        };
        let detail = Some(names::detail_name("demo", c.index, repeat));
        let r = results::measured_result(&run, c, repeat, &load, Some(&usage), extra.clone(), &pods, detail);
        results::with_late_usage(&run, c, &r, &load, &usage, extra);
        validity::warnings(&run, &r, load.threads, false);
        let mut all = status.results.clone();
        all.push(r);
        all.push(results::failed_result(&run, c, repeat, "x".into()));
        results::apply_variance(&mut all, run.repeats);
        results::summarize(&run, &all);
        let comparisons = crate::comparisons::refresh(&run, &all, &[]);
        crate::comparisons::headline(&comparisons);
        results::result_conditions(&run, &all, &comparisons);
        detail_json(&load);
        scrape_ready_at(&load, Duration::from_millis(u64::from(retry.unsigned_abs())));
        metrics_retry_delay(retry);
    }
}

// Regressions of what the properties found: each panicked with overflow checks on (as in a
// debug build) and computed a wrapped value without them.

mod regressions {
    use super::super::tests::{at, load_result, obs, ready_target, running, SPEC};
    use super::*;
    use crate::builders::fixtures::run as validated;
    use crate::observed::{Collection, JobObserved, PendingObserved, TargetObserved};
    use benchrun_api::MetricsPending;

    #[test]
    fn a_target_ready_since_the_earliest_time_an_i64_holds_has_settled() {
        let run = validated(SPEC);
        let o = Observed {
            target: Some(TargetObserved {
                ready_since_ms: Some(i64::MIN),
                ..ready_target()
            }),
            service_ip: Some("10.96.0.7".into()),
            ..obs()
        };
        let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(1000));
        assert!(
            d.actions
                .iter()
                .any(|a| matches!(a, Action::CreateJob { .. })),
            "{:?}",
            d.actions
        );
    }

    #[test]
    fn a_window_ending_past_any_clock_is_recorded_with_its_metrics_due_at_the_end_of_time() {
        let run = validated(SPEC);
        let mut load = load_result(0);
        load.window_end_ms = u64::MAX;
        let o = Observed {
            job: JobObserved::Absent,
            detail: Some(load),
            ..obs()
        };
        let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, Timestamp::MIN);
        // Recorded, its CPU and memory due at the end of time: never asked for before.
        let r = &d.status.results[0];
        assert_eq!(r.metrics_due.as_ref().map(|d| d.at.0), Some(Timestamp::MAX));
        assert!(collections_due(&d.status, Timestamp::MAX).len() <= 1);
        assert!(collections_due(&d.status, Timestamp::MIN).is_empty());
    }

    #[test]
    fn a_deferred_collection_given_up_after_the_most_attempts_counts_them() {
        let run = validated(SPEC);
        let mut status = running(1, 0, Stage::Deploying, 0);
        status.results = vec![CellResult {
            metrics_pending: Some(MetricsPending {
                attempts: i32::MAX,
                first_failure: Time(at(0)),
                next_attempt: Time(at(1000)),
                give_up_at: Time(at(1000)),
                last_error: "connection refused".into(),
            }),
            ..results::failed_result(&run, &run.cells[0], 0, String::new())
        }];
        let o = Observed {
            pending: vec![PendingObserved {
                cell: 0,
                repeat: 0,
                collected: Ok((load_result(0), Collection::Unreachable("down".into()))),
            }],
            ..obs()
        };
        let d = plan(&run, &status, &o, at(2000));
        let r = &d.status.results[0];
        assert!(r.metrics_pending.is_none());
        assert!(
            r.warnings
                .iter()
                .any(|w| w.to_string().contains("(2147483647 attempts; last: down)")),
            "{:?}",
            r.warnings
        );
    }
}
