//! The controller against an in-memory apiserver ([`crate::fake_api`]): reconciles that
//! carry a cell from its first apply to its recorded result, an apply the apiserver refuses,
//! failing writes retried with backoff, reads served from the caches (none sent while they
//! hold the children; none answered before they are synced), and a watch of the runs that is
//! lost and listed again.
//!
//! The tests play the cluster between reconciles (a Deployment becomes available, a Job
//! completes and its pod's log holds the load result). Prometheus is a closed loopback port:
//! the window's CPU and memory are given up and the result is recorded without them.

use std::time::Duration;

use benchrun_api::{BenchmarkRunSpec, Outcome, Phase, WarningCode};
use http::Method;
use jiff::SignedDuration;
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::reflector::{self, store::Writer};
use serde_json::json;

use super::*;
use crate::builders::{LoadSettings, DETAIL_KEY};
use crate::fake_api::{FakeApi, Fault, Seen};
use crate::policy::Policy;

const NS: &str = "bench";
const TARGET: &str = crate::builders::TARGET_CONTAINER;

/// One cell, one repeat: the load result of [`crate::results::tests::load`] fits it.
const SPEC: &str = r#"
targets: [{name: web, image: example/web:1, port: 3000, readinessPath: /healthz}]
scenarios: [{name: hello, path: /hello}]
resources: {cpu: "500m", memory: 128Mi}
load: {connections: 100, duration: 10s, warmup: 3s}
"#;

/// `secs` seconds before `now`, as the apiserver writes a time.
fn before(now: Timestamp, secs: i64) -> Time {
    Time(now - SignedDuration::from_secs(secs))
}

/// Run `name` of [`SPEC`] in [`NS`], created `age_s` seconds ago.
fn benchmark_run(name: &str, age_s: i64) -> BenchmarkRun {
    let spec: BenchmarkRunSpec = serde_yaml::from_str(SPEC).expect("the spec parses");
    let mut run = BenchmarkRun::new(name, spec);
    run.metadata.namespace = Some(NS.into());
    run.metadata.uid = Some(format!("uid-{name}"));
    run.metadata.generation = Some(1);
    run.metadata.creation_timestamp = Some(before(Timestamp::now(), age_s));
    run
}

/// The cluster's one node: room for any cell, and the target's image in its image list.
fn node() -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": "node-a"},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "images": [{"names": ["docker.io/example/web:1"], "sizeBytes": 52_000_000}],
        },
    }))
    .expect("a node")
}

/// A loopback URL nothing listens on (the port was free a moment ago).
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    format!("http://{}", listener.local_addr().expect("its address"))
}

/// The operator's settings in these tests: one measuring slot, Prometheus on a closed
/// loopback port, and CPU and memory given up as soon as Prometheus is found unreachable.
fn config() -> Config {
    let prometheus_url = closed_port();
    Config {
        policy: Policy::new(&prometheus_url, &[], &[]),
        prometheus_url,
        load: LoadSettings {
            image: "benchrun.local/benchrun-load:test".into(),
            pull_policy: "IfNotPresent".into(),
        },
        image_pull_policy: "IfNotPresent".into(),
        max_measuring_runs: 1,
        max_queued_per_namespace: 0,
        namespace: None,
        metrics_retry_for: Duration::ZERO,
        sample_interval: Duration::from_secs(10),
    }
}

/// The operator's reconciles as the controller makes them, without its watches: before each
/// reconcile the runs cache is given every run as the apiserver holds it, as the watch of the
/// runs would have.
struct Operator {
    fake: FakeApi,
    ctx: Arc<Context>,
    cache: Writer<BenchmarkRun>,
    children: crate::caches::Writers,
    /// Whether [`Operator::reconcile`] fills the children caches first.
    relist: bool,
}

/// Fills `w` with every object of its kind the fake holds, as a watch's (re)list would.
fn relist<K>(fake: &FakeApi, w: &mut Writer<K>)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + 'static,
{
    w.apply_watcher_event(&watcher::Event::Init);
    for o in fake.list::<K>(None) {
        w.apply_watcher_event(&watcher::Event::InitApply(o));
    }
    w.apply_watcher_event(&watcher::Event::InitDone);
}

impl Operator {
    /// An operator whose synced cache holds the runs stored in `fake`.
    fn new(fake: &FakeApi) -> Self {
        let (store, mut cache) = reflector::store();
        cache.apply_watcher_event(&watcher::Event::Init);
        for run in fake.list::<BenchmarkRun>(None) {
            cache.apply_watcher_event(&watcher::Event::InitApply(run));
        }
        cache.apply_watcher_event(&watcher::Event::InitDone);
        let client = fake.client();
        let config = config();
        let (children, writers) = crate::caches::Children::new(true);
        let reporter = Reporter {
            controller: MANAGER.into(),
            instance: None,
        };
        let ctx = Arc::new(Context {
            client: client.clone(),
            slots: Slots::new(config.max_measuring_runs),
            recorder: Recorder::new(client, reporter),
            store,
            children,
            metrics: Arc::new(Metrics::default()),
            prometheus: PrometheusClients::new(),
            failures: Mutex::default(),
            config,
        });
        Operator {
            fake: fake.clone(),
            ctx,
            cache,
            children: writers,
            relist: true,
        }
    }

    /// The run `name` as the apiserver holds it.
    fn run(&self, name: &str) -> BenchmarkRun {
        self.fake
            .get(Some(NS), name)
            .unwrap_or_else(|| panic!("run {name} is stored"))
    }

    /// The status of run `name` as the apiserver holds it.
    fn status(&self, name: &str) -> BenchmarkRunStatus {
        self.run(name).status.unwrap_or_default()
    }

