//! The nodes' room for new pods (allocatable minus the requests of the pods on them), read for
//! the fit check before a run takes the measuring slot ([`crate::plan::fit`]), and how long a
//! load pod may wait for the scheduler.

use std::collections::BTreeMap;

use futures::FutureExt as _;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::ListParams;
use kube::{Api, ResourceExt};

use crate::context::Context;
use crate::observed::{NodeRoom, NodeTaint};

/// How long past its start a load pod may stay unscheduled (`PodScheduled=False`, reason
/// `Unschedulable`) before its measurement fails quoting the scheduler: time for the previous
/// measurement's load pod, which its CPU may wait for, to be gone.
pub const LOAD_UNSCHEDULABLE_GRACE_MS: i64 = 30_000;

/// Why the fit check cannot be done by this operator at all: it has no nodes cache (a
/// namespaced install may not read nodes). `None` when it has one.
pub fn no_node_access(c: &crate::caches::Children) -> Option<String> {
    c.nodes.is_none().then(|| NO_NODE_ACCESS.to_string())
}

/// What the Accepted condition says in an install without node read access.
pub const NO_NODE_ACCESS: &str =
    "no node read access (a namespaced install, or no benchrun-operator-node-reader ClusterRole)";

/// Whether this operator may read nodes, found once at start ([`probe`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeAccess {
    /// A list of nodes was answered.
    Granted,
    /// The apiserver refused it (403): no node store, no wait for one, no watch retried.
    Denied,
    /// The answer was some other error (the apiserver not reachable yet, say): the nodes are
    /// watched as if granted, and a reconcile waits for them only in the first seconds.
    Unknown(String),
}

impl NodeAccess {
    /// Whether to watch and cache the nodes.
    pub fn watch(&self) -> bool {
        !matches!(self, NodeAccess::Denied)
    }
}

/// What the answer to a list of nodes says of the operator's access. Pure.
pub fn access_of(answer: Result<(), &kube::Error>) -> NodeAccess {
    match answer {
        Ok(()) => NodeAccess::Granted,
        Err(kube::Error::Api(s)) if s.code == 403 => NodeAccess::Denied,
        Err(e) => NodeAccess::Unknown(e.to_string()),
    }
}

/// Asks the apiserver once, at start, for one node's metadata: whether this operator may read
/// nodes ([`access_of`]), logged once. Without it the nodes are neither watched nor waited for,
/// and what needs them (node roles, the fit check, image sizes) is skipped, as the runs say.
pub async fn probe(client: &kube::Client) -> NodeAccess {
    let answer = Api::<Node>::all(client.clone())
        .list_metadata(&ListParams::default().limit(1))
        .await;
    let access = access_of(answer.as_ref().map(|_| ()));
    match &access {
        NodeAccess::Granted => {
            tracing::info!("nodes can be read: node roles and the fit check are on")
        }
        NodeAccess::Denied => tracing::info!(
            "{NO_NODE_ACCESS}: node roles, the fit check and image sizes are skipped"
        ),
        NodeAccess::Unknown(e) => {
            let error = crate::logtext::cap(e, crate::logtext::LOG_MAX);
            tracing::warn!(%error, "could not tell whether nodes can be read; watching them")
        }
    }
    access
}

/// Every schedulable node's room, from the nodes cache and a list of the cluster's unfinished
/// pods; why not when the operator has no nodes cache or cannot list pods cluster-wide (a
/// namespaced install has no right to; the fit check is then not done, and the run says so).
pub async fn rooms(ctx: &Context) -> Result<Vec<NodeRoom>, String> {
    let Some(cache) = &ctx.children.nodes else {
        tracing::debug!("no nodes cache (a namespaced operator); skipping the fit check");
        return Err(NO_NODE_ACCESS.into());
    };
    if cache.wait_until_ready().now_or_never().is_none() {
        tracing::debug!("the nodes cache is not synced; skipping the fit check");
        return Err(
            "the operator's nodes cache is not synced yet (no node read access so far)".into(),
        );
    }
    let nodes: Vec<Node> = cache.state().iter().map(|n| (**n).clone()).collect();
    // Every pod in the cluster counts against a node's room, not only the runs' children, so
    // this one list is not served by a cache; it is read once per run, before it takes a slot.
    let pods = match Api::<Pod>::all(ctx.client.clone())
        .list(&ListParams::default().fields("status.phase!=Succeeded,status.phase!=Failed"))
        .await
    {
        Ok(p) => p.items,
        Err(e) => {
            tracing::debug!(error = %e, "cannot list pods; skipping the fit check");
            return Err(format!("the operator cannot list the cluster's pods ({e})"));
        }
    };
    Ok(room_of(&nodes, &pods))
}

