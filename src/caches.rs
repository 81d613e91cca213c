//! The watch caches observation reads the runs' children from: one reflector store per kind,
//! fed by the same watches that wake the runs ([`crate::controller::run`]), so a reconcile
//! sends the apiserver no read for what the controller already watches. Only the runs'
//! own children are cached (the `app.kubernetes.io/managed-by=benchrun` label); nodes only for
//! a cluster-wide operator (a namespaced one may not list them).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod, Service};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::{Resource, ResourceExt};

/// The stores of the runs' children (and the nodes).
#[derive(Clone)]
pub struct Children {
    /// Target and backing-service Deployments.
    pub deployments: Store<Deployment>,
    /// Target and backing-service Services.
    pub services: Store<Service>,
    /// Load and seeding Jobs.
    pub jobs: Store<Job>,
    /// Detail ConfigMaps (the merged load results).
    pub configmaps: Store<ConfigMap>,
    /// The children's pods.
    pub pods: Store<Pod>,
    /// Every node, when the operator may list them (decided once at start,
    /// [`crate::observe::nodes::probe`]).
    pub nodes: Option<Store<Node>>,
    /// Until when a reconcile waits for the nodes store's first listing ([`NODES_WAIT`] after
    /// the stores were made): after that it never waits for it again.
    nodes_until: tokio::time::Instant,
}

/// The writers that fill [`Children`], one per store.
pub struct Writers {
    /// Deployments.
    pub deployments: reflector::store::Writer<Deployment>,
    /// Services.
    pub services: reflector::store::Writer<Service>,
    /// Jobs.
    pub jobs: reflector::store::Writer<Job>,
    /// ConfigMaps.
    pub configmaps: reflector::store::Writer<ConfigMap>,
    /// Pods.
    pub pods: reflector::store::Writer<Pod>,
    /// Nodes (absent for a namespaced operator).
    pub nodes: Option<reflector::store::Writer<Node>>,
}

/// How long a reconcile waits for the children caches' first listing before it fails (and is
/// retried).
const SYNC_WAIT: Duration = match cfg!(test) {
    true => Duration::from_millis(100),
    false => Duration::from_secs(30),
};
/// How long after start a reconcile may wait for the nodes cache's first listing. The node
/// store exists only when the operator was found able to read nodes (or could not tell), so
/// the listing normally comes within a second; should it not (the right was taken away), the
/// nodes' roles, room and image sizes are read as unknown, and no later reconcile waits.
const NODES_WAIT: Duration = Duration::from_secs(5);

impl Children {
    /// Empty stores and their writers; with `nodes`, a node store too.
    pub fn new(nodes: bool) -> (Self, Writers) {
        let (deployments, dw) = reflector::store();
        let (services, sw) = reflector::store();
        let (jobs, jw) = reflector::store();
        let (configmaps, cw) = reflector::store();
        let (pods, pw) = reflector::store();
        let (node_store, nw) = match nodes {
            true => {
                let (s, w) = reflector::store();
                (Some(s), Some(w))
            }
            false => (None, None),
        };
        (
            Children {
                deployments,
                services,
                jobs,
                configmaps,
                pods,
                nodes: node_store,
                nodes_until: tokio::time::Instant::now() + NODES_WAIT,
            },
            Writers {
                deployments: dw,
                services: sw,
                jobs: jw,
                configmaps: cw,
                pods: pw,
                nodes: nw,
            },
        )
    }

    /// Waits until every children store has been listed once: before that an absent child
    /// could be one not listed yet. Fails after [`SYNC_WAIT`]. Waits for the nodes store only
    /// during the first [`NODES_WAIT`] after start, and goes on without it.
    pub async fn synced(&self) -> Result<(), String> {
        let all = async {
            self.deployments.wait_until_ready().await.ok()?;
            self.services.wait_until_ready().await.ok()?;
            self.jobs.wait_until_ready().await.ok()?;
            self.configmaps.wait_until_ready().await.ok()?;
            self.pods.wait_until_ready().await.ok()?;
            Some(())
        };
        match tokio::time::timeout(SYNC_WAIT, all).await {
            Ok(Some(())) => {}
            Ok(None) => return Err("the watch caches were dropped".into()),
            Err(_) => {
                return Err(format!(
                    "the watch caches of the runs' children are not synced after {:?}",
                    SYNC_WAIT
                ))
            }
        }
        if let Some(n) = &self.nodes {
            let _ = tokio::time::timeout_at(self.nodes_until, n.wait_until_ready()).await;
        }
        Ok(())
    }
}

/// What the watch caches drop from every object before storing it: its `managedFields` (the
/// field owners of every write, often as large as the object, read by nothing here) and the
/// `kubectl.kubernetes.io/last-applied-configuration` annotation (a second copy of a
/// kubectl-applied object). Applied to each watch stream with `WatchStreamExt::modify`. Pure.
pub fn strip<K: Resource>(o: &mut K) {
    let meta = o.meta_mut();
    meta.managed_fields = None;
    if let Some(a) = meta.annotations.as_mut() {
        a.remove(LAST_APPLIED);
    }
}

