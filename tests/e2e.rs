//! End-to-end: BenchmarkRuns applied to the real local cluster (apiserver, kubelet, containerd,
//! Prometheus) with the operator installed from `deploy/`. Run by `make e2e` (and so by
//! `make test` and CI) with `--ignored`, because they need that cluster:
//!
//! ```text
//! eval "$(hack/cluster.sh env)" && make install
//! cargo test --release --workspace --test e2e -- --ignored --test-threads=1 --nocapture
//! ```
//!
//! Each test works in a namespace of its own, dumps its pods and events when it fails and
//! deletes the namespace at the end.

#[path = "e2e/browser.rs"]
mod browser;
#[path = "e2e/comparisons.rs"]
mod comparisons;
#[path = "e2e/metrics_auth.rs"]
mod metrics_auth;
#[path = "e2e/out_of_the_box.rs"]
mod out_of_the_box;
#[path = "e2e/ownership.rs"]
mod ownership;
#[path = "e2e/placement.rs"]
mod placement;
#[path = "e2e/schedule.rs"]
mod schedule;
#[path = "e2e/search.rs"]
mod search;
#[path = "e2e/seeds.rs"]
mod seeds;
#[path = "e2e/steady.rs"]
mod steady;
#[path = "e2e/support.rs"]
mod support;
#[path = "e2e/tenancy.rs"]
mod tenancy;
#[path = "e2e/wire.rs"]
mod wire;

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Context as _;
use benchrun::lease::pod_of;
use benchrun_api::{BenchmarkRun, ConditionType, Outcome, Phase, Reason, Stage, Verdict};
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use kube::Api;
use support::{
    assert_counts_match, CgroupCpu, Cluster, PrometheusOutage, TargetCounter, COMPUTE_N,
};

const DEMO_IMAGE: &str = "benchrun.local/benchrun-demo:0.1.0";
/// The seed stacks' images (`make stacks`, stacks/): Express, the CouchDB-API store, its loader.
const EXPRESS_IMAGE: &str = "benchrun.local/stack-express:0.1.0";
const COUCHDB_IMAGE: &str = "benchrun.local/stack-couchdb:0.1.0";
const COUCH_SEED_IMAGE: &str = "benchrun.local/stack-couch-seed:0.1.0";

fn demo_run(name: &str, matrix: &str, extra: &str) -> String {
    format!(
        r#"
apiVersion: benchrun.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {name}}}
spec:
  targets:
    - {{name: demo, image: "{DEMO_IMAGE}", imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz}}
  scenarios:
    - {{name: hello, path: /hello}}
  resources: {{cpu: 500m, memory: 128Mi}}
  load: {{connections: 4, duration: 20s, warmup: 3s, resources: {{cpu: 500m, memory: 64Mi}}}}
  matrix: {matrix}
{extra}
"#
    )
}

/// The measured requests of every cell equal what the target itself counted for that cell,
/// and CPU and memory come back from Prometheus within the limits. The matrix uses `exclude`
/// (drops 500m × 8 connections) and `include` (pairs 96Mi with the 250m cells, adds a 750m cell
/// after the product), so the cells measured are exactly those the expansion promises.
/// 6 s windows (20 s in `make e2e-full`): every cell still gets CPU and memory figures (this
/// cluster samples every 1-2 s), which is all the test asks of them besides the limits.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn run_measures_every_cell_and_counts_match_the_target() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-matrix").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    let yaml = demo_run(
        "matrix",
        r#"{cpu: ["250m", "500m"], connections: [2, 8],
           exclude: [{cpu: "500m", connections: 8}],
           include: [{cpu: "250m", memory: "96Mi"}, {cpu: "750m", connections: 4}]}"#,
        "",
    )
    .replace(
        "duration: 20s",
        support::size("duration: 6s", "duration: 20s"),
    );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "matrix", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}",
            status.phase
        );
        anyhow::ensure!(
            status.results.len() == 4,
            "{} results",
            status.results.len()
        );
        let cells: Vec<(i32, &str, &str, i32)> = status
            .results
            .iter()
            .map(|r| {
                let k = &r.coordinates;
                (r.cell, k.cpu.as_str(), k.memory.as_str(), k.connections)
            })
            .collect();
        anyhow::ensure!(
            cells
                == [
                    (0, "250m", "96Mi", 2),
                    (1, "250m", "96Mi", 8),
                    (2, "500m", "128Mi", 2),
                    (3, "750m", "128Mi", 4)
                ],
            "cells measured {cells:?}"
        );
        let counts = counter.snapshot();
        for r in &status.results {
            let seen = assert_counts_match(&counts, "matrix", r)?;
            println!(
                "cell {} cpu={} c={}: generator {:?} + warm-up {:?}, target counted {seen}; {:.0} req/s, cpu {:?} cores, mem {:?} B, target nodes {:?}, load nodes {:?}",
                r.cell,
                r.coordinates.cpu,
                r.coordinates.connections,
                r.requests,
                r.warmup_requests,
                r.throughput.unwrap_or_default(),
                r.usage.cpu_avg_cores,
                r.usage.memory_avg_bytes,
                r.target_nodes,
                r.load_nodes
            );
            // Placement is decided in every measured cell, from the load result itself when
            // the load pods were gone before the operator saw them.
            anyhow::ensure!(!r.target_nodes.is_empty(), "cell {}: no targetNodes", r.cell);
            anyhow::ensure!(!r.load_nodes.is_empty(), "cell {}: no loadNodes", r.cell);
            check_environment(r)?;
            let limit = benchrun_api::units::cpu_millis(&r.coordinates.cpu).unwrap() as f64 / 1000.0;
            let cpu = r.usage.cpu_avg_cores.unwrap_or(0.0);
            anyhow::ensure!(cpu > 0.0, "cell {}: no target CPU", r.cell);
            anyhow::ensure!(
                cpu <= limit * 1.15,
                "cell {}: target CPU {cpu} above its limit {limit}",
                r.cell
            );
            let mem = r.usage.memory_avg_bytes.unwrap_or(0);
            let mem_limit = benchrun_api::units::memory_bytes(&r.coordinates.memory).unwrap();
            anyhow::ensure!(
                mem > 0 && mem <= mem_limit,
                "cell {}: target memory {mem} B, limit {mem_limit} B",
                r.cell
            );
        }
        // The demo-sized run (closed model, keep-alive) raises none of the wire's warnings,
        // and its load pods read their TCP counters.
        for r in &status.results {
            use benchrun_api::WarningCode as W;
            let wire = [W::RateNotMet, W::SynRetransmits, W::EphemeralPortsLow, W::Resets];
            let raised: Vec<_> = r.warnings.iter().filter(|w| wire.contains(&w.code)).collect();
            anyhow::ensure!(raised.is_empty(), "cell {}: {raised:?}", r.cell);
            anyhow::ensure!(r.tcp.is_some(), "cell {}: no tcp counters", r.cell);
        }
        let table = cluster.kubectl(&["get", "benchmarkruns", "-n", &ns]);
        println!("{table}");
        for col in ["NAME", "PHASE", "PROGRESS", "BEST RPS", "P99", "AGE", "Succeeded", "4/4"] {
            anyhow::ensure!(table.contains(col), "kubectl get lacks {col:?}:\n{table}");
        }
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

