use super::*;
use crate::builders::fixtures::run as validated;
use crate::kills::{ContainerFacts, RestartBaseline};
use crate::observed::{Collection, JobObserved, Observed, PendingObserved, TargetObserved};
use crate::slots::{RunView, SlotFacts};
use crate::{names, results};
use benchrun_api::TargetUsage;
use benchrun_api::{
    ConditionType, CurrentMeasurement, MetricsDue, Outcome, Phase, Reason, SloSummary, SloVerdict,
    Stage, WarningCode,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use std::collections::BTreeMap;

const T0: i64 = 1_764_511_200_000;

/// One target, two CPU limits, two connection counts, two repeats: 4 cells, 8 measurements.
pub(crate) const SPEC: &str = r#"
targets: [{name: web, image: example/web:1, readinessPath: /healthz}]
scenarios: [{name: hello, path: /hello}]
resources: {cpu: "500m", memory: 128Mi}
load: {connections: 10, duration: 10s, warmup: 3s}
matrix: {cpu: ["250m", "500m"], connections: [4, 16]}
repeats: 2
"#;

pub(crate) fn at(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(T0 + ms).unwrap()
}

/// The view of run `key` (created `created_s` seconds after the epoch) in the cache.
pub(crate) fn run_view(key: &str, phase: Option<Phase>, created_s: i64) -> RunView {
    RunView {
        key: key.into(),
        phase,
        created: Some(Timestamp::from_second(created_s).unwrap()),
        started: (phase == Some(Phase::Running))
            .then(|| Timestamp::from_second(created_s).unwrap()),
        deleting: false,
    }
}

/// The slot facts of `team/demo` once it was granted the one measuring slot.
pub(crate) fn holding() -> SlotFacts {
    SlotFacts {
        max: 1,
        me: "team/demo".into(),
        runs: Some(vec![run_view("team/demo", None, 1)]),
        granted: ["team/demo".to_string()].into(),
        max_queued_per_namespace: 0,
    }
}

/// An observation of run `demo` (`team/demo`), which holds the measuring slot.
pub(crate) fn obs() -> Observed {
    Observed {
        run_name: "demo".into(),
        generation: Some(1),
        slot: holding(),
        ..Observed::default()
    }
}

fn oom_killed(pod: &str, restarts: i32, backing_off: bool, at_ms: i64) -> ContainerFacts {
    ContainerFacts {
        pod: pod.into(),
        restart_count: restarts,
        newest_dead: backing_off,
        last_reason: Some("OOMKilled".into()),
        last_finished_ms: Some(at_ms),
    }
}

pub(crate) fn ready_target() -> TargetObserved {
    TargetObserved {
        ready: true,
        nodes: vec!["node-a".into()],
        ..TargetObserved::default()
    }
}

/// The load result of [`results::tests::load`] with its 10 s window starting `start_ms` after
/// [`T0`].
pub(crate) fn load_result(start_ms: i64) -> LoadResult {
    LoadResult {
        window_start_ms: (T0 + start_ms) as u64,
        window_end_ms: (T0 + start_ms + 10_000) as u64,
        ..results::tests::load()
    }
}

pub(crate) fn running(cell: i32, repeat: i32, stage_: Stage, since_ms: i64) -> BenchmarkRunStatus {
    BenchmarkRunStatus {
        phase: Some(Phase::Running),
        current: Some(CurrentMeasurement {
            cell,
            repeat,
            stage: stage_,
            since: Time(at(since_ms)),
            job: None,
        }),
        ..BenchmarkRunStatus::default()
    }
}

pub(crate) fn cond(s: &BenchmarkRunStatus, t: ConditionType) -> &Condition {
    s.conditions
        .iter()
        .find(|c| c.type_ == t.as_str())
        .expect("condition present")
}

#[test]
fn new_run_holding_its_slot_starts_deploying_the_first_cell() {
    let run = validated(SPEC);
    let d = plan(&run, &BenchmarkRunStatus::default(), &obs(), at(0));
    assert_eq!(d.status.phase, Some(Phase::Running));
    let cur = d.status.current.clone().unwrap();
    assert_eq!((cur.cell, cur.repeat, cur.stage), (0, 0, Stage::Deploying));
    assert_eq!(d.status.progress.as_deref(), Some("0/8"));
    assert_eq!(d.status.total, Some(8));
    assert_eq!(d.status.start_time, Some(Time(at(0))));
    assert_eq!(cond(&d.status, ConditionType::Accepted).status, "True");
    assert!(d.requeue.is_some());
}

#[test]
fn a_duration_under_twenty_seconds_is_warned_about_once_when_the_run_starts() {
    // SPEC measures for 10 s.
    let run = validated(SPEC);
    let d = plan(&run, &BenchmarkRunStatus::default(), &obs(), at(0));
    let warned: Vec<_> = d
        .notes
        .iter()
        .filter(|n| n.reason == Reason::WindowTooShort)
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", d.notes);
    assert!(warned[0].warning);
    assert!(
        cond(&d.status, ConditionType::Accepted)
            .message
            .contains("spec.load.duration 10s is shorter than 20s"),
        "{:?}",
        d.status.conditions
    );
    let again = plan(&run, &d.status, &obs(), at(1_000));
    assert!(!again
        .notes
        .iter()
        .any(|n| n.reason == Reason::WindowTooShort));

    let long = validated(&SPEC.replace("duration: 10s", "duration: 20s"));
    let d = plan(&long, &BenchmarkRunStatus::default(), &obs(), at(0));
    assert!(!d.notes.iter().any(|n| n.reason == Reason::WindowTooShort));
    assert_eq!(
        cond(&d.status, ConditionType::Accepted).message,
        "the spec is valid"
    );
}

#[test]
fn new_run_without_a_slot_is_queued_naming_the_holder() {
    let run = validated(SPEC);
    let o = Observed {
        slot: SlotFacts {
            runs: Some(vec![
                run_view("team/other", Some(Phase::Running), 0),
                run_view("team/demo", None, 1),
            ]),
            granted: Default::default(),
            ..holding()
        },
        ..obs()
    };
    let d = plan(&run, &BenchmarkRunStatus::default(), &o, at(0));
    assert_eq!(d.status.phase, Some(Phase::Queued));
    assert!(d.status.current.is_none());
    assert!(d.actions.is_empty());
    // The event names the holder; the condition does not (it would change at every hand-over).
    assert!(!cond(&d.status, ConditionType::Running)
        .message
        .contains("team/other"));
    assert_eq!(d.notes[0].reason, Reason::Queued);
    assert!(d.notes[0].message.contains("team/other"));
    // Still queued: no second event.
    let again = plan(&run, &d.status, &o, at(5000));
    assert!(again.notes.is_empty());
}

#[test]
fn deploying_applies_the_target_and_waits_until_ready() {
    let run = validated(SPEC);
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &obs(), at(1000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyTarget {
            cell: 0,
            round: None,
            services: vec![],
            node_selector: BTreeMap::new(),
        }]
    );
    assert_eq!(d.status.current.unwrap().stage, Stage::Deploying);
    assert_eq!(d.requeue, Some(Duration::from_secs(2)));
}

