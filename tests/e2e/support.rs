//! Helpers of the end-to-end suite: a client for the cluster from the environment, throwaway
//! namespaces that are dumped on failure and deleted afterwards, waiting on runs, and a poller
//! that records what each target pod itself counted (its `/stats`, through the apiserver's pod
//! proxy, so it works on any cluster).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchrun_api::{BenchmarkRun, CellResult, Outcome, Phase};
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use kube::api::{
    DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::{Api, Client};

/// Whether the suite runs at full size (`make e2e-full`, which sets `BENCHRUN_E2E_FULL=1`):
/// the longer windows, more repeats and longer outages some tests were written with. `make e2e`
/// (and so `make test`) runs them reduced, to sizes at which every assertion still holds with
/// margin, and skips the tests listed in the Makefile's `E2E_FULL_ONLY`.
pub fn full() -> bool {
    std::env::var_os("BENCHRUN_E2E_FULL").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `reduced` in `make e2e`, `full` in `make e2e-full` (see [`full`]).
pub fn size<T>(reduced: T, full: T) -> T {
    if self::full() {
        full
    } else {
        reduced
    }
}

/// Namespace of the operator installed by `make install`.
pub const OPERATOR_NS: &str = "benchrun-system";
/// The Lease its replicas elect their leader on.
pub const OPERATOR_LEASE: &str = "benchrun-operator";
/// The local cluster's containerd socket of a node (see hack/cluster.sh: node 2 of the
/// two-node layout has its own runtime).
fn containerd_sock(node: &str) -> &'static str {
    match node {
        "benchrun-node-2" => "/run/benchrun-node-2/containerd.sock",
        _ => "/run/containerd/containerd.sock",
    }
}

/// The cluster under test.
pub struct Cluster {
    /// A client from KUBECONFIG.
    pub client: Client,
}

impl Cluster {
    /// The objects of `kinds` (e.g. `deploy,jobs,pods`) in `ns` as `kind/name` lines, empty
    /// when there are none: what a refused run must not have made.
    pub fn children(&self, ns: &str, kinds: &str) -> String {
        let out = self.kubectl(&["get", kinds, "-n", ns, "-o", "name"]);
        if out.contains("No resources") {
            String::new()
        } else {
            out.trim().to_string()
        }
    }

    /// Connects with the environment's kubeconfig (`eval "$(hack/cluster.sh env)"`).
    pub async fn connect() -> Self {
        let client = Client::try_default()
            .await
            .expect("no cluster: run `eval \"$(hack/cluster.sh env)\"` first");
        Cluster { client }
    }

    /// Creates a namespace `<prefix>-<random>` and waits for its default service account.
    pub async fn namespace(&self, prefix: &str) -> String {
        self.namespace_labelled(prefix, &[]).await
    }

    /// Like [`Cluster::namespace`], with extra labels (e.g. a Pod Security Standard to enforce).
    pub async fn namespace_labelled(&self, prefix: &str, labels: &[(&str, &str)]) -> String {
        let name = format!(
            "{prefix}-{:x}",
            std::process::id() ^ (Instant::now().elapsed().subsec_nanos() | rand_suffix())
        );
        let mut all = BTreeMap::from([("benchrun.dev/e2e", "true")]);
        all.extend(labels.iter().copied());
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": all}
        }))
        .unwrap();
        Api::<Namespace>::all(self.client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .expect("create the test namespace");
        let sas: Api<ServiceAccount> = Api::namespaced(self.client.clone(), &name);
        for _ in 0..60 {
            if sas.get_opt("default").await.ok().flatten().is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        println!("namespace {name}");
        name
    }

    /// Creates a run from YAML in `ns`.
    pub async fn apply_run(&self, ns: &str, yaml: &str) -> anyhow::Result<BenchmarkRun> {
        let run: BenchmarkRun = serde_yaml::from_str(yaml).context("test YAML")?;
        let api: Api<BenchmarkRun> = Api::namespaced(self.client.clone(), ns);
        Ok(api.create(&PostParams::default(), &run).await?)
    }

    /// Merge-patches the spec of a run.
    pub async fn patch_spec(
        &self,
        ns: &str,
        name: &str,
        spec: serde_json::Value,
    ) -> anyhow::Result<()> {
        let api: Api<BenchmarkRun> = Api::namespaced(self.client.clone(), ns);
        api.patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": spec})),
        )
        .await?;
        Ok(())
    }

    /// Polls the run every 2 s, printing progress, until `done` holds or `timeout` passes.
    pub async fn wait_until(
        &self,
        ns: &str,
        name: &str,
        timeout: Duration,
        done: impl Fn(&BenchmarkRun) -> bool,
    ) -> anyhow::Result<BenchmarkRun> {
        self.wait_until_polling(ns, name, timeout, Duration::from_secs(2), done)
            .await
    }

    /// [`Self::wait_until`], reading the run every `every`: for a state that lasts only a
    /// second or two.
    pub async fn wait_until_polling(
        &self,
        ns: &str,
        name: &str,
        timeout: Duration,
        every: Duration,
        done: impl Fn(&BenchmarkRun) -> bool,
    ) -> anyhow::Result<BenchmarkRun> {
        let api: Api<BenchmarkRun> = Api::namespaced(self.client.clone(), ns);
        let t0 = Instant::now();
        let mut last = String::new();
        loop {
            let run = api.get(name).await?;
            let s = run.status.clone().unwrap_or_default();
            let line = format!(
                "{:?} {:?} {:?}",
                s.phase,
                s.progress,
                s.current.as_ref().map(|c| (c.cell, c.repeat, c.stage))
            );
            if line != last {
                println!("[{:>4}s] {name}: {line}", t0.elapsed().as_secs());
                last = line.clone();
            }
            if done(&run) {
                return Ok(run);
            }
            anyhow::ensure!(
                t0.elapsed() < timeout,
                "{name} not done after {timeout:?}: {line}"
            );
            tokio::time::sleep(every).await;
        }
    }

    /// Waits until the run is Succeeded or Failed.
    pub async fn wait_finished(
        &self,
        ns: &str,
        name: &str,
        timeout: Duration,
    ) -> anyhow::Result<BenchmarkRun> {
        self.wait_until(ns, name, timeout, |r| {
            matches!(
                r.status.as_ref().and_then(|s| s.phase),
                Some(Phase::Succeeded) | Some(Phase::Failed)
            )
        })
        .await
    }

    /// The identity holding the operator's leader Lease (`<pod>_<random>`), if any.
    pub async fn lease_holder(&self) -> anyhow::Result<Option<String>> {
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), OPERATOR_NS);
        let lease = leases.get(OPERATOR_LEASE).await?;
        Ok(lease.spec.and_then(|s| s.holder_identity))
    }

    /// The Lease's resourceVersion now: take it before stopping a leader and pass it to
    /// [`Cluster::wait_for_new_leader`], so every change after it is seen.
    pub async fn lease_version(&self) -> anyhow::Result<String> {
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), OPERATOR_NS);
        let lease = leases.get(OPERATOR_LEASE).await?;
        lease
            .metadata
            .resource_version
            .context("the lease has no resourceVersion")
    }

    /// Watches the Lease from resourceVersion `since` until an identity other than `old` holds
    /// it. Returns the new holder, the time it took and whether the lease was released (no
    /// holder) in between. A watch sees every change, so a release that the standby takes
    /// over within milliseconds is not missed as it could be by polling.
    pub async fn wait_for_new_leader(
        &self,
        old: &str,
        since: &str,
        timeout: Duration,
    ) -> anyhow::Result<(String, Duration, bool)> {
        let t0 = Instant::now();
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), OPERATOR_NS);
        let params = WatchParams::default()
            .fields(&format!("metadata.name={OPERATOR_LEASE}"))
            .timeout(60);
        let (mut version, mut released) = (since.to_string(), false);
        loop {
            let left = timeout
                .checked_sub(t0.elapsed())
                .with_context(|| format!("{old} still leads after {timeout:?}"))?;
            let mut events = leases.watch(&params, &version).await?.boxed();
            loop {
                let event = match tokio::time::timeout(left, events.try_next()).await {
                    Err(_) => anyhow::bail!("{old} still leads after {timeout:?}"),
                    Ok(event) => event?,
                };
                let lease = match event {
                    Some(WatchEvent::Added(l)) | Some(WatchEvent::Modified(l)) => l,
                    Some(WatchEvent::Bookmark(b)) => {
                        version = b.metadata.resource_version;
                        continue;
                    }
                    Some(WatchEvent::Deleted(_)) => anyhow::bail!("the lease was deleted"),
                    Some(WatchEvent::Error(e)) => anyhow::bail!("watching the lease: {e:?}"),
                    // The server ended the watch (its timeout): watch again from `version`.
                    None => break,
                };
                version = lease.metadata.resource_version.clone().unwrap_or(version);
                match lease.spec.and_then(|s| s.holder_identity) {
                    Some(h) if h != old && !h.is_empty() => return Ok((h, t0.elapsed(), released)),
                    None => released = true,
                    Some(h) if h.is_empty() => released = true,
                    _ => {}
                }
            }
        }
    }

    /// Kills an operator pod as a crash would: SIGKILL to its container through its node's
    /// containerd (the local cluster; no chance to release the lease), then deletes the pod
    /// without grace so it is not restarted in place. Without access to containerd, only the
    /// deletion (the kubelet then sends SIGTERM). Returns how the pod was killed.
    pub async fn kill_operator_pod(&self, pod: &str) -> anyhow::Result<&'static str> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), OPERATOR_NS);
        let p = pods.get(pod).await?;
        let node = p.spec.as_ref().and_then(|s| s.node_name.clone());
        let sock = containerd_sock(node.as_deref().unwrap_or_default());
        let container = p
            .status
            .and_then(|s| s.container_statuses)
            .and_then(|c| c.into_iter().next())
            .and_then(|c| c.container_id)
            .unwrap_or_default();
        let mut how = "deleted with grace period 0 (SIGTERM, then SIGKILL)";
        if let (Some(id), true) = (
            container.strip_prefix("containerd://"),
            std::path::Path::new(sock).exists(),
        ) {
            let out = std::process::Command::new("ctr")
                .args([
                    "-a", sock, "-n", "k8s.io", "task", "kill", "-s", "SIGKILL", id,
                ])
                .output()
                .context("ctr")?;
            anyhow::ensure!(
                out.status.success(),
                "ctr task kill: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            how = "SIGKILL to its container, then deleted with grace period 0";
        }
        pods.delete(pod, &DeleteParams::default().grace_period(0))
            .await?;
        println!("killed operator pod {pod}: {how}");
        Ok(how)
    }

    /// Deletes an operator pod gracefully (SIGTERM: the operator drains and releases its lease).
    pub async fn stop_operator_pod(&self, pod: &str) -> anyhow::Result<()> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), OPERATOR_NS);
        pods.delete(pod, &DeleteParams::default()).await?;
        println!("deleted operator pod {pod} (graceful)");
        Ok(())
    }

    /// `/readyz` of every running operator pod, through the apiserver's pod proxy:
    /// `(pod, body)`, e.g. `("benchrun-operator-…", "leader")`.
    pub async fn operator_roles(&self) -> anyhow::Result<Vec<(String, String)>> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), OPERATOR_NS);
        let lp = ListParams::default().labels("app.kubernetes.io/name=benchrun-operator");
        let mut roles = Vec::new();
        for p in pods.list(&lp).await? {
            let name = p.metadata.name.clone().unwrap_or_default();
            let running = p.status.and_then(|s| s.phase).as_deref() == Some("Running");
            if p.metadata.deletion_timestamp.is_some() || !running {
                continue;
            }
            let path = format!("/api/v1/namespaces/{OPERATOR_NS}/pods/{name}:8080/proxy/readyz");
            let req = http::Request::get(path).body(Vec::new()).unwrap();
            // A 503 is an error for request_text; its body is not needed.
            let body = self
                .client
                .request_text(req)
                .await
                .unwrap_or_else(|e| format!("not ready: {e}"));
            roles.push((name, body.trim().to_string()));
        }
        Ok(roles)
    }

    /// Runs kubectl (from PATH) and returns its stdout.
    pub fn kubectl(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("kubectl")
            .args(args)
            .output()
            .expect("kubectl on PATH");
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    }

    /// Runs the report plugin this workspace built (`kubectl-benchrun`, next to the test
    /// binary's `deps/` folder) and returns its stdout and stderr.
    pub fn kubectl_benchrun(&self, args: &[&str]) -> String {
        let exe = std::env::current_exe().expect("test binary path");
        let plugin = exe
            .parent()
            .and_then(|deps| deps.parent())
            .map(|dir| dir.join("kubectl-benchrun"))
            .expect("target directory");
        let out = std::process::Command::new(&plugin)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{}: {e} (built by make build)", plugin.display()));
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    }

    /// Ends a test: on failure dumps the namespace and the operator's log; always deletes the
    /// namespace; then fails the test if `outcome` is an error.
    pub async fn finish(&self, ns: &str, outcome: anyhow::Result<()>) {
        if let Err(e) = &outcome {
            println!("---- {ns} failed: {e:#}");
            for args in [
                vec![
                    "get",
                    "benchmarkruns,deploy,svc,jobs,pods,cm",
                    "-o",
                    "wide",
                    "-n",
                    ns,
                ],
                vec!["get", "benchmarkruns", "-o", "yaml", "-n", ns],
                vec!["get", "events", "--sort-by=.lastTimestamp", "-n", ns],
                vec![
                    "logs",
                    "-n",
                    OPERATOR_NS,
                    "-l",
                    "app.kubernetes.io/name=benchrun-operator",
                    "--prefix",
                    "--tail=60",
                ],
            ] {
                println!("$ kubectl {}\n{}", args.join(" "), self.kubectl(&args));
            }
        }
        let namespaces = Api::<Namespace>::all(self.client.clone());
        // How long the test took from its namespace on, so slow tests can be found in a log.
        if let Ok(n) = namespaces.get(ns).await {
            if let Some(t) = n.metadata.creation_timestamp {
                let secs = jiff::Timestamp::now().duration_since(t.0).as_secs();
                println!("e2e-time {ns} {secs} s");
            }
        }
        let _ = namespaces.delete(ns, &DeleteParams::default()).await;
        if let Err(e) = outcome {
            panic!("{e:#}");
        }
    }
}

