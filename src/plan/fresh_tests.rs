//! Independent repeats in the planner: under `repeatOrder: Interleaved` (the default of a run
//! that compares) every round of a configuration runs on a deployment of its own, also when
//! the configuration is the run's only one, and a Job is never made ahead onto the next
//! round's pods.

use super::tests::{at, obs, ready_target, running};
use super::*;
use crate::builders::fixtures::run as validated;
use crate::observed::{JobObserved, Observed};
use crate::{names, results};
use benchrun_api::Stage;

/// One target configuration, two scenarios compared with each other (as asked), three
/// repeats: the default order is `Interleaved`.
const AB: &str = r#"
targets: [{name: web, image: example/web:1, readinessPath: /healthz}]
scenarios: [{name: a, path: /a}, {name: b, path: /b}]
compare: {along: scenario}
resources: {cpu: "500m", memory: 128Mi}
load: {connections: 4, duration: 10s, warmup: 3s}
repeats: 3
"#;

#[test]
fn a_run_that_compares_scenarios_deploys_each_round_afresh_by_default() {
    let run = validated(AB);
    assert!(matches!(
        run.repeat_order,
        benchrun_api::order::RepeatOrder::Interleaved { .. }
    ));
    let hashes: Vec<String> = (0..3).map(|r| deployment(&run, 0, r)).collect();
    assert_eq!(
        hashes[0],
        deployment(&run, 1, 0),
        "one round's scenarios share its pods"
    );
    assert!(
        hashes[0] != hashes[1] && hashes[1] != hashes[2],
        "{hashes:?}"
    );
    // Round 1 finds round 0's deployment: it goes first, then round 1's own is applied.
    let o = Observed {
        target_configs: vec![hashes[0].clone()],
        target: None,
        ..obs()
    };
    let d = plan(&run, &running(0, 1, Stage::Deploying, 0), &o, at(1000));
    assert_eq!(
        d.actions,
        vec![Action::DeleteTargets {
            except: Some(hashes[1].clone())
        }]
    );
    let d = plan(&run, &running(0, 1, Stage::Deploying, 0), &obs(), at(3000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyTarget {
            cell: 0,
            round: Some(1),
            services: vec![],
            node_selector: Default::default(),
        }]
    );
    // The same spec with repeatOrder Sequential keeps one deployment for every repeat.
    let seq = validated(&format!("{AB}repeatOrder: Sequential\n"));
    assert_eq!(
        deployment(&seq, 0, 2),
        names::config_hash("web", &seq.cells[0])
    );
    assert_eq!(deployment(&seq, 1, 0), deployment(&seq, 0, 2));
}

#[test]
fn a_load_is_made_ahead_only_onto_the_same_rounds_pods() {
    let run = validated(AB);
    let order = run.order();
    // The last measurement of round 0 is followed by round 1's first, on other pods.
    let (cell, repeat) = order[1];
    assert_eq!((repeat, order[2].1), (0, 1));
    let job = names::job_name("demo", cell, repeat);
    let o = Observed {
        run_name: "demo".into(),
        target_configs: vec![deployment(&run, cell, repeat)],
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        job: JobObserved::Running,
        jobs: vec![job.clone()],
        job_starts: [(job, at(1_000).as_millisecond())].into(),
        load_started_ms: Some(at(1_000).as_millisecond()),
        ..obs()
    };
    let mut status = running(cell as i32, repeat as i32, Stage::Loading, 0);
    status.results = vec![results::failed_result(
        &run,
        &run.cells[order[0].0],
        0,
        "x".into(),
    )];
    let d = plan(&run, &status, &o, at(1_200));
    assert!(
        !d.actions
            .iter()
            .any(|a| matches!(a, Action::CreateJob { .. })),
        "{:?}",
        d.actions
    );
    // Within a round the second scenario's load is made ahead on the same pods.
    let (cell, repeat) = order[0];
    let job = names::job_name("demo", cell, repeat);
    let o = Observed {
        jobs: vec![job.clone()],
        job_starts: [(job, at(1_000).as_millisecond())].into(),
        target_configs: vec![deployment(&run, cell, repeat)],
        ..o
    };
    let d = plan(
        &run,
        &running(cell as i32, 0, Stage::Loading, 0),
        &o,
        at(1_200),
    );
    assert!(
        d.actions
            .iter()
            .any(|a| matches!(a, Action::CreateJob { cell: c, repeat: 0, .. } if *c == order[1].0)),
        "{:?}",
        d.actions
    );
}
