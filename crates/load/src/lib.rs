//! benchrun-load: an HTTP/1.1 load generator (closed and open model) whose results merge
//! exactly across load pods.
//!
//! The library API mirrors the binary: build a [`Config`], call [`run`], get a
//! [`LoadResult`]; merge several with [`merge`]; render with [`report::write_text`].

pub mod error;
pub mod hist;
pub mod result;

pub use error::{Error, Result};
pub use result::{
    merge, CpuStats, ErrorCounts, LatencyStats, LoadResult, Model, TimelineEntry, SCHEMA,
};
