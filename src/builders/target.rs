//! The target Deployment and Service of one target configuration.

use std::collections::BTreeMap;

use benchrun_api::{Cell, ServiceAddress, ValidatedRun};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, PodSpec, PodTemplateSpec, Probe,
    ResourceFieldSelector, ResourceRequirements, Service, ServicePort, ServiceSpec,
    TCPSocketAction,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{security, Owner};
use crate::names;

/// Name of the target container in every target pod.
pub const TARGET_CONTAINER: &str = "target";

/// The variable holding the container's CPU limit in millicores (`500` for `500m`), from the
/// Downward API (`resourceFieldRef` `limits.cpu`, divisor `1m`). Every target and backing-service
/// container has it, so a runtime can size its worker pool from the limit rather than from the
/// node's CPUs. The `BENCHRUN_` prefix is reserved for variables the operator sets.
pub const CPU_LIMIT_ENV: &str = "BENCHRUN_CPU_LIMIT_MILLICORES";

/// The variable holding the container's memory limit in bytes (`536870912` for `512Mi`), from
/// the Downward API (`resourceFieldRef` `limits.memory`, divisor `1`).
pub const MEMORY_LIMIT_ENV: &str = "BENCHRUN_MEMORY_LIMIT_BYTES";

/// The container's own CPU and memory limits as [`CPU_LIMIT_ENV`] and [`MEMORY_LIMIT_ENV`],
/// read by the kubelet from container `container` of the pod (the Downward API).
pub(crate) fn limit_env(container: &str) -> Vec<EnvVar> {
    let field = |name: &str, resource: &str, divisor: &str| EnvVar {
        name: name.into(),
        value: None,
        value_from: Some(EnvVarSource {
            resource_field_ref: Some(ResourceFieldSelector {
                container_name: Some(container.into()),
                resource: resource.into(),
                divisor: Some(Quantity(divisor.into())),
            }),
            ..EnvVarSource::default()
        }),
    };
    vec![
        field(CPU_LIMIT_ENV, "limits.cpu", "1m"),
        field(MEMORY_LIMIT_ENV, "limits.memory", "1"),
    ]
}

/// Requests and limits as a typed object.
pub(crate) fn requirements(
    cpu: &str,
    memory: &str,
    cpu_request: &str,
    memory_request: &str,
) -> ResourceRequirements {
    let q = |cpu: &str, mem: &str| {
        BTreeMap::from([
            ("cpu".to_string(), Quantity(cpu.to_string())),
            ("memory".to_string(), Quantity(mem.to_string())),
        ])
    };
    ResourceRequirements {
        limits: Some(q(cpu, memory)),
        requests: Some(q(cpu_request, memory_request)),
        ..ResourceRequirements::default()
    }
}

/// A readiness probe every 2 s: an HTTP GET of `path`, or a TCP connect without one.
pub(crate) fn readiness_probe(path: Option<&str>, port: i32) -> Probe {
    Probe {
        http_get: path.map(|path| HTTPGetAction {
            path: Some(path.to_string()),
            port: IntOrString::Int(port),
            ..HTTPGetAction::default()
        }),
        tcp_socket: path.is_none().then(|| TCPSocketAction {
            port: IntOrString::Int(port),
            ..TCPSocketAction::default()
        }),
        period_seconds: Some(2),
        failure_threshold: Some(3),
        ..Probe::default()
    }
}

/// A target's or backing service's environment: its limits ([`limit_env`]) and the backing
/// services' address variables first, so that its own variables (last) can refer to them with
/// `$(...)`.
pub(crate) fn workload_env(
    container: &str,
    addresses: &[ServiceAddress],
    own: &[EnvVar],
) -> Vec<EnvVar> {
    let mut env = limit_env(container);
    env.extend(benchrun_api::services::address_env(addresses));
    env.extend(own.iter().cloned());
    env
}

/// A container's environment: the backing services' address variables first (so that the
/// container's own variables can refer to them with `$(...)`), then its own.
pub(crate) fn env_with_addresses(
    addresses: &[ServiceAddress],
    own: &[EnvVar],
) -> Option<Vec<EnvVar>> {
    let mut env = benchrun_api::services::address_env(addresses);
    env.extend(own.iter().cloned());
    (!env.is_empty()).then_some(env)
}

