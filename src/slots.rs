//! The measuring slots: at most `max` runs measure at once, so that runs do not steal each
//! other's CPU. Others wait in phase `Queued`, namespaces taking turns (the one served least
//! recently first) and oldest first within a namespace ([`benchrun_api::queue::order`]), so no
//! namespace can starve the others. An administrator's limit on the runs one namespace may
//! have queued (`--max-queued-per-namespace`) fails a run that would go beyond it
//! ([`SlotDecision::QueueFull`]).
//!
//! Who may measure is decided by [`decide`] (pure), from facts alone ([`SlotFacts`]): the
//! views of every run in the controller's cache and the grants this process made that are not
//! yet visible in a status. Observation reads those facts, the planner decides from them and,
//! when the verdict is [`SlotDecision::Grant`], asks for the grant with
//! [`crate::plan::Action::TakeSlot`]; the controller applies it with [`Slots::take`], which
//! decides again under the queue's lock against the runs as they are then and grants only if
//! the verdict is still `Grant`. So two runs planned at once never both get the last slot.
//!
//! Holders are derived from observed state every time (runs in phase `Running`) plus this
//! process's grants, so a restarted operator knows the holders without memory of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use benchrun_api::queue::{self, Waiting};
use benchrun_api::{BenchmarkRun, Phase};
use jiff::Timestamp;
use kube::ResourceExt;

/// What the queue needs to know about a run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunView {
    /// `namespace/name`.
    pub key: String,
    /// `status.phase`.
    pub phase: Option<Phase>,
    /// `metadata.creationTimestamp` (queue order within its namespace).
    pub created: Option<Timestamp>,
    /// `status.startTime`: when it got a slot (when its namespace was served).
    pub started: Option<Timestamp>,
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
            started: run
                .status
                .as_ref()
                .and_then(|s| s.start_time.as_ref())
                .map(|t| t.0),
            deleting: run.metadata.deletion_timestamp.is_some(),
        }
    }

    /// The namespace, from the key.
    fn namespace(&self) -> &str {
        self.key.split_once('/').map_or("", |(ns, _)| ns)
    }

    fn waiting(&self) -> bool {
        !self.deleting && matches!(self.phase, None | Some(Phase::Pending | Phase::Queued))
    }

    /// Still measuring or about to: a grant of this run lives on.
    fn live(&self) -> bool {
        !self.deleting && !matches!(self.phase, Some(Phase::Succeeded | Phase::Failed))
    }
}

/// `namespace/name` of a run.
pub fn key(run: &BenchmarkRun) -> String {
    key_of(&run.namespace().unwrap_or_default(), &run.name_any())
}

/// `namespace/name` of the run `name` in `namespace`.
pub fn key_of(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Holder named while the controller's cache of runs is not ready: before it holds every
/// run, holders could be missed, so nobody is granted a slot.
pub const CACHE_NOT_READY: &str = "(operator cache not ready)";

/// The facts a slot decision is made from, as observation read them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlotFacts {
    /// Measuring slots (`--max-measuring-runs`, at least one).
    pub max: usize,
    /// This run, as `namespace/name`.
    pub me: String,
    /// Every run in the controller's cache; `None` when the cache is not ready (or was not
    /// read: a finished run needs no slot).
    pub runs: Option<Vec<RunView>>,
    /// This process's grants not yet visible in a status, as `namespace/name` (a snapshot).
    pub granted: BTreeSet<String>,
    /// Most runs one namespace may have queued (`--max-queued-per-namespace`; 0: no limit).
    pub max_queued_per_namespace: usize,
}

impl SlotFacts {
    /// Whether the controller's waker will wake a run waiting on these facts when its turn
    /// comes ([`to_wake`]: when it is next in line for a free slot): so whenever the cache of
    /// runs is ready. Otherwise it must look again by itself.
    pub fn woken_in_turn(&self) -> bool {
        self.runs.is_some()
    }