#[test]
fn ready_target_starts_the_load_job_against_the_cluster_ip() {
    let run = validated(SPEC);
    let o = Observed {
        target: Some(TargetObserved {
            restarts: 3,
            containers: vec![ContainerFacts {
                pod: "web-0".into(),
                restart_count: 3,
                ..ContainerFacts::default()
            }],
            ..ready_target()
        }),
        service_ip: Some("10.96.0.7".into()),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(1000));
    assert_eq!(
        d.actions,
        vec![
            Action::ApplyTarget {
                cell: 0,
                round: None,
                services: vec![],
                node_selector: BTreeMap::new(),
            },
            Action::CreateJob {
                cell: 0,
                repeat: 0,
                cluster_ip: "10.96.0.7".into(),
                restarts_baseline: RestartBaseline {
                    total: 3,
                    by_pod: [("web-0".to_string(), 3)].into(),
                },
                start_at_ms: None,
                node_selector: BTreeMap::new(),
            }
        ]
    );
    let cur = d.status.current.unwrap();
    assert_eq!(cur.stage, Stage::Loading);
    assert_eq!(
        cur.job.as_deref(),
        Some(names::job_name("demo", 0, 0).as_str())
    );
    assert_eq!(cur.since, Time(at(1000)));
}

#[test]
fn nodes_labelled_by_role_get_the_targets_and_the_load_pods() {
    let run = validated(SPEC);
    let o = Observed {
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        node_roles: crate::observed::NodeRoles {
            target: true,
            load: true,
        },
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(1000));
    let role = |r: &str| BTreeMap::from([("benchrun.dev/role".to_string(), r.to_string())]);
    let selectors: Vec<_> = d
        .actions
        .iter()
        .map(|a| match a {
            Action::ApplyTarget { node_selector, .. } => ("target", node_selector.clone()),
            Action::CreateJob { node_selector, .. } => ("load", node_selector.clone()),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        selectors,
        vec![("target", role("target")), ("load", role("load"))]
    );
}

#[test]
fn several_load_pods_are_given_one_start_a_lead_ahead() {
    let run = validated(&SPEC.replace("warmup: 3s}", "warmup: 3s, pods: 2}"));
    let o = Observed {
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(1000));
    let start = d.actions.iter().find_map(|a| match a {
        Action::CreateJob { start_at_ms, .. } => Some(*start_at_ms),
        _ => None,
    });
    assert_eq!(start, Some(Some(T0 + 1000 + START_LEAD.as_millis() as i64)));
}

#[test]
fn another_configurations_target_is_deleted_before_deploying() {
    let run = validated(SPEC);
    let o = Observed {
        target_configs: vec!["deadbeef".into()],
        ..obs()
    };
    let d = plan(&run, &running(2, 0, Stage::Deploying, 0), &o, at(1000));
    let c = &run.cells[2];
    let config = names::config_hash("web", c);
    assert_eq!(
        d.actions,
        vec![Action::DeleteTargets {
            except: Some(config)
        }]
    );
}

#[test]
fn target_not_ready_in_time_fails_every_pending_cell_of_its_configuration() {
    let run = validated(SPEC);
    let problem = "ImagePullBackOff: Back-off pulling image \"example/web:1\"".to_string();
    let o = Observed {
        target: Some(TargetObserved {
            problem: Some(problem.clone()),
            ..TargetObserved::default()
        }),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(181_000));
    // Cells 0 and 1 share the 250m configuration: 2 cells × 2 repeats fail at once.
    assert_eq!(d.status.results.len(), 4);
    assert!(d
        .status
        .results
        .iter()
        .all(|r| r.outcome == Outcome::Failed));
    assert!(d.status.results[0]
        .reason
        .as_deref()
        .unwrap()
        .contains(&problem));
    let cur = d.status.current.unwrap();
    assert_eq!((cur.cell, cur.repeat, cur.stage), (2, 0, Stage::Deploying));
    assert_eq!(d.status.progress.as_deref(), Some("4/8"));
    assert!(d
        .notes
        .iter()
        .any(|n| n.warning && n.reason == Reason::MeasurementFailed));
}

#[test]
fn fatal_pod_problem_fails_without_waiting_for_the_timeout() {
    let run = validated(SPEC);
    let o = Observed {
        target: Some(TargetObserved {
            problem: Some("InvalidImageName".into()),
            fatal: true,
            ..TargetObserved::default()
        }),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(3000));
    assert_eq!(d.status.results.len(), 4);
}

/// The decision recorded the result of (cell, repeat) with its load figures, its CPU and
/// memory due at `due_ms` after T0, and moved on to the next measurement.
pub(crate) fn assert_recorded_due(d: &Decision, cell: i32, repeat: i32, due_ms: i64) {
    let r = d
        .status
        .results
        .iter()
        .find(|r| (r.cell, r.repeat) == (cell, repeat))
        .expect("a result");
    assert_eq!(r.outcome, Outcome::Measured);
    assert!(r.throughput.is_some() && r.requests.is_some());
    assert_eq!(r.usage.cpu_avg_cores, None);
    assert_eq!(r.metrics_due.as_ref().unwrap().at, Time(at(due_ms)));
    assert!(r.metrics_pending.is_none());
    assert!(
        r.warnings
            .iter()
            .all(|w| w.code != WarningCode::MetricsUnavailable),
        "{:?}",
        r.warnings
    );
    let cur = d.status.current.as_ref().unwrap();
    assert_ne!((cur.cell, cur.repeat), (cell, repeat));
    assert_eq!(cur.stage, Stage::Deploying);
}

#[test]
fn succeeded_job_is_recorded_at_once_and_the_next_measurement_starts() {
    let run = validated(SPEC);
    let job = names::job_name("demo", 0, 0);
    let o = Observed {
        job: JobObserved::Succeeded(vec![Ok(load_result(3000))]),
        jobs: vec![job.clone()],
        job_created: Some(at(500)),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
    assert!(matches!(
        &d.actions[0],
        Action::StoreDetail {
            cell: 0,
            repeat: 0,
            ..
        }
    ));
    assert!(d.actions.contains(&Action::DeleteJobs(vec![job])));
    // Window ends at 13 s; Prometheus is asked for it at 23 s, while the next one runs.
    assert_recorded_due(&d, 0, 0, 23_000);
    let due = d.status.results[0].metrics_due.clone().unwrap();
    assert_eq!(due.load_created, Some(Time(at(500))));
    assert_eq!(d.status.current.as_ref().unwrap().repeat, 1);
    assert!(d.requeue.unwrap() <= Duration::from_millis(500));
    assert!(d
        .notes
        .iter()
        .any(|n| n.reason == Reason::Measured && n.message.contains("CPU and memory read from")));
    let metrics = cond(&d.status, ConditionType::MetricsAvailable);
    assert_eq!(metrics.status, "True");
    assert!(metrics
        .message
        .contains("1 more are read once their windows have been scraped"));
    // Nothing is asked of Prometheus before the samples after the window are in.
    assert!(collections_due(&d.status, at(22_999)).is_empty());
    assert_eq!(
        collections_due(&d.status, at(23_000)),
        vec![CollectionDue {
            cell: 0,
            repeat: 0,
            load_created: Some(at(500))
        }]
    );
}

#[test]
fn failed_job_records_a_failed_measurement_and_moves_on() {
    let run = validated(SPEC);
    let job = names::job_name("demo", 0, 0);
    let o = Observed {
        job: JobObserved::Failed("DeadlineExceeded".into()),
        jobs: vec![job.clone()],
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
    assert_eq!(d.status.results.len(), 1);
    assert_eq!(d.status.results[0].outcome, Outcome::Failed);
    assert!(d.status.results[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("DeadlineExceeded"));
    assert!(d.actions.contains(&Action::DeleteJobs(vec![job])));
    let cur = d.status.current.unwrap();
    assert_eq!((cur.cell, cur.repeat), (0, 1));
}

#[test]
fn load_pod_without_result_fails_the_measurement() {
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Succeeded(vec![Err("no JSON line in the log".into())]),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
    assert!(d.status.results[0]
        .reason
        .as_deref()
        .unwrap()
        .contains("no JSON line"));
}

#[test]
fn a_window_counts_as_scraped_the_settle_time_after_it_ends() {
    // Window from 3 s to 13 s after T0.
    let at = |s| scrape_ready_at(&load_result(3000), Duration::from_secs(s));
    assert_eq!(at(10), T0 + 13_000 + 10_000);
    assert_eq!(at(3), T0 + 13_000 + 3_000);
}

#[test]
fn a_finished_load_is_recorded_once_with_its_pod_facts_and_its_metrics_due() {
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Succeeded(vec![Ok(load_result(3000))]),
        target: Some(TargetObserved {
            restarts: 5,
            containers: vec![
                // Killed twice during the measurement (4 → 5 restarts, now backing off).
                oom_killed("web-0", 5, true, T0 + 5000),
                // Killed long before it.
                oom_killed("web-1", 0, false, T0 - 60_000),
            ],
            ..ready_target()
        }),
        restarts_baseline: Some(4),
        restarts_baseline_pods: Some([("web-0".to_string(), 4)].into()),
        load_nodes: vec!["node-b".into()],
        ..obs()
    };
    let status = running(0, 0, Stage::Loading, 0);
    let d = plan(&run, &status, &o, at(14_000));
    assert_eq!(d.status.results.len(), 1);
    let r = &d.status.results[0];
    assert_eq!(r.outcome, Outcome::Measured);
    assert_eq!(r.requests, Some(10_000));
    assert_eq!(r.restarts, 1);
    assert_eq!(r.oom_kills, 2);
    assert_eq!(r.load_nodes, vec!["node-b".to_string()]);
    assert_eq!(r.detail.as_deref(), Some("demo-detail-c0-r0"));
    // CPU and memory come once Prometheus has scraped the window.
    assert_eq!(r.usage.cpu_avg_cores, None);
    assert!(r.metrics_due.is_some());
    assert_eq!(d.status.progress.as_deref(), Some("1/8"));
    let cur = d.status.current.clone().unwrap();
    assert_eq!((cur.cell, cur.repeat), (0, 1));

    // The Job is deleted and the status patch above was lost: the stored detail records the
    // same measurement again, and a status that has it cannot record it twice.
    let replay = Observed {
        job: JobObserved::Absent,
        detail: Some(load_result(3000)),
        ..o.clone()
    };
    let again = plan(&run, &status, &replay, at(15_000));
    assert_eq!(again.status.results.len(), 1);
    assert_eq!(again.status.results[0].oom_kills, 2);
    let mut stale = status.clone();
    stale.results = d.status.results.clone();
    let twice = plan(&run, &stale, &replay, at(15_000));
    assert_eq!(twice.status.results.len(), 1);
}

#[test]
fn a_status_an_older_operator_left_in_collecting_continues_as_loading() {
    // Older operators wrote stage Collecting between the load and the recorded result.
    let stored: BenchmarkRunStatus = serde_json::from_value(serde_json::json!({
        "phase": "Running",
        "current": {"cell": 0, "repeat": 0, "stage": "Collecting", "since": "2026-11-30T14:00:00Z"},
    }))
    .unwrap();
    assert_eq!(stored.current.as_ref().unwrap().stage, Stage::Loading);
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Absent,
        detail: Some(load_result(3000)),
        ..obs()
    };
    let d = plan(&run, &stored, &o, at(14_000));
    assert_eq!(d.status.results.len(), 1);
    assert_eq!(d.status.results[0].outcome, Outcome::Measured);
    let written = serde_json::to_value(&d.status).unwrap();
    assert!(!written.to_string().contains("\"Collecting\""), "{written}");
}

#[test]
fn restart_in_the_middle_of_loading_picks_up_the_finished_job() {
    // The operator was down while the Job ran: status still says Loading, the Job succeeded.
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Succeeded(vec![Ok(load_result(3000))]),
        ..obs()
    };
    let d = plan(&run, &running(1, 1, Stage::Loading, 0), &o, at(600_000));
    assert!(matches!(
        &d.actions[0],
        Action::StoreDetail {
            cell: 1,
            repeat: 1,
            ..
        }
    ));
    assert_recorded_due(&d, 1, 1, 23_000);
}

#[test]
fn restart_between_job_creation_and_status_patch_does_not_create_a_second_job() {
    let run = validated(SPEC);
    let o = Observed {
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        job: JobObserved::Running,
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(1000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyTarget {
            cell: 0,
            round: None,
            services: vec![],
            node_selector: BTreeMap::new(),
        }]
    );
    assert_eq!(d.status.current.unwrap().stage, Stage::Loading);
}

#[test]
fn last_measurement_finishes_the_run_and_cleans_up() {
    let run = validated(SPEC);
    let mut status = running(3, 1, Stage::Loading, 0);
    for cell in &run.cells {
        for r in 0..2 {
            if (cell.index, r) != (3, 1) {
                status
                    .results
                    .push(results::failed_result(&run, cell, r, "x".into()));
            }
        }
    }
    status.results[0] = CellResult {
        outcome: Outcome::Measured,
        ..status.results[0].clone()
    };
    let o = Observed {
        job: JobObserved::Failed("boom".into()),
        target_configs: vec!["abc".into()],
        ..obs()
    };
    let d = plan(&run, &status, &o, at(50_000));
    assert_eq!(d.status.phase, Some(Phase::Succeeded));
    assert!(d.status.current.is_none());
    assert_eq!(d.status.completion_time, Some(Time(at(50_000))));
    assert_eq!(d.status.progress.as_deref(), Some("8/8"));
    assert_eq!(cond(&d.status, ConditionType::Succeeded).status, "True");
    assert_eq!(cond(&d.status, ConditionType::Running).status, "False");
    assert!(d.actions.contains(&Action::DeleteTargets { except: None }));
}

#[test]
fn run_with_nothing_measured_fails() {
    let run = validated(
        &SPEC
            .replace("repeats: 2", "repeats: 1")
            .replace("cpu: [\"250m\", \"500m\"], ", ""),
    );
    let o = Observed {
        target: Some(TargetObserved {
            fatal: true,
            problem: Some("ErrImageNeverPull".into()),
            ..TargetObserved::default()
        }),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(1000));
    assert_eq!(d.status.phase, Some(Phase::Failed));
    assert_eq!(cond(&d.status, ConditionType::Failed).status, "True");
}

#[test]
fn finished_run_is_deleted_after_its_ttl() {
    let run = validated(&format!("{SPEC}cleanup: {{ttlSecondsAfterFinished: 60}}\n"));
    let status = BenchmarkRunStatus {
        phase: Some(Phase::Succeeded),
        completion_time: Some(Time(at(0))),
        ..BenchmarkRunStatus::default()
    };
    let d = plan(&run, &status, &obs(), at(30_000));
    assert!(d.actions.is_empty());
    assert_eq!(d.requeue, Some(Duration::from_secs(30)));
    let d = plan(&run, &status, &obs(), at(60_000));
    assert_eq!(d.actions, vec![Action::DeleteRun]);
}

#[test]
fn keep_on_failure_keeps_the_children_of_a_failed_run() {
    let run = validated(&format!("{SPEC}cleanup: {{policy: KeepOnFailure}}\n"));
    let status = BenchmarkRunStatus {
        phase: Some(Phase::Failed),
        ..BenchmarkRunStatus::default()
    };
    let o = Observed {
        target_configs: vec!["abc".into()],
        jobs: vec!["j".into()],
        ..obs()
    };
    assert!(plan(&run, &status, &o, at(0)).actions.is_empty());
    let status = BenchmarkRunStatus {
        phase: Some(Phase::Succeeded),
        ..status
    };
    assert_eq!(plan(&run, &status, &o, at(0)).actions.len(), 2);
}

#[test]
fn invalid_spec_fails_the_run_with_accepted_false_and_one_event() {
    let errors = vec![FieldError {
        field: "spec.load".into(),
        message: "set exactly one".into(),
    }];
    let d = plan_invalid(&BenchmarkRunStatus::default(), &errors, Some(2), at(0));
    assert_eq!(d.status.phase, Some(Phase::Failed));
    let accepted = cond(&d.status, ConditionType::Accepted);
    assert_eq!(
        (accepted.status.as_str(), accepted.reason.as_str()),
        ("False", "InvalidSpec")
    );
    assert!(accepted.message.contains("spec.load: set exactly one"));
    assert_eq!(d.notes.len(), 1);
    assert!(plan_invalid(&d.status, &errors, Some(2), at(1))
        .notes
        .is_empty());
}

#[test]
fn a_run_refused_by_the_allow_lists_fails_at_once_and_is_then_cleaned_up() {
    let run = validated(SPEC);
    let errors = vec![FieldError {
        field: "spec.prometheus.url".into(),
        message: "not allowed".into(),
    }];
    let d = plan_not_allowed(&running(1, 0, Stage::Loading, 0), &errors, Some(1), at(5));
    assert!(d.actions.is_empty());
    assert_eq!(d.status.current, None);
    assert_eq!(d.status.phase, Some(Phase::Failed));
    let accepted = cond(&d.status, ConditionType::Accepted);
    assert_eq!(
        (accepted.status.as_str(), accepted.reason.as_str()),
        ("False", "NotAllowed")
    );
    assert!(accepted
        .message
        .contains("spec.prometheus.url: not allowed"));
    assert_eq!(
        cond(&d.status, ConditionType::Failed).reason,
        Reason::NotAllowed.as_str()
    );
    assert_eq!(d.notes.len(), 1);
    assert_eq!(d.notes[0].reason, Reason::NotAllowed);
    // Once failed, the run is finished: its children go as for any failed run.
    let o = Observed {
        target_configs: vec!["abc".into()],
        jobs: vec!["demo-1-0".into()],
        ..obs()
    };
    let next = plan(&run, &d.status, &o, at(6));
    assert_eq!(
        next.actions,
        vec![
            Action::DeleteTargets { except: None },
            Action::DeleteJobs(vec!["demo-1-0".into()])
        ]
    );
}

#[test]
fn condition_transition_time_is_kept_while_its_status_holds() {
    let mut conds = Vec::new();
    set_condition(
        &mut conds,
        ConditionType::Running,
        true,
        Reason::Valid,
        "a".into(),
        at(0),
        None,
    );
    set_condition(
        &mut conds,
        ConditionType::Running,
        true,
        Reason::Measuring,
        "b".into(),
        at(5),
        None,
    );
    assert_eq!(conds[0].last_transition_time, Time(at(0)));
    assert_eq!(conds[0].reason, "Measuring");
    set_condition(
        &mut conds,
        ConditionType::Running,
        false,
        Reason::Completed,
        "c".into(),
        at(9),
        None,
    );
    assert_eq!(conds[0].last_transition_time, Time(at(9)));
}

#[test]
fn focus_is_the_current_measurement_or_the_first_without_a_result() {
    let run = validated(SPEC);
    assert_eq!(focus(&run, &BenchmarkRunStatus::default()), Some((0, 0)));
    assert_eq!(focus(&run, &running(2, 1, Stage::Loading, 0)), Some((2, 1)));
    let mut s = BenchmarkRunStatus::default();
    s.results
        .push(results::failed_result(&run, &run.cells[0], 0, "x".into()));
    assert_eq!(focus(&run, &s), Some((0, 1)));
}

#[test]
fn focus_ignores_a_current_measurement_out_of_range() {
    // A status written for another spec version, or by hand: observe indexes cells with the
    // focus, so it must never point past them.
    let run = validated(SPEC);
    for (cell, repeat) in [(4, 0), (0, 2), (-1, 0), (0, -1), (i32::MAX, i32::MIN)] {
        let s = running(cell, repeat, Stage::Loading, 0);
        assert_eq!(focus(&run, &s), Some((0, 0)), "cell {cell} repeat {repeat}");
        let d = plan(&run, &s, &obs(), at(1000));
        let cur = d.status.current.expect("moved to a measurement in range");
        assert_eq!((cur.cell, cur.repeat, cur.stage), (0, 0, Stage::Deploying));
    }
}

#[test]
fn oversized_detail_drops_per_second_histograms_first() {
    let mut r = load_result(0);
    r.timeline = (0..200)
        .map(|s| benchrun_wire::TimelineEntry {
            second: s,
            requests: 1,
            errors: 0,
            p50_us: 1,
            p99_us: 2,
            histogram: "x".repeat(8000),
        })
        .collect();
    let json = detail_json(&r);
    assert!(json.len() < DETAIL_MAX_BYTES);
    let back: LoadResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back.timeline.len(), 200);
}

