//! The order of the cluster-wide measuring queue, shared by the operator (which grants the
//! slots in this order) and the CLI (which shows each waiting run's place in it).
//!
//! The queue is fair between namespaces: namespaces take turns, the one served least recently
//! first (a namespace never served before goes before every namespace that was), and within
//! one namespace its runs go oldest first. So a namespace with many runs waiting (a schedule
//! with `concurrencyPolicy: Queue`, a batch applied at once) delays another namespace's run
//! by at most one of its own runs per slot, however long its queue is.
//!
//! Pure: the caller says which runs wait and when each namespace was last served (the newest
//! `status.startTime` of its runs, or a grant not yet visible in a status).

use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

use crate::{BenchmarkRun, Phase};

/// A run waiting for a measuring slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting<'a> {
    /// Its namespace.
    pub namespace: &'a str,
    /// Its name.
    pub name: &'a str,
    /// `metadata.creationTimestamp`: the order within its namespace.
    pub created: Option<Timestamp>,
}

/// The waiting runs in the order they get a slot, as indices into `waiting`: namespaces take
/// turns in rounds, ordered by the time each was last served (`last_served`; never served
/// first), then by their oldest waiting run, then by name; in each round every namespace that
/// still has a run waiting gives its oldest (by creation time, then name).
///
/// This is the round-robin of "the namespace served least recently goes next": once a
/// namespace is served it is the most recently served, so it goes behind every other namespace
/// that waits.
pub fn order(waiting: &[Waiting], last_served: &BTreeMap<&str, Timestamp>) -> Vec<usize> {
    let mut by_ns: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, w) in waiting.iter().enumerate() {
        by_ns.entry(w.namespace).or_default().push(i);
    }
    let age = |i: &usize| (waiting[*i].created, waiting[*i].name);
    for runs in by_ns.values_mut() {
        runs.sort_by_key(age);
    }
    let mut turns: Vec<(&str, Vec<usize>)> = by_ns.into_iter().collect();
    turns.sort_by_key(|(ns, runs)| (last_served.get(ns).copied(), age(&runs[0]), *ns));
    let mut out = Vec::with_capacity(waiting.len());
    let rounds = turns.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
    for round in 0..rounds {
        out.extend(turns.iter().filter_map(|(_, r)| r.get(round).copied()));
    }
    out
}

/// Whether a run waits for a measuring slot: not finished, not measuring, not being deleted.
pub fn is_waiting(run: &BenchmarkRun) -> bool {
    run.metadata.deletion_timestamp.is_none()
        && matches!(
            run.status.as_ref().and_then(|s| s.phase),
            None | Some(Phase::Pending | Phase::Queued)
        )
}

/// When each namespace of `runs` was last served: the newest `status.startTime` of its runs.
pub fn last_served(runs: &[BenchmarkRun]) -> BTreeMap<&str, Timestamp> {
    let mut served: BTreeMap<&str, Timestamp> = BTreeMap::new();
    for r in runs {
        let (Some(ns), Some(t)) = (
            r.metadata.namespace.as_deref(),
            r.status
                .as_ref()
                .and_then(|s| s.start_time.as_ref())
                .map(|t| t.0),
        ) else {
            continue;
        };
        let e = served.entry(ns).or_insert(t);
        *e = (*e).max(t);
    }
    served
}