    /// One reconcile of run `name`, with the caches holding what the fake holds (as the
    /// watches would have delivered it by then).
    async fn reconcile(&mut self, name: &str) -> Result<Requeue> {
        self.reconcile_lagging(name, |_| {}).await
    }

    /// One reconcile of run `name` as the apiserver holds it, with the caches filled from the
    /// fake and then changed by `lag` (a watch event not delivered yet, or one delivered late).
    async fn reconcile_lagging(
        &mut self,
        name: &str,
        lag: impl FnOnce(&mut crate::caches::Writers),
    ) -> Result<Requeue> {
        let run = self.run(name);
        self.reconcile_as(run, lag).await
    }

    /// One reconcile of `run` (which may be older than the apiserver's), with the caches filled
    /// from the fake and then changed by `lag`.
    async fn reconcile_as(
        &mut self,
        run: BenchmarkRun,
        lag: impl FnOnce(&mut crate::caches::Writers),
    ) -> Result<Requeue> {
        for run in self.fake.list::<BenchmarkRun>(None) {
            self.cache.apply_watcher_event(&watcher::Event::Apply(run));
        }
        let (f, w) = (&self.fake, &mut self.children);
        if !self.relist {
            return reconcile(Arc::new(run), self.ctx.clone()).await;
        }
        relist(f, &mut w.deployments);
        relist(f, &mut w.services);
        relist(f, &mut w.jobs);
        relist(f, &mut w.configmaps);
        relist(f, &mut w.pods);
        if let Some(nodes) = w.nodes.as_mut() {
            relist(f, nodes);
        }
        lag(w);
        reconcile(Arc::new(run), self.ctx.clone()).await
    }

    /// Reconciles run `name` until `done` holds (each reconcile succeeding), at most ten
    /// times.
    async fn reconcile_until(&mut self, name: &str, what: &str, done: impl Fn(&FakeApi) -> bool) {
        for _ in 0..10 {
            self.reconcile(name).await.expect("the reconcile succeeds");
            if done(&self.fake) {
                return;
            }
        }
        panic!(
            "after 10 reconciles, still not: {what}; status {:#?}",
            self.status(name)
        );
    }

