//! End-to-end: BenchmarkRuns applied to the real local cluster (apiserver, kubelet, containerd,
//! Prometheus) with the operator installed from `deploy/`. Run by `make e2e` (and so by
//! `make test` and CI) with `--ignored`, because they need that cluster:
//!
//! ```text
//! eval "$(hack/cluster.sh env)" && make install
//! cargo test --release -p benchrun --test e2e -- --ignored --test-threads=1 --nocapture
//! ```
//!
//! Each test works in a namespace of its own, dumps its pods and events when it fails and
//! deletes the namespace at the end.

#[path = "e2e/support.rs"]
mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use benchrun_api::{phase, BenchmarkRun};
use support::{assert_counts_match, Cluster, TargetCounter};

const DEMO_IMAGE: &str = "benchrun.local/benchrun-demo:0.1.0";

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
/// and CPU and memory come back from Prometheus within the limits.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn run_measures_every_cell_and_counts_match_the_target() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-matrix").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    let yaml = demo_run(
        "matrix",
        r#"{cpu: ["250m", "500m"], connections: [2, 8]}"#,
        "",
    );
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "matrix", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(
            status.phase.as_deref() == Some(phase::SUCCEEDED),
            "phase {:?}",
            status.phase
        );
        anyhow::ensure!(
            status.results.len() == 4,
            "{} results",
            status.results.len()
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
            let limit = benchrun_api::units::cpu_millis(&r.coordinates.cpu).unwrap() as f64 / 1000.0;
            let cpu = r.usage.cpu_avg_cores.unwrap_or(0.0);
            anyhow::ensure!(cpu > 0.0, "cell {}: no target CPU", r.cell);
            anyhow::ensure!(
                cpu <= limit * 1.15,
                "cell {}: target CPU {cpu} above its limit {limit}",
                r.cell
            );
            anyhow::ensure!(
                r.usage.memory_avg_bytes.unwrap_or(0) > 0,
                "cell {}: no target memory",
                r.cell
            );
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

/// Deleting the operator pod in the middle of a run neither loses nor repeats a measurement,
/// and the spec of a started run cannot be changed.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn operator_restart_mid_run_measures_every_cell_once() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-restart").await;
    let counter = TargetCounter::start(cluster.client.clone(), &ns);
    let yaml = demo_run("restart", r#"{connections: [2, 4, 6]}"#, "");
    let outcome = async {
        cluster.apply_run(&ns, &yaml).await?;
        // Wait until the first cell is under load, then kill the operator.
        cluster
            .wait_until(&ns, "restart", Duration::from_secs(180), |r| {
                r.status
                    .as_ref()
                    .and_then(|s| s.current.as_ref())
                    .is_some_and(|c| c.stage == benchrun_api::stage::LOADING)
            })
            .await?;
        let changed = cluster
            .patch_spec(
                &ns,
                "restart",
                serde_json::json!({"load": {"connections": 9}}),
            )
            .await;
        anyhow::ensure!(changed.is_err(), "the spec of a running run was changed");
        println!("spec change refused: {:#}", changed.unwrap_err());
        cluster.delete_operator_pod().await?;
        let run = cluster
            .wait_finished(&ns, "restart", Duration::from_secs(600))
            .await?;
        let status = run.status.clone().unwrap_or_default();
        anyhow::ensure!(status.phase.as_deref() == Some(phase::SUCCEEDED));
        let keys: BTreeSet<(i32, i32)> =
            status.results.iter().map(|r| (r.cell, r.repeat)).collect();
        anyhow::ensure!(
            status.results.len() == 3 && keys.len() == 3,
            "results {:?}",
            keys
        );
        let counts = counter.snapshot();
        for r in &status.results {
            assert_counts_match(&counts, "restart", r)?;
        }
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
        anyhow::ensure!(status.phase.as_deref() == Some(phase::FAILED));
        anyhow::ensure!(
            status.results.len() == 2,
            "{} results",
            status.results.len()
        );
        for r in &status.results {
            let reason = r.reason.clone().unwrap_or_default();
            println!("cell {}: {} — {reason}", r.cell, r.outcome);
            anyhow::ensure!(r.outcome == "Failed");
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
