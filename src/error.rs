//! The operator's error type and how each failure is handled by the controller.
//!
//! An invalid spec is not an error here: the planner records it as a condition and the run waits
//! for a change. Neither are a failed Prometheus query or an unreadable load-pod log: they are
//! observed facts (`Observed::usage`, `JobObserved::Succeeded`) that the planner records on the
//! measurement (`MetricsUnavailable`, a failed measurement). This enum holds the API-server
//! failures of a reconcile, which are usually transient, and a run missing its namespace or
//! uid, which is not. Every variant is retried alike, with a per-run backoff from 5 s doubling
//! up to 5 min, by `controller::error_policy`.

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
            Error::DeleteFailed { .. } => "delete",
            Error::ObserveFailed { .. } => "observe",
            Error::StatusFailed { .. } => "status",
            Error::MissingField(_) => "missing_field",
        }
    }
}
