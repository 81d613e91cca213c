//! Target container terminations and OOM kills during a measurement, counted from the pods'
//! container statuses against the restart counts recorded when the load Job was created.
//!
//! Pure: no client. The kubelet keeps, per container, only a restart count and the *last*
//! termination (`lastState.terminated`); a container that was killed several times in a
//! window shows one termination. The count of terminations comes from the restart counts:
//!
//! - a container's terminations so far are its `restartCount`, plus one while its newest
//!   instance is dead and not yet restarted: the kubelet bumps `restartCount` only when it
//!   starts the next instance, after its back-off (10 s, 20 s, 40 s, 80 s, … on the local
//!   cluster; the first restart is immediate). Meanwhile the dead instance shows first as
//!   `state.terminated` (its reason there, `lastState` still the one before), then as
//!   `state.waiting` with reason `CrashLoopBackOff` (it moved to `lastState`), as observed on
//!   the local cluster with a container killed five times at its memory limit;
//! - its terminations during the measurement are that number minus its `restartCount` when
//!   the Job was created (all target containers were running then); a pod created since counts
//!   from zero;
//! - they are OOM kills when its last termination is `OOMKilled` and ended in the window: the
//!   reasons of the earlier ones are no longer kept, and a container that keeps reaching its
//!   memory limit ends the same way each time. A container whose last termination had another
//!   reason counts no OOM kill (its terminations still count as restarts).
//!
//! Without per-pod baseline (a Job created by an older operator) each container whose last
//! termination is an OOM kill in the window counts once, a lower bound.

use std::collections::BTreeMap;

/// Reason of a termination at the memory limit.
pub const OOM_KILLED: &str = "OOMKilled";
/// Waiting reason of a dead container in its restart back-off.
pub const BACK_OFF: &str = "CrashLoopBackOff";

/// Restart counts of the target containers when a load Job was created.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestartBaseline {
    /// Sum over all target containers.
    pub total: i32,
    /// Per target pod (its target container's `restartCount`).
    pub by_pod: BTreeMap<String, i32>,
}

impl RestartBaseline {
    /// The baseline as the target stands now: `total` restarts, and each pod's from its
    /// container facts.
    pub fn of(total: i32, containers: &[ContainerFacts]) -> Self {
        Self {
            total,
            by_pod: containers
                .iter()
                .map(|c| (c.pod.clone(), c.restart_count))
                .collect(),
        }
    }
}

/// What one target container's status says about its terminations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerFacts {
    /// Name of its pod.
    pub pod: String,
    /// `restartCount`.
    pub restart_count: i32,
    /// Its newest instance is dead and not restarted yet (see the module docs).
    pub newest_dead: bool,
    /// Reason of its last termination (`state.terminated`, else `lastState.terminated`).
    pub last_reason: Option<String>,
    /// When its last termination ended (ms since the epoch).
    pub last_finished_ms: Option<i64>,
}

impl ContainerFacts {
    /// Terminations of this container since it was created.
    pub fn terminations(&self) -> i32 {
        self.restart_count
            .saturating_add(i32::from(self.newest_dead))
    }

    /// Whether its last termination was an OOM kill that ended at or after `since_ms`.
    fn oom_killed_since(&self, since_ms: i64) -> bool {
        self.last_reason.as_deref() == Some(OOM_KILLED)
            && self.last_finished_ms.is_some_and(|t| t >= since_ms)
    }
}

/// OOM kills of the target containers since `since_ms` (the start of the load Job's warm-up),
/// by the rule of the module docs. `by_pod` is the per-pod baseline, `None` when unknown.
pub fn oom_kills(
    containers: &[ContainerFacts],
    by_pod: Option<&BTreeMap<String, i32>>,
    since_ms: i64,
) -> i32 {
    containers
        .iter()
        .filter(|c| c.oom_killed_since(since_ms))
        .map(|c| match by_pod {
            Some(base) => {
                let before = base.get(&c.pod).copied().unwrap_or(0);
                c.terminations().saturating_sub(before).max(1)
            }
            None => 1,
        })
        .fold(0, i32::saturating_add)
}

