//! What every reconcile shares: the operator's settings, its clients and caches, and this
//! process's measuring-slot grants. Its own module so that observation ([`crate::observe`])
//! and the controller's wiring ([`crate::controller`]) both use it without importing each
//! other.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use benchrun_api::BenchmarkRun;
use kube::runtime::events::Recorder;
use kube::runtime::reflector::Store;
use kube::Client;

use crate::builders::LoadSettings;
use crate::policy::Policy;
use crate::prometheus_clients::PrometheusClients;
use crate::slots::Slots;
use crate::telemetry::Metrics;

/// Operator settings (from flags).
#[derive(Clone, Debug)]
pub struct Config {
    /// Default Prometheus base URL (a run's `spec.prometheus.url` overrides it).
    pub prometheus_url: String,
    /// Load generator image and pull policy.
    pub load: LoadSettings,
    /// Default pull policy of target images.
    pub image_pull_policy: String,
    /// Runs measuring at the same time.
    pub max_measuring_runs: usize,
    /// Most runs one namespace may have waiting for a measuring slot (0: no limit); a run
    /// beyond it fails with reason `QueueFull` (see [`crate::slots::queue_full`]).
    pub max_queued_per_namespace: usize,
    /// Watch one namespace only (default: all).
    pub namespace: Option<String>,
    /// The Prometheus URLs and target images runs may name.
    pub policy: Policy,
    /// How long after a measured window ends an unreachable Prometheus is asked for it again
    /// before its CPU and memory are given up (see [`crate::plan::collections_due`]).
    pub metrics_retry_for: Duration,
    /// The longest gap between two stored cAdvisor samples of a container on this cluster
    /// (see [`crate::promql::DEFAULT_SAMPLE_INTERVAL`]).
    pub sample_interval: Duration,
}

/// Shared state of all reconciles.
pub struct Context {
    /// Kubernetes client.
    pub client: Client,
    /// Operator settings.
    pub config: Config,
    /// The controller's cache of runs (for the queue and `spec.baseline`).
    pub store: Store<BenchmarkRun>,
    /// The caches of the runs' children and the nodes, which observation reads.
    pub children: crate::caches::Children,
    /// This process's measuring-slot grants (read by observation, taken by the controller).
    pub slots: Slots,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The Prometheus clients, one per URL for the operator's lifetime.
    pub prometheus: PrometheusClients,
    /// Publishes the run's events.
    pub(crate) recorder: Recorder,
    /// Reconcile failures in a row, by run.
    pub(crate) failures: Mutex<HashMap<String, u32>>,
}