/// Where a measurement ran (issue 52): the target image by digest, every target and load
/// node with this machine's kernel (both nodes of the local cluster run on it), the load
/// generator's CPU model as this machine's `/proc/cpuinfo` names it, and the operator with the
/// commit hack/install.sh gave it.
fn check_environment(r: &benchrun_api::CellResult) -> anyhow::Result<()> {
    let e = r
        .environment
        .as_ref()
        .with_context(|| format!("cell {}: no environment", r.cell))?;
    anyhow::ensure!(
        !e.target_images.is_empty() && e.target_images.iter().all(|i| i.contains("sha256:")),
        "cell {}: target images {:?} are not digests",
        r.cell,
        e.target_images
    );
    println!("cell {} environment: {}", r.cell, serde_json::to_string(e)?);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")?;
    for (role, nodes) in [("Target", &r.target_nodes), ("Load", &r.load_nodes)] {
        for n in nodes {
            let node = e
                .nodes
                .iter()
                .find(|x| &x.name == n && x.role.split(',').any(|x| x == role))
                .with_context(|| {
                    format!("cell {}: {role} node {n} not in {:?}", r.cell, e.nodes)
                })?;
            anyhow::ensure!(
                node.kernel == kernel.trim() && !node.container_runtime.is_empty(),
                "cell {}: {node:?} (this machine's kernel: {kernel})",
                r.cell
            );
        }
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo")?;
    anyhow::ensure!(
        !e.load_cpu_models.is_empty()
            && e.load_cpu_models
                .iter()
                .all(|m| cpuinfo.contains(m.as_str())),
        "cell {}: load CPU models {:?}",
        r.cell,
        e.load_cpu_models
    );
    anyhow::ensure!(
        e.operator.starts_with(env!("CARGO_PKG_VERSION")) && e.operator.contains('+'),
        "cell {}: operator {:?}",
        r.cell,
        e.operator
    );
    Ok(())
}

/// `matrix.keepAlive` and a request count paired through `include`: every cell runs exactly its
/// own count (and the target counts the same), and the cells without keep-alive open a
/// connection per request while those with it open one per connection at most. Two load pods,
/// told one start time, begin their windows within a second of each other.
/// A templated path reaches the target with the values the spec asks for: two load pods
/// sharing one seed walk `/compute?n={{n}}` over the sequence 1..2000 together, so the target
/// sees every n exactly once (its sums of n and n² are those of 1..2000), and the load detail
/// records the spec's seed.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn templated_requests_reach_the_target_with_every_value_once() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-template").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    let yaml = demo_run("template", "{connections: [2]}", "")
        .replace(
            "{name: hello, path: /hello}",
            "{name: compute, path: '/compute?n={{n}}', values: {n: {sequence: {start: 1, end: 2000}}}}",
        )
        .replace(
            "duration: 20s, warmup: 3s, resources: {cpu: 500m, memory: 64Mi}",
            "requests: 2000, seed: 99, pods: 2, resources: {cpu: 300m, memory: 64Mi}",
        );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "template", Duration::from_secs(300))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}, results {:?}",
            status.phase,
            status.results
        );
        let r = status.results.first().context("one result")?;
        let counts = counter.snapshot();
        assert_counts_match(&counts, "template", r)?;
        let sum = counts.get(&format!("{COMPUTE_N}sum")).copied();
        let squares = counts.get(&format!("{COMPUTE_N}sumOfSquares")).copied();
        println!(
            "{:?} requests, {:.0} req/s, errors {:?}; target: sum of n {sum:?}, of n² {squares:?}",
            r.requests,
            r.throughput.unwrap_or_default(),
            r.errors
        );
        let n: i64 = 2000;
        anyhow::ensure!(sum == Some(n * (n + 1) / 2), "sum of n {sum:?}");
        anyhow::ensure!(
            squares == Some(n * (n + 1) * (2 * n + 1) / 6),
            "sum of n² {squares:?}"
        );
        let detail = r.detail.as_deref().context("a detail ConfigMap")?;
        let json = cluster.kubectl(&[
            "get",
            "configmap",
            detail,
            "-n",
            &ns,
            "-o",
            "jsonpath={.data.result\\.json}",
        ]);
        let load: serde_json::Value = serde_json::from_str(&json).context("detail JSON")?;
        anyhow::ensure!(load["seed"] == 99, "seed in the detail: {}", load["seed"]);
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

/// A real backing service the run deploys and seeds itself: the CouchDB-API store of
/// `stacks/couchdb`, filled with 10 000 documents of 4 KB by its loader (`stacks/couch-seed`) as
/// the seeding Job, read by the Express stack (`stacks/express`) through its address variable
/// (`COUCHDB_URL=http://$(BENCHRUN_SERVICE_COUCH_ADDR)`, no DNS) with a random id per request,
/// after a ramp-up, over a matrix with `exclude` and `include` (the included cell with two
/// replicas). Every cell is measured without errors (every id exists: a missing one is a 404),
/// the target's own counts match, the store's CPU and memory are in each cell's status (its
/// memory holds the 40 MB of documents), beside the target's ready time, image size, RSS,
/// memory before the load (below the peak) and per-pod figures. Each cell measures 12 s (20 s
/// in `make e2e-full`).
#[tokio::test]
#[ignore = "needs the local cluster and the stack images: make e2e"]
async fn a_seeded_backing_service_is_read_through_its_address() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-services").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    let services = format!(
        r#"  services:
    - name: couch
      image: "{COUCHDB_IMAGE}"
      imagePullPolicy: IfNotPresent
      port: 5984
      readinessPath: /healthz
      resources: {{cpu: 350m, memory: 512Mi}}
      seed:
        image: "{COUCH_SEED_IMAGE}"
        env: [{{name: COUCHDB_URL, value: "http://$(BENCHRUN_SERVICE_COUCH_ADDR)"}}]
        timeout: 3m"#
    );
    let yaml = demo_run(
        "services",
        "{connections: [2, 4], exclude: [{connections: 2}], include: [{connections: 6, replicas: 2}]}",
        &services,
    )
    .replace("resources: {cpu: 500m, memory: 128Mi}", "resources: {cpu: 250m, memory: 128Mi}")
    .replace(
        &format!(r#"{{name: demo, image: "{DEMO_IMAGE}", imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz}}"#),
        &format!(r#"{{name: express, image: "{EXPRESS_IMAGE}", imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz, env: [{{name: COUCHDB_URL, value: "http://$(BENCHRUN_SERVICE_COUCH_ADDR)"}}]}}"#),
    )
    .replace(
        "{name: hello, path: /hello}",
        "{name: doc, path: '/docs/{{id}}', values: {id: {random: {min: 1, max: 10000}}}}",
    )
    .replace("warmup: 3s,", "warmup: 2s, rampUp: 2s,")
    // 6 s windows (20 s in `make e2e-full`): the target's and the store's CPU and memory
    // come from the samples in and around them (this cluster samples every 1-2 s).
    .replace("duration: 20s", support::size("duration: 6s", "duration: 20s"));
    assert!(
        yaml.contains(EXPRESS_IMAGE),
        "the target line was not replaced"
    );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "services", Duration::from_secs(480))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}, results {:?}",
            status.phase,
            status.results
        );
        let conns: Vec<i32> = status
            .results
            .iter()
            .map(|r| r.coordinates.connections)
            .collect();
        anyhow::ensure!(conns == [4, 6], "cells by connections: {conns:?}");
        let counts = counter.snapshot();
        let mut idle_readings = 0;
        for r in &status.results {
            let seen = assert_counts_match(&counts, "services", r)?;
            let errors = r.errors.clone().unwrap_or_default();
            anyhow::ensure!(
                r.error_rate == Some(0.0),
                "cell {}: errors {errors:?} (every id 1..10000 was seeded)",
                r.cell
            );
            let store = r.usage.services.first().context("the store's usage")?;
            println!(
                "cell {}: {:?} requests (target counted {seen}), {:.0} req/s, p99 {:?} ms; store CPU {:?} cores ({:?} of limit), memory {:?} B; warnings {:?}",
                r.cell,
                r.requests,
                r.throughput.unwrap_or_default(),
                r.latency_ms.as_ref().map(|l| l.p99),
                store.cpu_avg_cores,
                store.cpu_avg_of_limit,
                store.memory_peak_bytes,
                r.warnings
            );
            anyhow::ensure!(store.name == "couch", "{store:?}");
            let cpu = store.cpu_avg_cores.context("the store's CPU")?;
            anyhow::ensure!(cpu > 0.0 && cpu <= 0.55, "store CPU {cpu} under a 500m limit");
            // 10 000 documents of 4 KB live in the store's memory.
            let mem = store.memory_peak_bytes.context("the store's memory")?;
            anyhow::ensure!(mem > 40 << 20 && mem <= 512 << 20, "store memory {mem}");
            // The target's start-up, idle and per-pod figures.
            let u = &r.usage;
            println!(
                "cell {}: ready after {:?} s, image {:?} B, working set before load {:?} / peak {:?}, RSS peak {:?}, pods {:?}",
                r.cell,
                r.target_ready_seconds,
                r.target_image_bytes,
                u.memory_before_load_bytes,
                u.memory_peak_bytes,
                u.memory_rss_peak_bytes,
                u.pods
            );
            // Whole seconds (the apiserver's timestamps); Node and Express take a few.
            let ready = r.target_ready_seconds.context("ready time")?;
            anyhow::ensure!(ready > 0.0 && ready < 120.0, "ready after {ready} s");
            let image = r.target_image_bytes.context("image size")?;
            anyhow::ensure!(image > 10 << 20 && image < 300 << 20, "image {image} B");
            // Idle memory: the last sample before the load. A pod only a few seconds old may
            // have none yet (cAdvisor reports a new container after its first housekeeping, up
            // to ~15 s): then it is absent, never zero (counted below: at least one cell has it).
            let peak = u.memory_peak_bytes.context("peak memory")?;
            if let Some(before) = u.memory_before_load_bytes {
                anyhow::ensure!(before > 0 && before < peak, "before {before} vs peak {peak}");
                idle_readings += 1;
            }
            anyhow::ensure!(u.memory_rss_peak_bytes.is_some_and(|b| b > 0), "RSS");
            let replicas = r.coordinates.replicas as usize;
            let pods = if replicas > 1 { replicas } else { 0 };
            anyhow::ensure!(u.pods.len() == pods, "{} per-pod entries", u.pods.len());
            for p in &u.pods {
                anyhow::ensure!(
                    p.cpu_avg_cores.is_some_and(|c| c > 0.0)
                        && p.memory_peak_bytes.is_some_and(|b| b > 0),
                    "{p:?}"
                );
            }
        }
        anyhow::ensure!(idle_readings > 0, "no cell has the memory before its load");
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

