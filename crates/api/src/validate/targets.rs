//! `spec.targets`: the systems under test, parsed into what their Deployments and Services are
//! built from.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, Toleration};

use super::field::{check_env, check_image, check_name, err, unique, FieldError};
use crate::spec::Target;

/// Pod Security Standard a target's pods are built to (`targets[].podSecurity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PodSecurity {
    /// Non-root, no privilege escalation, no capabilities, RuntimeDefault seccomp.
    #[default]
    Restricted,
    /// For images that must run as root: only the seccomp profile is set.
    Baseline,
}

/// One entry of `spec.targets`, parsed: everything its Deployment and Service are built from
/// (its resources and replicas are the cell's).
#[derive(Clone, Debug, PartialEq)]
pub struct TargetPlan {
    /// Name, a DNS label unique in the run; part of the child objects' names.
    pub name: String,
    /// Container image.
    pub image: String,
    /// TCP port the container serves HTTP on.
    pub port: i32,
    /// Entrypoint override (empty: the image's).
    pub command: Vec<String>,
    /// Arguments to the entrypoint.
    pub args: Vec<String>,
    /// The container's own environment variables.
    pub env: Vec<EnvVar>,
    /// HTTP path of the readiness probe (`None`: a TCP connect to `port`).
    pub readiness_path: Option<String>,
    /// Image pull policy (`None`: the operator's setting).
    pub image_pull_policy: Option<String>,
    /// Node labels the pods must match.
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations of the pods.
    pub tolerations: Vec<Toleration>,
    /// Service account of the pods (`None`: no API credentials are mounted).
    pub service_account_name: Option<String>,
    /// Pod Security Standard of the pods.
    pub pod_security: PodSecurity,
    /// User id the container runs as, overriding the image's.
    pub run_as_user: Option<i64>,
}

/// Parses `spec.targets`: at least one, unique names that are DNS labels, images given and a
/// valid Pod Security Standard for each.
pub(crate) fn parse(targets: &[Target], e: &mut Vec<FieldError>) -> Vec<TargetPlan> {
    if targets.is_empty() {
        e.push(err("spec.targets", "at least one target is required"));
    }
    unique("spec.targets", targets.iter().map(|t| t.name.as_str()), e);
    for (i, t) in targets.iter().enumerate() {
        check_name(format!("spec.targets[{i}].name"), &t.name, e);
        check_image(format!("spec.targets[{i}].image"), &t.image, e);
        check_env(&format!("spec.targets[{i}].env"), &t.env, e);
    }
    targets
        .iter()
        .enumerate()
        .map(|(i, t)| target(i, t, e))
        .collect()
}

/// Target `i`, with its `podSecurity` parsed and its `runAsUser` checked against it.
fn target(i: usize, t: &Target, e: &mut Vec<FieldError>) -> TargetPlan {
    let field = format!("spec.targets[{i}]");
    TargetPlan {
        name: t.name.clone(),
        image: t.image.clone(),
        port: t.port,
        command: t.command.clone(),
        args: t.args.clone(),
        env: t.env.clone(),
        readiness_path: t.readiness_path.clone(),
        image_pull_policy: t.image_pull_policy.clone(),
        node_selector: t.node_selector.clone(),
        tolerations: t.tolerations.clone(),
        service_account_name: t.service_account_name.clone(),
        pod_security: pod_security(&field, t.pod_security.as_deref(), t.run_as_user, e),
        run_as_user: t.run_as_user,
    }
}

/// Parses the `podSecurity` of the object at `field` and checks its `runAsUser`.
pub(crate) fn pod_security(
    field: &str,
    level: Option<&str>,
    run_as_user: Option<i64>,
    e: &mut Vec<FieldError>,
) -> PodSecurity {
    let level = match level {
        None | Some("Restricted") => PodSecurity::Restricted,
        Some("Baseline") => PodSecurity::Baseline,
        Some(other) => {
            e.push(err(
                format!("{field}.podSecurity"),
                format!("{other:?} is not one of Restricted, Baseline"),
            ));
            PodSecurity::Restricted
        }
    };
    if let Some(uid) = run_as_user {
        if uid < 1 {
            e.push(err(
                format!("{field}.runAsUser"),
                format!("{uid} is not a non-root user id: use 1 or more, or leave runAsUser out and set podSecurity: Baseline for an image that must run as root"),
            ));
        }
    }
    level
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::spec;
    use super::*;
    use crate::validate;

    #[test]
    fn targets_default_to_restricted_and_may_opt_into_baseline() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        let mut root = s.targets[0].clone();
        root.name = "root".into();
        root.pod_security = Some("Baseline".into());
        s.targets.push(root);
        let run = validate(&s).unwrap();
        assert_eq!(
            run.targets
                .iter()
                .map(|t| t.pod_security)
                .collect::<Vec<_>>(),
            vec![PodSecurity::Restricted, PodSecurity::Baseline]
        );
    }

    #[test]
    fn unknown_pod_security_and_root_user_ids_are_rejected_naming_the_field() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.targets[0].pod_security = Some("Privileged".into());
        s.targets[0].run_as_user = Some(0);
        let errs = validate(&s).unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.targets[0].podSecurity", "spec.targets[0].runAsUser"]
        );
        assert!(errs[0].message.contains("Restricted, Baseline"), "{errs:?}");
        assert!(
            errs[1].message.contains("podSecurity: Baseline"),
            "{errs:?}"
        );
    }

    #[test]
    fn a_target_env_naming_a_reserved_variable_is_refused_naming_the_entry() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.targets[0].env = serde_json::from_str(
            r#"[{"name": "DB_URL", "value": "mongodb://$(BENCHRUN_SERVICE_DB_ADDR)"},
                {"name": "BENCHRUN_SERVICE_DB_ADDR", "value": "x"}]"#,
        )
        .unwrap();
        let errs = validate(&s).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.targets[0].env[1].name");
        assert!(errs[0].message.contains("reserved"), "{errs:?}");
        assert!(errs[0].message.contains("rename"), "{errs:?}");
    }

    #[test]
    fn a_target_is_parsed_with_everything_its_pods_are_built_from() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.targets[0].readiness_path = Some("/healthz".into());
        s.targets[0].node_selector = BTreeMap::from([("pool".into(), "bench".into())]);
        s.targets[0].run_as_user = Some(1000);
        let t = &validate(&s).unwrap().targets[0];
        assert_eq!(
            (t.name.as_str(), t.image.as_str(), t.port),
            ("a", "img:1", 8080)
        );
        assert_eq!(t.readiness_path.as_deref(), Some("/healthz"));
        assert_eq!(t.node_selector["pool"], "bench");
        assert_eq!(t.run_as_user, Some(1000));
        assert_eq!(t.image_pull_policy, None);
    }
}
