//! What the I/O layer observed for one reconcile: the facts the planner decides from.
//!
//! Plain data, no client. Gathered by [`crate::observe::observe`] for the run's focus measurement
//! (see [`crate::plan::focus`]); tests build it by hand. Facts only, never a verdict: even for
//! the measuring slot it holds what the decision is made from ([`SlotFacts`]: every run in
//! the controller's cache and this process's grants), and the planner decides.

use std::collections::BTreeMap;
use std::time::Duration;

use benchrun_api::TargetUsage;
use benchrun_wire::LoadResult;

use crate::kills::ContainerFacts;
use crate::slots::SlotFacts;

/// How long after a window ends an unreachable Prometheus is asked for it again, unless the
/// operator is told otherwise (`--metrics-retry-for`). Prometheus keeps the samples far longer
/// (the local cluster keeps 12 h); the bound keeps a run from waiting forever for a
/// Prometheus that is gone.
pub const DEFAULT_METRICS_RETRY_FOR: Duration = Duration::from_secs(600);

/// The focus measurement's target Deployment and its pods.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TargetObserved {
    /// All replicas are updated, available and ready, and no extra pods remain.
    pub ready: bool,
    /// When the last target pod became ready (ms since the epoch).
    pub ready_since_ms: Option<i64>,
    /// Milliseconds from the slowest pod's creation to its Ready condition.
    pub ready_ms: Option<i64>,
    /// Size of the image as the pods' node reports it (read together with the window's usage).
    pub image_bytes: Option<i64>,
    /// The images the target containers ran, by digest (`imageID` of their status), distinct;
    /// read together with the window's usage.
    pub image_ids: Vec<String>,
    /// Sum of the container restart counts of the target pods.
    pub restarts: i32,
    /// Each target container's restart count and last termination.
    pub containers: Vec<ContainerFacts>,
    /// Nodes of the target pods.
    pub nodes: Vec<String>,
    /// Names of the target pods (not those being deleted), sorted.
    pub pods: Vec<String>,
    /// The last problem seen, e.g. `ImagePullBackOff: Back-off pulling image "x"`.
    pub problem: Option<String>,
    /// The problem cannot go away by waiting (invalid image name, image never pulled).
    pub fatal: bool,
}

/// A backing service's seeding Job.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum SeedObserved {
    /// Not created (or the service has no seed step).
    #[default]
    Absent,
    /// Created, not finished.
    Running,
    /// Completed; when (ms since the epoch), if the Job says.
    Succeeded(Option<i64>),
    /// Failed (every retry, or past its deadline), with the reason.
    Failed(String),
}

/// A backing service whose Deployment exists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServiceObserved {
    /// `spec.services[].name`.
    pub name: String,
    /// Its Deployment and pod, as a target's are observed.
    pub state: TargetObserved,
    /// Its Service's ClusterIP, once allocated.
    pub cluster_ip: Option<String>,
    /// Its seeding Job.
    pub seed: SeedObserved,
}

/// Which roles some node of the cluster has by its label `benchrun.dev/role`
/// ([`crate::plan::placement::NODE_ROLE`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeRoles {
    /// Some node is labelled `benchrun.dev/role=target`.
    pub target: bool,
    /// Some node is labelled `benchrun.dev/role=load`.
    pub load: bool,
}

/// One schedulable node's room, for the fit check ([`crate::plan::fit`]): allocatable CPU and
/// memory, and what the pods on it (not finished) already request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeRoom {
    /// Node name.
    pub name: String,
    /// Node labels (matched against the pods' node selectors).
    pub labels: BTreeMap<String, String>,
    /// `status.allocatable.cpu` in millicores.
    pub cpu_allocatable: i64,
    /// `status.allocatable.memory` in bytes.
    pub memory_allocatable: i64,
    /// Sum of the CPU requests of the node's pods that have not finished, in millicores.
    pub cpu_requested: i64,
    /// Sum of their memory requests, in bytes.
    pub memory_requested: i64,
    /// The node's `NoSchedule` and `NoExecute` taints: a pod that does not tolerate one of
    /// them is not placed there.
    pub taints: Vec<NodeTaint>,
}

