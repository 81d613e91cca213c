//! The I/O half of a reconcile that reads. It answers the planner's request
//! ([`crate::reads::Reads`], built by [`crate::plan::reads`]) from the watch caches of the
//! runs' children ([`crate::caches`]) and of the runs (a `spec.baseline` run), and sends out
//! only what no cache holds: a finished load pod's log, the nodes' room before a run takes a
//! slot, and Prometheus for the measured windows that are due. For the measuring slot it
//! gathers the views of every run in the controller's cache and this process's grants. Only
//! reads and reports: produces [`Observed`] for the planner, which decides (the slot too).

use std::sync::Arc;

use benchrun_api::{BenchmarkRun, BenchmarkRunStatus, Coordinates};
use benchrun_wire::LoadResult;
use futures::FutureExt as _;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::{Job, JobCondition};
use k8s_openapi::api::core::v1::{ConfigMap, ContainerImage, ContainerStatus, Pod, Service};
use kube::api::LogParams;
use kube::{Api, ResourceExt};

use crate::builders::{
    Owner, DETAIL_KEY, LOAD_CONTAINER, SEED_CONTAINER, SERVICE_CONTAINER, TARGET_CONTAINER,
};
use crate::caches::{self, Children};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::kills::{self, ContainerFacts};
use crate::names::{self, label, role};
use crate::observed::{
    Collection, JobObserved, NodeRoles, Observed, PendingObserved, SeedObserved, ServiceObserved,
    TargetObserved,
};
use crate::plan::{self, placement};
use crate::prometheus::{ServiceQuery, UsageQuery};
use crate::reads::{FocusRead, Reads, ServiceRead, WindowRead};
use crate::slots::{self, RunView, SlotFacts};

pub mod nodes;

/// Waiting reasons that do not go away by waiting.
const FATAL: &[&str] = &["InvalidImageName", "ErrImageNeverPull"];
/// Waiting reasons worth naming when a target does not become ready.
const PROBLEMS: &[&str] = &[
    "ImagePullBackOff",
    "ErrImagePull",
    "ErrImageNeverPull",
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "RunContainerError",
];

/// Owned copies of cached objects (the helpers below take slices of objects).
fn owned<K: Clone>(objects: Vec<Arc<K>>) -> Vec<K> {
    objects.into_iter().map(|o| (*o).clone()).collect()
}

/// Answers `reads` for the run `owner` (see the module doc); `slot` is what [`slot`] gathered.
pub async fn observe(
    ctx: &Context,
    owner: &Owner,
    generation: Option<i64>,
    slot: SlotFacts,
    reads: &Reads,
) -> Result<Observed> {
    let mut o = Observed {
        run_name: owner.name.clone(),
        generation,
        slot,
        metrics_retry_for: ctx.config.metrics_retry_for,
        sample_interval: ctx.config.sample_interval,
        ..Observed::default()
    };
    if !reads.children {
        return Ok(o);
    }
    let c = &ctx.children;
    c.synced().await.map_err(Error::CachesNotSynced)?;
    let ns = &owner.namespace;
    let mine = |r: &str| names::common_labels(&owner.name, r);
    // The run's own children only: an object carrying its labels is not one.
    let uid = &owner.reference.uid;
    let deployments = owned(caches::owned(&c.deployments, ns, &mine(role::TARGET), uid));
    let services = owned(caches::owned(&c.services, ns, &mine(role::TARGET), uid));
    let jobs = owned(caches::owned(&c.jobs, ns, &mine(role::LOAD), uid));
    let mut configs: Vec<String> = deployments
        .iter()
        .map(|d| d.labels().get(label::CONFIG).cloned().unwrap_or_default())
        .chain(
            services
                .iter()
                .map(|s| s.labels().get(label::CONFIG).cloned().unwrap_or_default()),
        )
        .collect();
    configs.sort();
    configs.dedup();
    o.target_configs = configs;
    o.jobs = jobs.iter().map(|j| j.name_any()).collect();
    o.job_starts = jobs
        .iter()
        .filter_map(|j| Some((j.name_any(), start_at(j)?)))
        .collect();
    o.service_children = !(caches::owned(&c.deployments, ns, &mine(role::SERVICE), uid).is_empty()
        && caches::owned(&c.services, ns, &mine(role::SERVICE), uid).is_empty()
        && caches::owned(&c.jobs, ns, &mine(role::SEED), uid).is_empty());
    if !reads.services.is_empty() {
        o.services = services_state(ctx, owner, &reads.services).await;
    }
    if reads.node_roles {
        o.node_roles = node_roles(c);
        o.fit_unchecked = nodes::no_node_access(c);
    }
    if reads.rooms {
        match nodes::rooms(ctx).await {
            Ok(rooms) => o.nodes = Some(rooms),
            Err(why) => o.fit_unchecked = Some(why),
        }
    }
    for w in &reads.windows {
        o.pending.push(pending(ctx, owner, w).await);
    }
    if let Some(f) = &reads.focus {
        focus(ctx, owner, f, &deployments, &services, &jobs, &mut o).await;
    }
    Ok(o)
}