#[test]
fn restart_after_storing_the_detail_collects_from_it_without_the_logs() {
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Succeeded(Vec::new()),
        detail: Some(load_result(3000)),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
    assert!(d.actions.is_empty());
    assert_recorded_due(&d, 0, 0, 23_000);
}

#[test]
fn a_status_read_before_its_own_record_does_not_run_the_load_again() {
    // The result was stored and the Job deleted, but this reconcile reads a cached status from
    // before that patch: still Loading, no result. It records the result from the detail.
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Absent,
        detail: Some(load_result(3000)),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
    assert!(
        !d.actions
            .iter()
            .any(|a| matches!(a, Action::CreateJob { .. } | Action::ApplyTarget { .. })),
        "{:?}",
        d.actions
    );
    assert_recorded_due(&d, 0, 0, 23_000);
}

#[test]
fn freshly_ready_pods_are_scraped_twice_before_the_load_starts() {
    let run = validated(SPEC);
    let target = TargetObserved {
        ready_since_ms: Some(T0 + 1000),
        ..ready_target()
    };
    let o = Observed {
        target: Some(target),
        service_ip: Some("10.96.0.7".into()),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(5000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyTarget {
            cell: 0,
            round: None,
            services: vec![],
            node_selector: BTreeMap::new(),
        }]
    );
    assert_eq!(d.status.current.clone().unwrap().stage, Stage::Deploying);
    let d = plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(11_000));
    assert_eq!(d.status.current.unwrap().stage, Stage::Loading);
}