/// The annotation value of a per-pod baseline: `pod=count` pairs joined by `,`.
pub fn format_by_pod(by_pod: &BTreeMap<String, i32>) -> String {
    let pairs: Vec<String> = by_pod.iter().map(|(p, n)| format!("{p}={n}")).collect();
    pairs.join(",")
}

/// Parses [`format_by_pod`]'s output; `None` when any pair is malformed.
pub fn parse_by_pod(text: &str) -> Option<BTreeMap<String, i32>> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (pod, n) = pair.split_once('=')?;
            Some((pod.to_string(), n.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(pod: &str, restarts: i32, dead: bool, reason: &str, at: i64) -> ContainerFacts {
        ContainerFacts {
            pod: pod.into(),
            restart_count: restarts,
            newest_dead: dead,
            last_reason: Some(reason.into()),
            last_finished_ms: Some(at),
        }
    }

    #[test]
    fn several_kills_in_one_window_all_count() {
        // Running since its 3rd restart, killed at 1, 2 and 3 during the window.
        let base = BTreeMap::from([("web-a".to_string(), 0)]);
        let c = [container("web-a", 3, false, OOM_KILLED, 5_000)];
        assert_eq!(oom_kills(&c, Some(&base), 1_000), 3);
        // Killed a 4th time, waiting in its back-off: restartCount is still 3.
        let c = [container("web-a", 3, true, OOM_KILLED, 9_000)];
        assert_eq!(oom_kills(&c, Some(&base), 1_000), 4);
    }

    #[test]
    fn kills_before_the_job_and_other_terminations_do_not_count() {
        let base = BTreeMap::from([("web-a".to_string(), 2), ("web-b".to_string(), 0)]);
        let c = [
            // Two restarts before the Job, two OOM kills during it.
            container("web-a", 4, false, OOM_KILLED, 5_000),
            // Last ended with an error: no OOM kill is claimed.
            container("web-b", 1, false, "Error", 5_000),
        ];
        assert_eq!(oom_kills(&c, Some(&base), 1_000), 2);
        // An OOM kill that ended before the window.
        let c = [container("web-a", 2, false, OOM_KILLED, 500)];
        assert_eq!(oom_kills(&c, Some(&base), 1_000), 0);
    }

    #[test]
    fn a_pod_created_during_the_measurement_counts_from_zero() {
        let base = BTreeMap::from([("web-a".to_string(), 0)]);
        let c = [container("web-new", 1, true, OOM_KILLED, 5_000)];
        assert_eq!(oom_kills(&c, Some(&base), 1_000), 2);
    }

    #[test]
    fn without_a_per_pod_baseline_each_killed_container_counts_once() {
        let c = [
            container("web-a", 3, false, OOM_KILLED, 5_000),
            container("web-b", 1, false, OOM_KILLED, 6_000),
        ];
        assert_eq!(oom_kills(&c, None, 1_000), 2);
    }

    #[test]
    fn counts_at_the_ends_of_i32_saturate_instead_of_wrapping() {
        // A restart count at i32::MAX and a baseline edited below zero (annotations are text).
        let base = BTreeMap::from([("web-a".to_string(), -5)]);
        let c = [
            container("web-a", i32::MAX, true, OOM_KILLED, 5_000),
            container("web-b", i32::MAX, false, OOM_KILLED, 5_000),
        ];
        assert_eq!(c[0].terminations(), i32::MAX);
        assert_eq!(oom_kills(&c, Some(&base), 1_000), i32::MAX);
    }

    #[test]
    fn the_per_pod_baseline_round_trips_through_its_annotation() {
        let by_pod = BTreeMap::from([("web-a".to_string(), 0), ("web-b".to_string(), 3)]);
        let text = format_by_pod(&by_pod);
        assert_eq!(text, "web-a=0,web-b=3");
        assert_eq!(parse_by_pod(&text), Some(by_pod));
        assert_eq!(parse_by_pod(""), Some(BTreeMap::new()));
        assert_eq!(parse_by_pod("web-a"), None);
    }
}