/// The focus measurement's target, load Job and pods, stored detail, and (with
/// [`FocusRead::at_end`]) the target image's size and the baseline run's cell.
async fn focus(
    ctx: &Context,
    owner: &Owner,
    f: &FocusRead,
    deployments: &[Deployment],
    services: &[Service],
    jobs: &[Job],
    o: &mut Observed,
) {
    let (c, ns) = (&ctx.children, &owner.namespace);
    let mut target_pods = Vec::new();
    if let Some(d) = deployments.iter().find(|d| d.name_any() == f.target) {
        target_pods = owned(caches::matching(&c.pods, ns, &f.target_pods));
        o.target = Some(target_state(d, &target_pods, TARGET_CONTAINER));
    }
    o.service_ip = services
        .iter()
        .find(|s| s.name_any() == f.target)
        .and_then(|s| s.spec.as_ref()?.cluster_ip.clone())
        .filter(|ip| !ip.is_empty() && ip != "None");
    o.detail = detail(c, owner, &f.detail);
    if let Some(job) = jobs.iter().find(|j| j.name_any() == f.job) {
        o.job_created = job.metadata.creation_timestamp.as_ref().map(|t| t.0);
        o.restarts_baseline = job
            .annotations()
            .get(names::RESTARTS_BASELINE)
            .and_then(|s| s.parse().ok());
        o.restarts_baseline_pods = job
            .annotations()
            .get(names::RESTARTS_BASELINE_PODS)
            .and_then(|s| kills::parse_by_pod(s));
        let pods = owned(caches::matching(&c.pods, ns, &f.load_pods));
        o.load_nodes = pods
            .iter()
            .filter_map(|p| p.spec.as_ref()?.node_name.clone())
            .collect();
        o.load_nodes.sort();
        o.load_nodes.dedup();
        o.load_started_ms = load_started(&pods, f.load_pod_count);
        let pods_api = Api::<Pod>::namespaced(ctx.client.clone(), ns);
        o.job = job_state(job, &pods, &pods_api, f.load_pod_count, o.detail.is_some()).await;
        if o.job == JobObserved::Running {
            let start = start_at(job).or_else(|| {
                job.metadata
                    .creation_timestamp
                    .as_ref()
                    .map(|t| t.0.as_millisecond())
            });
            if let Some(why) = nodes::load_unschedulable(&pods, start, f.now.as_millisecond()) {
                o.job = JobObserved::Failed(why);
            }
        }
    }
    let Some(end) = &f.at_end else {
        return;
    };
    if let Some(t) = o.target.as_mut() {
        t.image_bytes = image_bytes(c, &target_pods);
        t.image_ids = image_ids(&target_pods);
    }
    let mut on: Vec<String> = o
        .target
        .iter()
        .flat_map(|t| t.nodes.iter())
        .chain(&o.load_nodes)
        .cloned()
        .collect();
    if let Some(detail) = &o.detail {
        on.extend(detail.nodes.iter().cloned());
    }
    on.sort();
    on.dedup();
    o.node_facts = on.iter().filter_map(|n| node_facts(c, n)).collect();
    o.operator_version = crate::environment::operator_version();
    if let Some((run, coordinates)) = &end.baseline {
        o.baseline = Some(baseline(ctx, owner, run, coordinates));
    }
}