    /// The events recorded, oldest first: (type, reason, note).
    fn events(&self) -> Vec<(String, String, String)> {
        let mut events = self.fake.list::<K8sEvent>(Some(NS));
        events.sort_by_key(|e| e.event_time.clone().map(|t| t.0));
        events
            .into_iter()
            .map(|e| {
                (
                    e.type_.unwrap_or_default(),
                    e.reason.unwrap_or_default(),
                    e.note.unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The reasons of the events recorded, oldest first.
    fn reasons(&self) -> Vec<String> {
        self.events().into_iter().map(|(_, r, _)| r).collect()
    }
}

/// The labels of the pods `template` makes.
fn pod_labels(
    template: &k8s_openapi::api::core::v1::PodTemplateSpec,
) -> std::collections::BTreeMap<String, String> {
    template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
}

/// The cluster brings the target up: its Deployment available, its Service given a
/// ClusterIP, and its pod on `node-a` ready for a minute (ten seconds after it was made).
fn bring_up_target(fake: &FakeApi, name: &str) {
    fake.update::<Deployment>(Some(NS), name, |d| {
        let generation = d.metadata.generation;
        d.status = Some(
            serde_json::from_value(json!({
                "observedGeneration": generation, "replicas": 1, "readyReplicas": 1,
                "updatedReplicas": 1, "availableReplicas": 1,
            }))
            .expect("a Deployment status"),
        );
    });
    fake.update::<Service>(Some(NS), name, |s| {
        s.spec.get_or_insert_with(Default::default).cluster_ip = Some("10.96.0.7".into());
    });
    let d: Deployment = fake.get(Some(NS), name).expect("the target Deployment");
    let labels = pod_labels(&d.spec.expect("a spec").template);
    let now = Timestamp::now();
    let ago = |secs| before(now, secs);
    fake.put::<Pod>(
        &serde_json::from_value(json!({
            "metadata": {"name": format!("{name}-7d9f8-x2x9q"), "namespace": NS,
                         "labels": labels, "creationTimestamp": ago(70)},
            "spec": {"nodeName": "node-a",
                     "containers": [{"name": TARGET, "image": "example/web:1"}]},
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ago(60)}],
                "containerStatuses": [{
                    "name": TARGET, "image": "example/web:1",
                    "imageID": "docker.io/example/web@sha256:0123", "ready": true,
                    "restartCount": 0, "state": {"running": {"startedAt": ago(65)}},
                }],
            },
        }))
        .expect("a target pod"),
    );
}

/// The load result the load pod prints: [`crate::results::tests::load`] measured over the
/// 10 s that ended 20 s ago.
fn load_result() -> benchrun_wire::LoadResult {
    let end = Timestamp::now().as_millisecond() - 20_000;
    benchrun_wire::LoadResult {
        window_start_ms: (end - 10_000) as u64,
        window_end_ms: end as u64,
        ..crate::results::tests::load()
    }
}

/// [`load_result`] with histograms that decode (several load pods' results are merged by
/// their histograms).
fn mergeable_load_result() -> benchrun_wire::LoadResult {
    use benchrun_wire::hist;
    let mut latency = hist::new_latency();
    let mut connect = hist::new_latency();
    for us in [9_000, 10_100, 12_000, 41_200, 90_500] {
        latency.record(us).expect("in range");
        connect.record(us / 40).expect("in range");
    }
    let mut load = load_result();
    load.histograms.latency = hist::encode(&latency);
    load.histograms.connect = hist::encode(&connect);
    load
}

/// The cluster runs load Job `name` to completion: its one pod succeeded on `node-b` and
/// printed `load` as its last log line.
fn complete_load(fake: &FakeApi, name: &str, load: &benchrun_wire::LoadResult) {
    complete_load_pods(fake, name, load, 1);
}

/// The cluster runs load Job `name` to completion: its `pods` pods succeeded on `node-b`,
/// each printing `load` as its last log line.
fn complete_load_pods(fake: &FakeApi, name: &str, load: &benchrun_wire::LoadResult, pods: usize) {
    let now = Timestamp::now();
    let ago = |secs| before(now, secs);
    fake.update::<Job>(Some(NS), name, |j| {
        j.status = Some(
            serde_json::from_value(json!({
                "succeeded": pods, "completionTime": ago(15),
                "conditions": [{"type": "Complete", "status": "True"}],
            }))
            .expect("a Job status"),
        );
    });
    let job: Job = fake.get(Some(NS), name).expect("the load Job");
    let mut labels = pod_labels(&job.spec.expect("a spec").template);
    labels.insert("job-name".into(), name.into());
    for index in 0..pods {
        let pod = format!("{name}-{index}-abcde");
        fake.put::<Pod>(
        &serde_json::from_value(json!({
            "metadata": {"name": pod, "namespace": NS, "labels": labels,
                         "annotations": {"batch.kubernetes.io/job-completion-index": index.to_string()}},
            "spec": {"nodeName": "node-b",
                     "containers": [{"name": "load", "image": "benchrun.local/benchrun-load:test"}]},
            "status": {
                "phase": "Succeeded",
                "containerStatuses": [{
                    "name": "load", "image": "benchrun.local/benchrun-load:test", "imageID": "",
                    "ready": false, "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                             "startedAt": ago(35), "finishedAt": ago(15)}},
                }],
            },
        }))
        .expect("a load pod"),
    );
        let line = serde_json::to_string(load).expect("the result serializes");
        fake.set_log(NS, &pod, &format!("warming up\n{line}\n"));
    }
}

/// (resource, name) of every DELETE, in order.
fn deleted(requests: &[Seen]) -> Vec<(String, String)> {
    requests
        .iter()
        .filter(|r| r.method == Method::DELETE)
        .filter_map(|r| {
            let mut segs = r.path.rsplit('/');
            let name = segs.next()?.to_string();
            Some((segs.next()?.to_string(), name))
        })
        .collect()
}

/// Whether object `name` of kind `K` is stored in [`NS`].
fn has<K: Resource<DynamicType = ()> + DeserializeOwned>(fake: &FakeApi, name: &str) -> bool {
    fake.get::<K>(Some(NS), name).is_some()
}

#[tokio::test]
async fn a_cell_goes_from_its_first_apply_to_a_recorded_result_and_its_children_are_deleted() {
    let fake = FakeApi::new();
    fake.put(&node());
    fake.put(&benchmark_run("demo", 5));
    let mut op = Operator::new(&fake);
    let v = validate(&op.run("demo").spec).expect("the spec is valid");
    let cell = &v.cells[0];
    let target = names::target_name("demo", "web", &names::config_hash("web", cell));
    let job = names::job_name("demo", 0, 0);

    op.reconcile_until("demo", "the target is applied", |f| {
        has::<Deployment>(f, &target) && has::<Service>(f, &target)
    })
    .await;
    assert_eq!(op.status("demo").phase, Some(Phase::Running));
    assert!(
        !has::<Job>(&fake, &job),
        "no load before the target is ready"
    );

    bring_up_target(&fake, &target);
    op.reconcile_until("demo", "the load Job is made", |f| has::<Job>(f, &job))
        .await;
    let job_obj: Job = fake.get(Some(NS), &job).unwrap();
    let load_container = &job_obj.spec.unwrap().template.spec.unwrap().containers[0];
    assert_eq!(
        load_container.image.as_deref(),
        Some("benchrun.local/benchrun-load:test")
    );

    let load = load_result();
    complete_load(&fake, &job, &load);
    op.reconcile_until("demo", "the run is finished", |f| {
        let run: BenchmarkRun = f.get(Some(NS), "demo").unwrap();
        plan::is_finished(&run.status.unwrap_or_default())
    })
    .await;

    let status = op.status("demo");
    assert_eq!(status.phase, Some(Phase::Succeeded), "{status:#?}");
    assert_eq!(status.progress.as_deref(), Some("1/1"));
    let [r] = status.results.as_slice() else {
        panic!("one result: {:#?}", status.results);
    };
    assert_eq!((r.cell, r.repeat, r.outcome), (0, 0, Outcome::Measured));
    assert_eq!(r.throughput, Some(1000.0));
    assert_eq!(r.requests, Some(10_000));
    assert_eq!(r.target_ready_seconds, Some(10.0));
    assert_eq!(r.target_image_bytes, Some(52_000_000));
    assert_eq!(r.usage.cpu_avg_cores, None, "Prometheus was unreachable");
    let unavailable = r
        .warnings
        .iter()
        .find(|w| w.code == WarningCode::MetricsUnavailable)
        .expect("a MetricsUnavailable warning");
    assert!(
        unavailable.message.contains("could not be reached"),
        "{}",
        unavailable.message
    );

    // The merged load result is kept in the detail ConfigMap, beside the status.
    let detail: ConfigMap = fake
        .get(Some(NS), &names::detail_name("demo", 0, 0))
        .expect("the detail ConfigMap");
    let stored = &detail.data.unwrap()[DETAIL_KEY];
    assert_eq!(
        serde_json::from_str::<benchrun_wire::LoadResult>(stored).unwrap(),
        load
    );

    // Applied in the planner's order, each kind first applied once the one before it was.
    let requests = fake.requests();
    let first_apply = |resource: &str| {
        requests
            .iter()
            .position(|r| r.is_apply_of(resource))
            .unwrap_or_else(|| panic!("{resource} applied"))
    };
    let order = ["deployments", "services", "jobs", "configmaps"].map(first_apply);
    assert!(order.is_sorted(), "{order:?}");
    assert!(!requests.iter().any(|r| r.is_apply_of("benchmarkruns")));

    // Before its first write, each child's name was looked up once (to find it free: the
    // caches hold only the runs' own children); never again once the cache held it.
    let child_get = |r: &&Seen| {
        r.method == Method::GET
            && ["deployments/", "services/", "jobs/", "configmaps/"]
                .iter()
                .any(|k| r.path.contains(k))
    };
    let mut looked_up: Vec<&str> = requests
        .iter()
        .filter(child_get)
        .map(|r| r.path.as_str())
        .collect();
    let lookups = looked_up.len();
    looked_up.sort();
    looked_up.dedup();
    assert_eq!(lookups, looked_up.len(), "{looked_up:#?}");
    assert_eq!(
        lookups, 4,
        "Deployment, Service, Job, ConfigMap: {looked_up:#?}"
    );
    // Observation read the children, the nodes and the baseline from the caches: the
    // apiserver was asked only for the load pod's log, and once, before the run took its
    // slot, for the cluster's unfinished pods (the nodes' room).
    let reads: Vec<String> = requests
        .iter()
        .filter(|r| r.method == Method::GET && !child_get(r))
        .map(|r| format!("{} {}", r.path, r.query))
        .collect();
    let [pods, log] = reads.as_slice() else {
        panic!("two reads: {reads:#?}");
    };
    assert!(
        pods.starts_with("/api/v1/pods ") && pods.contains("status.phase"),
        "{pods}"
    );
    assert!(
        log.starts_with(&format!("/api/v1/namespaces/{NS}/pods/")) && log.contains("/log "),
        "{log}"
    );

    // Cleanup policy Delete: the load Job once measured, the target once the run finished.
    assert_eq!(
        deleted(&requests),
        [
            ("jobs".to_string(), job.clone()),
            ("deployments".to_string(), target.clone()),
            ("services".to_string(), target.clone()),
        ]
    );
    assert!(fake.list::<Deployment>(Some(NS)).is_empty());
    assert!(fake.list::<Service>(Some(NS)).is_empty());
    assert!(fake.list::<Job>(Some(NS)).is_empty());

    let reasons = op.reasons();
    let expected = [
        "Started",
        "LoadStarted",
        "Measured",
        "MetricsUnavailable",
        "Completed",
    ];
    let seen: Vec<&str> = reasons
        .iter()
        .map(String::as_str)
        .filter(|r| expected.contains(r))
        .collect();
    assert_eq!(seen, expected, "{:#?}", op.events());
    let metrics = op.ctx.metrics.render();
    assert!(
        metrics.contains("benchrun_measurements_total{outcome=\"Measured\"} 1"),
        "{metrics}"
    );
    assert!(
        !metrics.contains("benchrun_reconcile_errors_total{"),
        "{metrics}"
    );

    // A finished run is left alone: another reconcile writes nothing.
    let before = fake.requests().len();
    assert_eq!(op.reconcile("demo").await.unwrap(), Requeue::await_change());
    let writes: Vec<Seen> = fake.requests()[before..]
        .iter()
        .filter(|r| r.method != Method::GET)
        .cloned()
        .collect();
    assert!(writes.is_empty(), "{writes:#?}");
}

#[tokio::test]
async fn a_refused_apply_fails_its_cell_with_the_apiservers_message_and_frees_the_slot() {
    let fake = FakeApi::new();
    fake.put(&node());
    fake.put(&benchmark_run("demo", 60));
    fake.put(&benchmark_run("later", 30));
    let message = "Deployment.apps \"demo-web\" is invalid: spec.template.spec.containers[0].image: Invalid value: \"example/web:1\": no such registry";
    fake.fail(
        Method::PATCH,
        "/deployments/",
        Fault::Status(422, "Invalid", message.into()),
        1,
    );
    let mut op = Operator::new(&fake);

    // The older run goes first; the later one queues behind it.
    op.reconcile("later").await.unwrap();
    assert_eq!(op.status("later").phase, Some(Phase::Queued));

    op.reconcile_until("demo", "the run is finished", |f| {
        let run: BenchmarkRun = f.get(Some(NS), "demo").unwrap();
        plan::is_finished(&run.status.unwrap_or_default())
    })
    .await;
    let status = op.status("demo");
    assert_eq!(status.phase, Some(Phase::Failed), "{status:#?}");
    let [r] = status.results.as_slice() else {
        panic!("one result: {:#?}", status.results);
    };
    assert_eq!(r.outcome, Outcome::Failed);
    let reason = r.reason.clone().unwrap_or_default();
    assert!(
        reason.contains("the apiserver refused Deployment") && reason.contains("(422)"),
        "{reason}"
    );
    assert!(reason.ends_with(message), "{reason}");
    let applied = status
        .conditions
        .iter()
        .find(|c| c.type_ == "ChildrenApplied")
        .expect("a ChildrenApplied condition");
    assert_eq!(
        (applied.status.as_str(), applied.reason.as_str()),
        ("False", "ApplyRefused")
    );
    let refused = op
        .events()
        .into_iter()
        .find(|(_, reason, _)| reason == "ApplyRefused")
        .expect("an ApplyRefused event");
    assert_eq!(refused.0, "Warning");
    assert!(refused.2.contains(message), "{}", refused.2);

    // Nothing after the refused Deployment was applied, and the refusal was no error.
    let requests = fake.requests();
    for resource in ["services", "jobs", "configmaps"] {
        assert!(
            !requests.iter().any(|r| r.is_apply_of(resource)),
            "{resource} applied"
        );
    }
    let metrics = op.ctx.metrics.render();
    assert!(
        metrics.contains("benchrun_measurements_total{outcome=\"Failed\"} 1"),
        "{metrics}"
    );
    assert!(
        !metrics.contains("benchrun_reconcile_errors_total{"),
        "{metrics}"
    );

    // The slot is free: the queued run takes it and starts.
    op.reconcile("later").await.unwrap();
    assert_eq!(
        op.ctx.slots.granted(),
        std::collections::BTreeSet::from(["bench/later".to_string()])
    );
    op.reconcile("later").await.unwrap();
    assert_eq!(op.status("later").phase, Some(Phase::Running));
}

/// A run with a backing service `db`, whose children are `demo-svc-db`.
const SPEC_WITH_DB: &str = r#"
targets: [{name: web, image: example/web:1, port: 3000, readinessPath: /healthz}]
services: [{name: db, image: example/db:1, port: 5432}]
scenarios: [{name: hello, path: /hello}]
resources: {cpu: "500m", memory: 128Mi}
load: {connections: 100, duration: 10s, warmup: 3s}
"#;

#[tokio::test]
async fn a_name_held_by_someone_elses_object_fails_the_run_and_the_object_is_never_touched() {
    let fake = FakeApi::new();
    fake.put(&node());
    let mut run = benchmark_run("demo", 5);
    run.spec = serde_yaml::from_str(SPEC_WITH_DB).expect("the spec parses");
    fake.put(&run);
    let name = names::service_name("demo", "db");
    // A team's database, made with kubectl, named like the run's backing service.
    let theirs: Deployment = serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": NS, "labels": {"app": "team-db"},
            "annotations": {"team": "payments"},
            "managedFields": [{"manager": "kubectl-create", "operation": "Update"}],
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "team-db"}},
            "template": {
                "metadata": {"labels": {"app": "team-db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:16"}]},
            },
        },
    }))
    .unwrap();
    fake.put(&theirs);
    // And a Service of that name made to look like the run's: its labels, no owner reference.
    let lookalike: Service = serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": NS,
            "labels": names::service_labels("demo", role::SERVICE, "db"),
            "annotations": {"meta.helm.sh/release-name": "team-db"},
        },
        "spec": {"selector": {"app": "team-db"}, "ports": [{"port": 5432}]},
    }))
    .unwrap();
    fake.put(&lookalike);
    let deployment_before = serde_json::to_value(fake.get::<Deployment>(Some(NS), &name)).unwrap();
    let service_before = serde_json::to_value(fake.get::<Service>(Some(NS), &name)).unwrap();
    let mut op = Operator::new(&fake);

    op.reconcile_until("demo", "the run is finished", |f| {
        let run: BenchmarkRun = f.get(Some(NS), "demo").unwrap();
        plan::is_finished(&run.status.unwrap_or_default())
    })
    .await;
    // More reconciles (cleanup, TTL bookkeeping) change nothing for them either.
    for _ in 0..3 {
        op.reconcile("demo").await.expect("the reconcile succeeds");
    }

    let status = op.status("demo");
    assert_eq!(status.phase, Some(Phase::Failed), "{status:#?}");
    let [r] = status.results.as_slice() else {
        panic!("one result: {:#?}", status.results);
    };
    let reason = r.reason.clone().unwrap_or_default();
    assert!(
        reason.starts_with(&format!(
            "Deployment {name} already exists and is not this run's (it was created with kubectl (kubectl-create))"
        )),
        "{reason}"
    );
    let refused = op
        .events()
        .into_iter()
        .find(|(_, reason, _)| reason == "ApplyRefused")
        .expect("an ApplyRefused event");
    assert!(
        refused.2.contains(&format!("Deployment {name}")),
        "{}",
        refused.2
    );

    // Neither object was written or deleted: byte for byte as they were.
    let requests = fake.requests();
    let touched: Vec<&Seen> = requests
        .iter()
        .filter(|r| r.method != Method::GET && r.path.ends_with(&format!("/{name}")))
        .collect();
    assert!(touched.is_empty(), "{touched:#?}");
    assert_eq!(
        serde_json::to_value(fake.get::<Deployment>(Some(NS), &name)).unwrap(),
        deployment_before
    );
    assert_eq!(
        serde_json::to_value(fake.get::<Service>(Some(NS), &name)).unwrap(),
        service_before
    );
    // Nothing of the run's own was made: the services come before any target.
    assert!(!requests.iter().any(|r| r.is_apply_of("deployments")));
    assert!(!requests.iter().any(|r| r.is_apply_of("services")));
}