    /// The verdict on these facts: [`SlotDecision::QueueFull`] for a run that would go beyond
    /// the namespace's limit ([`queue_full`]), else [`decide`]; waiting while the cache is not
    /// ready.
    pub fn decision(&self) -> SlotDecision {
        let Some(runs) = &self.runs else {
            return SlotDecision::Wait(vec![CACHE_NOT_READY.into()]);
        };
        let decision = decide(self.max, &self.me, runs, &self.granted);
        if matches!(decision, SlotDecision::Wait(_)) {
            if let Some(queued) = queue_full(self.max_queued_per_namespace, &self.me, runs) {
                return SlotDecision::QueueFull {
                    queued,
                    limit: self.max_queued_per_namespace,
                };
            }
        }
        decision
    }
}

/// Whether a run may measure now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotDecision {
    /// The run holds a slot (granted, or in phase `Running`).
    Holds,
    /// A slot is free for the run and no older run waits for it: it is to be granted
    /// ([`Slots::take`]) before the run starts.
    Grant,
    /// Every slot is taken, or runs before it in the queue come first; the holders (or those
    /// runs), as `namespace/name`.
    Wait(Vec<String>),
    /// The run would wait, but its namespace has `queued` runs queued before it already, at
    /// least the administrator's `limit` (`--max-queued-per-namespace`): it is not queued.
    QueueFull {
        /// Runs of the namespace waiting before this one.
        queued: usize,
        /// The limit.
        limit: usize,
    },
}

/// Whether `me` would go beyond its namespace's limit of queued runs: `Some(n)` when it has not
/// been queued yet (phase unset or `Pending`: a run once queued keeps its place whatever the
/// limit) and `n`, the runs of its namespace waiting before it (oldest first, as the namespace's
/// own order goes), is at least `limit`. `limit` 0: no limit.
pub fn queue_full(limit: usize, me: &str, all: &[RunView]) -> Option<usize> {
    let mine = all.iter().find(|r| r.key == me);
    if limit == 0 || mine.is_some_and(|r| !matches!(r.phase, None | Some(Phase::Pending))) {
        return None;
    }
    let ns = me.split_once('/').map_or("", |(ns, _)| ns);
    let before = all
        .iter()
        .filter(|r| r.key != me && r.waiting() && r.namespace() == ns)
        // Not in the cache yet (just created): every waiting run is older.
        .filter(|r| mine.is_none_or(|m| (r.created, &r.key) < (m.created, &m.key)))
        .count();
    (before >= limit).then_some(before)
}

/// Who may measure. Holders are the grants in `granted` whose run is still live (in `all`,
/// not finished, not being deleted) and the runs in phase `Running` not being deleted. A run
/// that holds, holds; otherwise the first waiting runs in queue order ([`queue_order`]: the
/// namespaces in turns, oldest first within each) get the free slots; a run not in `all` yet
/// (just created) lets the others go first.
pub fn decide(max: usize, me: &str, all: &[RunView], granted: &BTreeSet<String>) -> SlotDecision {
    let holders = holders(all, granted);
    if holders.contains(me) {
        return SlotDecision::Holds;
    }
    if holders.len() >= max {
        return SlotDecision::Wait(holders.into_iter().collect());
    }
    let waiting = queue_order(all, &holders);
    let free = max - holders.len();
    match waiting.iter().position(|r| r.key == me) {
        Some(pos) if pos < free => SlotDecision::Grant,
        // Not in the cache yet (just created): let the older ones go first.
        _ if !holders.is_empty() => SlotDecision::Wait(holders.into_iter().collect()),
        _ => SlotDecision::Wait(
            waiting
                .iter()
                .take(free)
                .map(|r| format!("{} (before it in the queue)", r.key))
                .collect(),
        ),
    }
}

/// The waiting runs that hold no slot, in the order they get one: namespaces take turns, the
/// one served least recently first (by the newest `status.startTime` of its runs; a namespace
/// holding a grant not yet visible in a status counts as served now), oldest first within
/// each ([`benchrun_api::queue::order`]).
pub fn queue_order<'a>(all: &'a [RunView], holders: &BTreeSet<String>) -> Vec<&'a RunView> {
    let waiting: Vec<&RunView> = all
        .iter()
        .filter(|r| r.waiting() && !holders.contains(&r.key))
        .collect();
    let mut served: BTreeMap<&str, Timestamp> = BTreeMap::new();
    for r in all {
        // A holder without a start time yet holds a grant: served now, the latest of all.
        let at = match (r.started, holders.contains(&r.key)) {
            (_, true) if r.phase != Some(Phase::Running) => Some(Timestamp::MAX),
            (started, _) => started,
        };
        if let Some(at) = at {
            let e = served.entry(r.namespace()).or_insert(at);
            *e = (*e).max(at);
        }
    }
    let entries: Vec<Waiting> = waiting
        .iter()
        .map(|r| Waiting {
            namespace: r.namespace(),
            name: r.key.split_once('/').map_or(r.key.as_str(), |(_, n)| n),
            created: r.created,
        })
        .collect();
    queue::order(&entries, &served)
        .into_iter()
        .map(|i| waiting[i])
        .collect()
}

