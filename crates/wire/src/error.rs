//! The crate's error type.

/// What can be wrong with a request, a template value or results to merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A request, scenario or template value breaks its grammar or limits.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// An embedded histogram could not be decoded or merged.
    #[error("failed to decode histogram: {0}")]
    BadHistogram(String),
    /// Results that cannot be merged (none given, or different schema versions).
    #[error("failed to merge results: {0}")]
    Merge(String),
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