#[tokio::test]
async fn cleanup_deletes_only_the_runs_own_children_each_by_its_uid() {
    let fake = FakeApi::new();
    fake.put(&node());
    fake.put(&benchmark_run("demo", 5));
    let mut op = Operator::new(&fake);
    let v = validate(&op.run("demo").spec).expect("the spec is valid");
    let target = names::target_name("demo", "web", &names::config_hash("web", &v.cells[0]));
    op.reconcile_until("demo", "the target is applied", |f| {
        has::<Deployment>(f, &target) && has::<Service>(f, &target)
    })
    .await;
    // A Service carrying the run's target labels, not made by the run.
    let mut labels = names::common_labels("demo", role::TARGET);
    labels.insert("app".into(), "theirs".into());
    let lookalike: Service = serde_json::from_value(json!({
        "metadata": {"name": "theirs", "namespace": NS, "labels": labels},
        "spec": {"ports": [{"port": 80}]},
    }))
    .unwrap();
    fake.put(&lookalike);
    let before = serde_json::to_value(fake.get::<Service>(Some(NS), "theirs")).unwrap();

    let owner = Owner::of(&op.run("demo")).unwrap();
    relist(&fake, &mut op.children.deployments);
    relist(&fake, &mut op.children.services);
    delete_targets(&op.ctx, &owner, None)
        .await
        .expect("the targets are deleted");
    assert!(!has::<Deployment>(&fake, &target));
    assert!(!has::<Service>(&fake, &target));
    assert_eq!(
        serde_json::to_value(fake.get::<Service>(Some(NS), "theirs")).unwrap(),
        before,
        "an object carrying the run's labels is not the run's"
    );
    assert_eq!(
        deleted(&fake.requests()),
        [
            ("deployments".to_string(), target.clone()),
            ("services".to_string(), target.clone()),
        ]
    );

    // A child the cache holds as the run's, since deleted and made again under the same name
    // by someone else, is not deleted: the uid the cache holds is the precondition.
    let again: Deployment = serde_json::from_value(json!({
        "metadata": {
            "name": "again", "namespace": NS,
            "labels": names::common_labels("demo", role::TARGET),
            "ownerReferences": [owner.reference],
        },
    }))
    .unwrap();
    fake.put(&again);
    relist(&fake, &mut op.children.deployments);
    fake.update::<Deployment>(Some(NS), "again", |d| {
        d.metadata.uid = Some("someone-elses".into());
        d.metadata.owner_references = None;
    });
    let err = delete_targets(&op.ctx, &owner, None).await.unwrap_err();
    assert!(err.to_string().contains("Precondition failed"), "{err}");
    assert!(has::<Deployment>(&fake, "again"));
}

