//! Repo consistency of `deploy/`: the CRD copy in the kustomize base equals the generated CRD,
//! and the operator Deployment keeps its hardening.

use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(path))
        .unwrap_or_else(|e| panic!("failed to read {path}: {e}"))
}

#[test]
fn deploy_base_crd_equals_the_generated_crd() {
    assert!(
        read("deploy/base/crd.yaml") == read("crds/benchmarkrun.yaml"),
        "deploy/base/crd.yaml is stale: cp crds/benchmarkrun.yaml deploy/base/crd.yaml"
    );
}

#[test]
fn operator_runs_non_root_read_only_without_capabilities() {
    let docs: Vec<serde_yaml::Value> =
        serde_yaml::Deserializer::from_str(&read("deploy/base/operator.yaml"))
            .map(|d| serde::Deserialize::deserialize(d).expect("YAML document"))
            .collect();
    let dep = docs
        .iter()
        .find(|d| d["kind"] == "Deployment")
        .expect("a Deployment");
    let pod = &dep["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
    assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(c["env"][0]["name"], "PROMETHEUS_URL");
}

#[test]
fn local_overlay_points_at_the_local_prometheus() {
    let k = read("deploy/local/kustomization.yaml");
    assert!(
        k.contains("/env/0/value") && k.contains("http://10.244.0.1:9090"),
        "{k}"
    );
}

#[test]
fn cluster_role_grants_no_wildcards() {
    let rbac = read("deploy/base/rbac.yaml");
    assert!(!rbac.contains('*'), "wildcards in deploy/base/rbac.yaml");
}
