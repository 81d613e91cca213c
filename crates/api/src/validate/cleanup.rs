//! `spec.cleanup`: what happens to the run's children, and to the run, once it finished.

use std::time::Duration;

use super::field::{err, FieldError};
use crate::spec::Cleanup;

/// What happens to children when the run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CleanupPolicy {
    /// Delete Deployments, Services and Jobs.
    Delete,
    /// Keep them when the run failed.
    KeepOnFailure,
    /// Always keep them.
    Keep,
}

/// `spec.cleanup`, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CleanupPlan {
    /// What happens to the children.
    pub policy: CleanupPolicy,
    /// Delete the run this long after it finished.
    pub ttl_after_finished: Option<Duration>,
}

/// Parses `spec.cleanup` (absent: delete the children, keep the run).
pub(crate) fn parse(cleanup: Option<&Cleanup>, e: &mut Vec<FieldError>) -> CleanupPlan {
    let c = cleanup.cloned().unwrap_or_default();
    let policy = match c.policy.as_deref() {
        None | Some("Delete") => CleanupPolicy::Delete,
        Some("KeepOnFailure") => CleanupPolicy::KeepOnFailure,
        Some("Keep") => CleanupPolicy::Keep,
        Some(other) => {
            e.push(err(
                "spec.cleanup.policy",
                format!("{other:?} is not one of Delete, KeepOnFailure, Keep"),
            ));
            CleanupPolicy::Delete
        }
    };
    CleanupPlan {
        policy,
        ttl_after_finished: c
            .ttl_seconds_after_finished
            .map(|s| Duration::from_secs(s.max(0) as u64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_and_an_unknown_one_is_named() {
        let mut e = Vec::new();
        let c = |policy: &str, ttl: i64| Cleanup {
            policy: Some(policy.into()),
            ttl_seconds_after_finished: Some(ttl),
        };
        let plan = parse(Some(&c("KeepOnFailure", 60)), &mut e);
        assert_eq!(plan.policy, CleanupPolicy::KeepOnFailure);
        assert_eq!(plan.ttl_after_finished, Some(Duration::from_secs(60)));
        assert_eq!(parse(None, &mut e).policy, CleanupPolicy::Delete);
        assert!(e.is_empty(), "{e:?}");
        parse(Some(&c("Never", -1)), &mut e);
        assert_eq!(e[0].field, "spec.cleanup.policy");
        assert!(
            e[0].message.contains("Delete, KeepOnFailure, Keep"),
            "{e:?}"
        );
    }
}