#[tokio::test]
async fn failing_writes_are_retried_with_backoff_announced_once_then_the_run_goes_on() {
    let fake = FakeApi::new();
    fake.put(&node());
    fake.put(&benchmark_run("demo", 5));
    fake.fail(
        Method::PATCH,
        "/benchmarkruns/demo/status",
        Fault::Status(500, "InternalError", "etcdserver: request timed out".into()),
        1,
    );
    fake.fail(
        Method::PATCH,
        "/benchmarkruns/demo/status",
        Fault::Disconnect,
        1,
    );
    let mut op = Operator::new(&fake);
    let run = Arc::new(op.run("demo"));

    let first = op.reconcile("demo").await.unwrap_err();
    assert!(matches!(first, Error::StatusFailed { .. }), "{first}");
    assert!(first.to_string().contains("etcdserver: request timed out"));
    assert_eq!(
        error_policy(run.clone(), &first, op.ctx.clone()),
        Requeue::requeue(Duration::from_secs(5))
    );
    let second = op.reconcile("demo").await.unwrap_err();
    assert!(matches!(second, Error::StatusFailed { .. }), "{second}");
    assert_eq!(
        error_policy(run.clone(), &second, op.ctx.clone()),
        Requeue::requeue(Duration::from_secs(10))
    );

    // Announced on the first failure only; the status was left alone meanwhile.
    let retrying: Vec<_> = op
        .events()
        .into_iter()
        .filter(|(_, reason, _)| reason == "RetryingAfterError")
        .collect();
    let [(kind, _, note)] = retrying.as_slice() else {
        panic!("one RetryingAfterError event: {retrying:#?}");
    };
    assert_eq!(kind, "Warning");
    assert!(
        note.contains("etcdserver: request timed out")
            && note.contains("retrying with backoff (failure 1 in a row)"),
        "{note}"
    );
    assert_eq!(op.status("demo"), BenchmarkRunStatus::default());
    let metrics = op.ctx.metrics.render();
    assert!(
        metrics.contains("benchrun_reconcile_errors_total{error=\"status\"} 2"),
        "{metrics}"
    );

    // The apiserver is healthy again: the run takes the slot and starts; the streak is over.
    op.reconcile("demo").await.unwrap();
    assert!(lock(&op.ctx.failures).is_empty());
    assert!(op.ctx.slots.granted().contains("bench/demo"));
    op.reconcile("demo").await.unwrap();
    assert_eq!(op.status("demo").phase, Some(Phase::Running));
    assert_eq!(
        error_policy(run, &first, op.ctx.clone()),
        Requeue::requeue(Duration::from_secs(5)),
        "the backoff starts again after a success"
    );
}

