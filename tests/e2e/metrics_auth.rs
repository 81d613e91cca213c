//! The operator's `/metrics` on the cluster (issue 48, item 5): the per-run gauges name every
//! namespace's runs, so the endpoint answers only a bearer token whose user may `get` the
//! non-resource URL `/metrics`. Asked straight at each operator pod's IP (the host reaches the
//! pod network, as the local Prometheus does): no token → 401, a made-up token → 401, the token
//! of a service account without the right → 403, one bound to `benchrun-metrics-reader` → 200
//! with the operator's metrics; and the local Prometheus scrapes every operator pod (`up == 1`)
//! with its own service account's token. Seconds: nothing is measured.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context as _};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::Api;

use super::support::{self, Cluster, OPERATOR_NS};

/// `(name, IP)` of each running operator pod that is not being deleted.
async fn operator_pods(cluster: &Cluster) -> anyhow::Result<Vec<(String, String)>> {
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), OPERATOR_NS);
    let lp = ListParams::default().labels("app.kubernetes.io/name=benchrun-operator");
    Ok(pods
        .list(&lp)
        .await?
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let status = p.status?;
            (status.phase.as_deref() == Some("Running"))
                .then_some((p.metadata.name?, status.pod_ip?))
        })
        .collect())
}

/// A service account `name` in `ns` and a 10-minute token of it.
async fn account_token(cluster: &Cluster, ns: &str, name: &str) -> anyhow::Result<String> {
    let sas: Api<ServiceAccount> = Api::namespaced(cluster.client.clone(), ns);
    let sa: ServiceAccount =
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}}))?;
    sas.create(&PostParams::default(), &sa).await?;
    let request = TokenRequest {
        spec: TokenRequestSpec {
            expiration_seconds: Some(600),
            ..Default::default()
        },
        ..Default::default()
    };
    let issued = sas
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .with_context(|| format!("a token of {ns}/{name}"))?;
    Ok(issued.status.context("TokenRequest without status")?.token)
}

/// Whether `user` (a service account's, with its groups) may `get` the non-resource URL
/// `/metrics`, by a SubjectAccessReview.
async fn may_get_metrics(cluster: &Cluster, user: &str) -> anyhow::Result<bool> {
    let review: SubjectAccessReview = serde_json::from_value(serde_json::json!({
        "spec": {"user": user, "groups": ["system:serviceaccounts", "system:authenticated"],
                 "nonResourceAttributes": {"path": "/metrics", "verb": "get"}},
    }))?;
    let answered = Api::<SubjectAccessReview>::all(cluster.client.clone())
        .create(&PostParams::default(), &review)
        .await?;
    Ok(answered.status.is_some_and(|s| s.allowed))
}

/// GET `http://<ip>:8080/metrics` with `token`: the status and the body.
async fn scrape(ip: &str, token: Option<&str>) -> anyhow::Result<(u16, String)> {
    let mut req = reqwest::Client::new()
        .get(format!("http://{ip}:8080/metrics"))
        .timeout(Duration::from_secs(10));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let res = req.send().await?;
    Ok((res.status().as_u16(), res.text().await?))
}

#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn metrics_need_a_token_allowed_to_read_them_and_prometheus_scrapes_with_one() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-metrics-auth").await;
    let binding_name = format!("{ns}-metrics-reader");
    let bindings: Api<ClusterRoleBinding> = Api::all(cluster.client.clone());
    let outcome = async {
        let pods = operator_pods(&cluster).await?;
        ensure!(!pods.is_empty(), "no running operator pod in {OPERATOR_NS}");
        let nobody = account_token(&cluster, &ns, "nobody").await?;
        let reader = account_token(&cluster, &ns, "reader").await?;
        let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
            "metadata": {"name": binding_name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "benchrun-metrics-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": ns}],
        }))?;
        bindings.create(&PostParams::default(), &binding).await?;
        // The apiserver's RBAC cache takes a moment to see the binding; the operator caches a
        // refusal for 30 s, so ask the apiserver first, as the operator will.
        let user = format!("system:serviceaccount:{ns}:reader");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !may_get_metrics(&cluster, &user).await? {
            ensure!(Instant::now() < deadline, "{user} may not get /metrics 20 s after its binding");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }

        for (pod, ip) in &pods {
            let (code, body) = scrape(ip, None).await?;
            ensure!(code == 401, "{pod} without a token: {code} {body}");
            ensure!(
                body.contains("benchrun-metrics-reader") && !body.contains("benchrun_"),
                "{pod} without a token: {body}"
            );
            let (code, body) = scrape(ip, Some("not-a-token")).await?;
            ensure!(code == 401, "{pod} with a made-up token: {code} {body}");
            let (code, body) = scrape(ip, Some(&nobody)).await?;
            ensure!(
                code == 403 && body.contains(&format!("system:serviceaccount:{ns}:nobody")),
                "{pod} with the token of an account without the right: {code} {body}"
            );
            let (code, body) = scrape(ip, Some(&reader)).await?;
            ensure!(code == 200, "{pod} with a reader's token: {code} {body}");
            for name in ["benchrun_leader", "benchrun_reconciles_total"] {
                ensure!(body.contains(name), "{pod}: no {name} in\n{body}");
            }
            println!("{pod} ({ip}): 401 without a token or with a made-up one, 403 without the right, 200 with it");
        }

        // The local Prometheus scrapes every operator pod with its own token
        // (hack/cluster/prometheus.sh): a new pod is a target within ~10 s, then one scrape.
        let deadline = Instant::now() + Duration::from_secs(45);
        loop {
            let mut down = Vec::new();
            for (pod, _) in &pods {
                let up = format!(r#"up{{job="benchrun-operator",pod="{pod}"}} == 1"#);
                if support::prometheus_count(&up).await? == 0 {
                    down.push(pod.clone());
                }
            }
            if down.is_empty() {
                println!("Prometheus scrapes {} operator pod(s): up == 1", pods.len());
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "Prometheus' job benchrun-operator is not up for {down:?} (its token: \
                 hack/cluster.sh up writes it; `hack/cluster.sh status` lists the targets)"
            );
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        Ok(())
    }
    .await;
    // Cluster-scoped: the namespace's deletion does not take it along.
    let _ = bindings
        .delete(&binding_name, &DeleteParams::default())
        .await;
    cluster.finish(&ns, outcome).await;
}