#[test]
fn fresh_pods_wait_the_clusters_sample_interval_and_a_window_is_read_that_long_after() {
    // A cluster sampling every 3 s at most (`--sample-interval 3s`): pods ready at 1 s are
    // loaded from 4 s on, and cell 0's window (3 s–13 s) is due for reading at 16 s.
    let run = validated(SPEC);
    let o = Observed {
        target: Some(TargetObserved {
            ready_since_ms: Some(T0 + 1000),
            ..ready_target()
        }),
        service_ip: Some("10.96.0.7".into()),
        sample_interval: Duration::from_secs(3),
        ..obs()
    };
    let stage = |now| {
        plan(&run, &running(0, 0, Stage::Deploying, 0), &o, at(now))
            .status
            .current
            .unwrap()
            .stage
    };
    assert_eq!(stage(3_900), Stage::Deploying);
    assert_eq!(stage(4_000), Stage::Loading);
    let o = Observed {
        job: JobObserved::Succeeded(Vec::new()),
        detail: Some(load_result(3000)),
        ..o
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
    assert_recorded_due(&d, 0, 0, 16_000);
}

// ---- Prometheus unreachable: deferred collections ----

const DOWN: &str =
    "Prometheus at http://10.244.0.1:9090: failed to reach Prometheus: connection refused";

fn unreachable() -> Collection {
    Collection::Unreachable(DOWN.into())
}

/// Target usage as Prometheus gives it once it is back: 0.1 cores of a 250m limit.
fn late_usage() -> TargetUsage {
    TargetUsage {
        cpu_avg_cores: Some(0.1),
        cpu_avg_of_limit: Some(0.4),
        memory_avg_bytes: Some(30 << 20),
        memory_peak_bytes: Some(31 << 20),
        ..TargetUsage::default()
    }
}

/// The decision after cell 0 repeat 0 (window 3 s–13 s, recorded at 14 s with its metrics due
/// at 23 s) was collected at 24 s while Prometheus was down.
fn deferred() -> Decision {
    deferred_with(obs())
}

/// [`deferred`] with `o`'s settings (e.g. `metrics_retry_for`).
fn deferred_with(o: Observed) -> Decision {
    let run = validated(SPEC);
    let loaded = just_loaded();
    let o = Observed {
        pending: vec![answered(0, 0, unreachable())],
        ..o
    };
    plan(&run, &loaded.status, &o, at(24_000))
}

fn answered(cell: usize, repeat: usize, c: Collection) -> PendingObserved {
    PendingObserved {
        cell,
        repeat,
        collected: Ok((load_result(3000), c)),
    }
}

#[test]
fn unreachable_prometheus_keeps_the_load_figures_defers_cpu_and_memory_and_moves_on() {
    let d = deferred();
    assert_eq!(d.status.results.len(), 1);
    let r = &d.status.results[0];
    assert_eq!(r.outcome, Outcome::Measured);
    assert_eq!((r.requests, r.throughput), (Some(10_000), Some(1000.0)));
    assert_eq!(prometheus_part(&r.usage), TargetUsage::default());
    assert!(
        r.usage.load_cpu_cores.is_some(),
        "the generator's own CPU is kept"
    );
    let p = r.metrics_pending.clone().expect("pending");
    assert_eq!(p.attempts, 1);
    assert_eq!(p.first_failure, Time(at(24_000)));
    assert_eq!(p.next_attempt, Time(at(34_000)));
    // The window ended at 13 s; the default bound is 10 minutes after it.
    assert_eq!(p.give_up_at, Time(at(613_000)));
    assert_eq!(p.last_error, DOWN);
    let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, vec!["MetricsPending"], "{:?}", r.warnings);
    assert!(
        r.warnings[0]
            .to_string()
            .contains("until 2025-11-30T14:10:13Z"),
        "{}",
        r.warnings[0]
    );
    assert!(d
        .notes
        .iter()
        .any(|n| n.warning && n.reason == Reason::MetricsDeferred));
    let m = cond(&d.status, ConditionType::MetricsAvailable);
    assert_eq!(
        (m.status.as_str(), m.reason.as_str()),
        ("False", "MetricsPending")
    );
    // On to the next measurement.
    assert_eq!(d.status.phase, Some(Phase::Running));
    let cur = d.status.current.clone().unwrap();
    assert_eq!((cur.cell, cur.repeat, cur.stage), (0, 1, Stage::Deploying));
    assert_eq!(d.status.progress.as_deref(), Some("1/8"));
}