#[tokio::test]
async fn nothing_is_decided_before_the_caches_of_the_children_are_synced() {
    let fake = FakeApi::new();
    fake.put(&node());
    fake.put(&benchmark_run("demo", 5));
    let mut op = Operator::new(&fake);
    op.relist = false;
    let e = op.reconcile("demo").await.unwrap_err();
    assert!(matches!(e, Error::CachesNotSynced(_)), "{e}");
    assert!(e.to_string().contains("not synced"), "{e}");
    assert!(op.ctx.slots.granted().is_empty(), "no slot taken");
    assert_eq!(
        op.status("demo"),
        BenchmarkRunStatus::default(),
        "nothing written"
    );

    op.relist = true;
    op.reconcile("demo").await.unwrap();
    assert!(op.ctx.slots.granted().contains("bench/demo"));
}

/// Waits (at most 10 s) until the fake has received a request `matches` picks; returns its
/// index.
async fn request(fake: &FakeApi, what: &str, matches: impl Fn(&Seen) -> bool) -> usize {
    for _ in 0..1000 {
        if let Some(i) = fake.requests().iter().position(&matches) {
            return i;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("no {what} in {:#?}", fake.requests());
}

#[tokio::test]
async fn a_run_made_while_the_watch_was_lost_is_reconciled_after_the_relist() {
    let fake = FakeApi::new();
    fake.put(&node());
    let controller = tokio::spawn(run(fake.client(), config(), Arc::new(Metrics::default())));
    request(&fake, "watch of the runs", |r| {
        r.is_watch_of("benchmarkruns")
    })
    .await;

    // Made while the watch delivers nothing; then the apiserver ends the watch with 410.
    fake.put(&benchmark_run("demo", 0));
    fake.expire_watches("benchmarkruns");

    let status_patch = request(&fake, "status patch of the run", |r| {
        r.method == Method::PATCH && r.path.ends_with("/benchmarkruns/demo/status")
    })
    .await;
    let requests = fake.requests();
    let lists: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].is_list_of("benchmarkruns"))
        .collect();
    assert!(lists.len() >= 2, "listed again: {requests:#?}");
    assert!(lists[1] < status_patch, "{requests:#?}");
    assert!(
        fake.get::<BenchmarkRun>(Some(NS), "demo")
            .and_then(|r| r.status)
            .is_some_and(|s| s.observed_generation == Some(1)),
        "the reconcile wrote the run's status"
    );
    controller.abort();
}