/// Think time paces the closed model on the cluster: 4 connections pausing 50 ms after each
/// response send at most 4 / 50 ms = 80 requests per second, and a 2 s ramp-up before the
/// window sends requests that count as warm-up, which the target counts too.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn think_time_paces_the_load_and_the_ramp_up_is_not_measured() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-pacing").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    let yaml = demo_run("pacing", "{connections: [4]}", "").replace(
        "duration: 20s, warmup: 3s,",
        "duration: 10s, rampUp: 2s, thinkTime: 50ms,",
    );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "pacing", Duration::from_secs(300))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}, results {:?}",
            status.phase,
            status.results
        );
        let r = status.results.first().context("one result")?;
        assert_counts_match(&counter.snapshot(), "pacing", r)?;
        let rps = r.throughput.unwrap_or_default();
        let ramp = r.warmup_requests.unwrap_or_default();
        println!(
            "{:?} requests, {rps:.1} req/s, p99 {:?} ms, {ramp} ramp-up requests",
            r.requests,
            r.latency_ms.as_ref().map(|l| l.p99)
        );
        anyhow::ensure!(
            (50.0..=81.0).contains(&rps),
            "{rps} req/s with 50 ms think time"
        );
        // 4 connections joining at 0, 0.5, 1 and 1.5 s of 2 s, each about 20 requests a second.
        anyhow::ensure!((40..=120).contains(&ramp), "{ramp} ramp-up requests");
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn request_counts_and_keep_alive_are_set_per_cell() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-axes").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    // 5 000 and 20 000 requests (10 000 and 40 000 in `make e2e-full`): the counts are exact
    // and the connects within one per connection at any size.
    let (few, many): (i64, i64) = support::size((5000, 20000), (10000, 40000));
    let yaml = demo_run(
        "axes",
        &format!(
            r#"{{connections: [2, 8], keepAlive: [true, false],
           include: [{{connections: 8, requests: {many}}}]}}"#
        ),
        "",
    )
    .replace(
        "duration: 20s, warmup: 3s, resources: {cpu: 500m, memory: 64Mi}",
        &format!(
            "requests: {few}, warmupRequests: 200, pods: 2, resources: {{cpu: 300m, memory: 64Mi}}"
        ),
    );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "axes", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}",
            status.phase
        );
        let cells: Vec<(i32, i32, Option<i64>, bool)> = status
            .results
            .iter()
            .map(|r| {
                let k = &r.coordinates;
                (r.cell, k.connections, k.requests, k.keeps_alive())
            })
            .collect();
        anyhow::ensure!(
            cells
                == [
                    (0, 2, Some(few), true),
                    (1, 2, Some(few), false),
                    (2, 8, Some(many), true),
                    (3, 8, Some(many), false)
                ],
            "cells measured {cells:?}"
        );
        let counts = counter.snapshot();
        for r in &status.results {
            let seen = assert_counts_match(&counts, "axes", r)?;
            let k = &r.coordinates;
            let connects = r.connect_times_ms.as_ref().map_or(0, |c| c.count);
            println!(
                "cell {} c={} n={:?} keepAlive={}: {:?} requests (target counted {seen} with warm-up), {:.0} req/s, p99 {:?} ms, {connects} connects {:?}",
                r.cell,
                k.connections,
                k.requests,
                k.keeps_alive(),
                r.requests,
                r.throughput.unwrap_or_default(),
                r.latency_ms.as_ref().map(|l| l.p99),
                r.connect_times_ms
            );
            anyhow::ensure!(r.requests == k.requests, "cell {}: ran {:?}", r.cell, r.requests);
            let spread = r.load_start_spread_ms;
            println!("cell {}: load pods began {spread:?} ms apart", r.cell);
            anyhow::ensure!(
                spread.is_some_and(|s| (0..100).contains(&s)),
                "cell {}: load windows began {spread:?} ms apart; warnings {:?}",
                r.cell,
                r.warnings
            );
            let n = k.requests.unwrap_or_default();
            let c = i64::from(k.connections);
            if k.keeps_alive() {
                anyhow::ensure!(connects <= c, "cell {}: {connects} connects with keep-alive", r.cell);
            } else {
                // One connection per request; those open when the warm-up ended count there.
                anyhow::ensure!(
                    (connects - n).abs() <= c,
                    "cell {}: {connects} connects for {n} requests without keep-alive",
                    r.cell
                );
            }
        }
        let show = cluster.kubectl_benchrun(&["show", "axes", "-n", &ns]);
        println!("{show}");
        anyhow::ensure!(show.contains("REQUESTS") && show.contains("KEEPALIVE"), "{show}");
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

fn secs(t: &Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> f64 {
    t.as_ref()
        .map_or(0.0, |t| t.0.as_millisecond() as f64 / 1000.0)
}

/// With 15 s windows the target's CPU average agrees within ±5 % with its cgroup counter read
/// from the host, the peak is never below the average, and every cell has the load pods' CPU.
/// One window (two repeats, each checked alike, in `make e2e-full`).
#[tokio::test]
#[ignore = "needs the local cluster (and its node's /sys/fs/cgroup): make e2e"]
async fn cpu_average_matches_the_cgroup_counter_read_from_the_host() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-cpu").await;
    let truth = CgroupCpu::start(cluster.client.clone(), &ns);
    let repeats = support::size(1, 2);
    let yaml = demo_run("cpu", "{}", &format!("  repeats: {repeats}"))
        .replace("duration: 20s, warmup: 3s", "duration: 15s, warmup: 10s");
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "cpu", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(status.phase == Some(Phase::Succeeded));
        anyhow::ensure!(
            status.results.len() == repeats,
            "{} results",
            status.results.len()
        );
        anyhow::ensure!(truth.containers() > 0, "no target cgroup found on this host");
        let mut failures = Vec::new();
        for r in &status.results {
            let (start, end) = (secs(&r.window_start), secs(&r.window_end));
            let u = &r.usage;
            let host = truth.cores(start, end);
            println!(
                "cell {} r{}: window {:.3}s, host cgroup {:?} cores, status avg {:?} peak {:?} ({:?} samples, interval {:?}s), load {:?} cores ({:?} of limit; Prometheus {:?}), warnings {:?}",
                r.cell, r.repeat, end - start, host, u.cpu_avg_cores, u.cpu_peak_cores,
                u.cpu_samples, u.sample_interval_seconds, u.load_cpu_cores, u.load_cpu_of_limit,
                u.load_cpu_cores_prometheus, r.warnings
            );
            let (Some(host), Some(avg), Some(peak)) = (host, u.cpu_avg_cores, u.cpu_peak_cores) else {
                failures.push(format!("r{}: missing CPU (host {host:?}, avg {:?})", r.repeat, u.cpu_avg_cores));
                continue;
            };
            let off = (avg - host) / host;
            println!("  status avg is {:+.1}% off the host's counter", off * 100.0);
            if off.abs() > 0.05 {
                failures.push(format!("r{}: avg {avg} vs host {host:.4} ({:+.1}%)", r.repeat, off * 100.0));
            }
            if peak < avg {
                failures.push(format!("r{}: peak {peak} below avg {avg}", r.repeat));
            }
            if u.load_cpu_cores.is_none() || u.load_cpu_of_limit.is_none() {
                failures.push(format!("r{}: no load CPU", r.repeat));
            }
        }
        anyhow::ensure!(failures.is_empty(), "{}", failures.join("; "));
        Ok(())
    }
    .await;
    truth.stop();
    cluster.finish(&ns, outcome).await;
}