#[test]
fn a_deferred_collection_is_due_at_its_next_attempt_or_its_bound() {
    let s = deferred().status;
    assert!(due_cells(&s, at(33_999)).is_empty());
    assert_eq!(due_cells(&s, at(34_000)), vec![(0, 0)]);
    let mut late = s.clone();
    let p = late.results[0].metrics_pending.as_mut().unwrap();
    p.next_attempt = Time(at(900_000));
    assert_eq!(due_cells(&late, at(613_000)), vec![(0, 0)]);
}

#[test]
fn still_unreachable_backs_off_and_keeps_the_first_failure() {
    let run = validated(SPEC);
    let mut status = deferred().status;
    let mut retry_at = 34_000;
    for (attempts, wait_s) in [(2, 20), (3, 40), (4, 60), (5, 60)] {
        let o = Observed {
            pending: vec![answered(0, 0, unreachable())],
            ..obs()
        };
        let d = plan(&run, &status, &o, at(retry_at));
        let p = d.status.results[0].metrics_pending.clone().unwrap();
        assert_eq!(p.attempts, attempts);
        assert_eq!(p.first_failure, Time(at(24_000)));
        assert_eq!(p.next_attempt, Time(at(retry_at + wait_s * 1000)));
        assert!(d.notes.is_empty(), "no event per retry: {:?}", d.notes);
        assert!(d.requeue.unwrap() <= Duration::from_secs(wait_s as u64));
        retry_at += wait_s * 1000;
        status = d.status;
    }
}

