//! Where a measurement ran: the image the target really ran (its digest, not its tag), the
//! nodes with their kernel and runtime, the load generator's CPU model and the operator that
//! measured. Two measurements compared across differing environments may differ because of the
//! environment, not the code: [`differences`] names what differs, for the comparison's reason
//! and the `Regressed` message. Pure.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where one measurement ran (`status.results[].environment`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    /// The images the target containers ran, as their status resolved them (`imageID`: a
    /// digest such as `docker.io/library/nginx@sha256:…`), distinct and sorted. A tag can
    /// move; the digest names the bytes that ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_images: Vec<String>,
    /// The nodes the target and load pods ran on, as their `status.nodeInfo` and labels
    /// describe them (absent for an operator that may not read nodes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeEnvironment>,
    /// CPU models the load generator found on its nodes (`model name` of `/proc/cpuinfo`),
    /// distinct and sorted. Kubernetes does not publish a node's CPU model; the target nodes'
    /// `instanceType` pins it on clouds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_cpu_models: Vec<String>,
    /// Version of the operator that measured (its crate version, with the commit when the
    /// image was built from git, e.g. `0.1.0+e96a329`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub operator: String,
}

/// One node a measurement ran on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeEnvironment {
    /// Node name.
    pub name: String,
    /// `Target` (a target pod ran here), `Load` (a load pod did) or `Target,Load`.
    pub role: String,
    /// `status.nodeInfo.kernelVersion`, e.g. `6.1.0-28-amd64`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kernel: String,
    /// `status.nodeInfo.osImage`, e.g. `Debian GNU/Linux 12 (bookworm)`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub os_image: String,
    /// `status.nodeInfo.containerRuntimeVersion`, e.g. `containerd://1.7.24`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub container_runtime: String,
    /// `status.nodeInfo.kubeletVersion`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kubelet: String,
    /// `status.capacity.cpu`: the CPUs the node has.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cpus: String,
    /// The label `node.kubernetes.io/instance-type` (a cloud's machine type), when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
}

/// What differs between the environments of two sides of a comparison, e.g.
/// `target kernel 6.1.0-28-amd64 vs 6.1.0-30-amd64`; empty when nothing that can change a
/// figure does. Node names are not compared (two nodes of one kind are alike); their kernel,
/// OS, runtime, kubelet, CPU count and instance type are, per role, and so are the load CPU
/// models and the operator version. Images are not: they are the code under test, which a
/// comparison is there to judge (they are recorded so that a result names the bytes that ran).
/// A side that recorded no environment (results from before it was recorded) differs in
/// nothing that can be said.
pub fn differences(a: &[&Environment], b: &[&Environment]) -> Vec<String> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut facet = |what: &str, f: &dyn Fn(&Environment) -> Vec<String>| {
        let set = |side: &[&Environment]| {
            let mut v: Vec<String> = side
                .iter()
                .flat_map(|e| f(e))
                .filter(|s| !s.is_empty())
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let (x, y) = (set(a), set(b));
        if !x.is_empty() && !y.is_empty() && x != y {
            out.push(format!("{what} {} vs {}", x.join(", "), y.join(", ")));
        }
    };
    for role in ["Target", "Load"] {
        let on = |e: &Environment| -> Vec<NodeEnvironment> {
            e.nodes
                .iter()
                .filter(|n| n.role.split(',').any(|r| r == role))
                .cloned()
                .collect()
        };
        let r = role.to_lowercase();
        facet(&format!("{r} kernel"), &|e| {
            on(e).into_iter().map(|n| n.kernel).collect()
        });
        facet(&format!("{r} OS"), &|e| {
            on(e).into_iter().map(|n| n.os_image).collect()
        });
        facet(&format!("{r} runtime"), &|e| {
            on(e).into_iter().map(|n| n.container_runtime).collect()
        });
        facet(&format!("{r} kubelet"), &|e| {
            on(e).into_iter().map(|n| n.kubelet).collect()
        });
        facet(&format!("{r} CPUs"), &|e| {
            on(e).into_iter().map(|n| n.cpus).collect()
        });
        facet(&format!("{r} instance type"), &|e| {
            on(e).into_iter().filter_map(|n| n.instance_type).collect()
        });
    }
    facet("load CPU", &|e| e.load_cpu_models.clone());
    facet("operator", &|e| vec![e.operator.clone()]);
    out
}

/// The digest part of an `imageID` (`sha256:…` after the `@`), or the whole when it has none.
pub fn digest(image_id: &str) -> &str {
    image_id
        .rsplit_once('@')
        .map_or(image_id, |(_, d)| d)
        .trim_start_matches("docker-pullable://")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(kernel: &str, image: &str) -> Environment {
        Environment {
            target_images: vec![image.into()],
            nodes: vec![
                NodeEnvironment {
                    name: "a".into(),
                    role: "Target".into(),
                    kernel: kernel.into(),
                    cpus: "2".into(),
                    ..Default::default()
                },
                NodeEnvironment {
                    name: "b".into(),
                    role: "Load".into(),
                    kernel: "6.1".into(),
                    ..Default::default()
                },
            ],
            load_cpu_models: vec!["EPYC".into()],
            operator: "0.1.0".into(),
        }
    }

    #[test]
    fn alike_environments_differ_in_nothing_even_on_other_node_names() {
        let a = env("6.1", "x@sha256:1");
        let mut b = a.clone();
        b.nodes[0].name = "c".into();
        assert!(differences(&[&a], &[&b]).is_empty());
    }

    #[test]
    fn a_new_kernel_on_the_target_node_is_named_with_both_values() {
        let a = env("6.1", "x@sha256:1");
        let b = env("6.2", "x@sha256:1");
        assert_eq!(differences(&[&a], &[&b]), ["target kernel 6.1 vs 6.2"]);
    }

    #[test]
    fn images_are_the_code_under_test_not_the_environment() {
        let a = env("6.1", "x@sha256:1");
        let b = env("6.1", "x@sha256:2");
        assert!(differences(&[&a], &[&b]).is_empty());
        let mut c = a.clone();
        c.operator = "0.2.0".into();
        assert_eq!(differences(&[&a], &[&c]), ["operator 0.1.0 vs 0.2.0"]);
    }

    #[test]
    fn a_side_without_a_record_says_nothing() {
        let a = env("6.1", "x@sha256:1");
        assert!(differences(&[&a], &[]).is_empty());
        assert!(differences(&[&a], &[&Environment::default()]).is_empty());
    }

    #[test]
    fn repeats_on_two_kernels_are_a_set() {
        let (a1, a2) = (env("6.1", "i"), env("6.2", "i"));
        let b = env("6.2", "i");
        assert_eq!(
            differences(&[&a1, &a2], &[&b]),
            ["target kernel 6.1, 6.2 vs 6.2"]
        );
    }

    #[test]
    fn digest_is_the_part_after_the_at() {
        assert_eq!(digest("docker.io/x@sha256:ab"), "sha256:ab");
        assert_eq!(digest("sha256:ab"), "sha256:ab");
    }
}
