//! The measuring slot in the planner: a run the slot is free for asks for it and does
//! nothing else, a run that holds it starts, a run that must wait is queued (its event naming
//! the holders, its condition the queue's rule: neither changes when the slot changes hands),
//! and a run its namespace has no room for in the queue fails.

use super::tests::{at, cond, holding, obs, run_view, SPEC};
use super::*;
use crate::builders::fixtures::run as validated;
use crate::slots::{SlotFacts, Slots, CACHE_NOT_READY};
use benchrun_api::{ConditionType, Phase, Reason};

/// `team/demo` waiting, nobody holding: the one slot is free for it.
fn free() -> SlotFacts {
    SlotFacts {
        granted: Default::default(),
        ..holding()
    }
}

fn with_slot(slot: SlotFacts) -> Observed {
    Observed { slot, ..obs() }
}

#[test]
fn a_free_slot_is_only_asked_for_and_the_run_looks_again_at_once() {
    let run = validated(SPEC);
    let status = BenchmarkRunStatus::default();
    let d = plan(&run, &status, &with_slot(free()), at(0));
    assert_eq!(d.actions, vec![Action::TakeSlot]);
    assert_eq!(d.requeue, Some(Duration::ZERO));
    assert!(d.notes.is_empty(), "{:?}", d.notes);
    // Nothing that assumes the slot: not Running, no measurement, no start time.
    assert_eq!(d.status.phase, None);
    assert!(d.status.current.is_none() && d.status.start_time.is_none());
    // A queued run stays queued until the grant is observed.
    let queued = BenchmarkRunStatus {
        phase: Some(Phase::Queued),
        ..BenchmarkRunStatus::default()
    };
    let d = plan(&run, &queued, &with_slot(free()), at(0));
    assert_eq!(d.actions, vec![Action::TakeSlot]);
    assert_eq!(d.status.phase, Some(Phase::Queued));
}

#[test]
fn a_granted_slot_is_observed_next_time_and_the_run_starts() {
    let run = validated(SPEC);
    let status = BenchmarkRunStatus::default();
    let slots = Slots::new(1);
    let facts = free();
    let d = plan(&run, &status, &with_slot(facts.clone()), at(0));
    assert_eq!(d.actions, vec![Action::TakeSlot]);
    // What the controller does with the action, against the same cache.
    assert!(slots.take(&facts.me, facts.runs.as_deref().unwrap()));
    let next = SlotFacts {
        granted: slots.granted(),
        ..facts
    };
    let d = plan(&run, &d.status, &with_slot(next), at(10));
    assert_eq!(d.status.phase, Some(Phase::Running));
    assert!(!d.actions.contains(&Action::TakeSlot));
    let current = d.status.current.clone().expect("on the first measurement");
    assert_eq!(
        (current.cell, current.stage),
        (0, benchrun_api::Stage::Deploying)
    );
    assert!(d.notes.iter().any(|n| n.reason == Reason::Started));
}

#[test]
fn a_refused_take_shows_the_run_waiting_for_the_holder_next_time() {
    let run = validated(SPEC);
    // Planned Grant on a cache without the older team/other, which took the last slot
    // before the take was applied.
    let slots = Slots::new(1);
    let runs = vec![
        run_view("team/other", Some(Phase::Queued), 0),
        run_view("team/demo", Some(Phase::Queued), 1),
    ];
    assert!(slots.take("team/other", &runs));
    assert!(!slots.take("team/demo", &runs));
    let next = SlotFacts {
        runs: Some(runs),
        granted: slots.granted(),
        ..holding()
    };
    let d = plan(
        &run,
        &BenchmarkRunStatus::default(),
        &with_slot(next),
        at(0),
    );
    assert_eq!(d.status.phase, Some(Phase::Queued));
    assert!(d.actions.is_empty());
    assert_eq!(
        cond(&d.status, ConditionType::Running).message,
        format!(
            "waiting for a measuring slot: {}",
            crate::plan::steps::QUEUE_RULE
        )
    );
    assert!(
        d.notes[0].message.contains("held by team/other"),
        "{:?}",
        d.notes
    );
}