/// The measured repeats of the baseline run's cell with these coordinates (from its status in
/// the runs cache), or why they cannot be read.
fn baseline(
    ctx: &Context,
    owner: &Owner,
    run: &str,
    coordinates: &Coordinates,
) -> crate::baseline::BaselineObserved {
    if run == owner.name {
        return Err("spec.baseline names this run itself: name an earlier run".into());
    }
    let Some(earlier) = caches::get(&ctx.store, &owner.namespace, run) else {
        return Err(format!("BenchmarkRun {run} not found in this namespace"));
    };
    let results = earlier
        .status
        .as_ref()
        .map(|s| s.results.clone())
        .unwrap_or_default();
    let matched = crate::baseline::matching(&results, coordinates);
    if matched.is_empty() {
        return Err(format!(
            "BenchmarkRun {run} has no measured cell with these coordinates"
        ));
    }
    let mut cell = crate::baseline::BaselineCell::default();
    for r in matched {
        let mut r = r.clone();
        if r.per_second_cv.is_none() {
            // A run older than `perSecondCv`: its spread from the stored per-second figures,
            // when they are still there (without them the spread is not compared).
            let name = names::detail_name(run, r.cell.max(0) as usize, r.repeat.max(0) as usize);
            r.per_second_cv = Owner::of(&earlier)
                .and_then(|o| detail(&ctx.children, &o, &name))
                .and_then(|load| crate::comparisons::per_second_cv(&load));
        }
        cell.results.push(r);
    }
    Ok(cell)
}

/// The merged load result stored in the detail ConfigMap `name` of the run `owner`, if cached
/// (a ConfigMap of that name that is not the run's is not read).
fn detail(c: &Children, owner: &Owner, name: &str) -> Option<LoadResult> {
    let cm: Arc<ConfigMap> = caches::get(&c.configmaps, &owner.namespace, name)?;
    if !crate::ownership::is_ours(&cm.metadata, &owner.reference.uid) {
        return None;
    }
    serde_json::from_str::<LoadResult>(cm.data.as_ref()?.get(DETAIL_KEY)?).ok()
}

/// Asks Prometheus for a measured window that is due (or deferred). The window comes from
/// the stored load result and the pod-name regexes from the deterministic names, so this
/// works after the measurement's target pods and load Job are gone (Prometheus keeps their
/// series).
async fn pending(ctx: &Context, owner: &Owner, w: &WindowRead) -> PendingObserved {
    let collected = match (w.known, detail(&ctx.children, owner, &w.detail)) {
        (true, Some(load)) => {
            let usage = usage(ctx, owner, w, &load).await;
            Ok((load, usage))
        }
        (false, _) => Err(format!("cell {} is not in the spec", w.cell)),
        (_, None) => Err(format!(
            "the load result (ConfigMap {}) is gone, so its window is unknown",
            w.detail
        )),
    };
    PendingObserved {
        cell: w.cell,
        repeat: w.repeat,
        collected,
    }
}

/// What the slot decision is made from: every run in the controller's cache (once it is
/// ready: before it holds every run, holders could be missed) and a snapshot of this
/// process's grants. Not read for a finished run, which needs no slot.
pub async fn slot(ctx: &Context, run: &BenchmarkRun, status: &BenchmarkRunStatus) -> SlotFacts {
    let mut facts = SlotFacts {
        max: ctx.slots.max(),
        me: slots::key(run),
        max_queued_per_namespace: ctx.config.max_queued_per_namespace,
        ..SlotFacts::default()
    };
    if plan::is_finished(status) || ctx.store.wait_until_ready().await.is_err() {
        return facts;
    }
    facts.runs = Some(ctx.store.state().iter().map(|r| RunView::of(r)).collect());
    facts.granted = ctx.slots.granted();
    facts
}

