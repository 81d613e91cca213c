//! Repo consistency of `deploy/`: the CRD copy in the kustomize base equals the generated CRD,
//! the operator Deployment keeps its hardening and its two replicas, and RBAC stays least
//! privilege (no wildcards; leader election on one named Lease in the operator's namespace).

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

fn docs(path: &str) -> Vec<serde_yaml::Value> {
    serde_yaml::Deserializer::from_str(&read(path))
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML document"))
        .collect()
}

#[test]
fn operator_runs_two_replicas_preferably_on_different_nodes() {
    let all = docs("deploy/base/operator.yaml");
    let dep = all.iter().find(|d| d["kind"] == "Deployment").unwrap();
    assert_eq!(dep["spec"]["replicas"], 2);
    let pod = &dep["spec"]["template"]["spec"];
    let anti = &pod["affinity"]["podAntiAffinity"];
    // Preferred, not required: the local cluster has one node and must run both.
    assert!(anti["requiredDuringSchedulingIgnoredDuringExecution"].is_null());
    let term = &anti["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"];
    assert_eq!(term["topologyKey"], "kubernetes.io/hostname");
    assert_eq!(
        term["labelSelector"]["matchLabels"],
        dep["spec"]["selector"]["matchLabels"]
    );
    let env = pod["containers"][0]["env"].as_sequence().unwrap();
    let pod_name = env
        .iter()
        .find(|e| e["name"] == "POD_NAME")
        .expect("POD_NAME");
    assert_eq!(
        pod_name["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.name"
    );
}

#[test]
fn leader_election_may_only_create_and_renew_its_own_lease_in_its_namespace() {
    #[derive(clap::Parser)]
    struct Flags {
        #[command(flatten)]
        lease: benchrun::leader::LeaseArgs,
    }
    let lease_name = <Flags as clap::Parser>::parse_from(["operator"]).lease.name;
    let k = read("deploy/base/kustomization.yaml");
    assert!(k.contains("- leader-election.yaml"), "{k}");
    let all = docs("deploy/base/leader-election.yaml");
    let role = all.iter().find(|d| d["kind"] == "Role").expect("a Role");
    assert_eq!(role["metadata"]["namespace"], "benchrun-system");
    for rule in role["rules"].as_sequence().unwrap() {
        assert_eq!(rule["apiGroups"][0], "coordination.k8s.io");
        assert_eq!(rule["apiGroups"].as_sequence().unwrap().len(), 1);
        assert_eq!(rule["resources"][0], "leases");
        assert_eq!(rule["resources"].as_sequence().unwrap().len(), 1);
        for verb in rule["verbs"].as_sequence().unwrap() {
            let verb = verb.as_str().unwrap();
            assert!(["create", "get", "update"].contains(&verb), "verb {verb}");
            if verb != "create" {
                assert_eq!(
                    rule["resourceNames"].as_sequence().map(Vec::as_slice),
                    Some(&[serde_yaml::Value::from(lease_name.as_str())][..]),
                    "{verb} must be limited to the Lease the operator uses"
                );
            }
        }
    }
    let binding = all
        .iter()
        .find(|d| d["kind"] == "RoleBinding")
        .expect("a RoleBinding");
    assert_eq!(binding["metadata"]["namespace"], "benchrun-system");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["name"], "benchrun-operator");
    assert_eq!(binding["subjects"][0]["namespace"], "benchrun-system");
    assert!(
        !read("deploy/base/rbac.yaml").contains("leases"),
        "the ClusterRole must not grant leases in every namespace"
    );
    assert!(
        !read("deploy/base/leader-election.yaml").contains('*'),
        "wildcards in deploy/base/leader-election.yaml"
    );
}