/// Log lines written at `info` and above while the guard [`capture_logs`] returns is held.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    fn lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&lock(&self.0))
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// The operator's log lines (text, at the deployed level `info`) on this thread until the
/// guard is dropped. A `#[tokio::test]` runs its reconciles on its own thread.
fn capture_logs() -> (Logs, tracing::subscriber::DefaultGuard) {
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .finish();
    (logs, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn no_log_line_carries_the_stored_load_result_only_what_was_applied_and_its_size() {
    let (logs, _guard) = capture_logs();
    let fake = FakeApi::new();
    fake.put(&node());
    fake.put(&benchmark_run("demo", 5));
    let mut op = Operator::new(&fake);
    let v = validate(&op.run("demo").spec).expect("the spec is valid");
    let target = names::target_name("demo", "web", &names::config_hash("web", &v.cells[0]));
    let job = names::job_name("demo", 0, 0);
    op.reconcile_until("demo", "the target is applied", |f| {
        has::<Deployment>(f, &target)
    })
    .await;
    bring_up_target(&fake, &target);
    op.reconcile_until("demo", "the load Job is made", |f| has::<Job>(f, &job))
        .await;
    complete_load(&fake, &job, &load_result());
    op.reconcile_until("demo", "the result is recorded", |f| {
        let run: BenchmarkRun = f.get(Some(NS), "demo").unwrap();
        !run.status.unwrap_or_default().results.is_empty()
    })
    .await;

    let detail = names::detail_name("demo", 0, 0);
    let stored: ConfigMap = fake.get(Some(NS), &detail).expect("the detail ConfigMap");
    let size = stored.data.unwrap()[DETAIL_KEY].len();
    let lines = logs.lines();
    let applied = lines
        .iter()
        .find(|l| l.contains(&format!("apply ConfigMap {detail}")))
        .unwrap_or_else(|| panic!("the detail's apply is logged: {lines:#?}"));
    assert!(applied.contains(&format!("({size} bytes)")), "{applied}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&format!("create Job {job}"))),
        "{lines:#?}"
    );
    for line in &lines {
        // A field of the load result, as JSON or as Debug prints it.
        assert!(
            !line.contains("window_end_ms"),
            "a payload in the log: {line}"
        );
        assert!(
            line.len() <= 2 * crate::logtext::LOG_MAX,
            "{} bytes: {line}",
            line.len()
        );
    }
}

/// One cell measured by two load pods, which begin at an agreed time (`--start-at`).
const SPEC_TWO_LOAD_PODS: &str = r#"
targets: [{name: web, image: example/web:1, port: 3000, readinessPath: /healthz}]
scenarios: [{name: hello, path: /hello}]
resources: {cpu: "500m", memory: 128Mi}
load: {connections: 100, duration: 10s, warmup: 3s, pods: 2}
"#;

/// The run `name` of `spec`, its target up and its load Job `job` made: returns the Job as
/// made.
async fn up_to_the_load_job(fake: &FakeApi, op: &mut Operator, spec: &str) -> (String, Job) {
    let mut run = benchmark_run("demo", 5);
    run.spec = serde_yaml::from_str(spec).expect("the spec parses");
    fake.put(&run);
    let v = validate(&run.spec).expect("the spec is valid");
    let target = names::target_name("demo", "web", &names::config_hash("web", &v.cells[0]));
    let job = names::job_name("demo", 0, 0);
    op.reconcile_until("demo", "the target is applied", |f| {
        has::<Deployment>(f, &target) && has::<Service>(f, &target)
    })
    .await;
    bring_up_target(fake, &target);
    op.reconcile_until("demo", "the load Job is made", |f| has::<Job>(f, &job))
        .await;
    let made: Job = fake.get(Some(NS), &job).expect("the load Job");
    (job, made)
}

#[tokio::test]
async fn a_job_made_but_not_yet_in_the_cache_is_not_written_again_and_its_cell_is_measured() {
    let fake = FakeApi::new();
    fake.put(&node());
    let mut op = Operator::new(&fake);
    let (job, made) = up_to_the_load_job(&fake, &mut op, SPEC_TWO_LOAD_PODS).await;
    assert!(
        made.annotations().contains_key(names::START_AT),
        "two load pods begin at an agreed time"
    );

    // The jobs cache has not delivered the Job yet: the cell goes back to Deploying, which
    // makes the Job again from a new clock; the Job is left as it was made.
    for _ in 0..4 {
        op.reconcile_lagging("demo", |w| {
            w.jobs
                .apply_watcher_event(&watcher::Event::Delete(made.clone()))
        })
        .await
        .expect("the reconcile succeeds");
    }
    let now: Job = fake.get(Some(NS), &job).expect("the load Job");
    assert_eq!(
        now.metadata.resource_version, made.metadata.resource_version,
        "the Job was not written again"
    );
    let status = op.status("demo");
    assert!(status.results.is_empty(), "{:#?}", status.results);
    assert!(
        !op.reasons().contains(&"ApplyRefused".to_string()),
        "{:#?}",
        op.events()
    );

    // The cache catches up; the load completes and is measured.
    complete_load_pods(&fake, &job, &mergeable_load_result(), 2);
    op.reconcile_until("demo", "the run is finished", |f| {
        let run: BenchmarkRun = f.get(Some(NS), "demo").unwrap();
        plan::is_finished(&run.status.unwrap_or_default())
    })
    .await;
    let status = op.status("demo");
    let [r] = status.results.as_slice() else {
        panic!("one result: {:#?}", status.results);
    };
    assert_eq!(r.outcome, Outcome::Measured, "{r:#?}");
}

#[tokio::test]
async fn the_apiserver_refuses_a_changed_job_template_as_immutable() {
    let fake = FakeApi::new();
    fake.put(&node());
    let mut op = Operator::new(&fake);
    let (job, mut made) = up_to_the_load_job(&fake, &mut op, SPEC_TWO_LOAD_PODS).await;
    let api = Api::<Job>::namespaced(fake.client(), NS);
    let container = &mut made
        .spec
        .as_mut()
        .unwrap()
        .template
        .spec
        .as_mut()
        .unwrap()
        .containers[0];
    container.args = Some(vec!["--start-at=1".into()]);
    made.metadata.managed_fields = None;
    let e = api
        .patch(
            &job,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&made),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, kube::Error::Api(s) if s.code == 422 && s.message.contains("immutable")),
        "{e}"
    );
}

