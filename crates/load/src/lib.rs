//! benchrun-load: an HTTP/1.1 load generator (closed and open model) whose results merge
//! exactly across load pods.
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
pub mod error;
pub mod hist;
mod http;
mod recorder;
pub mod report;
pub mod result;
mod run;
pub mod scenario;
pub mod signal;
pub mod tcp;
pub mod template;
mod timer;
mod worker;

pub use backend::Backend;
pub use config::{Config, Limit, Target, Warmup};
pub use error::{Error, Result};
pub use result::{
    merge, CpuStats, ErrorCounts, Histograms, LatencyStats, LoadResult, Model, ScenarioResult,
    ScheduleLag, TimelineEntry, SCHEMA,
};
pub use run::{cpu_time, run};
pub use scenario::Scenario;
pub use tcp::TcpStats;
pub use template::ValueSpec;