/// A node taint that keeps pods off (`NoSchedule`, `NoExecute`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeTaint {
    /// Taint key.
    pub key: String,
    /// Taint value (empty when none).
    pub value: String,
    /// `NoSchedule` or `NoExecute`.
    pub effect: String,
}

impl NodeTaint {
    /// Whether `t` tolerates this taint, as the scheduler decides it: the effect matches (or
    /// the toleration names none), the key matches (an empty key with `Exists` matches every
    /// key) and, unless the operator is `Exists`, the value is equal.
    pub fn tolerated_by(&self, t: &k8s_openapi::api::core::v1::Toleration) -> bool {
        let effect = t.effect.as_deref().unwrap_or_default();
        if !effect.is_empty() && effect != self.effect {
            return false;
        }
        let key = t.key.as_deref().unwrap_or_default();
        let exists = t.operator.as_deref() == Some("Exists");
        if key.is_empty() {
            return exists;
        }
        key == self.key && (exists || t.value.as_deref().unwrap_or_default() == self.value)
    }

    /// `key=value:Effect`, as kubectl writes it.
    pub fn text(&self) -> String {
        match self.value.is_empty() {
            true => format!("{}:{}", self.key, self.effect),
            false => format!("{}={}:{}", self.key, self.value, self.effect),
        }
    }
}

impl NodeRoom {
    /// Allocatable CPU not yet requested, in millicores.
    pub fn cpu_free(&self) -> i64 {
        (self.cpu_allocatable - self.cpu_requested).max(0)
    }
    /// Allocatable memory not yet requested, in bytes.
    pub fn memory_free(&self) -> i64 {
        (self.memory_allocatable - self.memory_requested).max(0)
    }
    /// Whether the node has every label of `selector`.
    pub fn matches(&self, selector: &BTreeMap<String, String>) -> bool {
        selector.iter().all(|(k, v)| self.labels.get(k) == Some(v))
    }
    /// The first of the node's taints that `tolerations` do not tolerate.
    pub fn untolerated(
        &self,
        tolerations: &[k8s_openapi::api::core::v1::Toleration],
    ) -> Option<&NodeTaint> {
        self.taints
            .iter()
            .find(|taint| !tolerations.iter().any(|t| taint.tolerated_by(t)))
    }
}

/// The focus measurement's load Job.
#[derive(Clone, Debug, PartialEq)]
pub enum JobObserved {
    /// Not created (or already deleted).
    Absent,
    /// Created, not finished.
    Running,
    /// Every load pod completed; each pod's parsed result or why it has none, by index.
    Succeeded(Vec<Result<LoadResult, String>>),
    /// The Job failed (pod error, deadline exceeded), with the reason.
    Failed(String),
}

/// Prometheus usage of a measured window, or why it could not be read.
pub type UsageObserved = Result<(TargetUsage, BTreeMap<String, f64>), String>;

/// One attempt to read a measured window's usage from Prometheus.
// One per observed window, moved once into the planner: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Collection {
    /// Prometheus answered: the usage, or an error that asking again would not fix (a bad
    /// query, an answer of the wrong shape, an unusable URL).
    Answered(UsageObserved),
    /// Prometheus could not be reached (transport error, timeout, HTTP 5xx or 429): the same
    /// window can be asked for again later.
    Unreachable(String),
}

impl From<UsageObserved> for Collection {
    fn from(u: UsageObserved) -> Self {
        Collection::Answered(u)
    }
}

/// A collection that was due (see [`crate::plan::collections_due`]), as observed.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingObserved {
    /// Cell index.
    pub cell: usize,
    /// Repeat index.
    pub repeat: usize,
    /// The load result stored in the measurement's detail ConfigMap and what Prometheus said
    /// for its window, or why the load result could not be read (the ConfigMap is gone).
    pub collected: Result<(LoadResult, Collection), String>,
}

