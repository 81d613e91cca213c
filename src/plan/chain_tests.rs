//! Cells back to back: the next measurement's load Job made ahead of its turn
//! ([`super::chained_start`]), and what is checked when it was.

use super::tests::{at, load_result, obs, ready_target, running, SPEC};
use super::*;
use crate::builders::fixtures::run as validated;
use crate::names;
use crate::observed::JobObserved;
use benchrun_api::{Stage, WarningCode};

const T0: i64 = 1_764_511_200_000;

/// Cell 0 repeat 0 of [`SPEC`] (10 s window after a 3 s warm-up) loading, its one pod's
/// container started at 1 s (to the second), the target ready.
fn loading_obs() -> Observed {
    Observed {
        job: JobObserved::Running,
        jobs: vec![names::job_name("demo", 0, 0)],
        job_created: Some(at(500)),
        load_started_ms: Some(T0 + 1_000),
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        ..obs()
    }
}

fn made_ahead(d: &Decision) -> Vec<(usize, usize, Option<i64>)> {
    d.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreateJob {
                cell,
                repeat,
                start_at_ms,
                ..
            } => Some((*cell, *repeat, start_at_ms.map(|t| t - T0))),
            _ => None,
        })
        .collect()
}

#[test]
fn the_next_load_is_made_during_the_warm_up_to_begin_when_this_window_ends() {
    let run = validated(SPEC);
    let d = plan(
        &run,
        &running(0, 0, Stage::Loading, 0),
        &loading_obs(),
        at(1_500),
    );
    // No agreed start: the generator began by 1 s + 1.1 s (the kubelet's second, rounded up);
    // its window ends 3 s + 10 s later; the next one begins 250 ms after that.
    assert_eq!(made_ahead(&d), vec![(0, 1, Some(2_100 + 13_000 + 250))]);
    assert!(d
        .notes
        .iter()
        .any(|n| n.reason == Reason::LoadStarted && n.message.contains("made ahead")));
    // The status stays on this measurement.
    let cur = d.status.current.unwrap();
    assert_eq!((cur.cell, cur.repeat, cur.stage), (0, 0, Stage::Loading));
}

#[test]
fn an_agreed_start_the_pods_were_up_for_is_the_start_that_counts() {
    let run = validated(SPEC);
    let o = Observed {
        job_starts: [(names::job_name("demo", 0, 0), T0 + 5_000)].into(),
        ..loading_obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(1_500));
    assert_eq!(made_ahead(&d), vec![(0, 1, Some(5_000 + 13_000 + 250))]);
    // Pods that started too close to the agreed start: the later bound counts.
    let late = Observed {
        job_starts: [(names::job_name("demo", 0, 0), T0 + 1_500)].into(),
        ..loading_obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &late, at(1_500));
    assert_eq!(made_ahead(&d), vec![(0, 1, Some(2_100 + 13_000 + 250))]);
}

#[test]
fn nothing_is_made_ahead_when_it_cannot_be_ready_before_the_window_or_is_not_the_same_target() {
    let run = validated(SPEC);
    let status = running(0, 0, Stage::Loading, 0);
    // Less than a second of warm-up left: its pod would start during the window.
    let d = plan(&run, &status, &loading_obs(), at(4_200));
    assert!(made_ahead(&d).is_empty(), "{:?}", d.actions);
    // The pods have not all started: when the window ends is unknown.
    let waiting = Observed {
        load_started_ms: None,
        ..loading_obs()
    };
    assert!(made_ahead(&plan(&run, &status, &waiting, at(1_500))).is_empty());
    // Already made.
    let mut made = loading_obs();
    made.jobs.push(names::job_name("demo", 0, 1));
    assert!(made_ahead(&plan(&run, &status, &made, at(1_500))).is_empty());
    // Cell 1 repeat 1 is followed by cell 2 (another CPU limit): its target is not deployed.
    let last_of_config = Observed {
        jobs: vec![names::job_name("demo", 1, 1)],
        ..loading_obs()
    };
    let d = plan(
        &run,
        &running(1, 1, Stage::Loading, 0),
        &last_of_config,
        at(1_500),
    );
    assert!(made_ahead(&d).is_empty(), "{:?}", d.actions);
    // A request count does not fix when the window ends.
    let counted = validated(&SPEC.replace("duration: 10s", "requests: 1000"));
    assert!(made_ahead(&plan(&counted, &status, &loading_obs(), at(1_500))).is_empty());
    // A warm-up by request count neither.
    let warm_n = validated(&SPEC.replace("warmup: 3s", "warmupRequests: 500"));
    assert!(made_ahead(&plan(&warm_n, &status, &loading_obs(), at(1_500))).is_empty());
}

#[test]
fn the_next_measurement_takes_the_job_made_ahead_instead_of_making_one() {
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Running,
        jobs: vec![names::job_name("demo", 0, 1)],
        job_starts: [(names::job_name("demo", 0, 1), T0 + 15_350)].into(),
        target: Some(ready_target()),
        service_ip: Some("10.96.0.7".into()),
        ..obs()
    };
    let d = plan(
        &run,
        &running(0, 1, Stage::Deploying, 14_000),
        &o,
        at(15_000),
    );
    assert!(made_ahead(&d).is_empty(), "{:?}", d.actions);
    let cur = d.status.current.unwrap();
    assert_eq!((cur.cell, cur.repeat, cur.stage), (0, 1, Stage::Loading));
}

#[test]
fn a_load_made_ahead_that_began_before_the_last_response_marks_the_window() {
    let run = validated(SPEC);
    let finished = |next_start_ms: i64| {
        let o = Observed {
            job: JobObserved::Succeeded(vec![Ok(load_result(3_000))]),
            jobs: vec![names::job_name("demo", 0, 0), names::job_name("demo", 0, 1)],
            job_starts: [(names::job_name("demo", 0, 1), T0 + next_start_ms)].into(),
            job_created: Some(at(500)),
            ..obs()
        };
        let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
        d.status.results[0].warnings.clone()
    };
    // The window ends at 13 s.
    let w = finished(12_900);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].code, WarningCode::LoadOverlap);
    assert!(
        w[0].message.contains("began 100 ms before"),
        "{}",
        w[0].message
    );
    assert!(finished(13_250).is_empty());
}

#[test]
fn memory_before_the_load_is_read_before_its_agreed_start() {
    let run = validated(SPEC);
    let o = Observed {
        job: JobObserved::Succeeded(vec![Ok(LoadResult {
            start_at_ms: Some((T0 + 2_000) as u64),
            ..load_result(3_000)
        })]),
        jobs: vec![names::job_name("demo", 0, 0)],
        job_created: Some(at(500)),
        ..obs()
    };
    let d = plan(&run, &running(0, 0, Stage::Loading, 0), &o, at(14_000));
    let due = d.status.results[0].metrics_due.clone().unwrap();
    assert_eq!(due.load_created, Some(Time(at(2_000))));
}