/// The annotation `kubectl apply` keeps its last applied object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The object `name` in `namespace`, if cached.
pub fn get<K>(store: &Store<K>, namespace: &str, name: &str) -> Option<Arc<K>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    store.get(&ObjectRef::new(name).within(namespace))
}

/// The cached objects in `namespace` that carry every label of `labels`, by name.
pub fn matching<K>(
    store: &Store<K>,
    namespace: &str,
    labels: &BTreeMap<String, String>,
) -> Vec<Arc<K>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    let mut out: Vec<Arc<K>> = store
        .state()
        .into_iter()
        .filter(|o| o.namespace().as_deref() == Some(namespace) && has_labels(o.labels(), labels))
        .collect();
    out.sort_by_key(|o| o.name_any());
    out
}

/// The cached objects in `namespace` that carry every label of `labels` and the controller
/// owner reference of the run with uid `run_uid` ([`crate::ownership::is_ours`]), by name:
/// an object that merely carries a run's labels is not the run's.
pub fn owned<K>(
    store: &Store<K>,
    namespace: &str,
    labels: &BTreeMap<String, String>,
    run_uid: &str,
) -> Vec<Arc<K>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    let mut out = matching(store, namespace, labels);
    out.retain(|o| crate::ownership::is_ours(o.meta(), run_uid));
    out
}

/// Whether `have` includes every label of `want`. Pure.
pub fn has_labels(have: &BTreeMap<String, String>, want: &BTreeMap<String, String>) -> bool {
    want.iter().all(|(k, v)| have.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selector_matches_objects_with_every_one_of_its_labels() {
        let have = BTreeMap::from([
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string()),
        ]);
        let want = |kv: &[(&str, &str)]| {
            kv.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        };
        assert!(has_labels(&have, &want(&[])));
        assert!(has_labels(&have, &want(&[("a", "1")])));
        assert!(has_labels(&have, &want(&[("a", "1"), ("b", "2")])));
        assert!(!has_labels(&have, &want(&[("a", "2")])));
        assert!(!has_labels(&have, &want(&[("c", "1")])));
    }

    use kube::runtime::watcher::Event;

    #[tokio::test]
    async fn cached_children_are_found_by_namespace_and_labels() {
        let (children, mut w) = Children::new(false);
        let pod = |ns: &str, name: &str, run: &str| -> Pod {
            serde_json::from_value(serde_json::json!({
                "metadata": {"namespace": ns, "name": name, "labels": {"run": run}}
            }))
            .unwrap()
        };
        w.pods.apply_watcher_event(&Event::Init);
        for p in [
            pod("a", "p2", "x"),
            pod("a", "p1", "x"),
            pod("b", "p3", "x"),
            pod("a", "p4", "y"),
        ] {
            w.pods.apply_watcher_event(&Event::InitApply(p));
        }
        w.pods.apply_watcher_event(&Event::InitDone);
        let x = BTreeMap::from([("run".to_string(), "x".to_string())]);
        let names: Vec<String> = matching(&children.pods, "a", &x)
            .iter()
            .map(|p| p.name_any())
            .collect();
        assert_eq!(names, ["p1", "p2"]);
        assert!(get(&children.pods, "b", "p3").is_some());
        assert!(get(&children.pods, "a", "p3").is_none());
    }

    #[tokio::test]
    async fn past_the_first_seconds_a_nodes_cache_that_never_synced_is_not_waited_for() {
        let (mut children, mut w) = Children::new(true);
        w.deployments.apply_watcher_event(&Event::Init);
        w.deployments.apply_watcher_event(&Event::InitDone);
        w.services.apply_watcher_event(&Event::Init);
        w.services.apply_watcher_event(&Event::InitDone);
        w.jobs.apply_watcher_event(&Event::Init);
        w.jobs.apply_watcher_event(&Event::InitDone);
        w.configmaps.apply_watcher_event(&Event::Init);
        w.configmaps.apply_watcher_event(&Event::InitDone);
        w.pods.apply_watcher_event(&Event::Init);
        w.pods.apply_watcher_event(&Event::InitDone);
        // The nodes store is never listed (the right to list nodes was taken away).
        children.nodes_until = tokio::time::Instant::now();
        for _ in 0..3 {
            let started = std::time::Instant::now();
            children.synced().await.expect("the children are synced");
            assert!(
                started.elapsed() < Duration::from_millis(50),
                "waited {:?}",
                started.elapsed()
            );
        }
    }

    #[test]
    fn cached_objects_keep_no_field_owners_and_no_copy_of_a_kubectl_apply() {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "p", "namespace": "a",
                "labels": {"run": "x"},
                "annotations": {LAST_APPLIED: "{\"big\": true}", "keep": "me"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
            },
            "spec": {"nodeName": "n", "containers": [{"name": "c"}]},
        }))
        .unwrap();
        strip(&mut pod);
        assert_eq!(pod.metadata.managed_fields, None);
        assert_eq!(
            pod.annotations(),
            &BTreeMap::from([("keep".to_string(), "me".to_string())])
        );
        assert_eq!(pod.labels().get("run").map(String::as_str), Some("x"));
        assert_eq!(pod.spec.unwrap().node_name.as_deref(), Some("n"));
    }
}
