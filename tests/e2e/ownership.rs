//! A shared cluster's boundary (issue 48, items 1 and 2), tried with hostile specs: a run
//! whose backing service is named like a team's own Deployment and Service fails naming them
//! and never touches them, even when they carry the run's labels and the run is deleted; and a
//! run whose backing service and seeding images are outside the operator's allow-list is
//! refused at validation naming both fields. Both end within seconds of the run's start.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context as _;
use benchrun_api::{BenchmarkRun, Phase};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Resource, ResourceExt};

use super::support::{self, Cluster};
use super::{demo_run, DEMO_IMAGE};

/// What of an object must stay exactly as it was: its labels, annotations, owner references,
/// spec, and the field managers that wrote it.
fn fingerprint<K: Resource + serde::Serialize>(o: &K) -> serde_json::Value {
    let m = o.meta();
    let managers: Vec<_> = m
        .managed_fields
        .iter()
        .flatten()
        .map(|f| f.manager.clone().unwrap_or_default())
        .collect();
    let v = serde_json::to_value(o).unwrap_or_default();
    serde_json::json!({
        "labels": m.labels,
        "annotations": m.annotations,
        "ownerReferences": m.owner_references,
        "generation": m.generation,
        "managers": managers,
        "spec": v["spec"],
    })
}

/// A team's database made with kubectl (`<run>-svc-db`: the run's backing service `db` would
/// take this name), and a Service of that name made to look like the run's own (its labels),
/// under a Helm release: the run fails naming the Deployment and its maker; after the run is
/// deleted both are as they were, and no field of them was ever written by the operator.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_run_never_touches_objects_it_did_not_make() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-foreign").await;
    let run = "foreign";
    let name = benchrun::names::service_name(run, "db");
    let outcome = async {
        let deployments: Api<Deployment> = Api::namespaced(cluster.client.clone(), &ns);
        let services: Api<Service> = Api::namespaced(cluster.client.clone(), &ns);
        let kubectl = PostParams {
            field_manager: Some("kubectl-create".into()),
            ..PostParams::default()
        };
        // No pods: replicas 0 keeps the test cheap; the object is what matters.
        let theirs: Deployment = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name, "labels": {"app": "team-db"},
                "annotations": {"team.example/owner": "payments"},
            },
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "team-db"}},
                "template": {
                    "metadata": {"labels": {"app": "team-db"}},
                    "spec": {"containers": [{"name": "db", "image": DEMO_IMAGE}]},
                },
            },
        }))?;
        deployments.create(&kubectl, &theirs).await?;
        let mut labels: BTreeMap<String, String> =
            benchrun::names::service_labels(run, benchrun::names::role::SERVICE, "db");
        labels.insert("app".into(), "team-db".into());
        let lookalike: Service = serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": name, "labels": labels,
                "annotations": {"meta.helm.sh/release-name": "team-db"},
            },
            "spec": {"selector": {"app": "team-db"}, "ports": [{"port": 5432}]},
        }))?;
        let helm = PostParams {
            field_manager: Some("helm".into()),
            ..PostParams::default()
        };
        services.create(&helm, &lookalike).await?;
        // The Deployment controller annotates and updates its status once: wait for that.
        let mut before = None;
        for _ in 0..30 {
            let d = deployments.get(&name).await?;
            let settled = d.status.as_ref().and_then(|s| s.observed_generation)
                == d.metadata.generation
                && d.annotations()
                    .contains_key("deployment.kubernetes.io/revision");
            if settled {
                before = Some(d);
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let before = before.context("the Deployment settles")?;
        let service_before = services.get(&name).await?;

        let yaml = demo_run(
            run,
            "{}",
            &format!(
                "  services:\n    - {{name: db, image: \"{DEMO_IMAGE}\", imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz}}"
            ),
        )
        .replace("duration: 20s", "duration: 2s");
        cluster.apply_run(&ns, &yaml).await?;
        let finished: BenchmarkRun = cluster
            .wait_finished(&ns, run, Duration::from_secs(120))
            .await?;
        let status = finished.status.clone().unwrap_or_default();
        anyhow::ensure!(status.phase == Some(Phase::Failed), "{:?}", status.phase);
        let reason = status
            .results
            .first()
            .and_then(|r| r.reason.clone())
            .unwrap_or_default();
        println!("reason: {reason}");
        anyhow::ensure!(
            reason.contains(&format!(
                "Deployment {name} already exists and is not this run's"
            )) && reason.contains("kubectl-create"),
            "the reason names neither the object nor its maker: {reason}"
        );

        // Delete the run; its garbage collection and cleanup must leave both alone.
        let runs: Api<BenchmarkRun> = Api::namespaced(cluster.client.clone(), &ns);
        runs.delete(run, &DeleteParams::foreground()).await?;
        for _ in 0..60 {
            if runs.get_opt(run).await?.is_none() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        anyhow::ensure!(runs.get_opt(run).await?.is_none(), "the run is not deleted");
        tokio::time::sleep(Duration::from_secs(3)).await;

        let after = deployments
            .get_opt(&name)
            .await?
            .context("the team's Deployment was deleted")?;
        let service_after = services
            .get_opt(&name)
            .await?
            .context("the look-alike Service was deleted")?;
        anyhow::ensure!(
            fingerprint(&after) == fingerprint(&before),
            "the Deployment changed:\nbefore {:#}\nafter {:#}",
            fingerprint(&before),
            fingerprint(&after)
        );
        anyhow::ensure!(
            service_after.metadata.resource_version == service_before.metadata.resource_version,
            "the Service was written:\nbefore {:#}\nafter {:#}",
            fingerprint(&service_before),
            fingerprint(&service_after)
        );
        for f in [fingerprint(&after), fingerprint(&service_after)] {
            anyhow::ensure!(
                !f["managers"].to_string().contains("benchrun"),
                "the operator wrote a field: {f:#}"
            );
        }
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// A run whose target is allowed but whose backing service and its seeding Job name images
/// outside the operator's allow-list (`benchrun.local/` on the local cluster: deploy/local) is
/// refused at validation, `Accepted=False` reason `NotAllowed`, naming both fields; nothing is
/// made for it.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn service_and_seed_images_outside_the_allow_list_are_refused() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-images").await;
    let run = "images";
    let services = "  services:\n    - {name: db, image: \"docker.io/library/postgres:16\", port: 5432, seed: {image: \"ghcr.io/someone/loader:1\", args: [load]}}";
    let yaml = demo_run(run, "{}", services);
    let outcome = async {
        let env = cluster.kubectl(&[
            "-n",
            super::support::OPERATOR_NS,
            "get",
            "deploy/benchrun-operator",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].env}",
        ]);
        anyhow::ensure!(
            env.contains("BENCHRUN_ALLOWED_IMAGE_PREFIXES") && env.contains("benchrun.local/"),
            "the operator has no image allow-list (install deploy/local: make install): {env}"
        );
        cluster.apply_run(&ns, &yaml).await?;
        let finished = cluster
            .wait_finished(&ns, run, Duration::from_secs(60))
            .await?;
        let message = support::refused_not_allowed(run, &finished)?;
        for field in ["spec.services[0].image", "spec.services[0].seed.image"] {
            anyhow::ensure!(message.contains(field), "{field} not named: {message}");
        }
        anyhow::ensure!(!message.contains("spec.targets"), "{message}");
        let children = cluster.children(&ns, "deploy,svc,jobs,pods");
        anyhow::ensure!(children.is_empty(), "children: {children}");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}