/// A 1 s window is too short for 2 CPU samples (this cluster stores one every 1-2 s): the spec
/// is accepted with a warning, and the cell says `WindowTooShort` with the duration that would
/// work, not `MetricsUnavailable`.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_one_second_window_is_too_short_and_says_how_long_to_measure() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-short").await;
    let yaml = demo_run("short", "{}", "").replace("duration: 20s", "duration: 1s");
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "short", Duration::from_secs(300))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        let accepted = status
            .conditions
            .iter()
            .find(|c| c.type_ == ConditionType::Accepted.as_str())
            .map(|c| c.message.clone())
            .unwrap_or_default();
        println!("Accepted: {accepted}");
        // Two of the operator's sample intervals (deploy/local: 3 s).
        anyhow::ensure!(
            accepted.contains("spec.load.duration 1s is shorter than 6s"),
            "no spec-time warning: {accepted}"
        );
        anyhow::ensure!(status.results.len() == 1, "{} results", status.results.len());
        let r = &status.results[0];
        println!(
            "window {:.3}s: cpu avg {:?}, {:?} samples, interval {:?}s, load {:?} cores; warnings {:?}",
            secs(&r.window_end) - secs(&r.window_start),
            r.usage.cpu_avg_cores,
            r.usage.cpu_samples,
            r.usage.sample_interval_seconds,
            r.usage.load_cpu_cores,
            r.warnings
        );
        let short = r.warnings.iter().find(|w| w.to_string().starts_with("WindowTooShort:"));
        anyhow::ensure!(
            short.is_some_and(|w| w.to_string().contains("measure for at least")),
            "no WindowTooShort with a minimum: {:?}",
            r.warnings
        );
        anyhow::ensure!(
            !r.warnings.iter().any(|w| w.to_string().starts_with("MetricsUnavailable")),
            "MetricsUnavailable instead of WindowTooShort: {:?}",
            r.warnings
        );
        anyhow::ensure!(r.usage.load_cpu_cores.is_some(), "no load CPU");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// A connections sweep of a CPU-bound target gets a capacity entry with a USL fit over its
