//! The library's error type.

/// Everything that can go wrong in configuring or running a load, or merging results.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The target URL could not be parsed or is not supported.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it was rejected.
        reason: String,
    },
    /// The target host name did not resolve to an address.
    #[error("failed to resolve {host:?}: {reason}")]
    Resolve {
        /// Host name as given.
        host: String,
        /// Resolver message.
        reason: String,
    },
    /// A configuration value is out of range or contradicts another one.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// A duration or count argument could not be parsed.
    #[error("invalid value {value:?}: {reason}")]
    InvalidValue {
        /// The text as given.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// An embedded histogram could not be decoded or merged.
    #[error("failed to decode histogram: {0}")]
    BadHistogram(String),
    /// Results that cannot be merged (none given, or different schema versions).
    #[error("failed to merge results: {0}")]
    Merge(String),
    /// A load thread panicked (a bug, or the poller failed); nothing was measured.
    #[error("a load thread panicked; see the message above")]
    ThreadPanicked,
    /// An operating-system call needed to run the load failed.
    #[error("failed to {what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<benchrun_wire::Error> for Error {
    fn from(e: benchrun_wire::Error) -> Self {
        match e {
            benchrun_wire::Error::InvalidConfig(m) => Error::InvalidConfig(m),
            benchrun_wire::Error::BadHistogram(m) => Error::BadHistogram(m),
            benchrun_wire::Error::Merge(m) => Error::Merge(m),
        }
    }
}