/// A Deployment and its pods: readiness, restarts and problems of the containers named
/// `container` (the target's, or a backing service's).
fn target_state(d: &Deployment, pods: &[Pod], container: &str) -> TargetObserved {
    let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let st = d.status.clone().unwrap_or_default();
    let current = st.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0);
    let mut t = TargetObserved {
        ready: current
            && st.ready_replicas.unwrap_or(0) >= want
            && st.updated_replicas.unwrap_or(0) >= want
            && st.replicas.unwrap_or(0) == want,
        ..TargetObserved::default()
    };
    for p in pods {
        if let Some(n) = p.spec.as_ref().and_then(|s| s.node_name.clone()) {
            t.nodes.push(n);
        }
        if p.metadata.deletion_timestamp.is_none() {
            t.pods.push(p.name_any());
        }
        let ps = p.status.clone().unwrap_or_default();
        let created = p.metadata.creation_timestamp.as_ref().map(|t| t.0);
        for c in ps.conditions.unwrap_or_default() {
            if c.type_ == "Ready" && c.status == "True" {
                let at = c.last_transition_time.map(|t| t.0.as_millisecond());
                t.ready_since_ms = t.ready_since_ms.max(at);
                let took = at
                    .zip(created)
                    .map(|(r, c)| (r - c.as_millisecond()).max(0));
                t.ready_ms = t.ready_ms.max(took);
            }
        }
        if let Some(why) = unscheduled(p) {
            t.problem = Some(why);
        }
        for cs in ps
            .container_statuses
            .unwrap_or_default()
            .iter()
            .filter(|c| c.name == container)
        {
            t.restarts += cs.restart_count;
            let last = cs.last_state.as_ref().and_then(|s| s.terminated.clone());
            t.containers.push(container_facts(&p.name_any(), cs));
            let waiting = cs.state.as_ref().and_then(|s| s.waiting.clone());
            if let Some(w) = waiting {
                let reason = w.reason.unwrap_or_default();
                if PROBLEMS.contains(&reason.as_str()) {
                    let message = w.message.unwrap_or_default();
                    let mut msg = format!("{reason}: {message}");
                    if let Some(hint) = non_root_hint(&message) {
                        msg.push_str(hint);
                        t.fatal = true;
                    }
                    if let Some(term) = &last {
                        msg.push_str(&format!(
                            " (last exit: {} code {})",
                            term.reason.clone().unwrap_or_default(),
                            term.exit_code
                        ));
                    }
                    t.fatal |= FATAL.contains(&reason.as_str());
                    t.problem = Some(msg);
                }
            }
        }
    }
    t.nodes.sort();
    t.nodes.dedup();
    t.pods.sort();
    t
}

/// The size of the target container's image as the node of the first target pod lists it
/// (`node.status.images` in the nodes cache, matched by the image reference or digest the
/// container runs). `None` for an operator without the nodes cache (namespaced) or a node
/// that does not list the image.
fn image_bytes(c: &Children, pods: &[Pod]) -> Option<i64> {
    let pod = pods
        .iter()
        .find(|p| p.spec.as_ref().is_some_and(|s| s.node_name.is_some()))?;
    let node_name = pod.spec.as_ref()?.node_name.clone()?;
    let cs = pod
        .status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == TARGET_CONTAINER)?;
    let node = c
        .nodes
        .as_ref()?
        .get(&kube::runtime::reflector::ObjectRef::new(&node_name))?;
    let images = node.status.as_ref()?.images.as_ref()?;
    image_size(images, &[&cs.image, &cs.image_id])
}