/// The Deployment of a cell's target configuration (of its `round` when every round deploys
/// afresh, [`names::deployment_hash`]): the requested replicas, resources and a
/// readiness probe, replaced whole (strategy `Recreate`) so that two configurations never run
/// side by side. Its pods follow the target's Pod Security Standard (see [`security`]) and
/// mount no service-account token unless the target names a service account. `services`
/// are the addresses of the run's backing services, given to the container as variables;
/// `node_selector` is where its pods must run (the planner's [`crate::plan::placement`]).
pub fn build_target_deployment(
    owner: &Owner,
    run: &ValidatedRun,
    cell: &Cell,
    round: Option<usize>,
    services: &[ServiceAddress],
    node_selector: &BTreeMap<String, String>,
    default_pull_policy: &str,
) -> Deployment {
    let target = &run.targets[cell.target];
    let config = names::deployment_hash(&target.name, cell, round);
    let name = names::target_name(&owner.name, &target.name, &config);
    let labels = names::target_labels(&owner.name, &target.name, &config);
    let res = run.target_resources(cell);
    let level = target.pod_security;
    let probe = readiness_probe(target.readiness_path.as_deref(), target.port);
    let container = Container {
        name: TARGET_CONTAINER.into(),
        image: Some(target.image.clone()),
        image_pull_policy: Some(
            target
                .image_pull_policy
                .clone()
                .unwrap_or_else(|| default_pull_policy.to_string()),
        ),
        command: (!target.command.is_empty()).then(|| target.command.clone()),
        args: (!target.args.is_empty()).then(|| target.args.clone()),
        env: Some(workload_env(TARGET_CONTAINER, services, &target.env)),
        ports: Some(vec![ContainerPort {
            name: Some("http".into()),
            container_port: target.port,
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        resources: Some(requirements(
            &res.cpu,
            &res.memory,
            &res.cpu_request,
            &res.memory_request,
        )),
        readiness_probe: Some(probe),
        security_context: security::container_security_context(level),
        ..Container::default()
    };
    let pod = PodSpec {
        containers: vec![container],
        node_selector: (!node_selector.is_empty()).then(|| node_selector.clone()),
        tolerations: (!target.tolerations.is_empty()).then(|| target.tolerations.clone()),
        service_account_name: target.service_account_name.clone(),
        // The target gets API credentials only from a service account it names.
        automount_service_account_token: target.service_account_name.is_none().then_some(false),
        security_context: Some(security::pod_security_context(level, target.run_as_user)),
        termination_grace_period_seconds: Some(5),
        ..PodSpec::default()
    };
    recreate_deployment(owner.meta(name, labels.clone()), labels, cell.replicas, pod)
}

/// A Deployment of `replicas` pods of `pod`, selected by `labels`, replaced whole (strategy
/// `Recreate`) so that old and new pods never run side by side.
pub(crate) fn recreate_deployment(
    metadata: ObjectMeta,
    labels: BTreeMap<String, String>,
    replicas: i32,
    pod: PodSpec,
) -> Deployment {
    Deployment {
        metadata,
        spec: Some(DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".into()),
                ..DeploymentStrategy::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(pod),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// A ClusterIP Service selecting `labels`, forwarding TCP `port` (named `port_name`) to the
/// same port of the pods.
pub(crate) fn cluster_ip_service(
    metadata: ObjectMeta,
    labels: BTreeMap<String, String>,
    port_name: &str,
    port: i32,
) -> Service {
    Service {
        metadata,
        spec: Some(ServiceSpec {
            type_: Some("ClusterIP".into()),
            selector: Some(labels),
            ports: Some(vec![ServicePort {
                name: Some(port_name.into()),
                port,
                target_port: Some(IntOrString::Int(port)),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// The ClusterIP Service in front of a target configuration's pods, on the target's port.
pub fn build_target_service(
    owner: &Owner,
    run: &ValidatedRun,
    cell: &Cell,
    round: Option<usize>,
) -> Service {
    let target = &run.targets[cell.target];
    let config = names::deployment_hash(&target.name, cell, round);
    let name = names::target_name(&owner.name, &target.name, &config);
    let labels = names::target_labels(&owner.name, &target.name, &config);
    cluster_ip_service(
        owner.meta(name, labels.clone()),
        labels,
        "http",
        target.port,
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::builders::fixtures::{owner, run as validated, DEMO};

    /// The Deployment of `cell` without backing services or a node selector.
    fn deployment(run: &ValidatedRun, cell: &Cell, pull: &str) -> Deployment {
        build_target_deployment(&owner(), run, cell, None, &[], &BTreeMap::new(), pull)
    }

    #[test]
    fn deployment_carries_the_cells_resources_replicas_and_owner() {
        let run = validated(DEMO);
        let cell = &run.cells[0];
        let d = deployment(&run, cell, "IfNotPresent");
        let name = d.metadata.name.clone().unwrap();
        assert!(name.starts_with("demo-web-"), "{name}");
        assert_eq!(d.metadata.namespace.as_deref(), Some("bench"));
        let refs = d.metadata.owner_references.as_ref().unwrap();
        assert_eq!(refs[0].controller, Some(true));
        assert_eq!(refs[0].block_owner_deletion, Some(true));
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(spec.strategy.unwrap().type_.as_deref(), Some("Recreate"));
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.termination_grace_period_seconds, Some(5));
        let c = &pod.containers[0];
        assert_eq!(c.image.as_deref(), Some("example/web:1"));
        assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"));
        let r = c.resources.clone().unwrap();
        assert_eq!(r.limits.as_ref().unwrap()["cpu"], Quantity("250m".into()));
        assert_eq!(r.requests.as_ref().unwrap()["cpu"], Quantity("250m".into()));
        assert_eq!(r.limits.unwrap()["memory"], Quantity("128Mi".into()));
        assert_eq!(
            c.env.as_ref().unwrap()[2].name,
            "MODE",
            "after the two limits"
        );
        assert_eq!(c.ports.as_ref().unwrap()[0].container_port, 3000);
    }

    /// The `resourceFieldRef` of variable `name` in `env`: (container, resource, divisor).
    pub(crate) fn resource_field(env: &[EnvVar], name: &str) -> (String, String, String) {
        let var = env
            .iter()
            .find(|v| v.name == name)
            .expect("the variable is set");
        assert_eq!(
            var.value, None,
            "{name} comes from the Downward API, not a value"
        );
        let field = var
            .value_from
            .as_ref()
            .and_then(|f| f.resource_field_ref.clone())
            .expect("a resourceFieldRef");
        (
            field.container_name.unwrap_or_default(),
            field.resource,
            field.divisor.map(|q| q.0).unwrap_or_default(),
        )
    }

    #[test]
    fn the_target_container_gets_its_cpu_and_memory_limits_from_the_downward_api() {
        let run = validated(DEMO);
        let pod = deployment(&run, &run.cells[0], "Never")
            .spec
            .unwrap()
            .template
            .spec
            .unwrap();
        let c = &pod.containers[0];
        let env = c.env.clone().unwrap();
        assert_eq!(env[0].name, CPU_LIMIT_ENV);
        assert_eq!(env[1].name, MEMORY_LIMIT_ENV);
        assert_eq!(
            resource_field(&env, CPU_LIMIT_ENV),
            (c.name.clone(), "limits.cpu".into(), "1m".into())
        );
        assert_eq!(
            resource_field(&env, MEMORY_LIMIT_ENV),
            (c.name.clone(), "limits.memory".into(), "1".into())
        );
        assert_eq!(CPU_LIMIT_ENV, "BENCHRUN_CPU_LIMIT_MILLICORES");
        assert_eq!(MEMORY_LIMIT_ENV, "BENCHRUN_MEMORY_LIMIT_BYTES");
    }

    fn pod_of(spec: &str) -> PodSpec {
        let run = validated(spec);
        let d = deployment(&run, &run.cells[0], "IfNotPresent");
        d.spec.unwrap().template.spec.unwrap()
    }

    #[test]
    fn target_pods_meet_the_restricted_standard_by_default() {
        let pod = pod_of(DEMO);
        assert_eq!(pod.automount_service_account_token, Some(false));
        let sc = pod.security_context.unwrap();
        assert_eq!(sc.run_as_non_root, Some(true));
        assert_eq!(
            sc.run_as_user, None,
            "the image's own non-root user is kept"
        );
        assert_eq!(sc.seccomp_profile.unwrap().type_, "RuntimeDefault");
        let c = pod.containers[0].security_context.clone().unwrap();
        assert_eq!(c.allow_privilege_escalation, Some(false));
        assert_eq!(c.capabilities.unwrap().drop, Some(vec!["ALL".to_string()]));
    }

    #[test]
    fn baseline_targets_may_run_as_root_and_a_named_account_gets_its_token() {
        let spec = DEMO.replace(
            "    readinessPath: /healthz\n",
            "    readinessPath: /healthz\n    podSecurity: Baseline\n    serviceAccountName: bench\n",
        );
        let pod = pod_of(&spec);
        assert_eq!(pod.automount_service_account_token, None);
        assert_eq!(pod.service_account_name.as_deref(), Some("bench"));
        let sc = pod.security_context.unwrap();
        assert_eq!(sc.run_as_non_root, None);
        assert_eq!(sc.seccomp_profile.unwrap().type_, "RuntimeDefault");
        assert_eq!(pod.containers[0].security_context, None);
    }

    #[test]
    fn run_as_user_overrides_the_images_user() {
        let spec = DEMO.replace(
            "    readinessPath: /healthz\n",
            "    readinessPath: /healthz\n    runAsUser: 1000\n",
        );
        let sc = pod_of(&spec).security_context.unwrap();
        assert_eq!(sc.run_as_user, Some(1000));
        assert_eq!(sc.run_as_non_root, Some(true));
    }

    #[test]
    fn readiness_uses_http_with_a_path_and_tcp_without() {
        let run1 = validated(DEMO);
        let d = deployment(&run1, &run1.cells[0], "IfNotPresent");
        let probe = d.spec.unwrap().template.spec.unwrap().containers[0]
            .readiness_probe
            .clone()
            .unwrap();
        assert_eq!(probe.http_get.unwrap().path.as_deref(), Some("/healthz"));
        assert!(probe.tcp_socket.is_none());
        assert_eq!(probe.period_seconds, Some(2));

        let run2 = validated(&DEMO.replace("    readinessPath: /healthz\n", ""));
        let d = deployment(&run2, &run2.cells[0], "IfNotPresent");
        let probe = d.spec.unwrap().template.spec.unwrap().containers[0]
            .readiness_probe
            .clone()
            .unwrap();
        assert!(probe.http_get.is_none());
        assert_eq!(probe.tcp_socket.unwrap().port, IntOrString::Int(3000));
    }

    #[test]
    fn selector_and_pod_labels_name_the_configuration() {
        let run = validated(DEMO);
        let d = deployment(&run, &run.cells[0], "Never");
        let spec = d.spec.unwrap();
        let sel = spec.selector.match_labels.unwrap();
        assert_eq!(sel[names::label::ROLE], "target");
        assert_eq!(sel[names::label::RUN], "demo");
        assert_eq!(Some(sel), spec.template.metadata.unwrap().labels);
    }

    #[test]
    fn cells_differing_only_in_load_share_one_deployment_name() {
        let run = validated(DEMO);
        let a = deployment(&run, &run.cells[0], "Never");
        let b = deployment(&run, &run.cells[1], "Never");
        let c = deployment(&run, &run.cells[2], "Never");
        assert_eq!(a.metadata.name, b.metadata.name);
        assert_ne!(a.metadata.name, c.metadata.name);
    }

    #[test]
    fn service_selects_the_deployments_pods_on_the_target_port() {
        let run = validated(DEMO);
        let d = deployment(&run, &run.cells[0], "Never");
        let s = build_target_service(&owner(), &run, &run.cells[0], None);
        assert_eq!(s.metadata.name, d.metadata.name);
        let spec = s.spec.unwrap();
        assert_eq!(spec.type_.as_deref(), Some("ClusterIP"));
        assert_eq!(spec.selector, d.spec.unwrap().selector.match_labels);
        let port = &spec.ports.unwrap()[0];
        assert_eq!(port.port, 3000);
        assert_eq!(port.target_port, Some(IntOrString::Int(3000)));
    }
}