/// measurements, and every cell with CPU figures its efficiency.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_connections_sweep_gets_a_capacity_fit_and_each_cell_its_efficiency() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-capacity").await;
    // A target held to 150m with a generator given 700m: the target, not the generator, sets
    // the rate, so no measurement is left out as GeneratorBound.
    let yaml = demo_run("capacity", "{connections: [1, 4, 16]}", "  repeats: 2")
        .replace(
            "resources: {cpu: 500m, memory: 128Mi}",
            "resources: {cpu: 150m, memory: 128Mi}",
        )
        .replace(
            "resources: {cpu: 500m, memory: 64Mi}",
            "resources: {cpu: 700m, memory: 64Mi}",
        )
        // 5 s windows (12 s in `make e2e-full`): the fit takes the 6 measurements'
        // throughputs, and each window holds CPU samples (this cluster samples every 1-2 s)
        // for the efficiency and the CPU chart.
        .replace(
            "duration: 20s",
            support::size("duration: 5s", "duration: 12s"),
        );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "capacity", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(status.results.len() == 6, "{} results", status.results.len());
        let mut with_cpu = 0;
        for r in &status.results {
            println!(
                "c={} r{}: {:?} req/s, cpu {:?} cores, {:?} req/s/core, load {:?} of limit, warnings {:?}",
                r.coordinates.connections,
                r.repeat,
                r.throughput,
                r.usage.cpu_avg_cores,
                r.requests_per_core,
                r.usage.load_cpu_of_limit,
                r.warnings
            );
            if let (Some(x), Some(cores)) = (r.throughput, r.usage.cpu_avg_cores) {
                with_cpu += 1;
                let per_core = r.requests_per_core.context("CPU figures but no requestsPerCore")?;
                anyhow::ensure!(
                    (per_core - x / cores).abs() <= 0.1,
                    "requestsPerCore {per_core} is not {x} / {cores}"
                );
            }
        }
        anyhow::ensure!(with_cpu > 0, "no cell had CPU figures to compute efficiency from");
        for r in &status.results {
            let l = r.latency_ms.as_ref().context("no latency")?;
            let row = |p: f64| l.table.iter().find(|x| x.percent == p).map(|x| x.ms);
            println!("#{} r{} percentiles {:?} connect {:?}", r.cell, r.repeat, l.table, r.connect_times_ms);
            anyhow::ensure!(l.table.len() == 10, "percentile table {:?}", l.table);
            anyhow::ensure!(l.table.windows(2).all(|w| w[0].ms <= w[1].ms), "{:?}", l.table);
            anyhow::ensure!(row(50.0) == Some(l.p50) && row(99.0) == Some(l.p99), "{l:?}");
            anyhow::ensure!(row(100.0) == Some(l.max), "{l:?}");
            // Connections opened during the warm-up are not in the window: then there are none.
            if let Some(c) = &r.connect_times_ms {
                anyhow::ensure!(c.count >= 1 && c.min <= c.mean && c.mean <= c.max, "{c:?}");
                anyhow::ensure!(r.connect_ms == Some(c.mean), "{c:?} vs {:?}", r.connect_ms);
            }
        }
        println!("capacity: {:#?}", status.capacity);
        anyhow::ensure!(status.capacity.len() == 1, "{} capacity entries", status.capacity.len());
        let c = &status.capacity[0];
        anyhow::ensure!(c.model == "USL" && c.target == "demo" && c.cpu == "150m", "{c:?}");
        anyhow::ensure!(c.points == 6 && c.excluded.is_none(), "{c:?}");
        let fit = c.fit.as_ref().with_context(|| format!("no fit: {:?}", c.refused))?;
        anyhow::ensure!(fit.throughput_at_one > 0.0 && fit.r_squared.is_finite(), "{fit:?}");
        let shown = cluster.kubectl_benchrun(&["show", "capacity", "-n", &ns]);
        println!("{shown}");
        anyhow::ensure!(shown.contains("Capacity:") && shown.contains("REQ/S/CORE"), "{shown}");
        check_report_in_chromium(&cluster, &ns, "capacity")
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Writes the run's HTML report with the plugin, opens it in headless Chromium and checks
/// that the page is not blank and that every chart a connections sweep with a capacity fit
/// should have is there and drawn (its own screenshot holds the first series' colour).
fn check_report_in_chromium(cluster: &Cluster, ns: &str, run: &str) -> anyhow::Result<()> {
    let dir = std::path::PathBuf::from(format!("/tmp/benchrun-e2e-report/{run}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let html = dir.join(format!("{run}.html"));
    let said = cluster.kubectl_benchrun(&["report", run, "-n", ns, "-o", html.to_str().unwrap()]);
    println!("{said}");
    let text = std::fs::read_to_string(&html).with_context(|| format!("no report: {said}"))?;
    anyhow::ensure!(
        text.contains("<h2>Latency percentiles</h2>"),
        "no percentile table"
    );
    let ids = browser::chart_ids(&text);
    println!("charts: {ids:?}");
    for want in [
        "chart-throughput",
        "chart-p99",
        "chart-cpu",
        "chart-memory",
        "chart-spectrum-0",
        "chart-capacity-",
    ] {
        anyhow::ensure!(
            ids.iter().any(|id| id.starts_with(want)),
            "no {want} chart in {ids:?}"
        );
    }
    let timelines = ids
        .iter()
        .filter(|id| id.starts_with("chart-timeline-"))
        .count();
    anyhow::ensure!(timelines == 3, "{timelines} timeline charts for 3 cells");
    for (id, shot) in browser::screenshots(&html, &dir)? {
        println!(
            "{id}: {:.1}% ink, {} colours, {} first-series pixels",
            shot.ink * 100.0,
            shot.colours,
            shot.first_series_pixels
        );
        let png = shot.path.display();
        anyhow::ensure!(
            shot.ink > 0.02 && shot.colours >= 8,
            "{png} looks blank: {shot:?}"
        );
        anyhow::ensure!(
            shot.first_series_pixels >= 50,
            "{png}: no data drawn: {shot:?}"
        );
    }
    Ok(())
}

/// A second run with `baseline` set to the first gets a verdict for every measurement (3
/// repeats a side); the cell whose compute path was made heavier is `Worse` with an interval
/// below 1.0, its `Baseline` comparison `Slower`, and the run `Regressed=True`. Windows of 4 s
/// after a 1 s warm-up (10 s after 3 s in `make e2e-full`): the
/// verdicts rest on the load figures only, and 12 times the work per request puts the ratio
/// near 0.1, far from the 0.8 and 1.0 the test asserts against.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_slower_build_is_worse_than_its_baseline_and_the_run_regressed() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-baseline").await;
    let with_work = |name: &str, n: u32, extra: &str| {
        demo_run(name, "{}", extra)
            .replace(
                "    - {name: hello, path: /hello}",
                &format!("    - {{name: hello, path: /hello}}\n    - {{name: work, path: \"/compute?n={n}\"}}"),
            )
            .replace(
                "duration: 20s, warmup: 3s",
                support::size("duration: 4s, warmup: 1s", "duration: 10s, warmup: 3s"),
            )
            // The unit of replication is the repeat: an interval needs at least 2 a side.
            + "  repeats: 3\n"
    };
    let outcome = async {
        cluster.apply_run(&ns, &with_work("base", 2000, "")).await?;
        let base = cluster
            .wait_finished(&ns, "base", Duration::from_secs(420))
            .await?;
        let base = base.status.unwrap_or_default();
        anyhow::ensure!(
            base.results.len() == 6,
            "{} baseline results",
            base.results.len()
        );
        // Counting primes below 12000 instead of 2000 by trial division: about 12 times the
        // work per request. At 2.5 times (4000) the throughput ratio was 0.56-0.60 on a quiet
        // machine but 0.92 (p = 0.6, verdict Same) once in CI, where generator and target
        // share the node's two cores with whatever else runs: the difference must dwarf that.
        let slower = with_work("slower", 12000, "  baseline: {run: base}");
        cluster.apply_run(&ns, &slower).await?;
        let run = cluster
            .wait_finished(&ns, "slower", Duration::from_secs(420))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.results.len() == 6,
            "{} results",
            status.results.len()
        );
        for r in &status.results {
            println!(
                "{} {:?} req/s: {:?}",
                r.coordinates.scenario, r.throughput, r.baseline
            );
            let b = r
                .baseline
                .as_ref()
                .context("a measurement without a baseline verdict")?;
            // /hello is cheap enough that on a busy node the load generator can set the rate
            // (it did once in CI): such a cell measured the generator and is not compared
            // (issue 52), and says so. The heavy path is never generator-bound.
            if b.verdict == Verdict::Unmatched {
                let reason = b.reason.clone().unwrap_or_default();
                anyhow::ensure!(
                    r.coordinates.scenario == "hello" && reason.contains("generator-bound"),
                    "{} unmatched: {reason}",
                    r.coordinates.scenario
                );
                continue;
            }
            anyhow::ensure!(
                b.repeats == Some(r.repeat + 1) && b.baseline_repeats == Some(3),
                "{b:?}"
            );
        }
        let work = status
            .results
            .iter()
            .find(|r| r.coordinates.scenario == "work" && r.repeat == 2)
            .context("no last work measurement")?;
        let b = work.baseline.as_ref().context("no verdict")?;
        anyhow::ensure!(b.verdict == Verdict::Worse, "the heavier path is {b:?}");
        anyhow::ensure!(b.throughput_ratio.is_some_and(|x| x < 0.8), "{b:?}");
        anyhow::ensure!(b.ratio_high.is_some_and(|x| x < 1.0), "{b:?}");
        let c = status
            .comparisons
            .iter()
            .find(|c| {
                c.coordinates.scenario == "work"
                    && c.against == benchrun_api::ComparisonKind::Baseline
            })
            .context("no Baseline comparison of the work cell")?;
        anyhow::ensure!(
            c.verdict == benchrun_api::ComparisonVerdict::Slower && c.reference == "base",
            "{c:?}"
        );
        let regressed = status
            .conditions
            .iter()
            .find(|c| c.type_ == "Regressed")
            .context("no Regressed condition")?;
        println!("Regressed={}: {}", regressed.status, regressed.message);
        let html = cluster.kubectl_benchrun(&[
            "report",
            "slower",
            "--baseline",
            "base",
            "-n",
            &ns,
            "-o",
            "-",
        ]);
        anyhow::ensure!(
            html.contains("baseline base: ") && html.contains("swatch dashed"),
            "the report draws no baseline series"
        );
        anyhow::ensure!(
            html.contains("<h2>Against the baseline</h2>")
                && html.contains("Worse")
                && html.contains("<h2>Comparisons</h2>"),
            "the report has no verdicts"
        );
        anyhow::ensure!(
            regressed.status == "True" && regressed.reason == "Worse",
            "{regressed:?}"
        );
        anyhow::ensure!(regressed.message.contains("work"), "{}", regressed.message);
        let shown = cluster.kubectl_benchrun(&["show", "slower", "-n", &ns]);
        println!("{shown}");
        anyhow::ensure!(shown.contains("Against the baseline:"), "{shown}");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// A spec that CEL can judge is refused by the apiserver with a message naming the field.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn invalid_spec_is_rejected_at_admission_with_its_message() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-invalid").await;
    let yaml =
        demo_run("invalid", "{}", "").replace("duration: 20s", "duration: 20s, requests: 100");
    let outcome = async {
        let err = match cluster.apply_run(&ns, &yaml).await {
            Ok(_) => anyhow::bail!("the apiserver accepted both load.requests and load.duration"),
            Err(e) => format!("{e:#}"),
        };
        println!("rejected: {err}");
        anyhow::ensure!(
            err.contains("set exactly one of load.requests"),
            "unexpected message: {err}"
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Exactly one operator replica says it leads (`/readyz`), and it is the Lease holder.
async fn one_leader_holds_the_lease(cluster: &Cluster) -> anyhow::Result<String> {
    let holder = cluster
        .lease_holder()
        .await?
        .context("the lease has no holder")?;
    let roles = cluster.operator_roles().await?;
    println!("lease holder {holder}; replicas {roles:?}");
    let leaders: Vec<&String> = roles
        .iter()
        .filter(|(_, r)| r == "leader")
        .map(|(p, _)| p)
        .collect();
    anyhow::ensure!(
        leaders == [pod_of(&holder)],
        "leaders by /readyz {leaders:?}, lease holder {holder}"
    );
    Ok(holder)
}

/// Killing the leader replica in the middle of a cell hands the run to the standby, which
/// finishes it with every cell measured once and the target's own counts equal to the
/// generator's; stopping the new leader gracefully mid-cell hands it over again, through a
/// released lease. The spec of a started run cannot be changed.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn leader_killed_mid_cell_the_standby_measures_every_cell_once() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-leader").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    // 8 s windows (20 s in `make e2e-full`): each kill still lands in a cell's load, which
    // the test waits for, and the counts do not depend on the window's length.
    let yaml = demo_run("takeover", r#"{connections: [2, 4, 6]}"#, "").replace(
        "duration: 20s",
        support::size("duration: 8s", "duration: 20s"),
    );
    let loading = |cell: i32| {
        move |r: &BenchmarkRun| {
            r.status
                .as_ref()
                .and_then(|s| s.current.as_ref())
                .is_some_and(|c| c.cell >= cell && c.stage == Stage::Loading)
        }
    };
    let outcome = async {
        let first = one_leader_holds_the_lease(&cluster).await?;
        cluster.apply_run(&ns, &yaml).await?;
        cluster
            .wait_until(&ns, "takeover", Duration::from_secs(180), loading(0))
            .await?;
        let changed = cluster
            .patch_spec(
                &ns,
                "takeover",
                serde_json::json!({"load": {"connections": 9}}),
            )
            .await;
        anyhow::ensure!(changed.is_err(), "the spec of a running run was changed");
        println!("spec change refused: {:#}", changed.unwrap_err());

        // A crash: the leader cannot release its lease; the standby waits for it to expire.
        let since = cluster.lease_version().await?;
        let how = cluster.kill_operator_pod(pod_of(&first)).await?;
        let (second, took, _) = cluster
            .wait_for_new_leader(&first, &since, Duration::from_secs(90))
            .await?;
        println!(
            "TAKEOVER after the leader was killed ({how}): {:.1} s, new leader {second}",
            took.as_secs_f64()
        );
        anyhow::ensure!(
            pod_of(&second) != pod_of(&first),
            "the killed pod leads again"
        );

        // A graceful stop: the leader releases its lease, the standby takes it at its next read.
        cluster
            .wait_until(&ns, "takeover", Duration::from_secs(300), loading(1))
            .await?;
        let second = one_leader_holds_the_lease(&cluster).await?;
        let since = cluster.lease_version().await?;
        cluster.stop_operator_pod(pod_of(&second)).await?;
        let (third, took, released) = cluster
            .wait_for_new_leader(&second, &since, Duration::from_secs(90))
            .await?;
        println!(
            "TAKEOVER after the leader was stopped gracefully: {:.1} s (lease seen released: {released}), new leader {third}",
            took.as_secs_f64()
        );
        anyhow::ensure!(released, "the stopped leader did not release its lease");

        let run = cluster
            .wait_finished(&ns, "takeover", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}",
            status.phase
        );
        let keys: BTreeSet<(i32, i32)> =
            status.results.iter().map(|r| (r.cell, r.repeat)).collect();
        anyhow::ensure!(
            status.results.len() == 3 && keys.len() == 3,
            "results {keys:?}"
        );
        let counts = counter.snapshot();
        for r in &status.results {
            let seen = assert_counts_match(&counts, "takeover", r)?;
            println!(
                "cell {}: generator {:?} + warm-up {:?}, target counted {seen}",
                r.cell, r.requests, r.warmup_requests
            );
        }
        one_leader_holds_the_lease(&cluster).await?;
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

/// A target whose image cannot be had fails its cells with the reason, within the timeout.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn target_that_cannot_start_fails_with_a_clear_reason() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-nostart").await;
    let yaml = demo_run(
        "nostart",
        "{connections: [2, 4]}",
        "  timeouts: {ready: 20s}",
    )
    .replace(DEMO_IMAGE, "benchrun.local/does-not-exist:0")
    .replace("IfNotPresent", "Never");
    let outcome = async {
        let t0 = std::time::Instant::now();
        cluster.apply_run(&ns, &yaml).await?;
        let run: BenchmarkRun = cluster
            .wait_finished(&ns, "nostart", Duration::from_secs(180))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        println!("finished after {:?}: {:?}", t0.elapsed(), status.phase);
        anyhow::ensure!(status.phase == Some(Phase::Failed));
        anyhow::ensure!(
            status.results.len() == 2,
            "{} results",
            status.results.len()
        );
        for r in &status.results {
            let reason = r.reason.clone().unwrap_or_default();
            println!("cell {}: {} — {reason}", r.cell, r.outcome);
            anyhow::ensure!(r.outcome == Outcome::Failed);
            anyhow::ensure!(
                reason.contains("ErrImageNeverPull") || reason.contains("image"),
                "reason does not name the image problem: {reason}"
            );
        }
        anyhow::ensure!(
            t0.elapsed() < Duration::from_secs(120),
            "took {:?}",
            t0.elapsed()
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Legal run names that are not DNS-1035 labels (a leading digit, a dot) are measured like any
/// other: their children get valid names, and the target counts every request.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn runs_with_a_leading_digit_or_a_dot_in_their_name_succeed() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-names").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    let short = |name: &str| {
        demo_run(name, "{}", "")
            .replace("duration: 20s", "duration: 5s")
            .replace("warmup: 3s", "warmup: 1s")
    };
    let outcome = async {
        for name in ["1st-run", "run.v2"] {
            cluster.apply_run(&ns, &short(name)).await?;
        }
        for name in ["1st-run", "run.v2"] {
            let run = cluster
                .wait_finished(&ns, name, Duration::from_secs(300))
                .await?;
            let status = run.status.clone().unwrap_or_default();
            anyhow::ensure!(
                status.phase == Some(Phase::Succeeded),
                "{name}: phase {:?}, results {:?}",
                status.phase,
                status.results.iter().map(|r| &r.reason).collect::<Vec<_>>()
            );
            anyhow::ensure!(
                status.results.len() == 1,
                "{name}: {} results",
                status.results.len()
            );
            let seen = assert_counts_match(&counter.snapshot(), name, &status.results[0])?;
            println!("{name}: target counted {seen} requests, as the generator reported");
        }
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

/// A target the apiserver refuses to store (CEL and validation pass it) fails its cell at once
/// with the apiserver's message in the result, a condition and a Warning event, well within
/// its ready timeout; the run queued behind it then gets the measuring slot and succeeds.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn refused_target_fails_with_the_apiservers_reason_and_frees_the_slot() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-refused").await;
    let short = |name: &str, extra: &str| {
        demo_run(name, "{}", extra)
            .replace("duration: 20s", "duration: 5s")
            .replace("warmup: 3s", "warmup: 1s")
    };
    // A service account name must be a DNS subdomain: the apiserver refuses the Deployment
    // with 422. (Not a toleration, which the operator's placement policy refuses first.)
    let refused = short("refused", "  timeouts: {ready: 90s}").replace(
        "readinessPath: /healthz}",
        r#"readinessPath: /healthz, serviceAccountName: "Not A Name!"}"#,
    );
    let outcome = async {
        let t0 = std::time::Instant::now();
        cluster.apply_run(&ns, &refused).await?;
        cluster.apply_run(&ns, &short("after", "")).await?;
        let run = cluster
            .wait_finished(&ns, "refused", Duration::from_secs(120))
            .await?;
        let took = t0.elapsed();
        let status = run.status.clone().unwrap_or_default();
        println!("refused finished after {took:?}: {:?}", status.phase);
        anyhow::ensure!(status.phase == Some(Phase::Failed));
        anyhow::ensure!(
            took < Duration::from_secs(90),
            "took {took:?}, the ready timeout"
        );
        let reason = status.results[0].reason.clone().unwrap_or_default();
        println!("result reason: {reason}");
        anyhow::ensure!(
            reason.contains("refused Deployment") && reason.contains("serviceAccountName"),
            "reason does not carry the apiserver's message: {reason}"
        );
        let cond = status
            .conditions
            .iter()
            .find(|c| c.type_ == ConditionType::ChildrenApplied.as_str())
            .ok_or_else(|| anyhow::anyhow!("no ChildrenApplied condition"))?;
        anyhow::ensure!(cond.status == "False" && cond.reason == Reason::ApplyRefused.as_str());
        let events = cluster.kubectl(&[
            "get",
            "events",
            "-n",
            &ns,
            "--field-selector",
            "involvedObject.name=refused,reason=ApplyRefused,type=Warning",
        ]);
        println!("{events}");
        anyhow::ensure!(
            events.contains("serviceAccountName"),
            "no ApplyRefused event:\n{events}"
        );
        let after = cluster
            .wait_finished(&ns, "after", Duration::from_secs(240))
            .await?;
        let s = after.status.clone().unwrap_or_default();
        anyhow::ensure!(
            s.phase == Some(Phase::Succeeded),
            "the run queued behind the refused one: {:?}",
            s.phase
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Target and load pods are admitted where the `restricted` Pod Security Standard is enforced
/// (non-root images, no privilege escalation, no capabilities, RuntimeDefault seccomp), and
/// the run measures what the target counted. A bare pod in the same namespace is refused, so
/// the enforcement is real.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn run_succeeds_in_a_namespace_enforcing_the_restricted_standard() {
    let cluster = Cluster::connect().await;
    let ns = cluster
        .namespace_labelled(
            "e2e-restricted",
            &[
                ("pod-security.kubernetes.io/enforce", "restricted"),
                ("pod-security.kubernetes.io/enforce-version", "latest"),
            ],
        )
        .await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    // 5 s windows after 1 s of warm-up (20 s after 3 s in `make e2e-full`): admission and the
    // counts are what is checked, no CPU figure.
    let yaml = demo_run("restricted", "{connections: [2, 4]}", "").replace(
        "duration: 20s, warmup: 3s",
        support::size("duration: 5s, warmup: 1s", "duration: 20s, warmup: 3s"),
    );
    let outcome = async {
        let bare: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "bare"},
            "spec": {"containers": [{"name": "c", "image": DEMO_IMAGE}]}
        }))?;
        let refused = Api::<Pod>::namespaced(cluster.client.clone(), &ns)
            .create(&PostParams::default(), &bare)
            .await;
        anyhow::ensure!(
            refused.is_err(),
            "a pod without securityContext was admitted"
        );
        println!("bare pod refused: {}", refused.unwrap_err());
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "restricted", Duration::from_secs(300))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}: {:?}",
            status.phase,
            status
                .results
                .iter()
                .map(|r| r.reason.clone())
                .collect::<Vec<_>>()
        );
        anyhow::ensure!(
            status.results.len() == 2,
            "{} results",
            status.results.len()
        );
        let counts = counter.snapshot();
        for r in &status.results {
            let seen = assert_counts_match(&counts, "restricted", r)?;
            println!(
                "cell {}: target counted {seen}, {:.0} req/s",
                r.cell,
                r.throughput.unwrap_or_default()
            );
        }
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

/// A run naming a Prometheus outside the operator's allow-list fails at once with
/// `Accepted=False`, reason `NotAllowed`, a message saying how to allow it, and no children.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn run_naming_an_unlisted_prometheus_is_refused_before_anything_starts() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-notallowed").await;
    let yaml = demo_run(
        "notallowed",
        "{}",
        "  prometheus: {url: \"http://prometheus.elsewhere.invalid:9090\"}",
    );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "notallowed", Duration::from_secs(60))
            .await?;
        let message = support::refused_not_allowed("notallowed", &run)?;
        anyhow::ensure!(
            message.contains("BENCHRUN_ALLOWED_PROMETHEUS_URLS"),
            "{message}"
        );
        let children = cluster.children(&ns, "deploy,jobs,pods");
        anyhow::ensure!(children.is_empty(), "children: {children}");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Prometheus stopped as soon as the first cell's load has ended, before its window is read,
/// and started again once the next cell waits for it (about a minute in `make e2e-full`): the cell's CPU and memory are deferred, then filled
/// in for the same window; the next cell (another target configuration) waits for Prometheus
/// with the old pods kept; the run ends Succeeded with CPU and memory in every cell and the
/// load figures equal to what the target counted.
#[tokio::test]
#[ignore = "needs the local cluster (its own Prometheus): make e2e"]
async fn prometheus_outage_during_a_cell_defers_cpu_and_memory_until_it_is_back() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-promdown").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    // 6 s windows (20 s in `make e2e-full`): the outage falls between the windows, whatever
    // their length.
    let yaml = demo_run("promdown", r#"{cpu: ["250m", "300m"]}"#, "").replace(
        "duration: 20s",
        support::size("duration: 6s", "duration: 20s"),
    );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        // The first cell's figures are due one sample interval (3 s here) after its window
        // ends; the test must see that state before it is over, so it looks every 200 ms.
        cluster
            .wait_until_polling(
                &ns,
                "promdown",
                Duration::from_secs(300),
                Duration::from_millis(200),
                |r| {
                    r.status.as_ref().is_some_and(|s| {
                        s.results
                            .iter()
                            .any(|x| x.cell == 0 && x.metrics_due.is_some())
                    })
                },
            )
            .await?;
        let mut outage = PrometheusOutage::begin()?;
        let stopped = std::time::Instant::now();
        let deferred = cluster
            .wait_until(&ns, "promdown", Duration::from_secs(60), |r| {
                r.status
                    .as_ref()
                    .is_some_and(|s| s.results.iter().any(|x| x.metrics_pending.is_some()))
            })
            .await?;
        let s = deferred.status.clone().unwrap_or_default();
        let r0 = &s.results[0];
        println!(
            "deferred: cell {} {:.0} req/s, usage {:?}, pending {:?}, warnings {:?}",
            r0.cell,
            r0.throughput.unwrap_or_default(),
            r0.usage.cpu_avg_cores, r0.metrics_pending, r0.warnings
        );
        anyhow::ensure!(r0.requests.unwrap_or(0) > 0, "the load figures were not kept");
        // Prometheus stays down until the next cell's load waits for it (its target ready,
        // `Running=True` with reason WaitingForPrometheus), then comes back: as short an outage
        // as shows every step. `make e2e-full` keeps it down for about a minute in any case.
        cluster
            .wait_until(&ns, "promdown", Duration::from_secs(180), |r| {
                r.status.as_ref().is_some_and(|s| {
                    s.conditions
                        .iter()
                        .any(|c| c.reason == Reason::WaitingForPrometheus.as_str())
                })
            })
            .await?;
        if support::full() {
            let rest = Duration::from_secs(60).saturating_sub(stopped.elapsed());
            tokio::time::sleep(rest).await;
        }
        outage.end()?;
        println!("Prometheus down for {:?}", stopped.elapsed());
        let run = cluster
            .wait_finished(&ns, "promdown", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase == Some(Phase::Succeeded),
            "phase {:?}",
            status.phase
        );
        anyhow::ensure!(status.results.len() == 2, "{} results", status.results.len());
        let counts = counter.snapshot();
        for r in &status.results {
            let seen = assert_counts_match(&counts, "promdown", r)?;
            println!(
                "cell {} c={}: {:?} requests (target counted {seen} with warm-up), {:.0} req/s, p99 {:.1} ms; cpu {:?} cores ({:?} of limit), mem avg {:?} B, load cpu {:?}; warnings {:?}",
                r.cell,
                r.coordinates.connections,
                r.requests,
                r.throughput.unwrap_or_default(),
                r.latency_ms.as_ref().map_or(0.0, |l| l.p99),
                r.usage.cpu_avg_cores,
                r.usage.cpu_avg_of_limit,
                r.usage.memory_avg_bytes,
                r.usage.load_cpu_cores,
                r.warnings
            );
            anyhow::ensure!(
                r.metrics_pending.is_none() && r.metrics_due.is_none(),
                "cell {} still pending",
                r.cell
            );
            anyhow::ensure!(
                r.usage.cpu_avg_cores.unwrap_or(0.0) > 0.0,
                "cell {}: no target CPU",
                r.cell
            );
            anyhow::ensure!(
                r.usage.memory_avg_bytes.unwrap_or(0) > 0,
                "cell {}: no target memory",
                r.cell
            );
        }
        let events = cluster.kubectl(&["get", "events", "-n", &ns, "--sort-by=.lastTimestamp"]);
        let ours: Vec<&str> = events
            .lines()
            .filter(|l| {
                ["MetricsDeferred", "MetricsCollected", "WaitingForPrometheus"]
                    .iter()
                    .any(|r| l.contains(r))
            })
            .collect();
        println!("{}", ours.join("\n"));
        for reason in ["MetricsDeferred", "MetricsCollected", "WaitingForPrometheus"] {
            anyhow::ensure!(events.contains(reason), "no {reason} event:\n{events}");
        }
        Ok(())
    }
    .await;
    counter.stop();
    cluster.finish(&ns, outcome).await;
}

