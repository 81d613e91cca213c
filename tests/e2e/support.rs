//! Helpers of the end-to-end suite: a client for the cluster from the environment, throwaway
//! namespaces that are dumped on failure and deleted afterwards, waiting on runs, and a poller
//! that records what each target pod itself counted (its `/stats`, through the apiserver's pod
//! proxy, so it works on any cluster).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchrun_api::{phase, BenchmarkRun, CellResult};
use k8s_openapi::api::core::v1::{Namespace, Pod, ServiceAccount};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};

/// The cluster under test.
pub struct Cluster {
    /// A client from KUBECONFIG.
    pub client: Client,
}

impl Cluster {
    /// Connects with the environment's kubeconfig (`eval "$(hack/cluster.sh env)"`).
    pub async fn connect() -> Self {
        let client = Client::try_default()
            .await
            .expect("no cluster: run `eval \"$(hack/cluster.sh env)\"` first");
        Cluster { client }
    }

    /// Creates a namespace `<prefix>-<random>` and waits for its default service account.
    pub async fn namespace(&self, prefix: &str) -> String {
        let name = format!(
            "{prefix}-{:x}",
            std::process::id() ^ (Instant::now().elapsed().subsec_nanos() | rand_suffix())
        );
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "labels": {"benchrun.dev/e2e": "true"}}
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
                s.current
                    .as_ref()
                    .map(|c| (c.cell, c.repeat, c.stage.clone()))
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
            tokio::time::sleep(Duration::from_secs(2)).await;
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
                r.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some(phase::SUCCEEDED) | Some(phase::FAILED)
            )
        })
        .await
    }

    /// Deletes the operator's pod (its Deployment starts a new one).
    pub async fn delete_operator_pod(&self) -> anyhow::Result<()> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), "benchrun-system");
        let mut n = 0;
        for p in pods.list(&ListParams::default()).await? {
            let name = p.metadata.name.unwrap_or_default();
            if name.starts_with("benchrun-operator") {
                pods.delete(&name, &DeleteParams::default()).await?;
                println!("deleted operator pod {name}");
                n += 1;
            }
        }
        anyhow::ensure!(n > 0, "no operator pod found in benchrun-system");
        Ok(())
    }

    /// Runs kubectl (from PATH) and returns its stdout.
    pub fn kubectl(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("kubectl")
            .args(args)
            .output()
            .expect("kubectl on PATH");
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
                    "benchrun-system",
                    "deploy/benchrun-operator",
                    "--tail=80",
                ],
            ] {
                println!("$ kubectl {}\n{}", args.join(" "), self.kubectl(&args));
            }
        }
        let _ = Api::<Namespace>::all(self.client.clone())
            .delete(ns, &DeleteParams::default())
            .await;
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
                    for p in list {
                        let name = p.metadata.name.clone().unwrap_or_default();
                        let path = format!("/api/v1/namespaces/{ns}/pods/{name}:8080/proxy/stats");
                        let req = http::Request::get(path).body(Vec::new()).unwrap();
                        if let Ok(text) = client.request_text(req).await {
                            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                                let tags: BTreeMap<String, i64> = v["tags"]
                                    .as_object()
                                    .map(|m| {
                                        m.iter()
                                            .map(|(k, v)| (k.clone(), v.as_i64().unwrap_or(0)))
                                            .collect()
                                    })
                                    .unwrap_or_default();
                                sink.lock().unwrap().insert(name, tags);
                            }
                        }
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

/// Checks one result of run `run` against what the target counted (a [`TargetCounter`]
/// snapshot): it is `Measured`, has requests, and the target saw exactly its requests plus its
/// warm-up requests. Returns the target's count.
pub fn assert_counts_match(
    counts: &BTreeMap<String, i64>,
    run: &str,
    r: &CellResult,
) -> anyhow::Result<i64> {
    anyhow::ensure!(r.outcome == "Measured", "cell {} {:?}", r.cell, r.reason);
    let (Some(requests), Some(warmup)) = (r.requests, r.warmup_requests) else {
        anyhow::bail!("cell {} has no request counts", r.cell);
    };
    anyhow::ensure!(requests > 0, "cell {} measured no request", r.cell);
    let tag = format!("{run}/{}/{}", r.cell, r.repeat);
    let seen = counts.get(&tag).copied().unwrap_or(0);
    anyhow::ensure!(
        seen == requests + warmup,
        "cell {} ({tag}): target counted {seen}, generator reported {requests} + {warmup} warm-up",
        r.cell,
    );
    Ok(seen)
}