/// Each schedulable node's room given the pods (not finished) bound to it. Pure.
pub fn room_of(nodes: &[Node], pods: &[Pod]) -> Vec<NodeRoom> {
    let mut requested: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for p in pods {
        let Some(spec) = &p.spec else { continue };
        let Some(node) = spec.node_name.as_deref() else {
            continue;
        };
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
        if matches!(phase, Some("Succeeded" | "Failed")) || will_make_room(p) {
            continue;
        }
        let (cpu, memory) = pod_requests(spec);
        let e = requested.entry(node).or_default();
        e.0 += cpu;
        e.1 += memory;
    }
    nodes
        .iter()
        .filter(|n| {
            !n.spec
                .as_ref()
                .and_then(|s| s.unschedulable)
                .unwrap_or(false)
        })
        .map(|n| {
            let alloc = n.status.as_ref().and_then(|s| s.allocatable.as_ref());
            let q = |k: &str| alloc.and_then(|a| a.get(k)).map(|q| q.0.clone());
            let name = n.name_any();
            let (cpu_requested, memory_requested) =
                requested.get(name.as_str()).copied().unwrap_or_default();
            let taints = n
                .spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .into_iter()
                .flatten()
                .filter(|t| matches!(t.effect.as_str(), "NoSchedule" | "NoExecute"))
                .map(|t| NodeTaint {
                    key: t.key.clone(),
                    value: t.value.clone().unwrap_or_default(),
                    effect: t.effect.clone(),
                })
                .collect();
            NodeRoom {
                taints,
                labels: n.labels().clone(),
                cpu_allocatable: q("cpu").map_or(0, |c| cpu(&c)),
                memory_allocatable: q("memory").map_or(0, |m| memory(&m)),
                cpu_requested,
                memory_requested,
                name,
            }
        })
        .collect()
}

/// A pod whose requests will be free by the time the granted run deploys: one being deleted,
/// or a child of another benchrun run (the slot is granted to one run of a node pool at a time,
/// so such children are what a finished or failed run leaves until its cleanup, which the
/// operator does before anything new is deployed). Counting them failed a 500m cell of a run
/// that was granted the slot while the previous run's 500m target was still terminating.
fn will_make_room(p: &Pod) -> bool {
    p.metadata.deletion_timestamp.is_some()
        || p.labels()
            .get(crate::names::label::MANAGED_BY)
            .map(String::as_str)
            == Some("benchrun")
}

fn cpu(q: &str) -> i64 {
    benchrun_api::units::cpu_millis(q).unwrap_or(0)
}

fn memory(q: &str) -> i64 {
    benchrun_api::units::memory_bytes(q).unwrap_or(0)
}

/// A pod's effective requests as the scheduler counts them: the sum over its containers, or
/// an init container's when larger, plus the pod overhead.
fn pod_requests(spec: &k8s_openapi::api::core::v1::PodSpec) -> (i64, i64) {
    let req = |r: Option<&k8s_openapi::api::core::v1::ResourceRequirements>| {
        let m = r.and_then(|r| r.requests.as_ref());
        let get = |k: &str| m.and_then(|m| m.get(k)).map(|q| q.0.clone());
        (
            get("cpu").map_or(0, |c| cpu(&c)),
            get("memory").map_or(0, |b| memory(&b)),
        )
    };
    let (mut c, mut m) = spec
        .containers
        .iter()
        .map(|x| req(x.resources.as_ref()))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    for init in spec.init_containers.iter().flatten() {
        let (ic, im) = req(init.resources.as_ref());
        c = c.max(ic);
        m = m.max(im);
    }
    if let Some(o) = &spec.overhead {
        c += o.get("cpu").map_or(0, |q| cpu(&q.0));
        m += o.get("memory").map_or(0, |q| memory(&q.0));
    }
    (c, m)
}