#[test]
fn a_later_answer_fills_in_cpu_and_memory_and_recomputes_warnings_and_conditions() {
    let run = validated(SPEC);
    let before = deferred().status;
    let o = Observed {
        pending: vec![answered(
            0,
            0,
            Ok((late_usage(), Default::default())).into(),
        )],
        ..obs()
    };
    let d = plan(&run, &before, &o, at(95_000));
    let r = &d.status.results[0];
    assert_eq!(r.metrics_pending, None);
    assert_eq!(prometheus_part(&r.usage), prometheus_part(&late_usage()));
    // The load figures and pod facts recorded at the time are unchanged.
    let was = &before.results[0];
    assert_eq!(
        (
            r.requests,
            r.throughput,
            &r.latency_ms,
            &r.load_nodes,
            &r.detail
        ),
        (
            was.requests,
            was.throughput,
            &was.latency_ms,
            &was.load_nodes,
            &was.detail
        )
    );
    // With CPU known, the closed-model check can now speak: 40 % of the limit at c=4.
    let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
    assert_eq!(codes, vec!["ConcurrencyBound"], "{:?}", r.warnings);
    let m = cond(&d.status, ConditionType::MetricsAvailable);
    assert_eq!(
        (m.status.as_str(), m.reason.as_str()),
        ("True", "MetricsRead")
    );
    assert!(cond(&d.status, ConditionType::ResultsValid)
        .message
        .contains("ConcurrencyBound ×1"));
    assert_eq!(d.status.summary.as_ref().unwrap().suspect, 1);
    let note = d
        .notes
        .iter()
        .find(|n| n.reason == Reason::MetricsCollected)
        .unwrap();
    assert!(!note.warning);
    assert!(
        note.message.contains("CPU 0.100 cores, memory 30.0 MiB"),
        "{}",
        note.message
    );
    // The measurement in progress is untouched.
    assert_eq!(d.status.current, before.current);
}

#[test]
fn a_late_answer_recomputes_the_slo_verdict() {
    let run = validated(&format!("{SPEC}slo: {{p99: 200ms}}\n"));
    let mut status = deferred().status;
    status.results[0].slo = None;
    let o = Observed {
        pending: vec![answered(
            0,
            0,
            Ok((late_usage(), Default::default())).into(),
        )],
        ..obs()
    };
    let d = plan(&run, &status, &o, at(95_000));
    assert_eq!(d.status.results[0].slo, Some(SloVerdict::Met));
    assert_eq!(d.status.summary.unwrap().slo, Some(SloSummary::Met));
}

#[test]
fn after_the_bound_the_figures_stay_absent_with_metrics_unavailable_and_the_reason() {
    let run = validated(SPEC);
    let status = deferred().status;
    let o = Observed {
        pending: vec![answered(0, 0, unreachable())],
        ..obs()
    };
    let d = plan(&run, &status, &o, at(613_000));
    let r = &d.status.results[0];
    assert_eq!(r.metrics_pending, None);
    assert_eq!(prometheus_part(&r.usage), TargetUsage::default());
    assert_eq!(r.requests, Some(10_000), "the load figures are kept");
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].to_string().starts_with("MetricsUnavailable: Prometheus could not be reached from 2025-11-30T14:00:24Z until 2025-11-30T14:10:13Z (2 attempts; last: Prometheus at"),
        "{}",
        r.warnings[0]
    );
    let m = cond(&d.status, ConditionType::MetricsAvailable);
    assert_eq!(
        (m.status.as_str(), m.reason.as_str()),
        ("False", "MetricsMissing")
    );
    assert!(d
        .notes
        .iter()
        .any(|n| n.warning && n.reason == Reason::MetricsUnavailable));
    assert!(collections_due(&d.status, at(700_000)).is_empty());
}

#[test]
fn the_bound_is_the_operators_setting() {
    let run = validated(SPEC);
    let o = Observed {
        metrics_retry_for: Duration::from_secs(60),
        ..obs()
    };
    let d = deferred_with(o.clone());
    let p = d.status.results[0].metrics_pending.clone().unwrap();
    assert_eq!(p.give_up_at, Time(at(73_000)));
    // An operator that was down past the bound gives the figures up at once.
    let o = Observed {
        pending: vec![answered(0, 0, unreachable())],
        ..o
    };
    let d = plan(&run, &just_loaded().status, &o, at(80_000));
    let r = &d.status.results[0];
    assert_eq!(r.metrics_pending, None);
    assert!(
        r.warnings[0]
            .to_string()
            .contains("the window ended more than 1m ago"),
        "{}",
        r.warnings[0]
    );
}

#[test]
fn a_gone_load_result_or_a_refused_query_ends_the_wait() {
    let run = validated(SPEC);
    let status = deferred().status;
    let gone = PendingObserved {
        cell: 0,
        repeat: 0,
        collected: Err("the load result (ConfigMap demo-detail-c0-r0) is gone".into()),
    };
    for p in [
        gone,
        answered(0, 0, Collection::Answered(Err("bad_data".into()))),
    ] {
        let o = Observed {
            pending: vec![p],
            ..obs()
        };
        let d = plan(&run, &status, &o, at(34_000));
        assert_eq!(d.status.results[0].metrics_pending, None);
        assert_eq!(
            d.status.results[0].warnings[0].code,
            WarningCode::MetricsUnavailable
        );
    }
}

