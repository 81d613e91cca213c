//! Where a run's pods may go (issue 48, items 6 and 7), both decided within seconds, before
//! anything is deployed: the operator's placement policy refuses a target that selects the
//! load nodes (and a toleration), naming the field and the flag; the fit check adds up a
//! cell's replicas and fails a cell whose replicas fit the target node one at a time but not
//! together, without taking the measuring slot.

use std::time::{Duration, Instant};

use benchrun_api::Phase;

use super::demo_run;
use super::support::{self, Cluster};

/// Names of the nodes labelled `benchrun.dev/role=<role>`.
fn nodes_with_role(cluster: &Cluster, role: &str) -> Vec<String> {
    let label = format!("benchrun.dev/role={role}");
    cluster
        .kubectl(&[
            "get",
            "nodes",
            "-l",
            &label,
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ])
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// The run's children in `ns` (Deployments, Jobs, pods), by name; empty when there are none.
/// A target that selects `benchrun.dev/role: load`, and one that tolerates a taint, are both
/// refused at validation by the default placement policy (the local install allows only
/// `kubernetes.io/hostname` beyond it): `Accepted=False`, reason `NotAllowed`, the field and
/// the flag named, no children.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_target_selecting_the_load_nodes_or_tolerating_a_taint_is_refused_naming_the_field() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-placement-policy").await;
    let target = "readinessPath: /healthz}";
    let on_load = demo_run("on-load", "{}", "").replace(
        target,
        "readinessPath: /healthz, nodeSelector: {benchrun.dev/role: load}}",
    );
    let tolerating = demo_run("tolerating", "{}", "").replace(
        target,
        "readinessPath: /healthz, tolerations: [{key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}]}",
    );
    let outcome = async {
        anyhow::ensure!(
            on_load.contains("benchrun.dev/role: load") && tolerating.contains("tolerations")
        );
        cluster.apply_run(&ns, &on_load).await?;
        cluster.apply_run(&ns, &tolerating).await?;
        for (name, field, flag) in [
            (
                "on-load",
                "spec.targets[0].nodeSelector",
                "BENCHRUN_ALLOWED_NODE_SELECTOR_KEYS",
            ),
            (
                "tolerating",
                "spec.targets[0].tolerations[0]",
                "BENCHRUN_ALLOWED_TOLERATION_KEYS",
            ),
        ] {
            let run = cluster
                .wait_finished(&ns, name, Duration::from_secs(60))
                .await?;
            let message = support::refused_not_allowed(name, &run)?;
            anyhow::ensure!(
                message.contains(field) && message.contains(flag),
                "{name}: the message names neither {field} nor {flag}: {message}"
            );
        }
        let left = cluster.children(&ns, "deploy,jobs,pods");
        anyhow::ensure!(left.is_empty(), "refused runs made children: {left}");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// One more replica of 600m than there are target nodes of 1 CPU: each replica fits a node,
/// all of them do not. The cell fails at the fit check within seconds, naming the replicas,
/// what they ask together and the closest node's free CPU, and the run ends `Failed`
/// without deploying anything (so without holding the measuring slot for the ready timeout).
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn replicas_that_fit_one_at_a_time_but_not_together_fail_at_the_fit_check() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-fit").await;
    let outcome = async {
        let targets = nodes_with_role(&cluster, "target");
        anyhow::ensure!(
            !targets.is_empty(),
            "the test needs nodes labelled benchrun.dev/role=target (hack/cluster.sh's layout)"
        );
        for node in &targets {
            let cpu = cluster.kubectl(&[
                "get",
                "node",
                node,
                "-o",
                "jsonpath={.status.allocatable.cpu}",
            ]);
            let millis = benchrun_api::units::cpu_millis(cpu.trim())
                .map_err(|e| anyhow::anyhow!("node {node} allocatable cpu {cpu:?}: {e}"))?;
            anyhow::ensure!(
                (600..1200).contains(&millis),
                "the test needs target nodes of 600m to 1.2 CPU allocatable (one 600m replica each); {node} has {cpu}"
            );
        }
        let replicas = targets.len() + 1;
        let yaml = demo_run("fit", "{}", &format!("  replicas: {replicas}")).replace(
            "resources: {cpu: 500m, memory: 128Mi}",
            "resources: {cpu: 600m, memory: 128Mi}",
        );
        anyhow::ensure!(yaml.contains("cpu: 600m, memory: 128Mi"), "{yaml}");
        let t0 = Instant::now();
        cluster.apply_run(&ns, &yaml).await?;
        let run = cluster
            .wait_finished(&ns, "fit", Duration::from_secs(90))
            .await?;
        let took = t0.elapsed();
        let status = run.status.unwrap_or_default();
        println!("fit finished after {took:?}: {:?}", status.phase);
        anyhow::ensure!(status.phase == Some(Phase::Failed), "{:?}", status.phase);
        anyhow::ensure!(
            took < Duration::from_secs(45),
            "took {took:?}: the fit check did not fail the cell before it was deployed"
        );
        anyhow::ensure!(!status.results.is_empty(), "no results");
        for r in &status.results {
            let reason = r.reason.clone().unwrap_or_default();
            println!("cell {} repeat {}: {reason}", r.cell, r.repeat);
            for part in [
                "the pods cannot be scheduled",
                &format!("{replicas} × the target pod of demo (600m CPU, 128Mi)"),
                "the closest node, ",
                "CPU free of",
                "fewer pods in spec.replicas",
            ] {
                anyhow::ensure!(reason.contains(part), "{part:?} missing from {reason}");
            }
        }
        let left = cluster.children(&ns, "deploy,jobs,pods");
        anyhow::ensure!(left.is_empty(), "the unfit run made children: {left}");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}
