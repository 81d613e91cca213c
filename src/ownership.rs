//! Which objects a run may change or delete: only its own children, those that carry its
//! controller owner reference (the run's uid). Pure.
//!
//! Children have names derived from the run's ([`crate::names`]), so a name can be taken
//! before the run writes it: a team's own database made with kubectl or Helm, named like a
//! backing service (`<run>-svc-<service>`), or an object made to look like a run's child (its
//! labels). The controller ([`crate::controller`]) asks [`claim`] before each write whether the
//! name is free, the run's own, or someone else's; someone else's object is left exactly as
//! it is and the write is refused with [`foreign_message`], naming the object and its owner
//! ([`owner_of`]). Deletions go only to objects [`is_ours`] accepts, with the object's uid as
//! the apiserver's precondition.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// Who holds the name of a child the run is about to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// No object has the name: the run may create it.
    Free,
    /// The run's own child; its uid (when known), the precondition of the write.
    Ours(Option<String>),
    /// Another object has the name; says whose it is ([`owner_of`]).
    Foreign(String),
}

/// Whether `meta` carries the controller owner reference of the run with uid `run_uid`.
pub fn is_ours(meta: &ObjectMeta, run_uid: &str) -> bool {
    !run_uid.is_empty()
        && meta
            .owner_references
            .iter()
            .flatten()
            .any(|r| r.controller == Some(true) && r.uid == run_uid)
}

/// Who holds a name, from the object that has it (`None`: no object has it).
pub fn claim(existing: Option<&ObjectMeta>, run_uid: &str) -> Claim {
    match existing {
        None => Claim::Free,
        Some(m) if is_ours(m, run_uid) => Claim::Ours(m.uid.clone()),
        Some(m) => Claim::Foreign(owner_of(m)),
    }
}

/// Who an object belongs to, as far as its metadata says: its controller (or other) owner
/// reference, its `app.kubernetes.io/managed-by` label or Helm release annotation, else the
/// field managers that wrote it (`kubectl-create`, `helm`, ...).
pub fn owner_of(meta: &ObjectMeta) -> String {
    let refs: Vec<_> = meta.owner_references.iter().flatten().collect();
    if let Some(r) = refs.iter().find(|r| r.controller == Some(true)) {
        return format!("its controller is {} {}", r.kind, r.name);
    }
    if let Some(r) = refs.first() {
        return format!("it is owned by {} {}", r.kind, r.name);
    }
    let label = |k: &str| meta.labels.as_ref().and_then(|l| l.get(k));
    let annotation = |k: &str| meta.annotations.as_ref().and_then(|a| a.get(k));
    if let Some(release) = annotation("meta.helm.sh/release-name") {
        return format!("it belongs to the Helm release {release}");
    }
    if let Some(by) = label("app.kubernetes.io/managed-by") {
        return format!("it is managed by {by}");
    }
    // The maker rather than the controllers that annotate it or write its status since:
    // kubectl or Helm first, then any other manager not of the cluster's own components.
    let managers: Vec<&str> = meta
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|f| f.manager.as_deref())
        .collect();
    let rank = |m: &&str| match m {
        m if m.starts_with("kubectl") || m.starts_with("helm") => 0,
        m if SYSTEM_MANAGERS.contains(m) => 2,
        _ => 1,
    };
    match managers.into_iter().min_by_key(rank) {
        Some(m) if m.starts_with("kubectl") => format!("it was created with kubectl ({m})"),
        Some(m) if m.starts_with("helm") => format!("it was created by Helm ({m})"),
        Some(m) => format!("it was created by {m}"),
        None => "it records no owner".into(),
    }
}

/// Field managers of the cluster's own components, which update objects others made.
const SYSTEM_MANAGERS: [&str; 4] = [
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "kube-apiserver",
];

