//! benchrun: the `BenchmarkRun` operator.
//!
//! Where things are decided:
//! - [`plan`]: the run's state machine (pure), from [`observed`] facts;
//! - [`builders`]: the children it creates (pure), named by [`names`];
//! - [`results`] (with [`results::validity`] and [`results::slo`]): what a measurement's
//!   numbers mean (pure), rounded and formatted by [`num`];
//! - [`capacity`]: how far each configuration scales, from its measurements (pure);
//! - [`baseline`]: a measurement against the same cell of `spec.baseline` (pure);
//! - [`kills`]: target terminations and OOM kills during a measurement (pure);
//! - [`promql`], [`prometheus`]: CPU and memory of the measured window, one client per URL
//!   for the operator's lifetime in [`prometheus_clients`];
//! - [`policy`]: the Prometheus URLs and target images runs may name, and with
//!   [`placement_policy`] the nodes their pods may select (pure);
//! - [`observe`]: reads the run's children, pods, logs and Prometheus into [`observed`] facts;
//! - [`slots`]: who may measure now (pure), and this process's slot grants, taken when the
//!   planner's `TakeSlot` is applied;
//! - [`controller`]: the kube-runtime wiring (observe → plan → apply → status), sharing a
//!   [`context`] with observation;
//! - [`telemetry`]: `/metrics`, `/healthz`, `/readyz`, with each finished run's per-cell
//!   figures as gauges from [`gauges`] (pure rows, encoded at scrape time), `/metrics` behind
//!   [`metrics_auth`] (TokenReview and SubjectAccessReview); [`logging`]: the log format;
//! - [`lease`] (pure) and [`leader`]: leader election, so only one replica reconciles.

pub mod adaptive;
pub mod baseline;
pub mod builders;
pub mod caches;
pub mod capacity;
pub mod comparisons;
pub mod context;
pub mod controller;
pub mod environment;
pub mod error;
#[cfg(test)]
pub(crate) mod fake_api;
pub mod gauges;
pub mod hash;
pub mod kills;
pub mod leader;
pub mod lease;
pub mod logging;
pub mod logtext;
pub mod metrics_auth;
pub mod names;
pub mod num;
pub mod observe;
pub mod observed;
pub mod ownership;
pub mod placement_policy;
pub mod plan;
pub mod policy;
pub mod prometheus;
pub mod prometheus_clients;
pub mod promql;
pub mod promql_scope;
pub mod rate_limit;
pub mod reads;
pub mod results;
pub mod samples;
pub mod schedules;
pub mod search;
pub mod slots;
pub mod telemetry;

pub use error::{Error, Result};
