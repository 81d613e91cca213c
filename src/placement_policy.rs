//! The administrator's placement policy: which node labels a run's pods may select
//! (`targets[].nodeSelector`, `load.nodeSelector`) and which taints its target pods may
//! tolerate (`targets[].tolerations`). Pure.
//!
//! Without it any user who may create a BenchmarkRun could put pods on the operator's node, a
//! control-plane node or the load node of another team's measurement. By default a run may
//! only select the node role of its own pods (`benchrun.dev/role=target` for targets,
//! `benchrun.dev/role=load` for the load, which is also where the operator puts them where
//! nodes carry the role) and tolerate no taint. The administrator widens that with operator
//! flags; the decision needs no node read access, so it holds in a namespaced install too.

use std::collections::BTreeMap;

use benchrun_api::{BenchmarkRunSpec, FieldError};
use k8s_openapi::api::core::v1::Toleration;

use crate::plan::placement::{LOAD, NODE_ROLE, TARGET};

/// Flag and environment variable of the node labels runs may select.
pub const NODE_SELECTOR_FLAG: &str =
    "--allowed-node-selector-keys (BENCHRUN_ALLOWED_NODE_SELECTOR_KEYS)";
/// Flag and environment variable of the taints runs may tolerate.
pub const TOLERATION_FLAG: &str = "--allowed-toleration-keys (BENCHRUN_ALLOWED_TOLERATION_KEYS)";

/// One allowed node label: a key with any value, or one `key=value` pair.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Label {
    Key(String),
    Pair(String, String),
}

impl Label {
    fn allows(&self, key: &str, value: &str) -> bool {
        match self {
            Label::Key(k) => k == key,
            Label::Pair(k, v) => k == key && v == value,
        }
    }

    fn text(&self) -> String {
        match self {
            Label::Key(k) => format!("{k} (any value)"),
            Label::Pair(k, v) => format!("{k}={v}"),
        }
    }
}

/// Which node labels runs may select and which taints they may tolerate. The default is the
/// restrictive policy: each pod its own role, no toleration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementPolicy {
    /// Node labels any run's pods may select beyond their own role; `None` allows any label.
    labels: Option<Vec<Label>>,
    /// Taint keys target pods may tolerate; `None` allows any toleration, including one with
    /// no key (which tolerates every taint).
    taint_keys: Option<Vec<String>>,
}

impl Default for PlacementPolicy {
    fn default() -> Self {
        PlacementPolicy {
            labels: Some(Vec::new()),
            taint_keys: Some(Vec::new()),
        }
    }
}

impl PlacementPolicy {
    /// Node labels from `labels` (each `key`, any value, or `key=value`; `*` allows any) and
    /// taint keys from `taint_keys` (`*` allows any toleration). Blank entries are ignored;
    /// with neither, runs may select only their own role and tolerate nothing.
    pub fn new(labels: &[String], taint_keys: &[String]) -> Self {
        let entries = |list: &[String]| -> Vec<String> {
            list.iter()
                .map(|e| e.trim().to_string())
                .filter(|e| !e.is_empty())
                .collect()
        };
        let labels = entries(labels);
        let taint_keys = entries(taint_keys);
        PlacementPolicy {
            labels: (!labels.iter().any(|e| e == "*")).then(|| {
                labels
                    .iter()
                    .map(|e| match e.split_once('=') {
                        Some((k, v)) => Label::Pair(k.trim().into(), v.trim().into()),
                        None => Label::Key(e.clone()),
                    })
                    .collect()
            }),
            taint_keys: (!taint_keys.iter().any(|e| e == "*")).then_some(taint_keys),
        }
    }

    /// Pushes onto `errors` every node label and toleration of `spec` the policy does not
    /// allow, each naming the field, the entry and the flag that would allow it.
    pub fn check(&self, spec: &BenchmarkRunSpec, errors: &mut Vec<FieldError>) {
        for (i, t) in spec.targets.iter().enumerate() {
            let field = format!("spec.targets[{i}].nodeSelector");
            self.check_selector(&field, "a target", TARGET, &t.node_selector, errors);
            for (j, tol) in t.tolerations.iter().enumerate() {
                if let Some(message) = self.refuse_toleration(tol) {
                    errors.push(FieldError {
                        field: format!("spec.targets[{i}].tolerations[{j}]"),
                        message,
                    });
                }
            }
        }
        self.check_selector(
            "spec.load.nodeSelector",
            "the load",
            LOAD,
            &spec.load.node_selector,
            errors,
        );
    }

