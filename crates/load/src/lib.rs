//! benchrun-load: an HTTP/1.1 and HTTP/2 load generator, cleartext or TLS (closed and open
//! model), whose results merge exactly across load pods.
//!
//! The library API mirrors the binary: build a [`Config`], call [`run`], get a
//! [`LoadResult`]; merge several with [`merge`]; render with [`report::write_text`].
//!
//! ```no_run
//! use benchrun_load::{run, Config, Limit, Target};
//! let mut config = Config::new(Target::parse("http://127.0.0.1:8080/")?);
//! config.connections = 10;
//! config.limit = Limit::Requests(1000);
//! let result = run(&config)?;
//! println!("{}", serde_json::to_string(&result).unwrap());
//! # Ok::<(), benchrun_load::Error>(())
//! ```

#![warn(missing_docs)]

pub mod backend;
mod batch;
pub mod config;
mod cpuinfo;
pub mod error;
pub mod hpack;
mod http;
pub mod proto;
mod proto_tally;
pub mod protocol;
mod recorder;
mod run;
pub mod scenario;
pub mod signal;
pub mod tcp;
mod timer;
mod worker;

// The request grammar, templates and the result type are shared with the operator and the
// API through benchrun-wire (no I/O); re-exported so this crate's API stays whole.
pub use benchrun_wire::{hist, report, request, result, steady, template};

pub use backend::Backend;
pub use benchrun_wire::result::{
    merge, CpuStats, ErrorCounts, Histograms, LatencyStats, LoadResult, Model, ScenarioResult,
    ScheduleLag, SteadyFigure, SteadyWarmup, TimelineEntry, WindowCounts, SCHEMA,
};
pub use benchrun_wire::tcp::TcpStats;
pub use benchrun_wire::template::ValueSpec;
pub use config::{Config, Limit, Target, Warmup};
pub use error::{Error, Result};
pub use proto::{tls::TlsOptions, Protocol};
pub use run::{cpu_time, run};
pub use scenario::Scenario;