#[tokio::test]
async fn a_job_deleted_but_still_in_the_cache_neither_fails_nor_repeats_its_measurement() {
    let fake = FakeApi::new();
    fake.put(&node());
    let mut op = Operator::new(&fake);
    let (job, _) = up_to_the_load_job(&fake, &mut op, SPEC).await;
    complete_load(&fake, &job, &load_result());
    let completed: Job = fake.get(Some(NS), &job).expect("the load Job");
    op.reconcile_until("demo", "the Job is deleted once measured", |f| {
        !has::<Job>(f, &job)
    })
    .await;

    // The jobs cache still holds the completed Job for the rest of the run.
    for _ in 0..4 {
        op.reconcile_lagging("demo", |w| {
            w.jobs
                .apply_watcher_event(&watcher::Event::Apply(completed.clone()))
        })
        .await
        .expect("the reconcile succeeds");
    }
    let status = op.status("demo");
    assert_eq!(status.phase, Some(Phase::Succeeded), "{status:#?}");
    let [r] = status.results.as_slice() else {
        panic!("one result: {:#?}", status.results);
    };
    assert_eq!(r.outcome, Outcome::Measured);
    let requests = fake.requests();
    let job_writes = requests.iter().filter(|r| r.is_apply_of("jobs")).count();
    assert_eq!(job_writes, 1, "the load ran once");
    let logs = requests.iter().filter(|r| r.path.ends_with("/log")).count();
    assert_eq!(logs, 1, "its log was read once");
}

#[tokio::test]
async fn a_status_write_that_lost_a_race_neither_fails_nor_repeats_a_measurement() {
    let fake = FakeApi::new();
    fake.put(&node());
    let mut op = Operator::new(&fake);
    let (job, made) = up_to_the_load_job(&fake, &mut op, SPEC_TWO_LOAD_PODS).await;
    // The reconcile that made the Job wrote `Loading`; the next one reads the run as it was
    // before that write (the runs cache lags), and the jobs cache lags too.
    let mut stale = op.run("demo");
    let status = stale.status.as_mut().expect("a status");
    let cur = status.current.as_mut().expect("a current measurement");
    assert_eq!(cur.stage, benchrun_api::Stage::Loading);
    cur.stage = benchrun_api::Stage::Deploying;
    cur.job = None;
    op.reconcile_as(stale, |w| {
        w.jobs
            .apply_watcher_event(&watcher::Event::Delete(made.clone()))
    })
    .await
    .expect("the reconcile succeeds");
    let now: Job = fake.get(Some(NS), &job).expect("the load Job");
    assert_eq!(
        now.metadata.resource_version, made.metadata.resource_version,
        "the Job was not written again"
    );
    assert!(
        !op.reasons().contains(&"ApplyRefused".to_string()),
        "{:#?}",
        op.events()
    );

    // The load's result is recorded, but the status write that records it fails; the next
    // reconcile records it from the stored detail, once.
    complete_load_pods(&fake, &job, &mergeable_load_result(), 2);
    fake.fail(
        Method::PATCH,
        "/benchmarkruns/demo/status",
        Fault::Status(409, "Conflict", "the object has been modified".into()),
        1,
    );
    let mut failed = false;
    for _ in 0..10 {
        failed |= op.reconcile("demo").await.is_err();
        if plan::is_finished(&op.status("demo")) {
            break;
        }
    }
    assert!(failed, "the status write failed once");
    let status = op.status("demo");
    assert_eq!(status.phase, Some(Phase::Succeeded), "{status:#?}");
    let [r] = status.results.as_slice() else {
        panic!("one result: {:#?}", status.results);
    };
    assert_eq!(r.outcome, Outcome::Measured);
    let job_writes = fake
        .requests()
        .iter()
        .filter(|r| r.is_apply_of("jobs"))
        .count();
    assert_eq!(job_writes, 1, "the load ran once");
}
