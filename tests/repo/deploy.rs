//! Repo consistency of `deploy/`: the CRD copy in the kustomize base equals the generated CRD,
//! the operator Deployment keeps its hardening and its two replicas, both installs (cluster-wide
//! `deploy/base`, one namespace `deploy/namespaced`) grant the same least-privilege rules, the
//! namespaced one without any cluster-scoped object, and leader election may touch only its Lease.

use std::path::PathBuf;

/// The checkout's root, read at run time: a test binary reused from another checkout's build
/// (shared target directory, same sources) must read this checkout's files.
fn repo_root() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"))
}

fn read(path: &str) -> String {
    let root = repo_root();
    let root = root.as_path();
    std::fs::read_to_string(root.join(path))
        .unwrap_or_else(|e| panic!("failed to read {path}: {e}"))
}

#[test]
fn deploy_base_crd_equals_the_generated_crd() {
    assert!(
        read("deploy/base/crd.yaml") == read("crds/benchmarkrun.yaml"),
        "deploy/base/crd.yaml is stale: cp crds/benchmarkrun.yaml deploy/base/crd.yaml"
    );
    assert!(
        read("deploy/base/crd-schedule.yaml") == read("crds/benchmarkschedule.yaml"),
        "deploy/base/crd-schedule.yaml is stale: run `make crds`"
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

/// The local install refuses images from outside the project (docs/security.md's allow-list),
/// so every run the project applies there must name only `benchrun.local/` images.
#[test]
fn local_overlay_allows_only_the_projects_images_and_the_examples_use_them() {
    let k = read("deploy/local/kustomization.yaml");
    assert!(
        k.contains("{name: BENCHRUN_ALLOWED_IMAGE_PREFIXES, value: benchrun.local/}"),
        "{k}"
    );
    let mut files = vec![PathBuf::from("examples/demo.yaml")];
    for dir in ["examples/seeds", "examples/schedules"] {
        for e in std::fs::read_dir(repo_root().join(dir)).expect(dir) {
            let name = e.expect(dir).file_name();
            if name.to_string_lossy().ends_with(".yaml") {
                files.push(PathBuf::from(dir).join(name));
            }
        }
    }
    for f in files {
        let text = read(&f.to_string_lossy());
        let images: Vec<&str> = text.split("image:").skip(1).collect();
        assert!(!images.is_empty(), "{}: no image", f.display());
        for rest in images {
            let image = rest
                .trim_start()
                .split(|c: char| c.is_whitespace() || c == ',' || c == '}')
                .next()
                .unwrap_or("")
                .trim_matches('"');
            assert!(
                image.starts_with("benchrun.local/"),
                "{}: {image} is outside deploy/local's allow-list",
                f.display()
            );
        }
    }
}

#[test]
fn cluster_role_grants_no_wildcards() {
    let rbac = read("deploy/base/rbac.yaml");
    assert!(!rbac.contains('*'), "wildcards in deploy/base/rbac.yaml");
    let nodes = docs("deploy/base/node-reader.yaml");
    let role = find(&nodes, "ClusterRole");
    // The main roles may never touch nodes (assert_least_privilege); this one may only read
    // them, into the operator's nodes cache (the image sizes, the benchrun.dev/role labels for
    // placement, the nodes' room). Never write.
    assert_eq!(
        serde_yaml::to_string(&role["rules"]).unwrap(),
        "- apiGroups:\n  - ''\n  resources:\n  - nodes\n  verbs:\n  - get\n  - list\n  - watch\n",
        "the node reader may only get, list and watch nodes (the operator's nodes cache)"
    );
}

/// `/metrics` is authenticated (src/metrics_auth.rs): the operator may create the two reviews
/// and nothing else through this role, and scrapers get a role for `get` on `/metrics` alone.
#[test]
fn metrics_auth_grants_the_reviews_and_the_reader_only_metrics() {
    let all = docs("deploy/base/metrics-auth.yaml");
    let role = |name: &str| {
        all.iter()
            .find(|d| d["kind"] == "ClusterRole" && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no ClusterRole {name}"))
    };
    assert_eq!(
        serde_yaml::to_string(&role("benchrun-operator-metrics-auth")["rules"]).unwrap(),
        "- apiGroups:\n  - authentication.k8s.io\n  resources:\n  - tokenreviews\n  verbs:\n  - create\n\
         - apiGroups:\n  - authorization.k8s.io\n  resources:\n  - subjectaccessreviews\n  verbs:\n  - create\n",
        "the operator may only create token and access reviews for /metrics"
    );
    assert_eq!(
        serde_yaml::to_string(&role("benchrun-metrics-reader")["rules"]).unwrap(),
        "- nonResourceURLs:\n  - /metrics\n  verbs:\n  - get\n",
        "the reader may only get /metrics"
    );
    let binding = find(&all, "ClusterRoleBinding");
    assert_eq!(binding["roleRef"]["name"], "benchrun-operator-metrics-auth");
    assert_eq!(binding["subjects"][0]["name"], "benchrun-operator");
    assert_eq!(binding["subjects"][0]["namespace"], "benchrun-system");
    assert!(
        read("deploy/base/kustomization.yaml").contains("- metrics-auth.yaml"),
        "deploy/base does not install metrics-auth.yaml"
    );
    // The operator serves /metrics authenticated unless told otherwise: no install turns it off.
    for path in [
        "deploy/base/operator.yaml",
        "deploy/local/kustomization.yaml",
        "deploy/namespaced/kustomization.yaml",
    ] {
        assert!(
            !read(path).contains("BENCHRUN_METRICS_AUTH"),
            "{path} sets BENCHRUN_METRICS_AUTH"
        );
    }
}

fn docs(path: &str) -> Vec<serde_yaml::Value> {
    yaml_docs(&read(path))
}

fn yaml_docs(text: &str) -> Vec<serde_yaml::Value> {
    serde_yaml::Deserializer::from_str(text)
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML document"))
        .filter(|v: &serde_yaml::Value| !v.is_null())
        .collect()
}

fn find<'a>(docs: &'a [serde_yaml::Value], kind: &str) -> &'a serde_yaml::Value {
    docs.iter()
        .find(|d| d["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind}"))
}

/// Verbs and resources no benchrun role may ever hold: reading secrets, or rights that let a
/// holder grant itself more.
fn assert_least_privilege(rules: &serde_yaml::Value, what: &str) {
    let rules = rules.as_sequence().expect("rules");
    assert!(!rules.is_empty(), "{what}: no rules");
    for r in rules {
        let list = |k: &str| -> Vec<String> {
            r[k].as_sequence()
                .unwrap_or_else(|| panic!("{what}: rule without {k}"))
                .iter()
                .map(|v| v.as_str().expect("string").to_string())
                .collect()
        };
        for v in list("verbs") {
            assert!(
                ["get", "list", "watch", "create", "patch", "delete"].contains(&v.as_str()),
                "{what}: verb {v:?} (no update, deletecollection, escalate, bind, impersonate, *)"
            );
        }
        for res in list("resources") {
            assert!(
                ![
                    "secrets",
                    "*",
                    "roles",
                    "rolebindings",
                    "serviceaccounts",
                    "nodes"
                ]
                .contains(&res.as_str()),
                "{what}: resource {res:?}"
            );
        }
        assert!(
            !list("apiGroups").contains(&"*".to_string()),
            "{what}: apiGroup *"
        );
    }
}

#[test]
fn namespaced_role_grants_exactly_what_the_cluster_role_grants() {
    let cluster = docs("deploy/base/rbac.yaml");
    let cluster_role = find(&cluster, "ClusterRole");
    let ns = docs("deploy/namespaced/role.yaml");
    let role = find(&ns, "Role");
    assert_least_privilege(&cluster_role["rules"], "ClusterRole");
    assert_least_privilege(&role["rules"], "namespaced Role");
    assert_eq!(
        role["rules"], cluster_role["rules"],
        "deploy/namespaced/role.yaml differs from the ClusterRole in deploy/base/rbac.yaml"
    );
    let binding = find(&ns, "RoleBinding");
    assert_eq!(binding["roleRef"]["kind"], "Role");
    assert_eq!(binding["subjects"][0]["name"], "benchrun-operator");
}

#[test]
fn namespaced_overlay_deletes_every_cluster_scoped_object_of_the_base() {
    let k = read("deploy/namespaced/kustomization.yaml");
    let mut cluster_scoped = Vec::new();
    for file in [
        "namespace.yaml",
        "crd.yaml",
        "crd-schedule.yaml",
        "rbac.yaml",
        "node-reader.yaml",
        "metrics-auth.yaml",
        "operator.yaml",
    ] {
        for d in docs(&format!("deploy/base/{file}")) {
            if d["metadata"]["namespace"].is_null() {
                cluster_scoped.push((
                    d["kind"].as_str().unwrap().to_string(),
                    d["metadata"]["name"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    assert_eq!(cluster_scoped.len(), 10, "{cluster_scoped:?}");
    for (kind, name) in cluster_scoped {
        let at = k
            .find(&format!(
                "kind: {kind}\n      metadata:\n        name: {name}"
            ))
            .unwrap_or_else(|| panic!("deploy/namespaced keeps the cluster-scoped {kind} {name}"));
        let patch_start = k[..at].rfind("- patch:").expect("inside a patch");
        assert!(
            k[patch_start..at].contains("$patch: delete"),
            "deploy/namespaced patches but does not delete {kind} {name}"
        );
    }
}

/// Renders the overlay with `kubectl kustomize` (offline): only namespaced objects, all in the
/// overlay's namespace, and an operator that watches the namespace it runs in. It needs
/// kubectl, which a fresh machine has only once the local cluster is built, so it runs with
/// the cluster suites (`make e2e-run`, kubectl from `hack/cluster.sh env` on PATH) and fails
/// there when kubectl cannot run; `make unit` lists it as ignored, never as passed.
#[test]
#[ignore = "needs kubectl: run by make e2e-run"]
fn namespaced_overlay_renders_only_objects_of_its_namespace() {
    let root = repo_root();
    let root = root.as_path();
    let out = std::process::Command::new("kubectl")
        .args(["kustomize", "deploy/namespaced"])
        .current_dir(root)
        .output()
        .unwrap_or_else(|e| {
            panic!("kubectl not runnable ({e}): eval \"$(hack/cluster.sh env)\" first")
        });
    assert!(
        out.status.success(),
        "kubectl kustomize: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered = yaml_docs(&String::from_utf8_lossy(&out.stdout));
    let kinds: Vec<&str> = rendered
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "ServiceAccount",
            "Role",
            "Role",
            "RoleBinding",
            "RoleBinding",
            "Service",
            "Deployment"
        ]
    );
    for d in &rendered {
        assert_eq!(d["metadata"]["namespace"], "benchmarks", "{:?}", d["kind"]);
    }
    let binding = find(&rendered, "RoleBinding");
    assert_eq!(binding["subjects"][0]["namespace"], "benchmarks");
    assert_least_privilege(&find(&rendered, "Role")["rules"], "rendered Role");
    let env = &find(&rendered, "Deployment")["spec"]["template"]["spec"]["containers"][0]["env"];
    let watch = env
        .as_sequence()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "BENCHRUN_NAMESPACE")
        .expect("BENCHRUN_NAMESPACE is set");
    assert_eq!(
        watch["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.namespace"
    );
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

/// The operator never runs on a node labelled `benchrun.dev/role=target` (required, NotIn so
/// that unlabelled nodes qualify), in the base and in every overlay (none patches the
/// affinity away); its CPU request fits beside a load pod of the defaults on the local
/// cluster's load node, where both replicas then run.
#[test]
fn operator_stays_off_the_target_nodes_in_every_install() {
    let all = docs("deploy/base/operator.yaml");
    let dep = all.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let pod = &dep["spec"]["template"]["spec"];
    let terms = &pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    let terms = terms.as_sequence().expect("required node affinity terms");
    assert!(!terms.is_empty());
    // Terms are ORed: every one must exclude the target nodes.
    for t in terms {
        let excludes = t["matchExpressions"]
            .as_sequence()
            .expect("matchExpressions")
            .iter()
            .any(|e| {
                e["key"] == "benchrun.dev/role"
                    && e["operator"] == "NotIn"
                    && e["values"]
                        .as_sequence()
                        .is_some_and(|v| v.iter().any(|x| x == "target"))
            });
        assert!(
            excludes,
            "a node affinity term lets the operator onto target nodes: {t:?}"
        );
    }
    for overlay in [
        "deploy/local/kustomization.yaml",
        "deploy/namespaced/kustomization.yaml",
    ] {
        assert!(
            !read(overlay).contains("affinity"),
            "{overlay} patches the operator's affinity"
        );
    }
    // Two replicas' requests on the local load node (1 CPU allocatable, a 1m canary) leave
    // room for two load pods of the default request: the next cell's load pod is made while
    // the current one runs.
    let cpu = pod["containers"][0]["resources"]["requests"]["cpu"]
        .as_str()
        .unwrap();
    let operator = benchrun_api::units::cpu_millis(cpu).unwrap();
    let load = benchrun_api::spec::default_load_resources();
    let load =
        benchrun_api::units::cpu_millis(load.cpu_request.as_deref().unwrap_or(&load.cpu)).unwrap();
    assert!(
        2 * operator + 1 + 2 * load <= 1000,
        "operator request {cpu}, load request {load}m"
    );
}