/// The scheduler's word on a load pod that has waited past its start by more than
/// [`LOAD_UNSCHEDULABLE_GRACE_MS`] (`start_ms`: the Job's agreed start, else its creation):
/// `pod NAME cannot be scheduled: Unschedulable: 0/2 nodes are available: ...`. Pure.
pub fn load_unschedulable(pods: &[Pod], start_ms: Option<i64>, now_ms: i64) -> Option<String> {
    if now_ms - start_ms? <= LOAD_UNSCHEDULABLE_GRACE_MS {
        return None;
    }
    pods.iter().find_map(|p| {
        let c = p
            .status
            .as_ref()?
            .conditions
            .as_ref()?
            .iter()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")?;
        (c.reason.as_deref() == Some("Unschedulable")).then(|| {
            format!(
                "load pod {} could not be scheduled {} s after its start: {}: {}",
                p.name_any(),
                (now_ms - start_ms.unwrap_or(now_ms)) / 1000,
                c.reason.clone().unwrap_or_default(),
                c.message.clone().unwrap_or_default()
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn node_access_is_found_from_one_list_refused_granted_or_unknown() {
        use crate::fake_api::{FakeApi, Fault};
        let fake = FakeApi::new();
        assert_eq!(probe(&fake.client()).await, NodeAccess::Granted);
        let forbidden = "nodes is forbidden: User \"system:serviceaccount:benchrun:op\" cannot list resource \"nodes\"";
        fake.fail(
            http::Method::GET,
            "/api/v1/nodes",
            Fault::Status(403, "Forbidden", forbidden.into()),
            1,
        );
        let denied = probe(&fake.client()).await;
        assert_eq!(denied, NodeAccess::Denied);
        assert!(!denied.watch(), "no watch, so no wait for one");
        fake.fail(http::Method::GET, "/api/v1/nodes", Fault::Disconnect, 1);
        let unknown = probe(&fake.client()).await;
        assert!(matches!(unknown, NodeAccess::Unknown(_)), "{unknown:?}");
        assert!(unknown.watch());
        let lists = fake
            .requests()
            .iter()
            .filter(|r| r.is_list_of("nodes"))
            .count();
        assert_eq!(lists, 3, "one list each");
    }

    fn node(name: &str, role: &str, cpu: &str) -> Node {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"benchrun.dev/role": role}},
            "status": {"allocatable": {"cpu": cpu, "memory": "4Gi"}}
        }))
        .unwrap()
    }

    fn pod(node: &str, cpu: &str, phase: &str) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"nodeName": node, "containers": [
                {"name": "a", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}},
                {"name": "b"}
            ]},
            "status": {"phase": phase}
        }))
        .unwrap()
    }

    #[test]
    fn room_is_allocatable_minus_the_requests_of_unfinished_pods_on_the_node() {
        let nodes = [node("n1", "target", "1"), node("n2", "load", "1000m")];
        let pods = [
            pod("n2", "50m", "Running"),
            pod("n2", "50m", "Running"),
            pod("n2", "900m", "Succeeded"),
            pod("n1", "1m", "Pending"),
        ];
        let rooms = room_of(&nodes, &pods);
        assert_eq!(rooms.len(), 2);
        assert_eq!((rooms[0].name.as_str(), rooms[0].cpu_requested), ("n1", 1));
        assert_eq!(
            (
                rooms[1].cpu_allocatable,
                rooms[1].cpu_requested,
                rooms[1].memory_requested
            ),
            (1000, 100, 128 << 20)
        );
        assert_eq!(rooms[1].memory_allocatable, 4 << 30);
        assert_eq!(rooms[1].labels["benchrun.dev/role"], "load");
    }

    #[test]
    fn only_the_taints_that_keep_pods_off_are_kept() {
        let mut n = node("n1", "target", "1");
        n.spec = Some(
            serde_json::from_value(serde_json::json!({"taints": [
                {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
                {"key": "soft", "effect": "PreferNoSchedule"},
                {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
            ]}))
            .unwrap(),
        );
        let rooms = room_of(&[n], &[]);
        let taints: Vec<String> = rooms[0].taints.iter().map(NodeTaint::text).collect();
        assert_eq!(
            taints,
            [
                "dedicated=db:NoSchedule",
                "node.kubernetes.io/unreachable:NoExecute"
            ]
        );
    }

    #[test]
    fn terminating_pods_and_other_runs_children_leave_room() {
        let nodes = [node("n1", "target", "1")];
        let mut leaving = pod("n1", "500m", "Running");
        leaving.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                "2026-12-06T04:12:08Z".parse().unwrap(),
            ));
        let mut child = pod("n1", "300m", "Running");
        child.metadata.labels = Some(
            [(
                "app.kubernetes.io/managed-by".to_string(),
                "benchrun".to_string(),
            )]
            .into(),
        );
        let staying = pod("n1", "100m", "Running");
        let rooms = room_of(&nodes, &[leaving, child, staying]);
        assert_eq!(rooms[0].cpu_requested, 100);
    }

    #[test]
    fn cordoned_nodes_have_no_room() {
        let mut n = node("n1", "target", "1");
        n.spec = Some(k8s_openapi::api::core::v1::NodeSpec {
            unschedulable: Some(true),
            ..Default::default()
        });
        assert!(room_of(&[n], &[]).is_empty());
    }

    #[test]
    fn a_load_pod_unschedulable_past_the_grace_quotes_the_scheduler() {
        let p: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "run-0-0-abc"},
            "status": {"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector."
            }]}
        }))
        .unwrap();
        assert_eq!(
            load_unschedulable(std::slice::from_ref(&p), Some(0), 30_000),
            None
        );
        assert_eq!(
            load_unschedulable(std::slice::from_ref(&p), None, 90_000),
            None
        );
        let why = load_unschedulable(&[p], Some(0), 31_000).unwrap();
        assert!(why.starts_with("load pod run-0-0-abc could not be scheduled 31 s after its start: Unschedulable: 0/2 nodes are available: 1 Insufficient cpu"), "{why}");
    }
}
