//! The planner with backing services: deployed and seeded before the target, their addresses
//! handed to it, a failure ending the remaining measurements, cleanup with the run.

use super::tests::{at, obs, ready_target, running, SPEC};
use super::*;
use crate::builders::fixtures::run as validated;
use crate::observed::{SeedObserved, ServiceObserved};
use benchrun_api::{Phase, ServiceAddress, Stage};

fn spec() -> String {
    format!(
        "{SPEC}services:\n  - name: store\n    image: example/store:1\n    port: 9000\n    seed: {{args: [seed]}}\n  - name: cache\n    image: example/cache:1\n"
    )
}

fn up(name: &str, ip: &str, seed: SeedObserved) -> ServiceObserved {
    ServiceObserved {
        name: name.into(),
        state: TargetObserved {
            ready_since_ms: Some(at(5_000).as_millisecond()),
            ..ready_target()
        },
        cluster_ip: Some(ip.into()),
        seed,
    }
}

fn addresses() -> Vec<ServiceAddress> {
    vec![
        ServiceAddress {
            name: "store".into(),
            host: "10.96.0.10".into(),
            port: 9000,
        },
        ServiceAddress {
            name: "cache".into(),
            host: "10.96.0.11".into(),
            port: 8080,
        },
    ]
}

use crate::observed::TargetObserved;

#[test]
fn services_are_applied_first_and_the_target_waits_for_them() {
    let run = validated(&spec());
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &obs(), at(1000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyServices {
            node_selector: Default::default()
        }]
    );
    assert_eq!(d.requeue, Some(Duration::from_secs(2)));
    // One ready, one not: still no target.
    let mut o = obs();
    o.services = vec![up("store", "10.96.0.10", SeedObserved::Absent)];
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(2000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyServices {
            node_selector: Default::default()
        }]
    );
}

#[test]
fn a_ready_service_is_seeded_once_with_every_address_before_the_target() {
    let run = validated(&spec());
    let mut o = obs();
    o.services = vec![
        up("store", "10.96.0.10", SeedObserved::Absent),
        up("cache", "10.96.0.11", SeedObserved::Absent),
    ];
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(6000));
    assert_eq!(
        d.actions,
        vec![
            Action::ApplyServices {
                node_selector: Default::default()
            },
            Action::CreateSeedJob {
                service: 0,
                addresses: addresses()
            }
        ],
        "only the service with a seed step is seeded"
    );
    assert_eq!(d.notes[0].reason, Reason::Seeding);
    o.services[0].seed = SeedObserved::Running;
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(8000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyServices {
            node_selector: Default::default()
        }]
    );
}

#[test]
fn the_target_gets_the_addresses_and_its_timeout_counts_from_the_seeding() {
    let run = validated(&spec());
    let mut o = obs();
    o.services = vec![
        up(
            "store",
            "10.96.0.10",
            SeedObserved::Succeeded(Some(at(200_000).as_millisecond())),
        ),
        up("cache", "10.96.0.11", SeedObserved::Absent),
    ];
    // 4 minutes after the measurement began, past the 3-minute ready timeout, but only 40 s
    // after the seeding finished: the target is applied, not failed.
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(240_000));
    assert_eq!(
        d.actions,
        vec![
            Action::ApplyServices {
                node_selector: Default::default()
            },
            Action::ApplyTarget {
                cell: 0,
                round: None,
                services: addresses(),
                node_selector: BTreeMap::new(),
            }
        ]
    );
    assert!(d.status.results.is_empty());
    // 3 minutes after the seeding: the target's own timeout.
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(380_001));
    assert_eq!(
        d.status.results.len(),
        4,
        "the configuration's measurements fail"
    );
    assert!(d.status.results[0]
        .reason
        .as_deref()
        .unwrap()
        .starts_with("target not ready after 3m"));
}

#[test]
fn a_failed_seeding_fails_every_remaining_measurement_and_cleans_up() {
    let run = validated(&spec());
    let mut o = obs();
    o.services = vec![
        up(
            "store",
            "10.96.0.10",
            SeedObserved::Failed("BackoffLimitExceeded: x".into()),
        ),
        up("cache", "10.96.0.11", SeedObserved::Absent),
    ];
    o.service_children = true;
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(9000));
    assert_eq!(d.status.results.len(), 8);
    assert_eq!(
        d.status.results[7].reason.as_deref(),
        Some("seeding backing service store failed: BackoffLimitExceeded: x")
    );
    assert_eq!(d.status.phase, Some(Phase::Failed));
    assert_eq!(d.actions, vec![Action::DeleteServices]);
}

#[test]
fn a_service_that_never_becomes_ready_fails_the_run_with_its_problem() {
    let run = validated(&spec());
    let mut o = obs();
    o.services = vec![ServiceObserved {
        name: "store".into(),
        state: TargetObserved {
            problem: Some("ImagePullBackOff: no such image".into()),
            ..TargetObserved::default()
        },
        ..ServiceObserved::default()
    }];
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(179_000));
    assert!(
        d.status.results.is_empty(),
        "still within the ready timeout"
    );
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(180_000));
    assert_eq!(d.status.results.len(), 8);
    assert_eq!(
        d.status.results[0].reason.as_deref(),
        Some("backing service store not ready after 3m: ImagePullBackOff: no such image")
    );
}

#[test]
fn a_refused_service_apply_fails_the_remaining_measurements() {
    let run = validated(&spec());
    let refusal = Refusal {
        action: Action::ApplyServices {
            node_selector: Default::default(),
        },
        child: "Deployment demo-svc-store".into(),
        code: 422,
        message: "invalid".into(),
        foreign: false,
    };
    let d = plan_refused(
        &run,
        &running(0, 0, Stage::Deploying, 0),
        &obs(),
        &refusal,
        at(1000),
    );
    assert_eq!(d.status.results.len(), 8);
    assert!(d.status.results[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("the apiserver refused Deployment demo-svc-store (422)"));
}