/// The reason a write to `kind name` was refused because another object holds the name.
pub fn foreign_message(kind: &str, name: &str, owner: &str) -> String {
    format!(
        "{kind} {name} already exists and is not this run's ({owner}): the operator changes and deletes \
         only objects it made for the run, so it left it as it is; give the run (or the service) \
         another name, or remove that {kind} if it is no longer needed"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, OwnerReference};
    use std::collections::BTreeMap;

    fn reference(kind: &str, name: &str, uid: &str, controller: bool) -> OwnerReference {
        OwnerReference {
            api_version: "x/v1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: uid.into(),
            controller: Some(controller),
            block_owner_deletion: None,
        }
    }

    fn meta(refs: Vec<OwnerReference>) -> ObjectMeta {
        ObjectMeta {
            name: Some("demo-svc-db".into()),
            uid: Some("obj-1".into()),
            owner_references: Some(refs),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn only_this_runs_controller_reference_makes_an_object_ours() {
        let mine = reference("BenchmarkRun", "demo", "run-1", true);
        assert!(is_ours(&meta(vec![mine.clone()]), "run-1"));
        assert_eq!(
            claim(Some(&meta(vec![mine.clone()])), "run-1"),
            Claim::Ours(Some("obj-1".into()))
        );
        // Another run of the same name (deleted and made again) has another uid.
        assert!(!is_ours(&meta(vec![mine.clone()]), "run-2"));
        // A reference that is not the controller's does not make it ours.
        let not_controller = reference("BenchmarkRun", "demo", "run-1", false);
        assert!(!is_ours(&meta(vec![not_controller]), "run-1"));
        // Labels alone never do.
        let mut labelled = meta(vec![]);
        labelled.labels = Some(crate::names::common_labels("demo", "service"));
        assert!(!is_ours(&labelled, "run-1"));
        assert!(!is_ours(&meta(vec![mine]), ""));
    }

    #[test]
    fn a_free_name_may_be_created_and_a_taken_one_names_its_owner() {
        assert_eq!(claim(None, "run-1"), Claim::Free);
        let other = meta(vec![reference("BenchmarkRun", "theirs", "run-9", true)]);
        assert_eq!(
            claim(Some(&other), "run-1"),
            Claim::Foreign("its controller is BenchmarkRun theirs".into())
        );
        let rs = meta(vec![reference("ReplicaSet", "db-1", "x", false)]);
        assert_eq!(owner_of(&rs), "it is owned by ReplicaSet db-1");
    }

    #[test]
    fn without_owner_references_helm_labels_and_field_managers_say_whose_it_is() {
        let mut m = meta(vec![]);
        // The Deployment controller's entry comes first, as the apiserver lists it.
        m.managed_fields = Some(vec![
            ManagedFieldsEntry {
                manager: Some("kube-controller-manager".into()),
                operation: Some("Update".into()),
                ..ManagedFieldsEntry::default()
            },
            ManagedFieldsEntry {
                manager: Some("kubectl-create".into()),
                operation: Some("Update".into()),
                ..ManagedFieldsEntry::default()
            },
        ]);
        assert_eq!(owner_of(&m), "it was created with kubectl (kubectl-create)");
        m.labels = Some(BTreeMap::from([(
            "app.kubernetes.io/managed-by".to_string(),
            "Helm".to_string(),
        )]));
        assert_eq!(owner_of(&m), "it is managed by Helm");
        m.annotations = Some(BTreeMap::from([(
            "meta.helm.sh/release-name".to_string(),
            "team-db".to_string(),
        )]));
        assert_eq!(owner_of(&m), "it belongs to the Helm release team-db");
        assert_eq!(owner_of(&ObjectMeta::default()), "it records no owner");
        let helm = ObjectMeta {
            managed_fields: Some(vec![ManagedFieldsEntry {
                manager: Some("helm".into()),
                ..ManagedFieldsEntry::default()
            }]),
            ..ObjectMeta::default()
        };
        assert_eq!(owner_of(&helm), "it was created by Helm (helm)");
        let other = ObjectMeta {
            managed_fields: Some(
                ["kubelet", "argocd-controller"]
                    .map(|m| ManagedFieldsEntry {
                        manager: Some(m.into()),
                        ..ManagedFieldsEntry::default()
                    })
                    .to_vec(),
            ),
            ..ObjectMeta::default()
        };
        assert_eq!(owner_of(&other), "it was created by argocd-controller");
    }

    #[test]
    fn the_refusal_names_the_object_its_owner_and_the_way_out() {
        let m = foreign_message(
            "Deployment",
            "demo-svc-db",
            "it was created with kubectl (kubectl-create)",
        );
        assert!(m.starts_with("Deployment demo-svc-db already exists and is not this run's (it was created with kubectl"), "{m}");
        assert!(m.contains("left it as it is"), "{m}");
        assert!(m.contains("another name"), "{m}");
    }
}