    fn check_selector(
        &self,
        field: &str,
        whose: &str,
        role: &str,
        selector: &BTreeMap<String, String>,
        errors: &mut Vec<FieldError>,
    ) {
        let Some(allowed) = &self.labels else { return };
        for (key, value) in selector {
            let own_role = key == NODE_ROLE && value == role;
            if own_role || allowed.iter().any(|l| l.allows(key, value)) {
                continue;
            }
            let mut may: Vec<String> = vec![format!("{NODE_ROLE}={role}")];
            may.extend(allowed.iter().map(Label::text));
            let why = if key == NODE_ROLE {
                format!(
                    "{whose} may not run on the nodes of another role: target pods go to target nodes and load pods to load nodes, \
                     so that no run measures on, or loads from, the nodes of another run"
                )
            } else {
                "runs may not choose nodes by this label on this cluster".to_string()
            };
            errors.push(FieldError {
                field: field.into(),
                message: format!(
                    "{key}={value} selects nodes this operator does not let runs choose ({why}); {whose} may select {}. \
                     Remove the entry to let the operator place the pods, \
                     or ask the operator's administrator to add {key} or {key}={value} to {NODE_SELECTOR_FLAG}",
                    may.join(", ")
                ),
            });
        }
    }

    fn refuse_toleration(&self, tol: &Toleration) -> Option<String> {
        let allowed = self.taint_keys.as_ref()?;
        let key = tol.key.as_deref().unwrap_or_default();
        if !key.is_empty() && allowed.iter().any(|k| k == key) {
            return None;
        }
        let what = if key.is_empty() {
            "a toleration without a key tolerates every taint, including those that keep pods off control-plane \
             and reserved nodes"
                .to_string()
        } else {
            format!("it tolerates the taint {key}, which this operator does not let runs tolerate")
        };
        let may = if allowed.is_empty() {
            "runs may tolerate no taint".to_string()
        } else {
            format!("runs may tolerate the taints {}", allowed.join(", "))
        };
        let fix = if key.is_empty() {
            format!("name the taint's key, or ask the operator's administrator for `*` in {TOLERATION_FLAG}")
        } else {
            format!(
                "remove it, or ask the operator's administrator to add {key} to {TOLERATION_FLAG}"
            )
        };
        Some(format!("{what}; {may}: {fix}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(target: serde_json::Value, load: serde_json::Value) -> BenchmarkRunSpec {
        let mut t = serde_json::json!({"name": "t", "image": "img:1"});
        t.as_object_mut()
            .unwrap()
            .extend(target.as_object().unwrap().clone());
        let mut l = serde_json::json!({"duration": "10s"});
        l.as_object_mut()
            .unwrap()
            .extend(load.as_object().unwrap().clone());
        serde_json::from_value(serde_json::json!({
            "targets": [t],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": l,
        }))
        .unwrap()
    }

    fn errors(p: &PlacementPolicy, s: &BenchmarkRunSpec) -> Vec<FieldError> {
        let mut e = Vec::new();
        p.check(s, &mut e);
        e
    }

    fn fields(p: &PlacementPolicy, s: &BenchmarkRunSpec) -> Vec<String> {
        errors(p, s).into_iter().map(|e| e.field).collect()
    }

    use serde_json::json;

    #[test]
    fn by_default_a_run_may_select_only_its_own_role_and_tolerate_nothing() {
        let p = PlacementPolicy::default();
        assert_eq!(p, PlacementPolicy::new(&[], &[" ".into()]));
        assert!(fields(&p, &spec(json!({}), json!({}))).is_empty());
        let own = spec(
            json!({"nodeSelector": {"benchrun.dev/role": "target"}}),
            json!({"nodeSelector": {"benchrun.dev/role": "load"}}),
        );
        assert!(fields(&p, &own).is_empty());
        let crossed = spec(
            json!({"nodeSelector": {"benchrun.dev/role": "load"}}),
            json!({"nodeSelector": {"benchrun.dev/role": "target"}}),
        );
        let e = errors(&p, &crossed);
        assert_eq!(
            e.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            ["spec.targets[0].nodeSelector", "spec.load.nodeSelector"]
        );
        for part in [
            "benchrun.dev/role=load selects nodes",
            "a target may not run on the nodes of another role",
            "a target may select benchrun.dev/role=target",
            "BENCHRUN_ALLOWED_NODE_SELECTOR_KEYS",
        ] {
            assert!(e[0].message.contains(part), "{part:?}: {}", e[0].message);
        }
        assert!(
            e[1].message
                .contains("the load may select benchrun.dev/role=load"),
            "{}",
            e[1].message
        );
    }

    #[test]
    fn a_hostname_or_control_plane_selector_is_refused_unless_listed() {
        let pinned = spec(
            json!({"nodeSelector": {"kubernetes.io/hostname": "cp-1"}}),
            json!({"nodeSelector": {"node-role.kubernetes.io/control-plane": ""}}),
        );
        let e = errors(&PlacementPolicy::default(), &pinned);
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].message.contains("kubernetes.io/hostname=cp-1"),
            "{e:?}"
        );
        assert!(
            e[0].message
                .contains("add kubernetes.io/hostname or kubernetes.io/hostname=cp-1"),
            "{e:?}"
        );
        let by_key = PlacementPolicy::new(
            &[
                "kubernetes.io/hostname".into(),
                "node-role.kubernetes.io/control-plane=".into(),
            ],
            &[],
        );
        assert!(fields(&by_key, &pinned).is_empty());
        // A pair allows that value only.
        let by_pair = PlacementPolicy::new(&["pool=bench".into()], &[]);
        let ok = spec(json!({"nodeSelector": {"pool": "bench"}}), json!({}));
        let other = spec(json!({}), json!({"nodeSelector": {"pool": "prod"}}));
        assert!(fields(&by_pair, &ok).is_empty());
        assert_eq!(fields(&by_pair, &other), ["spec.load.nodeSelector"]);
        assert!(errors(&by_pair, &other)[0]
            .message
            .contains("the load may select benchrun.dev/role=load, pool=bench"));
        // The role key listed lets a run cross roles (an administrator's choice).
        let roles = PlacementPolicy::new(&["benchrun.dev/role".into()], &[]);
        let crossed = spec(
            json!({"nodeSelector": {"benchrun.dev/role": "load"}}),
            json!({}),
        );
        assert!(fields(&roles, &crossed).is_empty());
        // `*` allows any label.
        let any = PlacementPolicy::new(&["*".into()], &[]);
        assert!(fields(&any, &pinned).is_empty());
    }

