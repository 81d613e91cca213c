//! The measuring-slot queue: at most `max` runs measure at once, so that runs do not steal
//! each other's CPU. Others wait in phase `Queued`, oldest first.
//!
//! Holders are derived from observed state every time (runs in phase `Running`, from the
//! controller's cache) plus grants made by this process that are not yet visible in a status.
//! A restarted operator therefore knows the holders without any memory of its own.

use std::collections::BTreeSet;
use std::sync::Mutex;

use benchrun_api::{BenchmarkRun, Phase};
use jiff::Timestamp;
use kube::ResourceExt;

use crate::observed::Slot;

/// What the queue needs to know about a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunView {
    /// `namespace/name`.
    pub key: String,
    /// `status.phase`.
    pub phase: Option<Phase>,
    /// `metadata.creationTimestamp` (queue order).
    pub created: Option<Timestamp>,
    /// Being deleted.
    pub deleting: bool,
}

impl RunView {
    /// The view of a stored run.
    pub fn of(run: &BenchmarkRun) -> Self {
        Self {
            key: key(run),
            phase: run.status.as_ref().and_then(|s| s.phase),
            created: run.metadata.creation_timestamp.as_ref().map(|t| t.0),
            deleting: run.metadata.deletion_timestamp.is_some(),
        }
    }

    fn waiting(&self) -> bool {
        !self.deleting && matches!(self.phase, None | Some(Phase::Pending | Phase::Queued))
    }
}

/// `namespace/name` of a run.
pub fn key(run: &BenchmarkRun) -> String {
    format!("{}/{}", run.namespace().unwrap_or_default(), run.name_any())
}

/// The queue. One per operator process.
#[derive(Debug)]
pub struct Slots {
    max: usize,
    granted: Mutex<BTreeSet<String>>,
}

impl Slots {
    /// A queue with `max` measuring slots (at least one).
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            granted: Mutex::default(),
        }
    }

    /// Whether `me` may measure now, given every run the operator sees. Grants the slot when it
    /// is free and no older run waits for it.
    pub fn acquire(&self, me: &str, all: &[RunView]) -> Slot {
        let mut granted = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        decide(self.max, me, all, &mut granted)
    }
}

fn decide(max: usize, me: &str, all: &[RunView], granted: &mut BTreeSet<String>) -> Slot {
    // A grant ends when its run finished, went away or is being deleted.
    granted.retain(|k| {
        all.iter().any(|r| {
            &r.key == k && !r.deleting && !matches!(r.phase, Some(Phase::Succeeded | Phase::Failed))
        })
    });
    let mut holders: BTreeSet<String> = granted.clone();
    holders.extend(
        all.iter()
            .filter(|r| r.phase == Some(Phase::Running) && !r.deleting)
            .map(|r| r.key.clone()),
    );
    if holders.contains(me) {
        return Slot::Free;
    }
    if holders.len() >= max {
        return Slot::HeldBy(holders.into_iter().collect());
    }
    let mut waiting: Vec<&RunView> = all
        .iter()
        .filter(|r| r.waiting() && !holders.contains(&r.key))
        .collect();
    waiting.sort_by(|a, b| (a.created, &a.key).cmp(&(b.created, &b.key)));
    let free = max - holders.len();
    match waiting.iter().position(|r| r.key == me) {
        Some(pos) if pos < free => {
            granted.insert(me.to_string());
            Slot::Free
        }
        // Not in the cache yet (just created): let the older ones go first.
        _ if !holders.is_empty() => Slot::HeldBy(holders.into_iter().collect()),
        _ => Slot::HeldBy(
            waiting
                .iter()
                .take(free)
                .map(|r| format!("{} (older, queued)", r.key))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(key: &str, phase: Option<Phase>, created_s: i64) -> RunView {
        RunView {
            key: key.into(),
            phase,
            created: Some(Timestamp::from_second(created_s).unwrap()),
            deleting: false,
        }
    }

    #[test]
    fn a_running_run_keeps_its_slot_after_an_operator_restart() {
        let slots = Slots::new(1);
        let all = [view("a/x", Some(Phase::Running), 1), view("a/y", None, 0)];
        assert_eq!(slots.acquire("a/x", &all), Slot::Free);
        assert_eq!(slots.acquire("a/y", &all), Slot::HeldBy(vec!["a/x".into()]));
    }

    #[test]
    fn the_oldest_waiting_run_gets_a_free_slot_first() {
        let slots = Slots::new(1);
        let all = [
            view("a/new", None, 10),
            view("a/old", Some(Phase::Queued), 5),
        ];
        assert!(matches!(slots.acquire("a/new", &all), Slot::HeldBy(_)));
        assert_eq!(slots.acquire("a/old", &all), Slot::Free);
        // The grant holds before the status says Running.
        assert_eq!(
            slots.acquire("a/new", &all),
            Slot::HeldBy(vec!["a/old".into()])
        );
    }

    #[test]
    fn a_finished_or_deleted_holder_releases_its_slot() {
        let slots = Slots::new(1);
        let all = [view("a/x", None, 1), view("a/y", None, 2)];
        assert_eq!(slots.acquire("a/x", &all), Slot::Free);
        let all = [
            view("a/x", Some(Phase::Succeeded), 1),
            view("a/y", Some(Phase::Queued), 2),
        ];
        assert_eq!(slots.acquire("a/y", &all), Slot::Free);
        let slots = Slots::new(1);
        let mut gone = view("a/x", Some(Phase::Running), 1);
        gone.deleting = true;
        assert_eq!(
            slots.acquire("a/y", &[gone, view("a/y", None, 2)]),
            Slot::Free
        );
    }

    #[test]
    fn a_new_leader_rebuilds_the_queue_from_the_phases_alone() {
        // The old leader granted a/x and died before its status said Running; a/r is Running.
        let old_leader = Slots::new(2);
        let all = [
            view("a/r", Some(Phase::Running), 1),
            view("a/x", Some(Phase::Queued), 2),
            view("a/y", None, 3),
        ];
        assert_eq!(old_leader.acquire("a/x", &all), Slot::Free);
        // The new leader has no grants of its own: the Running run keeps its slot, the
        // ungranted one gets the free slot again in queue order, the younger one waits.
        let new_leader = Slots::new(2);
        assert!(matches!(new_leader.acquire("a/y", &all), Slot::HeldBy(_)));
        assert_eq!(new_leader.acquire("a/r", &all), Slot::Free);
        assert_eq!(new_leader.acquire("a/x", &all), Slot::Free);
        assert!(matches!(new_leader.acquire("a/y", &all), Slot::HeldBy(h) if h.len() == 2));
    }

    #[test]
    fn two_slots_let_two_runs_measure() {
        let slots = Slots::new(2);
        let all = [
            view("a/x", None, 1),
            view("a/y", None, 2),
            view("a/z", None, 3),
        ];
        assert_eq!(slots.acquire("a/x", &all), Slot::Free);
        assert_eq!(slots.acquire("a/y", &all), Slot::Free);
        assert!(matches!(slots.acquire("a/z", &all), Slot::HeldBy(h) if h.len() == 2));
    }
}