fn rand_suffix() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0)
        & 0xffff
}

/// Records the latest `/stats` of every target pod in a namespace, twice a second.
pub struct TargetCounter {
    latest: Arc<Mutex<BTreeMap<String, BTreeMap<String, i64>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TargetCounter {
    /// Starts polling the pods labelled `benchrun.dev/role=target` in `ns` (port 8080).
    pub fn start(client: Client, ns: &str) -> Self {
        let latest = Arc::new(Mutex::new(BTreeMap::new()));
        let (ns, sink) = (ns.to_string(), latest.clone());
        let task = tokio::spawn(async move {
            let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
            let lp = ListParams::default().labels("benchrun.dev/role=target");
            loop {
                if let Ok(list) = pods.list(&lp).await {
                    // All pods at once, each bounded in time: a request to a terminating pod
                    // can hang, and a short run's pod may be gone before a serial poll got to
                    // it (its count then read 0).
                    let polls = list.items.into_iter().map(|p| {
                        let name = p.metadata.name.unwrap_or_default();
                        let client = client.clone();
                        let ns = ns.clone();
                        async move {
                            let tags = tokio::time::timeout(
                                Duration::from_secs(2),
                                read_stats(&client, &ns, &name),
                            )
                            .await
                            .ok()??;
                            Some((name, tags))
                        }
                    });
                    let found = futures::future::join_all(polls).await;
                    let mut latest = sink.lock().unwrap();
                    for (name, tags) in found.into_iter().flatten() {
                        latest.insert(name, tags);
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        });
        TargetCounter { latest, task }
    }

    /// Requests counted per `X-Benchrun-Cell` value, summed over the pods seen.
    pub fn snapshot(&self) -> BTreeMap<String, i64> {
        let mut sum = BTreeMap::new();
        for tags in self.latest.lock().unwrap().values() {
            for (k, v) in tags {
                *sum.entry(k.clone()).or_insert(0) += v;
            }
        }
        sum
    }

    /// Stops polling.
    pub fn stop(&self) {
        self.task.abort();
    }
}

/// The demo target's `/stats` counts per `X-Benchrun-Cell` value, read through the apiserver's
/// pod proxy; `None` when the pod does not answer.
async fn read_stats(client: &Client, ns: &str, pod: &str) -> Option<BTreeMap<String, i64>> {
    let path = format!("/api/v1/namespaces/{ns}/pods/{pod}:8080/proxy/stats");
    let req = http::Request::get(path).body(Vec::new()).ok()?;
    let text = client.request_text(req).await.ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let mut counts: BTreeMap<String, i64> = v["tags"]
        .as_object()?
        .iter()
        .map(|(k, v)| (k.clone(), v.as_i64().unwrap_or(0)))
        .collect();
    // The sums of /compute's n under keys no cell tag (run/cell/repeat) can take.
    for key in ["sum", "sumOfSquares"] {
        let n = v["computeN"][key].as_i64().unwrap_or(0);
        counts.insert(format!("{COMPUTE_N}{key}"), n);
    }
    Some(counts)
}

/// Prefix of the [`TargetCounter`] keys holding the demo's sums of `/compute`'s `n`:
/// `computeN.sum` and `computeN.sumOfSquares`.
pub const COMPUTE_N: &str = "computeN.";

/// Checks one result of run `run` against what the target counted (a [`TargetCounter`]
/// snapshot): it is `Measured`, has requests, and the target saw exactly its requests plus its
/// warm-up requests, less at most the failed ones (refused, timed out or reset: a request that
/// failed may never have reached it). Returns the target's count.
pub fn assert_counts_match(
    counts: &BTreeMap<String, i64>,
    run: &str,
    r: &CellResult,
) -> anyhow::Result<i64> {
    anyhow::ensure!(
        r.outcome == Outcome::Measured,
        "cell {} {:?}",
        r.cell,
        r.reason
    );
    let (Some(requests), Some(warmup)) = (r.requests, r.warmup_requests) else {
        anyhow::bail!("cell {} has no request counts", r.cell);
    };
    anyhow::ensure!(requests > 0, "cell {} measured no request", r.cell);
    // Failed requests, measured or warm-up, may never have reached the target.
    let lost = r.errors.as_ref().map_or(0, |e| {
        e.connect_refused + e.connect_timeout + e.timeout + e.read
    }) + r.warmup_failed.unwrap_or(0);
    let tag = format!("{run}/{}/{}", r.cell, r.repeat);
    let seen = counts.get(&tag).copied().unwrap_or(0);
    let want = requests + warmup;
    anyhow::ensure!(
        seen <= want && seen >= want - lost,
        "cell {} ({tag}): target counted {seen}, generator reported {requests} + {warmup} warm-up with {lost} failed",
        r.cell,
    );
    Ok(seen)
}

/// The local cluster's Prometheus, stopped for a test by `hack/cluster.sh prometheus stop`.
/// Dropping the guard starts it again (and waits until it answers), also when the test fails.
pub struct PrometheusOutage {
    stopped: bool,
}

impl PrometheusOutage {
    /// Stops Prometheus (its data stays).
    pub fn begin() -> anyhow::Result<Self> {
        cluster_sh(&["prometheus", "stop"])?;
        Ok(PrometheusOutage { stopped: true })
    }

    /// Starts Prometheus again and waits until it answers.
    pub fn end(&mut self) -> anyhow::Result<()> {
        if std::mem::take(&mut self.stopped) {
            cluster_sh(&["prometheus", "start"])?;
        }
        Ok(())
    }
}

impl Drop for PrometheusOutage {
    fn drop(&mut self) {
        if let Err(e) = self.end() {
            eprintln!("failed to start Prometheus again: {e:#}");
        }
    }
}

fn cluster_sh(args: &[&str]) -> anyhow::Result<()> {
    // Read at run time: a binary reused from another checkout's build must run this one's script.
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .context("CARGO_MANIFEST_DIR unset: run by cargo test")?;
    let script = std::path::Path::new(&dir).join("hack/cluster.sh");
    let script = script.display().to_string();
    let out = std::process::Command::new(&script)
        .args(args)
        .output()
        .with_context(|| format!("failed to run {script}"))?;
    let log = String::from_utf8_lossy(&out.stderr);
    println!("$ hack/cluster.sh {}\n{}", args.join(" "), log.trim_end());
    anyhow::ensure!(
        out.status.success(),
        "hack/cluster.sh {args:?}: {}",
        out.status
    );
    Ok(())
}

/// Reads the target containers' cgroup v1 CPU counter (`cpuacct.usage`, nanoseconds) straight
/// from the host every 200 ms: the ground truth the operator's CPU figures are checked
/// against. Needs the test to run on the machine of the local cluster's node(s).
pub struct CgroupCpu {
    samples: Polls,
    task: tokio::task::JoinHandle<()>,
}

/// Per container ID, the polls of its CPU counter: (unix seconds, nanoseconds used).
type Polls = Arc<Mutex<BTreeMap<String, Vec<(f64, f64)>>>>;

/// The host path of a container's `cpuacct.usage`, for any QoS class, under the one-node
/// layout's cgroup root or either node's of the two-node layout (`hack/cluster.sh`).
fn cpuacct_path(pod_uid: &str, container_id: &str) -> Option<std::path::PathBuf> {
    let id = container_id.rsplit("://").next()?;
    for root in ["/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct"] {
        for node in ["", "benchrun-n1/", "benchrun-n2/"] {
            for qos in ["", "burstable/", "besteffort/"] {
                let uid = pod_uid.replace('-', "_");
                for pod in [format!("pod{pod_uid}"), format!("pod{uid}")] {
                    let p = std::path::PathBuf::from(format!(
                        "{root}/{node}kubepods/{qos}{pod}/{id}/cpuacct.usage"
                    ));
                    if p.exists() {
                        return Some(p);
                    }
                }
            }
        }
    }
    None
}

impl CgroupCpu {
    /// Starts polling the `target` containers of the pods labelled `benchrun.dev/role=target`.
    pub fn start(client: Client, ns: &str) -> Self {
        let samples: Polls = Arc::new(Mutex::new(BTreeMap::new()));
        let (ns, sink) = (ns.to_string(), samples.clone());
        let task = tokio::spawn(async move {
            let pods: Api<Pod> = Api::namespaced(client, &ns);
            let lp = ListParams::default().labels("benchrun.dev/role=target");
            let mut paths: BTreeMap<String, std::path::PathBuf> = BTreeMap::new();
            let mut next_list = Instant::now();
            loop {
                if Instant::now() >= next_list {
                    next_list = Instant::now() + Duration::from_secs(2);
                    for p in pods.list(&lp).await.map(|l| l.items).unwrap_or_default() {
                        let uid = p.metadata.uid.clone().unwrap_or_default();
                        let statuses = p.status.and_then(|s| s.container_statuses);
                        for c in statuses
                            .unwrap_or_default()
                            .iter()
                            .filter(|c| c.name == "target")
                        {
                            let Some(id) = c.container_id.as_deref() else {
                                continue;
                            };
                            if let Some(path) = cpuacct_path(&uid, id) {
                                paths.entry(id.to_string()).or_insert(path);
                            }
                        }
                    }
                }
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs_f64())
                    .unwrap_or(0.0);
                for (id, path) in &paths {
                    if let Ok(text) = std::fs::read_to_string(path) {
                        if let Ok(ns) = text.trim().parse::<f64>() {
                            sink.lock()
                                .unwrap()
                                .entry(id.clone())
                                .or_default()
                                .push((now, ns));
                        }
                    }
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        CgroupCpu { samples, task }
    }

    /// Containers found so far.
    pub fn containers(&self) -> usize {
        self.samples.lock().unwrap().len()
    }

    /// Average cores of the target containers between two instants (unix seconds), from the
    /// counter interpolated linearly between the 200 ms polls, summed over the containers
    /// polled on both sides; `None` when no container was.
    pub fn cores(&self, start: f64, end: f64) -> Option<f64> {
        let at = |pts: &[(f64, f64)], t: f64| {
            let i = pts.partition_point(|p| p.0 < t);
            let (a, b) = (pts.get(i.checked_sub(1)?)?, pts.get(i)?);
            Some(a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0))
        };
        let all = self.samples.lock().unwrap();
        let used: Vec<f64> = all
            .values()
            .filter_map(|pts| Some(at(pts, end)? - at(pts, start)?))
            .collect();
        (!used.is_empty()).then(|| used.iter().sum::<f64>() / 1e9 / (end - start))
    }

    /// Stops polling.
    pub fn stop(&self) {
        self.task.abort();
    }
}

/// Writes what a test measured to `$BENCHRUN_E2E_RECORD/<name>.json` when that directory is
/// set: `make comparisons-doc` and `make search-doc` set it and render their tables in the docs
/// from the files, with the commit and date.
pub fn record(name: &str, value: serde_json::Value) {
    let Some(dir) = std::env::var_os("BENCHRUN_E2E_RECORD") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        std::fs::write(
            dir.join(format!("{name}.json")),
            serde_json::to_string_pretty(&value).unwrap_or_default(),
        )
    });
    if let Err(e) = written {
        println!("could not record {name}: {e}");
    }
}

/// How many series the local Prometheus (`$PROMETHEUS_URL`, from `hack/cluster.sh env`)
/// returns for an instant query.
pub async fn prometheus_count(query: &str) -> anyhow::Result<usize> {
    let base = std::env::var("PROMETHEUS_URL").unwrap_or_else(|_| "http://10.244.0.1:9090".into());
    let v: serde_json::Value = reqwest::Client::new()
        .get(format!("{base}/api/v1/query"))
        .query(&[("query", query)])
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    Ok(v["data"]["result"].as_array().map_or(0, Vec::len))
}

/// A run the operator's allow-lists refused: phase `Failed`, `Accepted=False` reason
/// `NotAllowed`. Prints the condition and returns its message, for the test to check the field
/// and the flag it names.
pub fn refused_not_allowed(name: &str, run: &BenchmarkRun) -> anyhow::Result<String> {
    let status = run.status.clone().unwrap_or_default();
    anyhow::ensure!(
        status.phase == Some(Phase::Failed),
        "{name}: {:?}",
        status.phase
    );
    let accepted = status
        .conditions
        .iter()
        .find(|c| c.type_ == benchrun_api::ConditionType::Accepted.as_str())
        .context("no Accepted condition")?;
    println!(
        "{name}: Accepted={} {}: {}",
        accepted.status, accepted.reason, accepted.message
    );
    anyhow::ensure!(
        accepted.status == "False" && accepted.reason == benchrun_api::Reason::NotAllowed.as_str(),
        "{name}: {accepted:?}"
    );
    Ok(accepted.message.clone())
}
