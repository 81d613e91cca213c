//! The planner under faults: children the apiserver refuses, applies that keep failing.

use super::tests::{at, cond, obs, ready_target, running, SPEC};
use super::*;
use crate::observed::{JobObserved, Observed, TargetObserved};
use benchrun_api::{ConditionType, Outcome, Phase, Stage};

fn refused(action: Action) -> Refusal {
    Refusal {
        action,
        child: "Deployment demo-web-0123abcd".into(),
        code: 422,
        message: "spec.template.spec.nodeSelector: Invalid value: \"not valid!\"".into(),
        foreign: false,
    }
}

#[test]
fn refused_target_fails_every_pending_cell_of_its_configuration_with_the_apiservers_message() {
    let run = benchrun_api::validate(&serde_yaml::from_str(SPEC).unwrap()).unwrap();
    let status = running(0, 0, Stage::Deploying, 0);
    let d = plan_refused(
        &run,
        &status,
        &obs(),
        &refused(Action::ApplyTarget {
            cell: 0,
            round: None,
            services: vec![],
            node_selector: BTreeMap::new(),
        }),
        at(1000),
    );
    // Cells 0 and 1 share the 250m configuration: 2 cells × 2 repeats fail at once, at once.
    assert_eq!(d.status.results.len(), 4);
    for r in &d.status.results {
        assert_eq!(r.outcome, Outcome::Failed);
        let reason = r.reason.as_deref().unwrap();
        assert!(
            reason.contains("refused Deployment demo-web-0123abcd (422)"),
            "{reason}"
        );
        assert!(reason.contains("nodeSelector: Invalid value"), "{reason}");
    }
    let c = cond(&d.status, ConditionType::ChildrenApplied);
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "ApplyRefused")
    );
    assert!(c.message.contains("nodeSelector"));
    assert!(d
        .notes
        .iter()
        .any(|n| n.warning && n.reason == Reason::ApplyRefused));
    // The run moves on to the next configuration without retrying the refused one.
    let cur = d.status.current.unwrap();
    assert_eq!((cur.cell, cur.stage), (2, Stage::Deploying));
    assert!(!d.actions.contains(&Action::ApplyTarget {
        cell: 0,
        round: None,
        services: vec![],
        node_selector: BTreeMap::new(),
    }));
}

#[test]
fn a_backing_service_named_like_someone_elses_object_fails_the_run_naming_the_object() {
    let run = benchrun_api::validate(&serde_yaml::from_str(SPEC).unwrap()).unwrap();
    let message = crate::ownership::foreign_message(
        "Deployment",
        "demo-svc-db",
        "it was created with kubectl (kubectl-create)",
    );
    let refusal = Refusal {
        action: Action::ApplyServices {
            node_selector: BTreeMap::new(),
        },
        child: "Deployment demo-svc-db".into(),
        code: 409,
        message: message.clone(),
        foreign: true,
    };
    let d = plan_refused(
        &run,
        &running(0, 0, Stage::Deploying, 0),
        &obs(),
        &refusal,
        at(1000),
    );
    // Every measurement fails with the operator's words, not "the apiserver refused".
    assert_eq!(d.status.results.len(), run.cells.len() * 2);
    for r in &d.status.results {
        assert_eq!(r.outcome, Outcome::Failed);
        assert_eq!(r.reason.as_deref(), Some(message.as_str()));
    }
    assert_eq!(d.status.phase, Some(Phase::Failed));
    let c = cond(&d.status, ConditionType::ChildrenApplied);
    assert_eq!(
        (c.status.as_str(), c.message.as_str()),
        ("False", message.as_str())
    );
    assert!(c
        .message
        .contains("Deployment demo-svc-db already exists and is not this run's"));
    assert!(c.message.contains("kubectl"));
}