/// A header value holding CR/LF (request smuggling into the load generator) is refused by the
/// real apiserver with a message that names the header.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn header_with_crlf_is_rejected_at_admission_naming_the_field() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-smuggle").await;
    let yaml = demo_run("smuggle", "{}", "").replace(
        "{name: hello, path: /hello}",
        r#"{name: hello, path: /hello, headers: {X-A: "b\r\nX-Injected: 1"}}"#,
    );
    let outcome = async {
        let err = match cluster.apply_run(&ns, &yaml).await {
            Ok(_) => anyhow::bail!("the apiserver accepted a header value with CR/LF"),
            Err(e) => format!("{e:#}"),
        };
        println!("rejected: {err}");
        anyhow::ensure!(
            err.contains("spec.scenarios[0].headers[X-A]")
                && err.contains("must not hold control characters"),
            "unexpected message: {err}"
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Restores a node's `benchrun.dev/role` label as it was, also when the test fails.
struct NodeRole {
    node: String,
    before: Option<String>,
}

impl NodeRole {
    fn set(cluster: &Cluster, node: &str, role: &str) -> Self {
        let before = cluster.kubectl(&[
            "get",
            "node",
            node,
            "-o",
            "jsonpath={.metadata.labels.benchrun\\.dev/role}",
        ]);
        let before = Some(before.trim().to_string()).filter(|s| !s.is_empty());
        let label = format!("benchrun.dev/role={role}");
        cluster.kubectl(&["label", "node", node, &label, "--overwrite"]);
        NodeRole {
            node: node.to_string(),
            before,
        }
    }
}

impl Drop for NodeRole {
    fn drop(&mut self) {
        let label = match &self.before {
            Some(v) => format!("benchrun.dev/role={v}"),
            None => "benchrun.dev/role-".to_string(),
        };
        let _ = std::process::Command::new("kubectl")
            .args(["label", "node", &self.node, &label, "--overwrite"])
            .output();
    }
}

/// Placement by node role: on the two-node local cluster (nodes labelled
/// `benchrun.dev/role=target` and `=load`), the target's pods select and land on the target
/// node and the load pods on the load node, and no cell carries `SameNode`; a run that forces
/// target and load onto one node with its own selectors gets `SameNode` on every cell. On a
/// one-node cluster the test lends the node the load role for the first run.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn load_pods_go_to_load_nodes_and_one_forced_node_is_same_node() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-placement").await;
    let by_role = |role: &str| {
        let label = format!("benchrun.dev/role={role}");
        let names = cluster.kubectl(&[
            "get",
            "nodes",
            "-l",
            &label,
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ]);
        names.split_whitespace().next().map(str::to_string)
    };
    let outcome = async {
        // hack/cluster.sh's two-node layout labels its nodes target and load; on one node the
        // test lends that node the load role for the first run.
        let (target_node, load_node, lent) = match (by_role("target"), by_role("load")) {
            (Some(t), Some(l)) if t != l => (Some(t), l, None),
            _ => {
                let nodes =
                    cluster.kubectl(&["get", "nodes", "-o", "jsonpath={.items[*].metadata.name}"]);
                let node = nodes.split_whitespace().next().expect("a node").to_string();
                let lent = NodeRole::set(&cluster, &node, "load");
                (None, node, Some(lent))
            }
        };
        println!("target node {target_node:?}, load node {load_node}");
        let placed = demo_run("placed", "{}", "").replace("duration: 20s", "duration: 5s");
        cluster.apply_run(&ns, &placed).await?;
        // The Job is made once the target is ready: look for its pod template's selector.
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let selector = loop {
            let s = cluster.kubectl(&[
                "get",
                "jobs",
                "-n",
                &ns,
                "-o",
                "jsonpath={.items[0].spec.template.spec.nodeSelector}",
            ]);
            if s.contains("benchrun.dev/role") || std::time::Instant::now() > deadline {
                break s;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        println!("load Job nodeSelector: {selector}");
        anyhow::ensure!(
            selector.contains("\"benchrun.dev/role\":\"load\""),
            "the load Job does not select the load node: {selector:?}"
        );
        let targets = cluster.kubectl(&[
            "get",
            "deployments",
            "-n",
            &ns,
            "-o",
            "jsonpath={.items[*].spec.template.spec.nodeSelector}",
        ]);
        println!("target Deployment nodeSelector: {targets}");
        match &target_node {
            Some(_) => anyhow::ensure!(
                targets.contains("\"benchrun.dev/role\":\"target\""),
                "the target does not select the target node: {targets:?}"
            ),
            None => anyhow::ensure!(
                !targets.contains("benchrun.dev/role"),
                "no node has the target role, yet the target selects one: {targets:?}"
            ),
        }
        let run = cluster
            .wait_finished(&ns, "placed", Duration::from_secs(300))
            .await?;
        let status = run.status.unwrap_or_default();
        anyhow::ensure!(status.phase == Some(Phase::Succeeded), "{:?}", status.phase);
        anyhow::ensure!(!status.results.is_empty(), "no results");
        for r in &status.results {
            println!(
                "cell {}: load on {:?}, target on {:?}, warnings {:?}",
                r.cell, r.load_nodes, r.target_nodes, r.warnings
            );
            anyhow::ensure!(r.load_nodes == vec![load_node.clone()], "{:?}", r.load_nodes);
            if let Some(t) = &target_node {
                anyhow::ensure!(r.target_nodes == vec![t.clone()], "{:?}", r.target_nodes);
                anyhow::ensure!(
                    !r.warnings.iter().any(|w| w.code.as_str() == "SameNode"),
                    "cell {} on two nodes has SameNode: {:?}",
                    r.cell,
                    r.warnings
                );
            }
        }
        drop(lent);
        // Both forced onto the load node by the run's own selectors (the target at 250m, so
        // that both fit one node's allocatable CPU in the two-node layout).
        let node = load_node;
        let forced = demo_run("forced", "{}", "")
            .replace("duration: 20s", "duration: 5s")
            .replace(
                "resources: {cpu: 500m, memory: 128Mi}",
                "resources: {cpu: 250m, memory: 128Mi}",
            )
            .replace(
                "readinessPath: /healthz}",
                &format!(
                    "readinessPath: /healthz, nodeSelector: {{kubernetes.io/hostname: {node}}}}}"
                ),
            )
            .replace(
                "resources: {cpu: 500m, memory: 64Mi}}",
                &format!(
                    "resources: {{cpu: 500m, memory: 64Mi}}, nodeSelector: {{kubernetes.io/hostname: {node}}}}}"
                ),
            );
        cluster.apply_run(&ns, &forced).await?;
        let run = cluster
            .wait_finished(&ns, "forced", Duration::from_secs(300))
            .await?;
        let status = run.status.unwrap_or_default();
        anyhow::ensure!(status.phase == Some(Phase::Succeeded), "{:?}", status.phase);
        for r in &status.results {
            println!(
                "forced cell {}: load on {:?}, target on {:?}, warnings {:?}",
                r.cell, r.load_nodes, r.target_nodes, r.warnings
            );
            anyhow::ensure!(
                r.load_nodes == vec![node.clone()] && r.target_nodes == vec![node.clone()],
                "forced cell {} not on {node}: load {:?}, target {:?}",
                r.cell,
                r.load_nodes,
                r.target_nodes
            );
            anyhow::ensure!(
                r.warnings.iter().any(|w| w.code.as_str() == "SameNode"),
                "cell {} forced onto {node} has no SameNode: {:?}",
                r.cell,
                r.warnings
            );
        }
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}
