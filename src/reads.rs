//! What a reconcile reads: the planner's request ([`crate::plan::reads`] builds it from the
//! validated run, its status and the slot facts) and the vocabulary observation
//! ([`crate::observe`]) answers it in. Plain data, no client: the request names every child,
//! pod selection, stored detail and Prometheus window by its deterministic name, so
//! observation looks them up in the watch caches without knowing what a stage or a focus
//! measurement is.

use std::collections::BTreeMap;

use benchrun_api::{Coordinates, ExtraQuery};
use jiff::Timestamp;

/// Everything observation reads for one reconcile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reads {
    /// Read the run's children at all. False for a run waiting for a measuring slot: it has
    /// made nothing yet, and its turn comes from the runs cache alone.
    pub children: bool,
    /// The run's backing services (empty for a run without `spec.services`, and for a
    /// finished run).
    pub services: Vec<ServiceRead>,
    /// Which roles the nodes have (before placing pods).
    pub node_roles: bool,
    /// The nodes' room for new pods: read once, when the run is about to take a slot.
    pub rooms: bool,
    /// The measured windows Prometheus is asked for now ([`crate::plan::collections_due`]).
    pub windows: Vec<WindowRead>,
    /// The measurement the run works on, if any.
    pub focus: Option<FocusRead>,
}

/// One backing service: its Deployment, pods and seeding Job, by name and labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceRead {
    /// `spec.services[].name`.
    pub name: String,
    /// Its Deployment's and Service's name.
    pub child: String,
    /// Its seeding Job's name.
    pub seed_job: String,
}

/// The focus measurement's children and stored detail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FocusRead {
    /// Cell index.
    pub cell: usize,
    /// Repeat index.
    pub repeat: usize,
    /// The target configuration's Deployment and Service name.
    pub target: String,
    /// The labels of the target configuration's pods.
    pub target_pods: BTreeMap<String, String>,
    /// The load Job's name.
    pub job: String,
    /// The labels of the measurement's load pods.
    pub load_pods: BTreeMap<String, String>,
    /// Load pods the Job runs (one completion index each).
    pub load_pod_count: i32,
    /// The detail ConfigMap the merged load result is stored in.
    pub detail: String,
    /// The reconcile's clock: load pods still unscheduled this long after the Job started are
    /// reported as a failure to schedule (the planner's `now`, so one reconcile reads one time).
    pub now: Timestamp,
    /// What is recorded with the result, read while the load runs or has ended: the
    /// target image's size and the baseline run's matching cell.
    pub at_end: Option<EndReads>,
}

/// What is read to record a measurement's result beside the load's own figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EndReads {
    /// The `spec.baseline` run and the coordinates of the cell to match, if the spec names one.
    pub baseline: Option<(String, Coordinates)>,
}

/// One measured window to ask Prometheus for; its start and end come from the stored load
/// result (the detail ConfigMap), so it can be asked after the pods are gone.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowRead {
    /// Cell index.
    pub cell: usize,
    /// Repeat index.
    pub repeat: usize,
    /// `false` when the cell is not in the spec (the answer is then that error).
    pub known: bool,
    /// The detail ConfigMap holding the merged load result.
    pub detail: String,
    /// `spec.prometheus.url`, if the run names one (else the operator's default).
    pub url: Option<String>,
    /// Regex of the target pod names.
    pub target_pods: String,
    /// Regex of the load pod names.
    pub load_pods: String,
    /// CPU limit of the target summed over its replicas, in cores.
    pub target_cpu_limit_cores: f64,
    /// CPU limit of one target pod, in cores.
    pub target_pod_cpu_limit_cores: f64,
    /// When the load Job was created (`metricsDue.loadCreated`), if recorded.
    pub job_created: Option<Timestamp>,
    /// The run's extra queries.
    pub extra: Vec<ExtraQuery>,
    /// The backing services: name, pod-name regex, CPU limit in cores.
    pub services: Vec<(String, String, f64)>,
}