/// Everything observed for one reconcile of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    /// Name of the run (children are named after it).
    pub run_name: String,
    /// `metadata.generation` of the run.
    pub generation: Option<i64>,
    /// What the measuring-slot decision is made from (the planner decides, see
    /// [`crate::slots::decide`]).
    pub slot: SlotFacts,
    /// Config hashes of the target Deployments and Services of this run that exist.
    pub target_configs: Vec<String>,
    /// Names of this run's load Jobs that exist.
    pub jobs: Vec<String>,
    /// The focus configuration's Deployment, if it exists.
    pub target: Option<TargetObserved>,
    /// The focus configuration's Service ClusterIP, once allocated.
    pub service_ip: Option<String>,
    /// The backing services whose Deployments exist (only while the run is not finished).
    pub services: Vec<ServiceObserved>,
    /// Some Deployment, Service or seeding Job of a backing service of this run exists.
    pub service_children: bool,
    /// The focus measurement's load Job.
    pub job: JobObserved,
    /// The restart baseline recorded on the focus Job.
    pub restarts_baseline: Option<i32>,
    /// The per-pod restart baseline recorded on the focus Job (absent on Jobs of older
    /// operators).
    pub restarts_baseline_pods: Option<BTreeMap<String, i32>>,
    /// When the focus Job was created.
    pub job_created: Option<jiff::Timestamp>,
    /// Nodes of the focus Job's pods.
    pub load_nodes: Vec<String>,
    /// What the nodes cache says of the focus measurement's target and load nodes (kernel,
    /// OS, runtime, kubelet, CPUs, instance type; `role` left empty), read with the window's
    /// usage; empty without node read access.
    pub node_facts: Vec<benchrun_api::environment::NodeEnvironment>,
    /// This operator's version, for the results' `environment.operator`.
    pub operator_version: String,
    /// When the last of the focus Job's pods started its load container (Unix ms, to the
    /// second as the kubelet reports it); `None` until every pod has started.
    pub load_started_ms: Option<i64>,
    /// The agreed start recorded on each of this run's load Jobs that has one, by Job name.
    pub job_starts: BTreeMap<String, i64>,
    /// The node roles the cluster has (none when nodes cannot be listed).
    pub node_roles: NodeRoles,
    /// Each node's allocatable CPU and memory and what its pods request, read only when the
    /// run is about to take the measuring slot (for [`crate::plan::fit`]); `None` otherwise
    /// and when nodes or pods cannot be listed (a namespaced install): the check is then not
    /// done, and [`Observed::fit_unchecked`] says why.
    pub nodes: Option<Vec<NodeRoom>>,
    /// Why the fit check cannot be done, e.g. `no node read access` in a namespaced install;
    /// said on the Accepted condition and, when the run takes the slot, in an event.
    pub fit_unchecked: Option<String>,
    /// The merged load result stored in the focus detail ConfigMap.
    pub detail: Option<LoadResult>,
    /// The `spec.baseline` run's cell with the focus coordinates, read once the focus load Job
    /// has succeeded (absent without a baseline or before).
    pub baseline: Option<crate::baseline::BaselineObserved>,
    /// The previous reconcile of this run failed and is being retried (a transient error).
    pub retrying: bool,
    /// Deferred collections of earlier measurements that were due.
    pub pending: Vec<PendingObserved>,
    /// How long after a window ends the operator keeps asking an unreachable Prometheus for
    /// it (an operator setting, carried here so that the planner stays a function of its
    /// inputs).
    pub metrics_retry_for: Duration,
    /// The longest gap between two stored cAdvisor samples of a container on this cluster (an
    /// operator setting, `--sample-interval`): how long fresh target pods are left before the
    /// load starts, and how long after a window ends before Prometheus is asked for it.
    pub sample_interval: Duration,
}

impl Default for Observed {
    fn default() -> Self {
        Self {
            run_name: String::new(),
            generation: None,
            slot: SlotFacts::default(),
            nodes: None,
            fit_unchecked: None,
            target_configs: Vec::new(),
            jobs: Vec::new(),
            target: None,
            service_ip: None,
            services: Vec::new(),
            service_children: false,
            job: JobObserved::Absent,
            restarts_baseline: None,
            restarts_baseline_pods: None,
            job_created: None,
            load_nodes: Vec::new(),
            node_facts: Vec::new(),
            operator_version: String::new(),
            load_started_ms: None,
            job_starts: BTreeMap::new(),
            node_roles: NodeRoles::default(),
            detail: None,
            baseline: None,
            retrying: false,
            pending: Vec::new(),
            metrics_retry_for: DEFAULT_METRICS_RETRY_FOR,
            sample_interval: crate::promql::DEFAULT_SAMPLE_INTERVAL,
        }
    }
}
