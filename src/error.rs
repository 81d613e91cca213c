//! The operator's error type and how each failure is handled by the controller.
//!
//! An invalid spec is not an error here: the planner records it as a condition and the run waits
//! for a change. Neither are a failed Prometheus query or an unreadable load-pod log: they are
//! observed facts (`Observed::usage`, `JobObserved::Succeeded`) that the planner records on the
//! measurement (`MetricsUnavailable`, a failed measurement). This enum holds the API-server
//! failures of a reconcile and a run missing its namespace or uid. [`classify`] sorts an API
//! failure into one of two classes:
//!
//! - [`Class::Refused`]: the apiserver answered 4xx other than 408, 409 and 429 (invalid
//!   object, forbidden, not found, too large), or a 500 whose message says the server-side
//!   apply could not build the typed patch from the object ([`TYPED_PATCH_ERRORS`], e.g. two
//!   env entries of one name: "duplicate entries for key"). Retrying the same request cannot
//!   succeed, so a refused apply of a child fails its cell (`plan::plan_refused`) with the
//!   apiserver's message instead of being retried until the ready timeout.
//! - [`Class::Transient`]: other 5xx, 408, 409 (conflict), 429 (throttled), timeouts and
//!   transport errors. The reconcile is retried with a per-run backoff from 5 s doubling up to 5 min by
//!   `controller::error_policy`, and reported as a Warning event on the first failure and then
//!   every [`ANNOUNCE_EVERY`]th ([`announce`]).

/// Errors of the reconcile loop.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Server-side apply of a child failed.
    #[error("failed to apply {kind} {name}: {source}")]
    ApplyFailed {
        /// Kind of the child.
        kind: &'static str,
        /// Name of the child.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The name of a child the run was about to write is held by an object that is not the
    /// run's own (no controller owner reference to it): nothing was written.
    #[error("{}", crate::ownership::foreign_message(kind, name, owner))]
    NotOwned {
        /// Kind of the child.
        kind: &'static str,
        /// Name of the child.
        name: String,
        /// Whose the object is ([`crate::ownership::owner_of`]).
        owner: String,
    },
    /// Deleting a child (or the run, at the end of its TTL) failed.
    #[error("failed to delete {kind} {name}: {source}")]
    DeleteFailed {
        /// Kind of the object.
        kind: &'static str,
        /// Name of the object.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// Reading children or pods failed.
    #[error("failed to read {what}: {source}")]
    ObserveFailed {
        /// What was being read.
        what: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The watch caches of the runs' children have not been listed yet (at start-up, or
    /// after their watches were lost): an absent child could be one not listed yet.
    #[error("{0}")]
    CachesNotSynced(String),
    /// Patching the run's status failed.
    #[error("failed to patch the status of {name}: {source}")]
    StatusFailed {
        /// Name of the run.
        name: String,
        /// The API error.
        #[source]
        source: kube::Error,
    },
    /// The run object lacks a field every stored object has (namespace, uid).
    #[error("failed to reconcile: the run has no {0}")]
    MissingField(&'static str),
}

/// Result alias of the operator.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A short label for metrics (`reconcile_errors_total{error=...}`).
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::ApplyFailed { .. } => "apply",
            Error::NotOwned { .. } => "not_owned",
            Error::DeleteFailed { .. } => "delete",
            Error::ObserveFailed { .. } => "observe",
            Error::CachesNotSynced(_) => "caches",
            Error::StatusFailed { .. } => "status",
            Error::MissingField(_) => "missing_field",
        }
    }
}

/// How a failed API call is handled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// The apiserver refused the request itself: the same request cannot succeed later. Holds
    /// the apiserver's code and message.
    Refused(u16, String),
    /// The request may succeed when retried.
    Transient,
}

/// Phrases of the apiserver's 500 answers to a server-side apply whose object cannot be turned
/// into a typed value or merged (structured-merge-diff): the same object fails the same way
/// every time.
pub const TYPED_PATCH_ERRORS: [&str; 3] = [
    "failed to create typed patch object",
    "failed to create typed live object",
    "duplicate entries for key",
];

/// Whether a 500 answer's `message` says the typed patch could not be built.
fn permanent_500(message: &str) -> bool {
    TYPED_PATCH_ERRORS.iter().any(|p| message.contains(p))
}

/// Sorts a failed API call into [`Class::Refused`] or [`Class::Transient`] (see the module
/// doc). Pure.
pub fn classify(e: &kube::Error) -> Class {
    match e {
        kube::Error::Api(s)
            if ((400..500).contains(&s.code) && ![408, 409, 429].contains(&s.code))
                || (s.code == 500 && permanent_500(&s.message)) =>
        {
            let message = if s.message.is_empty() {
                s.reason.clone()
            } else {
                s.message.clone()
            };
            Class::Refused(s.code, message)
        }
        _ => Class::Transient,
    }
}

/// A transient failure is reported on its first occurrence and then every this many.
pub const ANNOUNCE_EVERY: u32 = 5;

/// Whether the `n`th consecutive failure of a run (from 1) is reported as a Warning event: the
/// first, then every [`ANNOUNCE_EVERY`]th, so a long outage does not flood the run's events.
pub fn announce(n: u32) -> bool {
    n == 1 || (n > 0 && n % ANNOUNCE_EVERY == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure(message, reason)
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn invalid_forbidden_and_missing_are_refused_with_the_apiservers_message() {
        let msg = r#"Service "1st-run-web" is invalid: metadata.name: Invalid value"#;
        assert_eq!(
            classify(&api(422, "Invalid", msg)),
            Class::Refused(422, msg.into())
        );
        for code in [400, 403, 404, 413] {
            assert!(matches!(classify(&api(code, "X", "m")), Class::Refused(c, _) if c == code));
        }
        assert_eq!(
            classify(&api(400, "BadRequest", "")),
            Class::Refused(400, "BadRequest".into())
        );
    }

    #[test]
    fn a_500_saying_the_typed_patch_cannot_be_built_is_refused_with_its_message() {
        let msg = r#"failed to create typed patch object (bench/r-a-0; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="target"].env: duplicate entries for key [name="BENCHRUN_SERVICE_DB_ADDR"]"#;
        assert_eq!(
            classify(&api(500, "InternalError", msg)),
            Class::Refused(500, msg.into())
        );
        assert_eq!(
            classify(&api(500, "InternalError", "etcdserver: request timed out")),
            Class::Transient
        );
    }

    #[test]
    fn conflicts_throttling_timeouts_and_server_errors_are_transient() {
        for code in [408, 409, 429, 500, 503, 504] {
            assert_eq!(classify(&api(code, "X", "m")), Class::Transient, "{code}");
        }
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert_eq!(classify(&kube::Error::ReadEvents(io)), Class::Transient);
    }

    #[test]
    fn transient_failures_are_announced_first_and_then_every_fifth() {
        let announced: Vec<u32> = (1..=16).filter(|n| announce(*n)).collect();
        assert_eq!(announced, vec![1, 5, 10, 15]);
        assert!(!announce(0));
    }
}
