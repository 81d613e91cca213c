//! benchrun-wire: what the operator, the `BenchmarkRun` API and the load generator share.
//!
//! - [`request`]: the grammar of a request a scenario may send (method, path, headers,
//!   `Content-Length`), the one place it is written: the API's validation, its CEL rules and the
//!   load generator all take it from here, so the operator refuses exactly what the generator
//!   would;
//! - [`template`]: `{{name}}` placeholders and the values drawn for them;
//! - [`result`]: the load result (`benchrun.dev/load-result/v1`) each load pod prints, and
//!   [`merge`]; [`hist`] encodes its HDR histograms, [`tcp`] its TCP counters, [`report`]
//!   renders it for people, [`proto`] its TLS and HTTP/2 facts;
//! - [`steady`]: whether a series of figures trends (`NotSteady`) and when a warm-up until
//!   steady may end.
//!
//! Pure: no I/O, no sockets, so the API crate and the operator depend on this and not on the
//! load generator's I/O stack.

#![warn(missing_docs)]

pub mod error;
mod grammar;
pub mod hist;
pub mod proto;
pub mod report;
pub mod request;
pub mod result;
pub mod steady;
pub mod tcp;
pub mod template;

pub use error::{Error, Result};
pub use proto::{H2Stats, ProtocolStats, TlsStats};
pub use result::{
    merge, CpuStats, ErrorCounts, Histograms, LatencyStats, LoadResult, Model, ScenarioResult,
    ScheduleLag, SteadyFigure, SteadyWarmup, TimelineEntry, WindowCounts, SCHEMA,
};
pub use tcp::TcpStats;
pub use template::ValueSpec;