/// Each waiting run's place in the queue (1 = the next to get a slot), by
/// (namespace, name), judged from `runs` alone: what a reader of the runs (the CLI) can know.
/// The operator also counts its grants not yet visible in a status, so a place read this way
/// may be off by the runs granted in the last second.
pub fn places(runs: &[BenchmarkRun]) -> BTreeMap<(String, String), usize> {
    let waiting: Vec<Waiting> = runs
        .iter()
        .filter(|r| is_waiting(r))
        .map(|r| Waiting {
            namespace: r.metadata.namespace.as_deref().unwrap_or_default(),
            name: r.metadata.name.as_deref().unwrap_or_default(),
            created: r.metadata.creation_timestamp.as_ref().map(|t| t.0),
        })
        .collect();
    let served = last_served(runs);
    order(&waiting, &served)
        .into_iter()
        .enumerate()
        .map(|(place, i)| {
            let w = &waiting[i];
            ((w.namespace.to_string(), w.name.to_string()), place + 1)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Option<Timestamp> {
        Some(Timestamp::from_second(s).unwrap())
    }

    fn w<'a>(namespace: &'a str, name: &'a str, created: i64) -> Waiting<'a> {
        Waiting {
            namespace,
            name,
            created: t(created),
        }
    }

    fn names(waiting: &[Waiting], served: &BTreeMap<&str, Timestamp>) -> Vec<String> {
        order(waiting, served)
            .into_iter()
            .map(|i| format!("{}/{}", waiting[i].namespace, waiting[i].name))
            .collect()
    }

    #[test]
    fn a_namespace_applying_later_goes_after_at_most_one_run_of_a_piled_up_namespace() {
        // Namespace a's schedule queued five runs; b applied one later.
        let mut waiting: Vec<Waiting> = (0..5)
            .map(|i| w("a", ["r0", "r1", "r2", "r3", "r4"][i], i as i64))
            .collect();
        waiting.push(w("b", "late", 100));
        // a has a run measuring (it was served at 50): b is never served, so it goes first.
        let served = BTreeMap::from([("a", t(50).unwrap())]);
        assert_eq!(names(&waiting, &served)[0], "b/late");
        // Nobody served yet: a's oldest first (older), then b's, then the rest of a's.
        let order = names(&waiting, &BTreeMap::new());
        assert_eq!(order[..3], ["a/r0", "b/late", "a/r1"]);
        // b served more recently than a: a's oldest, then b.
        let served = BTreeMap::from([("a", t(50).unwrap()), ("b", t(60).unwrap())]);
        assert_eq!(names(&waiting, &served)[..3], ["a/r0", "b/late", "a/r1"]);
    }

    #[test]
    fn namespaces_take_turns_oldest_first_within_each() {
        let waiting = [
            w("a", "a2", 2),
            w("c", "c1", 9),
            w("a", "a1", 1),
            w("b", "b1", 5),
            w("a", "a3", 3),
            w("b", "b2", 6),
        ];
        let served = BTreeMap::from([("a", t(100).unwrap()), ("b", t(50).unwrap())]);
        // c never served, then b (served at 50), then a (served at 100); rounds after.
        assert_eq!(
            names(&waiting, &served),
            ["c/c1", "b/b1", "a/a1", "b/b2", "a/a2", "a/a3"]
        );
    }

    #[test]
    fn ties_are_broken_by_the_oldest_run_then_by_its_name() {
        let waiting = [w("b", "x", 1), w("a", "y", 1), w("c", "z", 0)];
        assert_eq!(names(&waiting, &BTreeMap::new()), ["c/z", "b/x", "a/y"]);
        assert!(order(&[], &BTreeMap::new()).is_empty());
    }

    fn run(
        ns: &str,
        name: &str,
        created: i64,
        phase: Option<Phase>,
        started: Option<i64>,
    ) -> BenchmarkRun {
        let spec: crate::BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
            "targets": [{"name": "t", "image": "t:1", "port": 80}],
            "scenarios": [{"name": "s", "path": "/"}],
            "load": {"connections": 1, "duration": "2s"}
        }))
        .unwrap();
        let mut r = BenchmarkRun::new(name, spec);
        r.metadata.namespace = Some(ns.into());
        r.metadata.creation_timestamp =
            t(created).map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time);
        r.status = Some(crate::BenchmarkRunStatus {
            phase,
            start_time: started
                .and_then(t)
                .map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time),
            ..Default::default()
        });
        r
    }

    #[test]
    fn places_count_from_one_skip_holders_and_finished_runs_and_follow_the_turns() {
        let runs = [
            run("a", "measuring", 0, Some(Phase::Running), Some(10)),
            run("a", "q1", 1, Some(Phase::Queued), None),
            run("a", "q2", 2, Some(Phase::Queued), None),
            run("b", "done", 0, Some(Phase::Succeeded), Some(5)),
            run("b", "q", 20, None, None),
            run("c", "new", 30, Some(Phase::Pending), None),
        ];
        let p = places(&runs);
        let at = |ns: &str, n: &str| p.get(&(ns.to_string(), n.to_string())).copied();
        assert_eq!(at("a", "measuring"), None);
        assert_eq!(at("b", "done"), None);
        // c never served, b served at 5, a at 10.
        assert_eq!(at("c", "new"), Some(1));
        assert_eq!(at("b", "q"), Some(2));
        assert_eq!(at("a", "q1"), Some(3));
        assert_eq!(at("a", "q2"), Some(4));
    }
}
