//! Leader election decisions (pure: no client, no clock). Given the `coordination.k8s.io/v1`
//! Lease a replica just read, decide whether it may take it, renew it or must wait, and what to
//! write.
//!
//! Expiry is judged on this replica's own monotonic clock, as client-go does: a lease held by
//! another replica expires `leaseDurationSeconds` after this replica last *saw it change*, not
//! at `renewTime + duration` on the writer's wall clock, so clock skew between nodes does not
//! shorten a lease. `renewTime` and `acquireTime` are still written, for people and tools.

use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

/// Timing of the election (from flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// How long a lease is valid after the holder last renewed it (`leaseDurationSeconds`).
    pub duration: Duration,
    /// How often the leader renews.
    pub renew: Duration,
    /// How often a standby reads the lease, and a leader retries a failed renewal.
    pub retry: Duration,
}

impl Timing {
    /// Checked timing: every period positive, `retry <= renew < duration`, whole seconds for
    /// the duration (the Lease field is in seconds).
    pub fn new(duration: Duration, renew: Duration, retry: Duration) -> Result<Self, String> {
        if retry.is_zero() || renew.is_zero() || duration.is_zero() {
            return Err("lease duration, renew and retry periods must be positive".into());
        }
        if renew >= duration {
            return Err(format!(
                "the renew period ({renew:?}) must be shorter than the lease duration ({duration:?})"
            ));
        }
        if retry > renew {
            return Err(format!(
                "the retry period ({retry:?}) must not be longer than the renew period ({renew:?})"
            ));
        }
        if duration.subsec_nanos() != 0 {
            return Err(format!(
                "the lease duration ({duration:?}) must be whole seconds"
            ));
        }
        Ok(Self {
            duration,
            renew,
            retry,
        })
    }

    /// How long the leader may go without a successful renewal before it must consider the
    /// lease lost: the lease duration less one renew period. A standby can take the lease only a
    /// full duration after it saw the last renewal, so the old leader has stopped by then.
    pub fn renew_deadline(&self) -> Duration {
        self.duration - self.renew
    }
}

/// What a replica does with the lease it just read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It holds the lease: renew it.
    Renew,
    /// The lease is free, released or expired: take it.
    Take,
    /// Another replica holds a lease that has not expired.
    Wait {
        /// The holder's identity.
        holder: String,
    },
}

/// When this replica first saw the lease as it is now: `now` if it changed since the last read
/// (`previous`), else the time of that earlier observation.
pub fn observed_since(
    previous: Option<&(LeaseSpec, Instant)>,
    current: &LeaseSpec,
    now: Instant,
) -> Instant {
    match previous {
        Some((spec, at)) if spec == current => *at,
        _ => now,
    }
}

/// Whether `me` renews, takes or waits for a lease whose spec has looked like `spec` since
/// `since`.
pub fn decide(
    me: &str,
    spec: &LeaseSpec,
    since: Instant,
    now: Instant,
    timing: &Timing,
) -> Verdict {
    match spec.holder_identity.as_deref() {
        Some(h) if h == me => Verdict::Renew,
        Some(h) if !h.is_empty() => {
            let duration = spec
                .lease_duration_seconds
                .and_then(|s| u64::try_from(s).ok())
                .map_or(timing.duration, Duration::from_secs);
            if now.saturating_duration_since(since) < duration {
                Verdict::Wait { holder: h.into() }
            } else {
                Verdict::Take
            }
        }
        _ => Verdict::Take,
    }
}

/// The spec `me` writes to renew (`Verdict::Renew`) or take (`Verdict::Take`) the lease.
pub fn claim(me: &str, current: &LeaseSpec, wall: Timestamp, timing: &Timing) -> LeaseSpec {
    let now = Some(MicroTime(wall));
    let renewing = current.holder_identity.as_deref() == Some(me);
    let transitions = current.lease_transitions.unwrap_or(0);
    LeaseSpec {
        holder_identity: Some(me.into()),
        lease_duration_seconds: Some(i32::try_from(timing.duration.as_secs()).unwrap_or(i32::MAX)),
        acquire_time: if renewing {
            current.acquire_time.clone().or(now.clone())
        } else {
            now.clone()
        },
        renew_time: now,
        lease_transitions: Some(if renewing {
            transitions
        } else {
            transitions.saturating_add(1)
        }),
        ..current.clone()
    }
}

/// The spec a leader writes when it steps down, so that a standby takes the lease at its next
/// read instead of waiting for it to expire. `None` when `me` does not hold it.
pub fn release(me: &str, current: &LeaseSpec) -> Option<LeaseSpec> {
    (current.holder_identity.as_deref() == Some(me)).then(|| LeaseSpec {
        holder_identity: None,
        acquire_time: None,
        renew_time: None,
        ..current.clone()
    })
}

/// Whether a leader whose last successful renewal started at `renewed` has lost the lease.
pub fn lost(renewed: Instant, now: Instant, timing: &Timing) -> bool {
    now.saturating_duration_since(renewed) >= timing.renew_deadline()
}

/// The identity of one operator process: its pod name and a random suffix, so that a restarted
/// container does not mistake its predecessor's lease for its own.
pub fn identity(pod: &str, random: u64) -> String {
    format!("{pod}_{:08x}", random & 0xffff_ffff)
}