/// The runs that hold a slot: the grants in `granted` whose run is still live and the runs in
/// phase `Running` not being deleted, as `namespace/name`.
pub fn holders(all: &[RunView], granted: &BTreeSet<String>) -> BTreeSet<String> {
    let mut holders: BTreeSet<String> = live_grants(all, granted);
    holders.extend(
        all.iter()
            .filter(|r| r.phase == Some(Phase::Running) && !r.deleting)
            .map(|r| r.key.clone()),
    );
    holders
}

/// The runs next in line for a free slot: the first `max − holders` waiting runs in queue order
/// ([`queue_order`]), those [`decide`] grants a slot now; none while every slot is held.
pub fn next_in_line(max: usize, all: &[RunView], holders: &BTreeSet<String>) -> BTreeSet<String> {
    let free = max.saturating_sub(holders.len());
    queue_order(all, holders)
        .into_iter()
        .take(free)
        .map(|r| r.key.clone())
        .collect()
}

/// The waiting runs to wake: those next in line now ([`next_in_line`]) that were not at the
/// last look (`before`). Only their decision changed (from waiting to a grant): every other
/// waiting run would decide to wait again, and its status would not change (the queued
/// message does not name the holder). So a hand-over wakes as many runs as it freed slots,
/// however long the queue. A run next in line that went away before taking its slot (deleted,
/// failed) puts the next one in line, who is woken at the next look. A waiting run is not
/// polled (see [`crate::plan`]'s queue): this is how its turn reaches it.
pub fn to_wake(before: &BTreeSet<String>, now: &BTreeSet<String>) -> Vec<String> {
    now.difference(before).cloned().collect()
}

/// The grants of `granted` that still hold: their run is in `all`, not finished and not
/// being deleted.
fn live_grants(all: &[RunView], granted: &BTreeSet<String>) -> BTreeSet<String> {
    granted
        .iter()
        .filter(|k| all.iter().any(|r| &r.key == *k && r.live()))
        .cloned()
        .collect()
}