/// The images the target containers of `pods` ran, by digest (their status's `imageID`),
/// distinct and sorted; empty until the kubelet reports them.
fn image_ids(pods: &[Pod]) -> Vec<String> {
    let mut ids: Vec<String> = pods
        .iter()
        .filter_map(|p| p.status.as_ref()?.container_statuses.as_ref())
        .flatten()
        .filter(|c| c.name == TARGET_CONTAINER && !c.image_id.is_empty())
        .map(|c| c.image_id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// What the nodes cache says of node `name`: `None` for an operator without the nodes cache
/// (namespaced) or a node it does not hold.
fn node_facts(c: &Children, name: &str) -> Option<benchrun_api::environment::NodeEnvironment> {
    let node = c
        .nodes
        .as_ref()?
        .get(&kube::runtime::reflector::ObjectRef::new(name))?;
    Some(crate::environment::node_environment(&node))
}

/// The size of the first listed image one of whose names is in `refs` (names may carry a
/// `docker.io/library/` prefix the container status leaves out).
fn image_size(images: &[ContainerImage], refs: &[&str]) -> Option<i64> {
    let wanted = |name: &str| {
        refs.iter().any(|r| {
            !r.is_empty()
                && (name == *r
                    || name.strip_prefix("docker.io/library/") == Some(r)
                    || name.strip_prefix("docker.io/") == Some(r))
        })
    };
    images
        .iter()
        .find(|i| i.names.iter().flatten().any(|n| wanted(n)))
        .and_then(|i| i.size_bytes)
}

/// Each backing service whose Deployment exists: its pod's readiness, its ClusterIP and its
/// seeding Job.
async fn services_state(
    ctx: &Context,
    owner: &Owner,
    wanted: &[ServiceRead],
) -> Vec<ServiceObserved> {
    let (c, ns) = (&ctx.children, &owner.namespace);
    let mine = |r: &str| names::common_labels(&owner.name, r);
    let uid = &owner.reference.uid;
    let deployments = owned(caches::owned(&c.deployments, ns, &mine(role::SERVICE), uid));
    let services = owned(caches::owned(&c.services, ns, &mine(role::SERVICE), uid));
    let seeds = owned(caches::owned(&c.jobs, ns, &mine(role::SEED), uid));
    let pods = owned(caches::matching(&c.pods, ns, &mine(role::SERVICE)));
    let seed_pods = owned(caches::matching(&c.pods, ns, &mine(role::SEED)));
    let pods_api = Api::<Pod>::namespaced(ctx.client.clone(), ns);
    let mut out = Vec::new();
    for s in wanted {
        let Some(d) = deployments.iter().find(|d| d.name_any() == s.child) else {
            continue;
        };
        let own = |p: &&Pod| p.labels().get(label::SERVICE) == d.labels().get(label::SERVICE);
        let mine: Vec<Pod> = pods.iter().filter(own).cloned().collect();
        let cluster_ip = services
            .iter()
            .find(|x| x.name_any() == s.child)
            .and_then(|x| x.spec.as_ref()?.cluster_ip.clone())
            .filter(|ip| !ip.is_empty() && ip != "None");
        let seed = match seeds.iter().find(|j| j.name_any() == s.seed_job) {
            None => SeedObserved::Absent,
            Some(j) => {
                let mine: Vec<Pod> = seed_pods
                    .iter()
                    .filter(|p| p.labels().get("job-name") == Some(&s.seed_job))
                    .cloned()
                    .collect();
                seed_state(j, &mine, &pods_api).await
            }
        };
        out.push(ServiceObserved {
            name: s.name.clone(),
            state: target_state(d, &mine, SERVICE_CONTAINER),
            cluster_ip,
            seed,
        });
    }
    out
}

/// A seeding Job's state; a failure names the Job's reason and the last lines of the log of
/// a pod that exited non-zero.
async fn seed_state(job: &Job, pods: &[Pod], api: &Api<Pod>) -> SeedObserved {
    let st = job.status.clone().unwrap_or_default();
    let conds = st.conditions.unwrap_or_default();
    let is = |t: &str| conds.iter().find(|c| c.type_ == t && c.status == "True");
    if is("Complete").is_some() {
        return SeedObserved::Succeeded(st.completion_time.map(|t| t.0.as_millisecond()));
    }
    let Some(c) = is("Failed") else {
        return SeedObserved::Running;
    };
    SeedObserved::Failed(job_failure(c, pods, api, SEED_CONTAINER, 3).await)
}

/// Why a Job failed: its `Failed` condition's reason and message, then the first of its pods
/// whose `container` exited non-zero, with its exit code and the last `lines` of its log.
async fn job_failure(
    c: &JobCondition,
    pods: &[Pod],
    api: &Api<Pod>,
    container: &str,
    lines: i64,
) -> String {
    let mut reason = format!(
        "{}: {}",
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default()
    );
    let exited = pods.iter().find_map(|p| {
        let t = p
            .status
            .as_ref()?
            .container_statuses
            .as_ref()?
            .iter()
            .find(|cs| cs.name == container)?
            .state
            .as_ref()?
            .terminated
            .clone()?;
        (t.exit_code != 0).then_some((p, t))
    });
    let never_scheduled = || pods.iter().find_map(|p| Some((p, unscheduled(p)?)));
    if let Some((p, t)) = exited {
        let params = LogParams {
            container: Some(container.into()),
            tail_lines: Some(lines),
            ..LogParams::default()
        };
        let log = api.logs(&p.name_any(), &params).await.unwrap_or_default();
        reason.push_str(&format!(
            "; pod {} exited {} ({}): {}",
            p.name_any(),
            t.exit_code,
            t.reason.unwrap_or_default(),
            log.trim()
        ));
    } else if let Some((p, why)) = never_scheduled() {
        // E.g. the load pods' CPU did not fit beside the target and its services.
        reason.push_str(&format!(
            "; pod {} was never scheduled: {why}",
            p.name_any()
        ));
    }
    reason
}

/// Why the scheduler has not placed a pod (its `PodScheduled=False` condition), if it has not.
fn unscheduled(p: &Pod) -> Option<String> {
    let c = p
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False")?;
    Some(format!(
        "{}: {}",
        c.reason.clone().unwrap_or_default(),
        c.message.clone().unwrap_or_default()
    ))
}

/// What to change when the kubelet refuses a container for `runAsNonRoot` (the image's user is
/// root or a name it cannot check); waiting does not help then.
fn non_root_hint(kubelet_message: &str) -> Option<&'static str> {
    kubelet_message.contains("runAsNonRoot").then_some(
        " (the image runs as root or as a user name: set targets[].runAsUser to a non-zero uid, \
         or targets[].podSecurity: Baseline if it must run as root)",
    )
}

/// A target container's restart count and last termination (see [`crate::kills`]).
fn container_facts(pod: &str, cs: &ContainerStatus) -> ContainerFacts {
    let state = cs.state.clone().unwrap_or_default();
    let backing_off = state
        .waiting
        .as_ref()
        .is_some_and(|w| w.reason.as_deref() == Some(kills::BACK_OFF));
    let last = state
        .terminated
        .clone()
        .or_else(|| cs.last_state.as_ref()?.terminated.clone());
    ContainerFacts {
        pod: pod.to_string(),
        restart_count: cs.restart_count,
        newest_dead: state.terminated.is_some() || backing_off,
        last_reason: last.as_ref().and_then(|t| t.reason.clone()),
        last_finished_ms: last
            .and_then(|t| t.finished_at)
            .map(|t| t.0.as_millisecond()),
    }
}

/// The last stdout line of a load pod that parses as a load result.
pub fn parse_log(log: &str) -> Result<LoadResult, String> {
    let one_line = || {
        log.lines()
            .rev()
            .find_map(|l| serde_json::from_str::<LoadResult>(l.trim()).ok())
    };
    // Pretty-printed JSON: the last object that starts at the beginning of a line.
    let pretty = || {
        let starts = log
            .match_indices('{')
            .map(|(i, _)| i)
            .filter(|&i| i == 0 || log.as_bytes()[i - 1] == b'\n');
        starts
            .rev()
            .find_map(|i| serde_json::from_str::<LoadResult>(log[i..].trim()).ok())
    };
    one_line().or_else(pretty).ok_or_else(|| {
        let tail: Vec<&str> = log.lines().rev().take(3).collect();
        format!(
            "no JSON result in its log (last lines: {:?})",
            tail.into_iter().rev().collect::<Vec<_>>()
        )
    })
}

fn completion_index(p: &Pod) -> Option<usize> {
    p.annotations()
        .get("batch.kubernetes.io/job-completion-index")?
        .parse()
        .ok()
}

/// Which roles (`benchrun.dev/role=target|load`) the cluster's nodes have, from the nodes
/// cache. An operator without it (namespaced: it may not list nodes) counts none.
fn node_roles(c: &Children) -> NodeRoles {
    let Some(nodes) = &c.nodes else {
        return NodeRoles::default();
    };
    if nodes.wait_until_ready().now_or_never().is_none() {
        return NodeRoles::default();
    }
    let all = nodes.state();
    let has = |role: &str| {
        all.iter()
            .any(|n| n.labels().get(placement::NODE_ROLE).map(String::as_str) == Some(role))
    };
    NodeRoles {
        target: has(placement::TARGET),
        load: has(placement::LOAD),
    }
}

/// The agreed start recorded on a load Job (see [`names::START_AT`]).
fn start_at(job: &Job) -> Option<i64> {
    job.annotations().get(names::START_AT)?.parse().ok()
}

/// When the last of a load Job's `load_pods` pods started its load container, Unix ms (the
/// kubelet reports it to the second); `None` until every one of them has started.
fn load_started(pods: &[Pod], load_pods: i32) -> Option<i64> {
    let started: Vec<i64> = pods
        .iter()
        .filter_map(|p| {
            let s = p
                .status
                .as_ref()?
                .container_statuses
                .as_ref()?
                .iter()
                .find(|c| c.name == LOAD_CONTAINER)?
                .state
                .as_ref()?;
            let at = s
                .running
                .as_ref()
                .and_then(|r| r.started_at.as_ref())
                .or(s.terminated.as_ref().and_then(|t| t.started_at.as_ref()))?;
            Some(at.0.as_millisecond())
        })
        .collect();
    (started.len() >= load_pods.max(1) as usize)
        .then(|| started.into_iter().max())
        .flatten()
}

async fn job_state(
    job: &Job,
    pods: &[Pod],
    api: &Api<Pod>,
    load_pods: i32,
    have_detail: bool,
) -> JobObserved {
    let conds = job
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let is = |t: &str| conds.iter().find(|c| c.type_ == t && c.status == "True");
    if let Some(c) = is("Failed") {
        let reason = job_failure(c, pods, api, LOAD_CONTAINER, 2).await;
        return JobObserved::Failed(reason);
    }
    // The succeeded pod of each completion index, if any.
    let succeeded: Vec<Option<&Pod>> = (0..load_pods.max(1) as usize)
        .map(|i| {
            pods.iter().find(|p| {
                completion_index(p) == Some(i)
                    && p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded")
            })
        })
        .collect();
    // Every indexed pod succeeded: the Job is complete, whether or not the Job controller
    // has said so yet.
    if is("Complete").is_none() && succeeded.iter().any(Option::is_none) {
        return JobObserved::Running;
    }
    if have_detail {
        // The merged result is stored; the logs need not be read again.
        return JobObserved::Succeeded(Vec::new());
    }
    let mut results = Vec::new();
    for (i, pod) in succeeded.into_iter().enumerate() {
        results.push(match pod {
            None => Err(format!("no succeeded pod with completion index {i}")),
            Some(p) => match api
                .logs(
                    &p.name_any(),
                    &LogParams {
                        container: Some(LOAD_CONTAINER.into()),
                        ..LogParams::default()
                    },
                )
                .await
            {
                Ok(log) => parse_log(&log),
                Err(e) => Err(format!("failed to read the log of {}: {e}", p.name_any())),
            },
        });
    }
    JobObserved::Succeeded(results)
}

/// Asks Prometheus for the window `w` of the stored load result `load`.
async fn usage(ctx: &Context, owner: &Owner, w: &WindowRead, load: &LoadResult) -> Collection {
    let url = w
        .url
        .clone()
        .unwrap_or_else(|| ctx.config.prometheus_url.clone());
    let prom = match ctx.prometheus.get(&url) {
        Ok(p) => p.with_sample_interval(ctx.config.sample_interval),
        Err(e) => return Collection::Answered(Err(e.to_string())),
    };
    let ts = |ms: u64| Timestamp::from_millisecond(ms as i64).map_err(|e| e.to_string());
    let (start, end) = match (ts(load.window_start_ms), ts(load.window_end_ms)) {
        (Ok(start), Ok(end)) => (start, end),
        (Err(e), _) | (_, Err(e)) => return Collection::Answered(Err(e)),
    };
    let q = UsageQuery {
        namespace: owner.namespace.clone(),
        target_pods: w.target_pods.clone(),
        load_pods: w.load_pods.clone(),
        start,
        end,
        target_cpu_limit_cores: w.target_cpu_limit_cores,
        target_pod_cpu_limit_cores: w.target_pod_cpu_limit_cores,
        before_load: w.job_created,
        extra: w.extra.clone(),
        confine_extra: ctx.config.policy.confines_queries(),
        services: w
            .services
            .iter()
            .map(|(name, pods, cores)| ServiceQuery {
                name: name.clone(),
                pods: pods.clone(),
                cpu_limit_cores: *cores,
            })
            .collect(),
    };
    match prom.usage(&q).await {
        Ok(u) => Collection::Answered(Ok(u)),
        // Down, restarting or overloaded: the window can be asked for again later.
        Err(e) if e.is_transient() => Collection::Unreachable(format!("Prometheus at {url}: {e}")),
        Err(e) => Collection::Answered(Err(format!("Prometheus at {url}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_size_is_found_by_reference_or_digest() {
        let images = vec![
            ContainerImage {
                names: Some(vec!["docker.io/library/nginx:1.27".into()]),
                size_bytes: Some(70_000_000),
            },
            ContainerImage {
                names: Some(vec![
                    "benchrun.local/benchrun-demo@sha256:abc".into(),
                    "benchrun.local/benchrun-demo:0.1.0".into(),
                ]),
                size_bytes: Some(4_200_000),
            },
        ];
        let demo = image_size(&images, &["benchrun.local/benchrun-demo:0.1.0", ""]);
        assert_eq!(demo, Some(4_200_000));
        let by_digest = image_size(&images, &["x", "benchrun.local/benchrun-demo@sha256:abc"]);
        assert_eq!(by_digest, Some(4_200_000));
        assert_eq!(image_size(&images, &["nginx:1.27"]), Some(70_000_000));
        assert_eq!(image_size(&images, &["redis:7", ""]), None);
    }

    #[test]
    fn a_pod_the_scheduler_could_not_place_says_why() {
        let pending: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "run-c8-r0-0"},
            "status": {"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": "0/1 nodes are available: 1 Insufficient cpu."
            }]}
        }))
        .unwrap();
        assert_eq!(
            unscheduled(&pending).as_deref(),
            Some("Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.")
        );
        let placed: Pod = serde_json::from_value(serde_json::json!({
            "status": {"phase": "Running", "conditions": [
                {"type": "PodScheduled", "status": "True"}
            ]}
        }))
        .unwrap();
        assert_eq!(unscheduled(&placed), None);
        assert_eq!(unscheduled(&Pod::default()), None);
    }

    #[test]
    fn a_pretty_printed_result_at_the_end_of_the_log_is_found() {
        let result = crate::plan::tests::load_result(0);
        let pretty = serde_json::to_string_pretty(&result).unwrap();
        let log = format!("starting\n{{\"partial\": 1}}\n{pretty}\n");
        assert_eq!(parse_log(&log), Ok(result));
    }

    #[test]
    fn a_root_image_refused_for_run_as_non_root_names_both_fixes() {
        let hint = non_root_hint(
            "container has runAsNonRoot and image will run as root (pod: \"a\", container: target)",
        )
        .unwrap();
        assert!(hint.contains("runAsUser") && hint.contains("podSecurity: Baseline"));
        assert_eq!(non_root_hint("secret \"x\" not found"), None);
    }

    #[test]
    fn the_result_is_the_last_json_line_of_the_log() {
        let line = serde_json::to_string(&serde_json::json!({"not": "a result"})).unwrap();
        let err = parse_log(&format!("starting\n{line}\n")).unwrap_err();
        assert!(err.contains("no JSON result"), "{err}");
    }
}
