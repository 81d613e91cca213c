//! Security settings of the pods the operator creates, so that they are admitted in namespaces
//! that enforce the `restricted` Pod Security Standard.
//!
//! Pure. `Restricted` sets everything that standard requires of a pod and its containers
//! (non-root, no privilege escalation, all capabilities dropped, `RuntimeDefault` seccomp);
//! `Baseline`, a target's opt-out for images that must run as root, keeps only the seccomp
//! profile.

use benchrun_api::validate::PodSecurity;
use k8s_openapi::api::core::v1::{
    Capabilities, PodSecurityContext, SeccompProfile, SecurityContext,
};

/// User and group id of the load pods: the non-root user of the project's images
/// (hack/images.sh).
pub const LOAD_USER: i64 = 65532;

/// The pod-level security context: the seccomp profile always, non-root for `Restricted`, and
/// the user id when one is given.
pub fn pod_security_context(level: PodSecurity, run_as_user: Option<i64>) -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: (level == PodSecurity::Restricted).then_some(true),
        run_as_user,
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            ..SeccompProfile::default()
        }),
        ..PodSecurityContext::default()
    }
}

/// The container-level security context: no privilege escalation and no capabilities for
/// `Restricted`; nothing for `Baseline` (the runtime's defaults).
pub fn container_security_context(level: PodSecurity) -> Option<SecurityContext> {
    (level == PodSecurity::Restricted).then(|| SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            ..Capabilities::default()
        }),
        ..SecurityContext::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restricted_pods_run_non_root_with_runtime_default_seccomp() {
        let pod = pod_security_context(PodSecurity::Restricted, None);
        assert_eq!(pod.run_as_non_root, Some(true));
        assert_eq!(pod.run_as_user, None);
        assert_eq!(pod.seccomp_profile.unwrap().type_, "RuntimeDefault");
        let pod = pod_security_context(PodSecurity::Restricted, Some(1000));
        assert_eq!(pod.run_as_user, Some(1000));
    }

    #[test]
    fn restricted_containers_drop_every_capability_and_cannot_escalate() {
        let c = container_security_context(PodSecurity::Restricted).unwrap();
        assert_eq!(c.allow_privilege_escalation, Some(false));
        assert_eq!(c.capabilities.unwrap().drop, Some(vec!["ALL".to_string()]));
        assert_eq!(c.privileged, None);
    }

    #[test]
    fn baseline_keeps_only_the_seccomp_profile() {
        let pod = pod_security_context(PodSecurity::Baseline, None);
        assert_eq!(pod.run_as_non_root, None);
        assert_eq!(pod.seccomp_profile.unwrap().type_, "RuntimeDefault");
        assert_eq!(container_security_context(PodSecurity::Baseline), None);
    }
}