/// This process's grants. One per operator process.
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

    /// The number of measuring slots.
    pub fn max(&self) -> usize {
        self.max
    }

    /// A snapshot of the grants not yet visible in a status (a fact for observation).
    pub fn granted(&self) -> BTreeSet<String> {
        self.lock().clone()
    }

    /// Grants `me` a slot if [`decide`], run again under the lock against `all` (every run as
    /// the cache has it now) and the grants as they are now, still says
    /// [`SlotDecision::Grant`]; returns whether it did. Grants whose run finished, went away
    /// or is being deleted are dropped here.
    pub fn take(&self, me: &str, all: &[RunView]) -> bool {
        let mut granted = self.lock();
        *granted = live_grants(all, &granted);
        let grant = decide(self.max, me, all, &granted) == SlotDecision::Grant;
        if grant {
            granted.insert(me.to_string());
        }
        grant
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.granted.lock().unwrap_or_else(|e| e.into_inner())
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
            started: (phase == Some(Phase::Running))
                .then(|| Timestamp::from_second(created_s).unwrap()),
            deleting: false,
        }
    }

    /// What a reconcile of `me` decides from the queue's facts now, and, on `Grant`, whether
    /// applying the take granted it: the planner's verdict followed by the controller's take.
    fn reconcile(slots: &Slots, me: &str, all: &[RunView]) -> SlotDecision {
        let decision = decide(slots.max(), me, all, &slots.granted());
        if decision == SlotDecision::Grant {
            assert!(slots.take(me, all), "a fresh Grant is taken");
        }
        decision
    }

    fn waits(d: &SlotDecision) -> bool {
        matches!(d, SlotDecision::Wait(_))
    }

    /// What the waker does at each look: the runs next in line now that were not before.
    fn look(
        max: usize,
        all: &[RunView],
        granted: &BTreeSet<String>,
        before: &mut BTreeSet<String>,
    ) -> Vec<String> {
        let now = next_in_line(max, all, &holders(all, granted));
        let woken = to_wake(before, &now);
        *before = now;
        woken
    }

    #[test]
    fn a_hand_over_wakes_only_the_run_next_in_line() {
        let running = |k: &str| view(k, Some(Phase::Running), 1);
        let mut all = vec![
            running("a/x"),
            view("a/q1", Some(Phase::Queued), 2),
            view("a/q2", None, 3),
            view("a/done", Some(Phase::Succeeded), 0),
        ];
        all.extend((10..1010).map(|i| view(&format!("b/q{i}"), Some(Phase::Queued), i)));
        let mut before = BTreeSet::new();
        // Every slot held: nobody is next in line, nobody is woken, however long the queue.
        assert!(look(1, &all, &BTreeSet::new(), &mut before).is_empty());
        assert!(look(1, &all, &BTreeSet::new(), &mut before).is_empty());
        // The holder finished: the one run next in line (b's turn: a was served) is woken.
        all[0].phase = Some(Phase::Succeeded);
        assert_eq!(look(1, &all, &BTreeSet::new(), &mut before), vec!["b/q10"]);
        // Not again at the next look while it has not taken the slot.
        assert!(look(1, &all, &BTreeSet::new(), &mut before).is_empty());
        // It took the slot: nobody is next in line.
        let granted = BTreeSet::from(["b/q10".to_string()]);
        assert!(look(1, &all, &granted, &mut before).is_empty());
        // Two slots freed at once wake two runs.
        let mut two = BTreeSet::new();
        let none = BTreeSet::new();
        assert_eq!(look(3, &all[..4], &none, &mut two).len(), 2);
    }

    #[test]
    fn a_run_next_in_line_that_went_away_wakes_the_next_one() {
        let mut all = vec![
            view("a/refused", None, 1),
            view("a/after", Some(Phase::Queued), 2),
        ];
        let mut before = BTreeSet::new();
        // Nobody holds: `refused` is next in line.
        assert_eq!(
            look(1, &all, &BTreeSet::new(), &mut before),
            vec!["a/refused"]
        );
        // Between two looks it was granted a slot and failed (a target the apiserver refuses
        // fails within a second): `after` is next in line and woken.
        let slots = Slots::new(1);
        assert!(slots.take("a/refused", &all));
        all[0].phase = Some(Phase::Failed);
        assert_eq!(
            look(1, &all, &slots.granted(), &mut before),
            vec!["a/after"]
        );
        // Deleted before it took its slot: the same.
        let mut all = vec![
            view("a/gone", Some(Phase::Queued), 1),
            view("a/next", Some(Phase::Queued), 2),
        ];
        let mut before = BTreeSet::new();
        assert_eq!(look(1, &all, &BTreeSet::new(), &mut before), vec!["a/gone"]);
        all[0].deleting = true;
        assert_eq!(look(1, &all, &BTreeSet::new(), &mut before), vec!["a/next"]);
    }

    #[test]
    fn a_running_run_keeps_its_slot_after_an_operator_restart() {
        let slots = Slots::new(1);
        let all = [view("a/x", Some(Phase::Running), 1), view("a/y", None, 0)];
        assert_eq!(reconcile(&slots, "a/x", &all), SlotDecision::Holds);
        assert_eq!(
            reconcile(&slots, "a/y", &all),
            SlotDecision::Wait(vec!["a/x".into()])
        );
    }

    #[test]
    fn the_oldest_waiting_run_gets_a_free_slot_first() {
        let slots = Slots::new(1);
        let all = [
            view("a/new", None, 10),
            view("a/old", Some(Phase::Queued), 5),
        ];
        assert!(waits(&reconcile(&slots, "a/new", &all)));
        assert_eq!(reconcile(&slots, "a/old", &all), SlotDecision::Grant);
        // The grant holds before the status says Running.
        assert_eq!(reconcile(&slots, "a/old", &all), SlotDecision::Holds);
        assert_eq!(
            reconcile(&slots, "a/new", &all),
            SlotDecision::Wait(vec!["a/old".into()])
        );
    }

    #[test]
    fn a_finished_or_deleted_holder_releases_its_slot() {
        let slots = Slots::new(1);
        let all = [view("a/x", None, 1), view("a/y", None, 2)];
        assert_eq!(reconcile(&slots, "a/x", &all), SlotDecision::Grant);
        let all = [
            view("a/x", Some(Phase::Succeeded), 1),
            view("a/y", Some(Phase::Queued), 2),
        ];
        assert_eq!(reconcile(&slots, "a/y", &all), SlotDecision::Grant);
        // The finished run's grant was dropped when a/y's was taken.
        assert_eq!(slots.granted(), BTreeSet::from(["a/y".to_string()]));
        let slots = Slots::new(1);
        let mut gone = view("a/x", Some(Phase::Running), 1);
        gone.deleting = true;
        let all = [gone, view("a/y", None, 2)];
        assert_eq!(reconcile(&slots, "a/y", &all), SlotDecision::Grant);
    }

    #[test]
    fn a_grant_of_a_finished_run_is_no_holder_even_before_it_is_dropped() {
        let granted = BTreeSet::from(["a/x".to_string()]);
        let all = [
            view("a/x", Some(Phase::Failed), 1),
            view("a/y", Some(Phase::Queued), 2),
        ];
        assert_eq!(decide(1, "a/y", &all, &granted), SlotDecision::Grant);
        // Nor a grant of a run that left the cache.
        assert_eq!(decide(1, "a/y", &all[1..], &granted), SlotDecision::Grant);
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
        assert_eq!(reconcile(&old_leader, "a/x", &all), SlotDecision::Grant);
        // The new leader has no grants of its own: the Running run keeps its slot, the
        // ungranted one gets the free slot again in queue order, the younger one waits.
        let new_leader = Slots::new(2);
        assert!(waits(&reconcile(&new_leader, "a/y", &all)));
        assert_eq!(reconcile(&new_leader, "a/r", &all), SlotDecision::Holds);
        assert_eq!(reconcile(&new_leader, "a/x", &all), SlotDecision::Grant);
        assert!(
            matches!(reconcile(&new_leader, "a/y", &all), SlotDecision::Wait(h) if h.len() == 2)
        );
    }

    #[test]
    fn two_slots_let_two_runs_measure() {
        let slots = Slots::new(2);
        let all = [
            view("a/x", None, 1),
            view("a/y", None, 2),
            view("a/z", None, 3),
        ];
        assert_eq!(reconcile(&slots, "a/x", &all), SlotDecision::Grant);
        assert_eq!(reconcile(&slots, "a/y", &all), SlotDecision::Grant);
        assert!(matches!(reconcile(&slots, "a/z", &all), SlotDecision::Wait(h) if h.len() == 2));
    }

    #[test]
    fn a_run_not_in_the_cache_yet_waits_for_the_older_ones() {
        let all = [view("a/old", Some(Phase::Queued), 1)];
        let none = BTreeSet::new();
        assert_eq!(
            decide(1, "a/new", &all, &none),
            SlotDecision::Wait(vec!["a/old (before it in the queue)".into()])
        );
        let held = BTreeSet::from(["a/old".to_string()]);
        assert_eq!(
            decide(1, "a/new", &all, &held),
            SlotDecision::Wait(vec!["a/old".into()])
        );
    }

    #[test]
    fn without_the_cache_nobody_is_granted_a_slot() {
        let facts = SlotFacts {
            max: 1,
            me: "a/x".into(),
            runs: None,
            granted: BTreeSet::new(),
            max_queued_per_namespace: 0,
        };
        assert_eq!(
            facts.decision(),
            SlotDecision::Wait(vec![CACHE_NOT_READY.into()])
        );
    }

    /// Two runs created in the same second, `a/y` seen by the cache first: a reconcile of `a/y`
    /// planned from the cache without `a/x` (both plans say Grant for the one free slot).
    fn stale_plans() -> (Vec<RunView>, Vec<RunView>) {
        let before_x = vec![view("a/y", Some(Phase::Queued), 7)];
        let now = vec![
            view("a/x", Some(Phase::Queued), 7),
            view("a/y", Some(Phase::Queued), 7),
        ];
        (before_x, now)
    }

    #[test]
    fn a_stale_grant_is_refused_when_the_last_slot_was_taken_meanwhile() {
        let slots = Slots::new(1);
        let (before_x, now) = stale_plans();
        let none = slots.granted();
        assert_eq!(decide(1, "a/y", &before_x, &none), SlotDecision::Grant);
        assert_eq!(decide(1, "a/x", &now, &none), SlotDecision::Grant);
        assert!(slots.take("a/x", &now));
        assert!(!slots.take("a/y", &now), "a/y planned on a stale cache");
        assert_eq!(slots.granted(), BTreeSet::from(["a/x".to_string()]));
        // Its next reconcile shows it waiting for the holder.
        assert_eq!(
            decide(1, "a/y", &now, &slots.granted()),
            SlotDecision::Wait(vec!["a/x".into()])
        );
        // In the other order, the take of the stale plan is refused for the older run.
        let slots = Slots::new(1);
        assert!(!slots.take("a/y", &now));
        assert!(slots.take("a/x", &now));
        assert_eq!(slots.granted(), BTreeSet::from(["a/x".to_string()]));
    }

    #[test]
    fn two_takes_at_once_never_both_get_the_last_slot() {
        let (_, now) = stale_plans();
        for _ in 0..200 {
            let slots = Slots::new(1);
            let barrier = std::sync::Barrier::new(2);
            let taken: Vec<bool> = std::thread::scope(|s| {
                let takers: Vec<_> = ["a/x", "a/y"]
                    .into_iter()
                    .map(|me| {
                        let (slots, barrier, now) = (&slots, &barrier, &now);
                        s.spawn(move || {
                            barrier.wait();
                            slots.take(me, now)
                        })
                    })
                    .collect();
                takers.into_iter().map(|t| t.join().unwrap()).collect()
            });
            assert_eq!(taken, vec![true, false]);
            assert_eq!(slots.granted(), BTreeSet::from(["a/x".to_string()]));
        }
    }

    #[test]
    fn concurrent_takes_grant_no_more_than_the_slots_oldest_first() {
        let all: Vec<RunView> = (0..8)
            .map(|i| view(&format!("a/r{i}"), Some(Phase::Queued), 1))
            .collect();
        let slots = Slots::new(3);
        let won = std::thread::scope(|s| {
            let takers: Vec<_> = all
                .iter()
                .map(|r| {
                    let (slots, all) = (&slots, &all);
                    s.spawn(move || slots.take(&r.key, all))
                })
                .collect();
            takers
                .into_iter()
                .map(|t| t.join().unwrap())
                .filter(|&won| won)
                .count()
        });
        assert_eq!(won, 3);
        let oldest: BTreeSet<String> = ["a/r0", "a/r1", "a/r2"].map(String::from).into();
        assert_eq!(slots.granted(), oldest);
    }

    #[test]
    fn a_run_of_another_namespace_goes_after_at_most_one_of_a_piled_up_namespace() {
        // Namespace a: one run measuring, five queued by its schedule; b applies one later.
        let slots = Slots::new(1);
        let mut all = vec![view("a/r0", Some(Phase::Running), 0)];
        all.extend((1..=5).map(|i| view(&format!("a/r{i}"), Some(Phase::Queued), i)));
        all.push(view("b/late", Some(Phase::Queued), 100));
        // While a/r0 measures, everyone waits.
        assert!(waits(&reconcile(&slots, "b/late", &all)));
        // a/r0 finishes: b has never been served, a was (at r0's start): b goes next.
        all[0].phase = Some(Phase::Succeeded);
        for i in 1..=5 {
            assert!(waits(&reconcile(&slots, &format!("a/r{i}"), &all)));
        }
        assert_eq!(reconcile(&slots, "b/late", &all), SlotDecision::Grant);
        // b finished: a's turn again, oldest first.
        let b = all.len() - 1;
        all[b].phase = Some(Phase::Succeeded);
        all[b].started = Some(Timestamp::from_second(200).unwrap());
        assert_eq!(reconcile(&slots, "a/r1", &all), SlotDecision::Grant);
    }

    #[test]
    fn a_grant_not_yet_in_a_status_counts_its_namespace_as_served_now() {
        // b/x was granted a slot (its status does not say Running yet); b/y is older than a/1,
        // but b was just served: a/1 gets the second slot.
        let all = [
            view("b/x", Some(Phase::Queued), 1),
            view("b/y", Some(Phase::Queued), 2),
            view("a/1", Some(Phase::Queued), 3),
        ];
        let granted = BTreeSet::from(["b/x".to_string()]);
        assert_eq!(decide(2, "a/1", &all, &granted), SlotDecision::Grant);
        assert!(waits(&decide(2, "b/y", &all, &granted)));
        // Without the grant, the oldest run goes first.
        assert_eq!(
            decide(2, "b/x", &all, &BTreeSet::new()),
            SlotDecision::Grant
        );
    }

    #[test]
    fn the_queue_takes_namespaces_in_turns_oldest_first_within_each() {
        let mut all = vec![
            view("a/old", Some(Phase::Succeeded), 0),
            view("a/1", Some(Phase::Queued), 1),
            view("a/2", Some(Phase::Queued), 2),
            view("b/1", Some(Phase::Queued), 3),
            view("b/2", Some(Phase::Queued), 4),
            view("c/1", None, 5),
        ];
        all[0].started = Some(Timestamp::from_second(10).unwrap());
        let order: Vec<&str> = queue_order(&all, &BTreeSet::new())
            .iter()
            .map(|r| r.key.as_str())
            .collect();
        // b and c were never served (b's oldest is older), a was.
        assert_eq!(order, ["b/1", "c/1", "a/1", "b/2", "a/2"]);
        // Two free slots: the first two in that order are granted, a's run waits.
        let none = BTreeSet::new();
        assert_eq!(decide(2, "b/1", &all, &none), SlotDecision::Grant);
        assert_eq!(decide(2, "c/1", &all, &none), SlotDecision::Grant);
        assert_eq!(
            decide(2, "a/1", &all, &none),
            SlotDecision::Wait(vec![
                "b/1 (before it in the queue)".into(),
                "c/1 (before it in the queue)".into()
            ])
        );
    }

    #[test]
    fn a_namespace_at_its_limit_of_queued_runs_queues_no_more() {
        let facts = |me: &str, all: Vec<RunView>| SlotFacts {
            max: 1,
            me: me.into(),
            runs: Some(all),
            granted: BTreeSet::new(),
            max_queued_per_namespace: 2,
        };
        let mut all = vec![
            view("a/x", Some(Phase::Running), 0),
            view("a/q1", Some(Phase::Queued), 1),
            view("a/q2", Some(Phase::Queued), 2),
            view("a/new", None, 3),
            view("b/new", None, 4),
        ];
        // Two of a's runs wait before it: a/new is not queued.
        assert_eq!(
            facts("a/new", all.clone()).decision(),
            SlotDecision::QueueFull {
                queued: 2,
                limit: 2
            }
        );
        // Another namespace is not concerned; nor a run queued already, nor one not in the
        // cache yet when fewer wait.
        assert!(waits(&facts("b/new", all.clone()).decision()));
        assert!(waits(&facts("a/q2", all.clone()).decision()));
        all[3].phase = Some(Phase::Queued);
        assert!(waits(&facts("a/new", all.clone()).decision()));
        // Not in the cache yet: every waiting run of the namespace counts.
        assert_eq!(queue_full(2, "a/newest", &all), Some(3));
        assert_eq!(queue_full(4, "a/newest", &all), None);
        // 0: no limit.
        assert_eq!(queue_full(0, "a/newest", &all), None);
        // A run the slot is free for is granted whatever the limit.
        let free = vec![view("a/q1", Some(Phase::Queued), 1), view("a/new", None, 3)];
        let mut f = facts("a/q1", free);
        f.max_queued_per_namespace = 1;
        assert_eq!(f.decision(), SlotDecision::Grant);
    }
}