#[test]
fn restart_in_between_resumes_the_pending_collection_from_status_alone() {
    let run = validated(SPEC);
    // What the apiserver stored, read back by a new operator process with no memory.
    let json = serde_json::to_string(&deferred().status).unwrap();
    let stored: BenchmarkRunStatus = serde_json::from_str(&json).unwrap();
    assert!(
        json.contains(r#""metricsPending":{"attempts":1,"#),
        "{json}"
    );
    assert_eq!(due_cells(&stored, at(40_000)), vec![(0, 0)]);
    let o = Observed {
        pending: vec![answered(
            0,
            0,
            Ok((late_usage(), Default::default())).into(),
        )],
        ..obs()
    };
    let d = plan(&run, &stored, &o, at(40_000));
    assert_eq!(
        prometheus_part(&d.status.results[0].usage),
        prometheus_part(&late_usage())
    );
    assert_eq!(d.status.results[0].metrics_pending, None);
}

#[test]
fn the_next_load_waits_while_prometheus_is_down_and_starts_once_it_answers() {
    let run = validated(SPEC);
    let status = deferred().status;
    let ready = Observed {
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        ..obs()
    };
    let d = plan(&run, &status, &ready, at(30_000));
    assert_eq!(
        d.actions,
        vec![Action::ApplyTarget {
            cell: 0,
            round: None,
            services: vec![],
            node_selector: BTreeMap::new(),
        }]
    );
    assert_eq!(d.status.current.clone().unwrap().stage, Stage::Deploying);
    let c = cond(&d.status, ConditionType::Running);
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "WaitingForPrometheus")
    );
    assert!(d
        .notes
        .iter()
        .any(|n| n.reason == Reason::WaitingForPrometheus));
    assert_eq!(
        d.requeue,
        Some(Duration::from_secs(4)),
        "until the next attempt at 34 s"
    );
    // Held again: no second event.
    let again = plan(&run, &d.status, &ready, at(31_000));
    assert!(again.notes.is_empty(), "{:?}", again.notes);
    // Prometheus answers: the figures are filled in and the load starts.
    let back = Observed {
        pending: vec![answered(
            0,
            0,
            Ok((late_usage(), Default::default())).into(),
        )],
        ..ready
    };
    let d = plan(&run, &again.status, &back, at(34_000));
    assert!(d.actions.iter().any(|a| matches!(
        a,
        Action::CreateJob {
            cell: 0,
            repeat: 1,
            ..
        }
    )));
    assert_eq!(
        cond(&d.status, ConditionType::Running).reason,
        Reason::Measuring.as_str()
    );
}

#[test]
fn the_run_does_not_finish_while_a_collection_is_pending() {
    let run = validated(
        &SPEC
            .replace("repeats: 2", "repeats: 1")
            .replace("cpu: [\"250m\", \"500m\"], ", ""),
    );
    // Cell 0 deferred; cell 1, the last, ends its load while Prometheus is still down.
    let mut status = running(1, 0, Stage::Loading, 40_000);
    status.results = deferred().status.results;
    let o = Observed {
        job: JobObserved::Succeeded(vec![Ok(load_result(30_000))]),
        ..obs()
    };
    let d = plan(&run, &status, &o, at(51_000));
    assert_eq!(d.status.results.len(), 2);
    assert!(d.status.results[0].metrics_pending.is_some());
    assert!(d.status.results[1].metrics_due.is_some());
    assert_eq!(d.status.phase, Some(Phase::Running));
    assert_eq!(d.status.current, None);
    assert_eq!(d.status.completion_time, None);
    let c = cond(&d.status, ConditionType::Running);
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "CollectingMetrics")
    );
    assert!(d.requeue.is_some());
    // One answered, one not yet: still running.
    let o = Observed {
        pending: vec![answered(
            0,
            0,
            Ok((late_usage(), Default::default())).into(),
        )],
        ..obs()
    };
    let d = plan(&run, &d.status, &o, at(55_000));
    assert_eq!(d.status.phase, Some(Phase::Running));
    // Both answered: the run succeeds with CPU and memory in every result.
    let o = Observed {
        pending: vec![PendingObserved {
            collected: Ok((
                load_result(30_000),
                Ok((late_usage(), Default::default())).into(),
            )),
            ..answered(1, 0, unreachable())
        }],
        ..obs()
    };
    let d = plan(&run, &d.status, &o, at(70_000));
    assert_eq!(d.status.phase, Some(Phase::Succeeded));
    assert!(d
        .status
        .results
        .iter()
        .all(|r| r.usage.cpu_avg_cores == Some(0.1)));
    assert_eq!(
        cond(&d.status, ConditionType::MetricsAvailable).status,
        "True"
    );
}

/// The figures that come from Prometheus: `usage` without the load generator's own CPU.
fn prometheus_part(u: &TargetUsage) -> TargetUsage {
    TargetUsage {
        load_cpu_cores: None,
        load_cpu_of_limit: None,
        ..u.clone()
    }
}

#[test]
fn time_to_ready_is_the_configurations_first_reading() {
    let run = validated(SPEC);
    // The pod failed its readiness probe under load and became Ready again: its condition now
    // says 85 s after creation; the configuration's first measurement read 4 s.
    let o = Observed {
        job: JobObserved::Succeeded(vec![Ok(load_result(3000))]),
        target: Some(TargetObserved {
            ready_ms: Some(85_000),
            ..ready_target()
        }),
        ..obs()
    };
    let first = CellResult {
        cell: 0,
        repeat: 0,
        outcome: Outcome::Measured,
        target_ready_seconds: Some(4.0),
        ..CellResult::default()
    };
    let ready_of = |cell: i32| {
        let mut status = running(cell, 0, Stage::Loading, 0);
        status.results = vec![first.clone()];
        let d = plan(&run, &status, &o, at(24_000));
        let r = d.status.results.iter().find(|r| r.cell == cell).unwrap();
        r.target_ready_seconds
    };
    // Cell 1 is cell 0's configuration (250m) at another connection count.
    assert_eq!(ready_of(1), Some(4.0));
    // Cell 2 is a new configuration (500m): its own reading.
    assert_eq!(ready_of(2), Some(85.0));
}

/// The (cell, repeat) of the collections due at `now`.
fn due_cells(s: &BenchmarkRunStatus, now: Timestamp) -> Vec<(usize, usize)> {
    collections_due(s, now)
        .iter()
        .map(|d| (d.cell, d.repeat))
        .collect()
}

/// The decision when cell 0 repeat 0's load Job (window 3 s–13 s) is seen succeeded at 14 s.
fn just_loaded() -> Decision {
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Succeeded(vec![Ok(load_result(3000))]),
        target: Some(ready_target()),
        job_created: Some(at(1000)),
        ..obs()
    };
    plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000))
}

#[test]
fn the_next_load_starts_while_the_previous_window_waits_for_its_scrape() {
    let run = validated(SPEC);
    let status = just_loaded().status;
    let ready = Observed {
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        ..obs()
    };
    // Same configuration (cell 0, repeat 1): nothing to wait for.
    let d = plan(&run, &status, &ready, at(14_500));
    assert!(d.actions.iter().any(|a| matches!(
        a,
        Action::CreateJob {
            cell: 0,
            repeat: 1,
            ..
        }
    )));
    assert_eq!(d.status.current.as_ref().unwrap().stage, Stage::Loading);
    // It looks again when the previous window's figures are due.
    assert!(d.requeue.unwrap() <= Duration::from_secs(5));
}

