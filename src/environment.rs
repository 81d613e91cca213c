//! Where a measurement ran, as the operator records it in `status.results[].environment`:
//! the facts the I/O layer read ([`node_environment`], [`operator_version`]) and the pure
//! assembly of a result's [`Environment`] ([`environment`]). The comparison of two
//! environments is [`benchrun_api::environment::differences`].

use benchrun_api::environment::{Environment, NodeEnvironment};
use k8s_openapi::api::core::v1::Node;

/// The label a cloud sets to a node's machine type.
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";

/// This operator's version: the crate version, with `+<commit>` when the image says which
/// commit it was built from (`BENCHRUN_COMMIT` in the operator's environment; hack/install.sh
/// sets it from git).
pub fn operator_version() -> String {
    let commit = std::env::var("BENCHRUN_COMMIT").unwrap_or_default();
    version_string(env!("CARGO_PKG_VERSION"), commit.trim())
}

/// `version+commit`, or `version` without a commit.
fn version_string(version: &str, commit: &str) -> String {
    if commit.is_empty() {
        version.to_string()
    } else {
        format!("{version}+{commit}")
    }
}

/// What a node says of itself: `status.nodeInfo`, its CPU capacity and instance type (`role`
/// left empty; [`environment`] sets it).
pub fn node_environment(node: &Node) -> NodeEnvironment {
    let status = node.status.as_ref();
    let info = status.and_then(|s| s.node_info.as_ref());
    let field = |f: fn(&k8s_openapi::api::core::v1::NodeSystemInfo) -> &String| {
        info.map(|i| f(i).clone()).unwrap_or_default()
    };
    NodeEnvironment {
        name: node.metadata.name.clone().unwrap_or_default(),
        role: String::new(),
        kernel: field(|i| &i.kernel_version),
        os_image: field(|i| &i.os_image),
        container_runtime: field(|i| &i.container_runtime_version),
        kubelet: field(|i| &i.kubelet_version),
        cpus: status
            .and_then(|s| s.capacity.as_ref()?.get("cpu"))
            .map(|q| q.0.clone())
            .unwrap_or_default(),
        instance_type: node
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(INSTANCE_TYPE_LABEL).cloned()),
    }
}

/// A measurement's environment from what was observed: the target's images by digest, the
/// facts of the nodes in `target_nodes` and `load_nodes` with their roles, the load
/// generator's CPU models and the operator's version. `None` when nothing was observed (a
/// result from a fixture, or every read failed).
pub fn environment(
    target_images: &[String],
    node_facts: &[NodeEnvironment],
    target_nodes: &[String],
    load_nodes: &[String],
    load_cpu_models: &[String],
    operator: &str,
) -> Option<Environment> {
    let nodes: Vec<NodeEnvironment> = node_facts
        .iter()
        .filter_map(|n| {
            let roles: Vec<&str> = [("Target", target_nodes), ("Load", load_nodes)]
                .into_iter()
                .filter(|(_, on)| on.contains(&n.name))
                .map(|(r, _)| r)
                .collect();
            (!roles.is_empty()).then(|| NodeEnvironment {
                role: roles.join(","),
                ..n.clone()
            })
        })
        .collect();
    let e = Environment {
        target_images: target_images.to_vec(),
        nodes,
        load_cpu_models: load_cpu_models.to_vec(),
        operator: operator.to_string(),
    };
    (e != Environment::default()).then_some(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: serde_json::Value) -> Node {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_node_says_its_kernel_runtime_cpus_and_instance_type() {
        let n = node(serde_json::json!({
            "metadata": {"name": "w1", "labels": {INSTANCE_TYPE_LABEL: "c6i.large"}},
            "status": {
                "capacity": {"cpu": "2", "memory": "8Gi"},
                "nodeInfo": {
                    "kernelVersion": "6.1.0-28-amd64", "osImage": "Debian GNU/Linux 12 (bookworm)",
                    "containerRuntimeVersion": "containerd://1.7.24", "kubeletVersion": "v1.32.0",
                    "architecture": "amd64", "bootID": "", "machineID": "", "systemUUID": "",
                    "kubeProxyVersion": "", "operatingSystem": "linux"
                }
            }
        }));
        let e = node_environment(&n);
        assert_eq!(e.name, "w1");
        assert_eq!(e.kernel, "6.1.0-28-amd64");
        assert_eq!(e.container_runtime, "containerd://1.7.24");
        assert_eq!(e.cpus, "2");
        assert_eq!(e.instance_type.as_deref(), Some("c6i.large"));
    }

    #[test]
    fn a_node_without_status_gives_its_name_only() {
        let e = node_environment(&node(serde_json::json!({"metadata": {"name": "bare"}})));
        assert_eq!(e.name, "bare");
        assert!(e.kernel.is_empty() && e.cpus.is_empty() && e.instance_type.is_none());
    }

    #[test]
    fn nodes_get_their_roles_and_others_are_left_out() {
        let facts: Vec<NodeEnvironment> = ["a", "b", "c"]
            .iter()
            .map(|n| NodeEnvironment {
                name: n.to_string(),
                kernel: "6.1".into(),
                ..Default::default()
            })
            .collect();
        let e = environment(
            &["x@sha256:1".into()],
            &facts,
            &["a".into(), "b".into()],
            &["b".into()],
            &["EPYC".into()],
            "0.1.0",
        )
        .unwrap();
        let roles: Vec<(&str, &str)> = e
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n.role.as_str()))
            .collect();
        assert_eq!(roles, [("a", "Target"), ("b", "Target,Load")]);
        assert_eq!(e.load_cpu_models, ["EPYC"]);
    }

    #[test]
    fn nothing_observed_records_nothing() {
        assert_eq!(environment(&[], &[], &[], &[], &[], ""), None);
    }

    #[test]
    fn the_version_names_its_commit_when_known() {
        assert_eq!(version_string("0.1.0", "abc1234"), "0.1.0+abc1234");
        assert_eq!(version_string("0.1.0", ""), "0.1.0");
    }
}