    #[test]
    fn tolerations_are_refused_unless_their_key_is_listed_and_a_keyless_one_needs_a_star() {
        let tolerating = spec(
            json!({"tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "bench", "effect": "NoSchedule"},
                {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists"},
                {"operator": "Exists"}
            ]}),
            json!({}),
        );
        let e = errors(&PlacementPolicy::default(), &tolerating);
        assert_eq!(
            e.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            [
                "spec.targets[0].tolerations[0]",
                "spec.targets[0].tolerations[1]",
                "spec.targets[0].tolerations[2]"
            ]
        );
        assert!(
            e[0].message.contains("tolerates the taint dedicated"),
            "{e:?}"
        );
        assert!(e[0].message.contains("runs may tolerate no taint"), "{e:?}");
        assert!(
            e[0].message.contains(
                "add dedicated to --allowed-toleration-keys (BENCHRUN_ALLOWED_TOLERATION_KEYS)"
            ),
            "{e:?}"
        );
        assert!(e[2].message.contains("tolerates every taint"), "{e:?}");
        let p = PlacementPolicy::new(&[], &["dedicated".into()]);
        assert_eq!(
            fields(&p, &tolerating),
            [
                "spec.targets[0].tolerations[1]",
                "spec.targets[0].tolerations[2]"
            ]
        );
        assert!(errors(&p, &tolerating)[0]
            .message
            .contains("runs may tolerate the taints dedicated"));
        let any = PlacementPolicy::new(&[], &["*".into()]);
        assert!(fields(&any, &tolerating).is_empty());
    }
}