/// The pod name in an identity made by [`identity`].
pub fn pod_of(identity: &str) -> &str {
    identity.rsplit_once('_').map_or(identity, |(pod, _)| pod)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> Timing {
        Timing::new(
            Duration::from_secs(15),
            Duration::from_secs(5),
            Duration::from_secs(2),
        )
        .unwrap()
    }

    fn held_by(who: &str) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(who.into()),
            lease_duration_seconds: Some(15),
            renew_time: Some(MicroTime(Timestamp::from_second(100).unwrap())),
            lease_transitions: Some(3),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn timing_refuses_a_renew_period_as_long_as_the_lease() {
        let s = Duration::from_secs;
        assert!(Timing::new(s(15), s(15), s(2)).is_err());
        assert!(Timing::new(s(15), s(5), s(6)).is_err());
        assert!(Timing::new(s(15), s(5), Duration::ZERO).is_err());
        assert!(Timing::new(Duration::from_millis(1500), s(1), s(1)).is_err());
        assert_eq!(timing().renew_deadline(), s(10));
    }

    #[test]
    fn a_free_or_released_lease_is_taken() {
        let t0 = Instant::now();
        assert_eq!(
            decide("a", &LeaseSpec::default(), t0, t0, &timing()),
            Verdict::Take
        );
        let released = release("b", &held_by("b")).unwrap();
        assert_eq!(decide("a", &released, t0, t0, &timing()), Verdict::Take);
    }

    #[test]
    fn another_holders_lease_is_waited_for_until_it_expires_on_the_local_clock() {
        let t0 = Instant::now();
        let spec = held_by("b");
        let at = |s| t0 + Duration::from_secs(s);
        assert_eq!(
            decide("a", &spec, t0, at(14), &timing()),
            Verdict::Wait { holder: "b".into() }
        );
        assert_eq!(decide("a", &spec, t0, at(15), &timing()), Verdict::Take);
        // The holder's renewTime is far in the past (skewed clock): it does not matter.
        assert!(matches!(
            decide("a", &spec, t0, at(1), &timing()),
            Verdict::Wait { .. }
        ));
    }

    #[test]
    fn a_renewal_restarts_the_standbys_expiry_clock() {
        let t0 = Instant::now();
        let first = held_by("b");
        let since = observed_since(None, &first, t0);
        let t10 = t0 + Duration::from_secs(10);
        assert_eq!(
            observed_since(Some(&(first.clone(), since)), &first, t10),
            t0
        );
        let mut renewed = first.clone();
        renewed.renew_time = Some(MicroTime(Timestamp::from_second(105).unwrap()));
        let since = observed_since(Some(&(first, since)), &renewed, t10);
        assert_eq!(since, t10);
        let t20 = t0 + Duration::from_secs(20);
        assert!(matches!(
            decide("a", &renewed, since, t20, &timing()),
            Verdict::Wait { .. }
        ));
    }

    #[test]
    fn the_holder_renews_its_own_lease_keeping_acquire_time_and_transitions() {
        let t0 = Instant::now();
        let mut spec = held_by("a");
        spec.acquire_time = Some(MicroTime(Timestamp::from_second(50).unwrap()));
        assert_eq!(
            decide("a", &spec, t0, t0 + Duration::from_secs(99), &timing()),
            Verdict::Renew
        );
        let wall = Timestamp::from_second(200).unwrap();
        let next = claim("a", &spec, wall, &timing());
        assert_eq!(next.holder_identity.as_deref(), Some("a"));
        assert_eq!(next.acquire_time, spec.acquire_time);
        assert_eq!(next.renew_time, Some(MicroTime(wall)));
        assert_eq!(next.lease_transitions, Some(3));
        assert_eq!(next.lease_duration_seconds, Some(15));
    }

    #[test]
    fn taking_over_counts_a_transition_and_restarts_acquire_time() {
        let wall = Timestamp::from_second(200).unwrap();
        let next = claim("a", &held_by("b"), wall, &timing());
        assert_eq!(next.holder_identity.as_deref(), Some("a"));
        assert_eq!(next.acquire_time, Some(MicroTime(wall)));
        assert_eq!(next.lease_transitions, Some(4));
    }

    #[test]
    fn only_the_holder_releases_the_lease() {
        assert_eq!(release("a", &held_by("b")), None);
        let released = release("a", &held_by("a")).unwrap();
        assert_eq!(released.holder_identity, None);
        assert_eq!(released.renew_time, None);
        assert_eq!(released.lease_transitions, Some(3));
    }

    #[test]
    fn a_leader_without_a_renewal_for_the_deadline_has_lost_the_lease() {
        let t0 = Instant::now();
        assert!(!lost(t0, t0 + Duration::from_millis(9_999), &timing()));
        assert!(lost(t0, t0 + Duration::from_secs(10), &timing()));
    }

    #[test]
    fn identity_names_the_pod_and_differs_per_process() {
        let a = identity("benchrun-operator-7d9f-x2x", 0x1234_5678_9abc);
        assert_eq!(a, "benchrun-operator-7d9f-x2x_56789abc");
        assert_eq!(pod_of(&a), "benchrun-operator-7d9f-x2x");
        assert_ne!(a, identity("benchrun-operator-7d9f-x2x", 1));
        assert_eq!(pod_of("plain"), "plain");
    }
}