#[test]
fn refused_job_or_detail_fails_only_its_measurement() {
    let run = benchrun_api::validate(&serde_yaml::from_str(SPEC).unwrap()).unwrap();
    let job = Action::CreateJob {
        cell: 0,
        repeat: 1,
        cluster_ip: "10.96.0.7".into(),
        restarts_baseline: crate::kills::RestartBaseline::default(),
        start_at_ms: None,
        node_selector: BTreeMap::new(),
    };
    let detail = Action::StoreDetail {
        cell: 0,
        repeat: 1,
        json: "{}".into(),
    };
    for (action, stage_) in [(job, Stage::Deploying), (detail, Stage::Loading)] {
        let status = running(0, 1, stage_, 0);
        let d = plan_refused(&run, &status, &obs(), &refused(action), at(1000));
        assert_eq!(d.status.results.len(), 1, "{stage_}");
        let r = &d.status.results[0];
        assert_eq!((r.cell, r.repeat, r.outcome.as_str()), (0, 1, "Failed"));
        assert!(r.reason.as_deref().unwrap().contains("Invalid value"));
        assert_eq!(d.status.phase, Some(Phase::Running));
    }
}

#[test]
fn a_refused_last_measurement_finishes_the_run_and_frees_the_slot() {
    let one = SPEC
        .replace(
            r#"matrix: {cpu: ["250m", "500m"], connections: [4, 16]}"#,
            "",
        )
        .replace("repeats: 2", "repeats: 1");
    let run = benchrun_api::validate(&serde_yaml::from_str(&one).unwrap()).unwrap();
    let d = plan_refused(
        &run,
        &running(0, 0, Stage::Deploying, 0),
        &obs(),
        &refused(Action::ApplyTarget {
            cell: 0,
            round: None,
            services: vec![],
            node_selector: BTreeMap::new(),
        }),
        at(1000),
    );
    assert_eq!(d.status.phase, Some(Phase::Failed));
    assert!(d.status.current.is_none());
}

#[test]
fn ready_timeout_fires_without_applying_again() {
    let run = benchrun_api::validate(&serde_yaml::from_str(SPEC).unwrap()).unwrap();
    // Nothing was ever created: every apply so far failed.
    let d = plan(
        &run,
        &running(0, 0, Stage::Deploying, 0),
        &obs(),
        at(181_000),
    );
    assert_eq!(d.status.results.len(), 4);
    assert!(
        !d.actions.contains(&Action::ApplyTarget {
            cell: 0,
            round: None,
            services: vec![],
            node_selector: BTreeMap::new(),
        }),
        "{:?}",
        d.actions
    );
    // Also when the previous configuration's pods are never deleted.
    let stuck = Observed {
        target_configs: vec!["deadbeef".into()],
        ..obs()
    };
    let d = plan(
        &run,
        &running(2, 0, Stage::Deploying, 0),
        &stuck,
        at(181_000),
    );
    assert!(d
        .actions
        .iter()
        .all(|a| !matches!(a, Action::DeleteTargets { except: Some(_) })));
    let reason = d.status.results[0].reason.clone().unwrap();
    assert!(reason.contains("previous configuration"), "{reason}");
}

#[test]
fn a_ready_target_whose_job_cannot_be_created_fails_once_retries_outlast_the_stage() {
    let run = benchrun_api::validate(&serde_yaml::from_str(SPEC).unwrap()).unwrap();
    let o = Observed {
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        retrying: true,
        ..obs()
    };
    // Within the ready timeout plus a minute: the Job is still tried.
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(200_000));
    assert!(d
        .actions
        .iter()
        .any(|a| matches!(a, Action::CreateJob { .. })));
    // Past it, while retrying: the measurement fails with no further apply.
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(241_000));
    assert!(d
        .actions
        .iter()
        .all(|a| !matches!(a, Action::CreateJob { .. })));
    let r = &d.status.results[0];
    assert_eq!((r.cell, r.repeat, r.outcome.as_str()), (0, 0, "Failed"));
    assert!(r
        .reason
        .as_deref()
        .unwrap()
        .contains("no progress in stage Deploying"));
}

#[test]
fn a_restarted_operator_still_collects_a_job_that_finished_long_ago() {
    let run = benchrun_api::validate(&serde_yaml::from_str(SPEC).unwrap()).unwrap();
    let o = Observed {
        target: Some(TargetObserved { ..ready_target() }),
        job: JobObserved::Succeeded(vec![Ok(super::tests::load_result(0))]),
        ..obs()
    };
    // An hour in Loading, but no failing reconcile: this is a restart, not a stall.
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(3_600_000));
    super::tests::assert_recorded_due(&d, 0, 0, 20_000);
}