#[test]
fn a_due_window_is_read_while_the_next_one_runs_and_fills_the_result_in() {
    let run = validated(SPEC);
    let mut status = just_loaded().status;
    status.current.as_mut().unwrap().stage = Stage::Loading;
    let o = Observed {
        job: JobObserved::Running,
        pending: vec![answered(
            0,
            0,
            Ok((late_usage(), Default::default())).into(),
        )],
        ..obs()
    };
    let d = plan(&run, &status, &o, at(23_000));
    let r = &d.status.results[0];
    assert_eq!(prometheus_part(&r.usage), prometheus_part(&late_usage()));
    assert_eq!(r.requests_per_core, Some(10_000.0));
    assert!(r.metrics_due.is_none() && r.metrics_pending.is_none());
    assert_eq!(
        cond(&d.status, ConditionType::MetricsAvailable).message,
        "Prometheus gave CPU and memory for 1 measurements"
    );
    // The running load is left alone.
    assert_eq!(d.status.current.unwrap().repeat, 1);
    assert!(d.actions.is_empty(), "{:?}", d.actions);
}

#[test]
fn a_due_window_that_finds_prometheus_down_is_deferred_and_holds_the_next_load() {
    let run = validated(SPEC);
    let status = just_loaded().status;
    let o = Observed {
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        pending: vec![answered(0, 0, unreachable())],
        ..obs()
    };
    // Repeat 1 has not started yet when the window of repeat 0 is due.
    let d = plan(&run, &status, &o, at(23_000));
    let r = &d.status.results[0];
    let p = r.metrics_pending.clone().expect("deferred");
    assert_eq!((p.attempts, p.next_attempt), (1, Time(at(33_000))));
    assert!(
        r.metrics_due.is_some(),
        "kept: it holds the load's creation"
    );
    assert!(d
        .actions
        .iter()
        .all(|a| !matches!(a, Action::CreateJob { .. })));
    assert_eq!(
        cond(&d.status, ConditionType::Running).reason,
        "WaitingForPrometheus"
    );
}

#[test]
fn a_new_configuration_replaces_the_old_pods_only_once_their_last_window_is_scraped() {
    let run = validated(SPEC);
    // Cell 0 (cpu 250m, 4 connections) measured twice; cell 2 (500m) is another configuration.
    let mut status = just_loaded().status;
    let mut second = status.results[0].clone();
    second.repeat = 1;
    second.metrics_due = Some(MetricsDue {
        at: Time(at(40_000)),
        load_created: None,
    });
    status.results.push(second);
    status.current = running(2, 0, Stage::Deploying, 31_000).current;
    let cell0 = &run.cells[0];
    let old = names::config_hash("web", cell0);
    let o = Observed {
        target_configs: vec![old],
        ..obs()
    };
    let d = plan(&run, &status, &o, at(32_000));
    assert!(d
        .actions
        .iter()
        .all(|a| !matches!(a, Action::DeleteTargets { .. })));
    assert!(d.requeue.unwrap() <= Duration::from_secs(8));
    let d = plan(&run, &status, &o, at(40_000));
    assert!(
        d.actions
            .iter()
            .any(|a| matches!(a, Action::DeleteTargets { .. })),
        "{:?} {:?}",
        d.actions,
        d.status.current
    );
}

#[test]
fn the_run_finishes_only_once_the_last_window_is_read() {
    let run = validated(benchrun_api_single());
    let status = {
        let o = Observed {
            job: JobObserved::Succeeded(vec![Ok(load_result(3000))]),
            target: Some(ready_target()),
            ..obs()
        };
        plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000)).status
    };
    assert_eq!(status.phase, Some(Phase::Running));
    assert_eq!(
        cond(&status, ConditionType::Running).reason,
        "CollectingMetrics"
    );
    let d = plan(&run, &status, &obs(), at(20_000));
    assert_eq!(d.status.phase, Some(Phase::Running));
    assert_eq!(d.requeue, Some(Duration::from_secs(3)));
    let o = Observed {
        pending: vec![answered(
            0,
            0,
            Ok((late_usage(), Default::default())).into(),
        )],
        ..obs()
    };
    let d = plan(&run, &status, &o, at(23_000));
    assert_eq!(d.status.phase, Some(Phase::Succeeded));
    assert!(d.status.results[0].metrics_due.is_none());
}

/// One cell, one repeat.
fn benchrun_api_single() -> &'static str {
    r#"
targets: [{name: web, image: example/web:1}]
scenarios: [{name: hello, path: /hello}]
load: {connections: 10, duration: 10s}
"#
}

#[test]
fn the_old_configuration_stays_while_its_last_window_waits_for_prometheus() {
    let run = validated(SPEC);
    let mut status = just_loaded().status;
    let d = plan(
        &run,
        &status,
        &Observed {
            pending: vec![answered(0, 0, unreachable())],
            ..obs()
        },
        at(23_000),
    );
    status.results = d.status.results;
    status.conditions = d.status.conditions;
    assert!(status.results[0].metrics_pending.is_some());
    // Cell 2 (500m) needs the old pods gone; far past its ready timeout, it does not fail.
    status.current = running(2, 0, Stage::Deploying, 24_000).current;
    let o = Observed {
        target_configs: vec![names::config_hash("web", &run.cells[0])],
        ..obs()
    };
    let d = plan(&run, &status, &o, at(200_000));
    assert!(d.actions.is_empty(), "{:?}", d.actions);
    assert!(d
        .status
        .results
        .iter()
        .all(|r| r.outcome == Outcome::Measured));
    assert_eq!(
        cond(&d.status, ConditionType::Running).reason,
        "WaitingForPrometheus"
    );
}

#[test]
fn an_action_is_described_by_kind_name_and_size_never_by_its_body() {
    let json = format!("{{\"latency\":\"{}\"}}", "A".repeat(900 * 1024));
    let store = Action::StoreDetail {
        cell: 2,
        repeat: 1,
        json: json.clone(),
    };
    let described = store.describe("demo");
    assert_eq!(
        described,
        format!(
            "apply ConfigMap {} ({} bytes)",
            crate::names::detail_name("demo", 2, 1),
            json.len()
        )
    );
    let job = Action::CreateJob {
        cell: 0,
        repeat: 3,
        cluster_ip: "10.96.0.7".into(),
        restarts_baseline: Default::default(),
        start_at_ms: Some(1_800_000_000_000),
        node_selector: Default::default(),
    };
    assert_eq!(
        job.describe("demo"),
        format!(
            "create Job {} (start at 1800000000000)",
            crate::names::job_name("demo", 0, 3)
        )
    );
    let many = Action::DeleteJobs((0..1000).map(|i| format!("demo-job-{i}")).collect());
    let described = many.describe("demo");
    assert!(
        described.starts_with("delete 1000 Job(s): demo-job-0, "),
        "{described}"
    );
    assert!(described.len() < 600, "{} bytes", described.len());
}
