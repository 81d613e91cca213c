//! Where pods go: the node selectors of target and load pods (pure).
//!
//! A cluster says which nodes are for what with the node label `benchrun.dev/role`
//! (`target` or `load`). Where such nodes exist, targets and load pods are kept to them, so
//! the generator does not take CPU from the target's node; a run's own selectors
//! (`targets[].nodeSelector`, `load.nodeSelector`) override that. Elsewhere load pods only
//! prefer nodes without target pods (the Job's anti-affinity).

use std::collections::BTreeMap;

use benchrun_api::ValidatedRun;

use crate::observed::NodeRoles;

/// The node label naming a node's role in benchmarks: [`TARGET`] or [`LOAD`].
pub const NODE_ROLE: &str = "benchrun.dev/role";
/// [`NODE_ROLE`] of nodes for target pods.
pub const TARGET: &str = "target";
/// [`NODE_ROLE`] of nodes for load pods.
pub const LOAD: &str = "load";

/// The node selector of the load pods: `load.nodeSelector` when the run sets one, else
/// `benchrun.dev/role=load` when some node has that role, else none.
pub fn load_selector(run: &ValidatedRun, roles: NodeRoles) -> BTreeMap<String, String> {
    selector(&run.load_node_selector, roles.load, LOAD)
}

/// The node selector of target `target`'s pods: its `nodeSelector` when set, else
/// `benchrun.dev/role=target` when some node has that role, else none.
pub fn target_selector(
    run: &ValidatedRun,
    target: usize,
    roles: NodeRoles,
) -> BTreeMap<String, String> {
    selector(&run.targets[target].node_selector, roles.target, TARGET)
}

/// The node selector of the backing services' pods: `benchrun.dev/role=target` when some
/// node has that role (a database a target reads is measured with it), else the first
/// target's own `nodeSelector`, else none.
pub fn service_selector(run: &ValidatedRun, roles: NodeRoles) -> BTreeMap<String, String> {
    if roles.target {
        return selector(&BTreeMap::new(), true, TARGET);
    }
    run.targets
        .first()
        .map(|t| t.node_selector.clone())
        .unwrap_or_default()
}

fn selector(
    given: &BTreeMap<String, String>,
    role_exists: bool,
    role: &str,
) -> BTreeMap<String, String> {
    if !given.is_empty() {
        return given.clone();
    }
    if role_exists {
        return BTreeMap::from([(NODE_ROLE.to_string(), role.to_string())]);
    }
    BTreeMap::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builders::fixtures::run as validated;

    const SPEC: &str = r#"
targets:
  - {name: a, image: example/a:1}
  - {name: b, image: example/b:1, nodeSelector: {pool: fast}}
scenarios: [{name: hello, path: /hello}]
resources: {cpu: "500m", memory: 128Mi}
load: {connections: 4, duration: 20s}
"#;

    fn role(key: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(NODE_ROLE.to_string(), key.to_string())])
    }

    #[test]
    fn without_role_labels_nothing_is_selected_but_what_the_run_asks() {
        let run = validated(SPEC);
        let none = NodeRoles::default();
        assert!(load_selector(&run, none).is_empty());
        assert!(target_selector(&run, 0, none).is_empty());
        assert_eq!(target_selector(&run, 1, none)["pool"], "fast");
    }

    #[test]
    fn role_labels_place_targets_and_load_pods_unless_the_run_says_otherwise() {
        let run = validated(SPEC);
        let both = NodeRoles {
            target: true,
            load: true,
        };
        assert_eq!(load_selector(&run, both), role(LOAD));
        assert_eq!(target_selector(&run, 0, both), role(TARGET));
        // The run's own selector wins.
        assert_eq!(
            target_selector(&run, 1, both),
            BTreeMap::from([("pool".to_string(), "fast".to_string())])
        );
        let pinned = validated(&SPEC.replace(
            "load: {connections: 4, duration: 20s}",
            "load: {connections: 4, duration: 20s, nodeSelector: {kubernetes.io/hostname: n2}}",
        ));
        assert_eq!(load_selector(&pinned, both)["kubernetes.io/hostname"], "n2");
        // Only load nodes: targets go anywhere.
        let load_only = NodeRoles {
            target: false,
            load: true,
        };
        assert!(target_selector(&run, 0, load_only).is_empty());
        assert_eq!(load_selector(&run, load_only), role(LOAD));
    }

    #[test]
    fn backing_services_go_with_the_targets() {
        let run = validated(SPEC);
        let both = NodeRoles {
            target: true,
            load: true,
        };
        assert_eq!(service_selector(&run, both), role(TARGET));
        // Without target nodes: where the first target is pinned, or anywhere.
        assert!(service_selector(&run, NodeRoles::default()).is_empty());
        let pinned_first = validated(&SPEC.replace(
            "{name: a, image: example/a:1}",
            "{name: a, image: example/a:1, nodeSelector: {pool: db}}",
        ));
        assert_eq!(
            service_selector(&pinned_first, NodeRoles::default())["pool"],
            "db"
        );
    }
}