#[test]
fn waiting_names_every_holder_and_older_queued_runs() {
    let run = validated(SPEC);
    let two_holders = SlotFacts {
        max: 2,
        runs: Some(vec![
            run_view("team/a", Some(Phase::Running), 0),
            run_view("team/demo", None, 1),
        ]),
        granted: ["team/b".to_string()].into(),
        ..holding()
    };
    // team/b's grant is gone with it (not in the cache): one holder, one free slot.
    let d = plan(
        &run,
        &BenchmarkRunStatus::default(),
        &with_slot(two_holders.clone()),
        at(0),
    );
    assert_eq!(d.actions, vec![Action::TakeSlot]);
    let mut runs = two_holders.runs.clone().unwrap();
    runs.push(run_view("team/b", Some(Phase::Queued), 0));
    let d = plan(
        &run,
        &BenchmarkRunStatus::default(),
        &with_slot(SlotFacts {
            runs: Some(runs),
            ..two_holders
        }),
        at(0),
    );
    assert_eq!(d.status.phase, Some(Phase::Queued));
    assert!(d.actions.is_empty());
    let message = &cond(&d.status, ConditionType::Running).message;
    assert!(!message.contains("team/a"), "{message}");
    assert_eq!(d.notes[0].reason, Reason::Queued);
    assert!(
        d.notes[0].message.contains("held by team/a, team/b"),
        "{:?}",
        d.notes
    );
    // Every slot is held: the controller wakes it when one is let go; the requeue is a
    // safety net only.
    assert_eq!(d.requeue, Some(crate::plan::QUEUED_RECHECK));
    // Not in the cache yet, nobody holding: the older queued run goes first.
    let not_cached = SlotFacts {
        runs: Some(vec![run_view("team/old", Some(Phase::Queued), 0)]),
        granted: Default::default(),
        ..holding()
    };
    let d = plan(
        &run,
        &BenchmarkRunStatus::default(),
        &with_slot(not_cached),
        at(0),
    );
    assert!(d.notes[0]
        .message
        .contains("held by team/old (before it in the queue)"));
    // A slot is free, older runs take it first: the controller wakes this run when it is
    // next in line, so it does not poll.
    assert_eq!(d.requeue, Some(crate::plan::QUEUED_RECHECK));
}

#[test]
fn without_the_operator_cache_the_run_waits() {
    let run = validated(SPEC);
    let unknown = SlotFacts {
        runs: None,
        ..holding()
    };
    let d = plan(
        &run,
        &BenchmarkRunStatus::default(),
        &with_slot(unknown),
        at(0),
    );
    assert_eq!(d.status.phase, Some(Phase::Queued));
    assert!(d.actions.is_empty());
    assert!(cond(&d.status, ConditionType::Running)
        .message
        .contains(CACHE_NOT_READY));
    assert_eq!(d.requeue, Some(crate::plan::QUEUE_POLL));
}

#[test]
fn a_running_run_is_not_asked_about_the_slot() {
    // Its phase makes it a holder; a reconcile of it goes on with the measurement.
    let run = validated(SPEC);
    let status = super::tests::running(0, 0, benchrun_api::Stage::Deploying, 0);
    let d = plan(&run, &status, &with_slot(free()), at(1000));
    assert!(!d.actions.contains(&Action::TakeSlot));
    assert_eq!(d.status.phase, Some(Phase::Running));
}

#[test]
fn a_run_its_namespace_has_no_room_for_in_the_queue_fails_naming_the_limit_and_the_flag() {
    let run = validated(SPEC);
    let full = SlotFacts {
        runs: Some(vec![
            run_view("other/x", Some(Phase::Running), 0),
            run_view("team/q1", Some(Phase::Queued), 0),
            run_view("team/q2", Some(Phase::Queued), 0),
            run_view("team/demo", None, 1),
        ]),
        granted: Default::default(),
        max_queued_per_namespace: 2,
        ..holding()
    };
    let d = plan(
        &run,
        &BenchmarkRunStatus::default(),
        &with_slot(full.clone()),
        at(0),
    );
    assert_eq!(d.status.phase, Some(Phase::Failed));
    assert!(d.actions.is_empty(), "{:?}", d.actions);
    let failed = cond(&d.status, ConditionType::Failed);
    assert_eq!(failed.reason, Reason::QueueFull.as_str());
    assert!(
        failed.message.contains("namespace team has 2 runs waiting")
            && failed.message.contains("--max-queued-per-namespace=2"),
        "{}",
        failed.message
    );
    assert_eq!(cond(&d.status, ConditionType::Stalled).status, "True");
    assert!(d
        .notes
        .iter()
        .any(|n| n.warning && n.reason == Reason::QueueFull));
    // A run already queued keeps its place if the limit is lowered.
    let queued = BenchmarkRunStatus {
        phase: Some(Phase::Queued),
        ..BenchmarkRunStatus::default()
    };
    let mut runs = full.runs.clone().unwrap();
    runs[3].phase = Some(Phase::Queued);
    let d = plan(
        &run,
        &queued,
        &with_slot(SlotFacts {
            runs: Some(runs),
            ..full
        }),
        at(0),
    );
    assert_eq!(d.status.phase, Some(Phase::Queued));
}
