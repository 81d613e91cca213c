//! A backing service's Deployment and Service, and its seeding Job.

use std::collections::BTreeMap;

use benchrun_api::validate::SeedPlan;
use benchrun_api::{ServiceAddress, ValidatedRun};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{Container, ContainerPort, PodSpec, PodTemplateSpec, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::target::{
    cluster_ip_service, env_with_addresses, readiness_probe, recreate_deployment, requirements,
    workload_env,
};
use super::{security, Owner};
use crate::names::{self, role};

/// Name of the container in a backing service's pod.
pub const SERVICE_CONTAINER: &str = "service";
/// Name of the container in a seeding Job's pod.
pub const SEED_CONTAINER: &str = "seed";
/// Retries of a failed seeding pod before the Job fails.
const SEED_RETRIES: i32 = 2;

/// The one-replica Deployment of backing service `index` of `spec.services`, with its
/// resources, readiness probe and Pod Security Standard (as targets get them); its pods run
/// on nodes matching `node_selector` (none when empty).
pub fn build_service_deployment(
    owner: &Owner,
    run: &ValidatedRun,
    index: usize,
    node_selector: &BTreeMap<String, String>,
    default_pull_policy: &str,
) -> Deployment {
    let svc = &run.services[index];
    let labels = names::service_labels(&owner.name, role::SERVICE, &svc.name);
    let res = &svc.resources;
    let container = Container {
        name: SERVICE_CONTAINER.into(),
        image: Some(svc.image.clone()),
        image_pull_policy: Some(
            svc.image_pull_policy
                .clone()
                .unwrap_or_else(|| default_pull_policy.to_string()),
        ),
        command: (!svc.command.is_empty()).then(|| svc.command.clone()),
        args: (!svc.args.is_empty()).then(|| svc.args.clone()),
        env: Some(workload_env(SERVICE_CONTAINER, &[], &svc.env)),
        ports: Some(vec![ContainerPort {
            name: Some("service".into()),
            container_port: svc.port,
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]),
        resources: Some(requirements(
            &res.cpu,
            &res.memory,
            &res.cpu_request,
            &res.memory_request,
        )),
        readiness_probe: Some(readiness_probe(svc.readiness_path.as_deref(), svc.port)),
        security_context: security::container_security_context(svc.pod_security),
        ..Container::default()
    };
    let pod = PodSpec {
        containers: vec![container],
        automount_service_account_token: Some(false),
        security_context: Some(security::pod_security_context(
            svc.pod_security,
            svc.run_as_user,
        )),
        termination_grace_period_seconds: Some(5),
        node_selector: (!node_selector.is_empty()).then(|| node_selector.clone()),
        ..PodSpec::default()
    };
    let name = names::service_name(&owner.name, &svc.name);
    recreate_deployment(owner.meta(name, labels.clone()), labels, 1, pod)
}

/// The ClusterIP Service of backing service `index`, on its port.
pub fn build_service_service(owner: &Owner, run: &ValidatedRun, index: usize) -> Service {
    let svc = &run.services[index];
    let labels = names::service_labels(&owner.name, role::SERVICE, &svc.name);
    let name = names::service_name(&owner.name, &svc.name);
    cluster_ip_service(
        owner.meta(name, labels.clone()),
        labels,
        "service",
        svc.port,
    )
}

/// The seeding Job of backing service `index` (which must have a `seed`): one container of the
/// seed image (the service's image by default) with every service's address variables, run to
/// completion within the seed timeout, retried [`SEED_RETRIES`] times.
pub fn build_seed_job(
    owner: &Owner,
    run: &ValidatedRun,
    index: usize,
    addresses: &[ServiceAddress],
    default_pull_policy: &str,
) -> Job {
    let svc = &run.services[index];
    let seed = svc.seed.clone().unwrap_or_else(|| SeedPlan {
        image: svc.image.clone(),
        command: Vec::new(),
        args: Vec::new(),
        env: Vec::new(),
    });
    let labels = names::service_labels(&owner.name, role::SEED, &svc.name);
    let container = Container {
        name: SEED_CONTAINER.into(),
        image: Some(seed.image.clone()),
        image_pull_policy: Some(
            svc.image_pull_policy
                .clone()
                .unwrap_or_else(|| default_pull_policy.to_string()),
        ),
        command: (!seed.command.is_empty()).then(|| seed.command.clone()),
        args: (!seed.args.is_empty()).then(|| seed.args.clone()),
        env: env_with_addresses(addresses, &seed.env),
        resources: Some(requirements("500m", "256Mi", "500m", "256Mi")),
        security_context: security::container_security_context(svc.pod_security),
        ..Container::default()
    };
    Job {
        metadata: owner.meta(names::seed_job_name(&owner.name, &svc.name), labels.clone()),
        spec: Some(JobSpec {
            backoff_limit: Some(SEED_RETRIES),
            active_deadline_seconds: Some(svc.seed_timeout.as_secs().max(1) as i64),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    restart_policy: Some("Never".into()),
                    automount_service_account_token: Some(false),
                    security_context: Some(security::pod_security_context(
                        svc.pod_security,
                        svc.run_as_user,
                    )),
                    termination_grace_period_seconds: Some(5),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builders::fixtures::{owner, run as validated, DEMO};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    fn with_services() -> ValidatedRun {
        validated(&format!(
            "{DEMO}services:\n  - name: store\n    image: example/store:2\n    port: 9000\n    readinessPath: /ready\n    env: [{{name: MODE, value: db}}]\n    seed:\n      image: example/loader:1\n      args: [\"--url\", \"http://$(BENCHRUN_SERVICE_STORE_ADDR)/docs\"]\n      timeout: 90s\n  - name: cache-2\n    image: example/cache:1\n    resources: {{cpu: 250m, memory: 64Mi}}\n"
        ))
    }

    fn addresses() -> Vec<ServiceAddress> {
        vec![
            ServiceAddress {
                name: "store".into(),
                host: "10.96.0.10".into(),
                port: 9000,
            },
            ServiceAddress {
                name: "cache-2".into(),
                host: "10.96.0.11".into(),
                port: 8080,
            },
        ]
    }

    #[test]
    fn a_service_is_one_replica_with_its_resources_probe_and_labels() {
        let run = with_services();
        let d = build_service_deployment(&owner(), &run, 0, &BTreeMap::new(), "IfNotPresent");
        assert_eq!(d.metadata.name.as_deref(), Some("demo-svc-store"));
        let labels = d.metadata.labels.clone().unwrap();
        assert_eq!(labels[names::label::ROLE], "service");
        assert_eq!(labels[names::label::SERVICE], "store");
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(1));
        let pod = spec.template.spec.unwrap();
        let c = &pod.containers[0];
        assert_eq!(c.image.as_deref(), Some("example/store:2"));
        let limits = c.resources.clone().unwrap().limits.unwrap();
        assert_eq!(limits["cpu"].0, "250m", "the default CPU");
        assert_eq!(limits["memory"].0, "256Mi", "the default memory");
        let probe = c.readiness_probe.clone().unwrap();
        assert_eq!(probe.http_get.unwrap().port, IntOrString::Int(9000));
        assert_eq!(
            c.env.as_ref().unwrap()[2].name,
            "MODE",
            "after the two limits"
        );
        assert_eq!(pod.automount_service_account_token, Some(false));
        assert_eq!(
            pod.security_context.unwrap().run_as_non_root,
            Some(true),
            "Restricted by default"
        );
        let d2 = build_service_deployment(&owner(), &run, 1, &BTreeMap::new(), "Never");
        let limits = d2.spec.unwrap().template.spec.unwrap().containers[0]
            .resources
            .clone()
            .unwrap()
            .limits
            .unwrap();
        assert_eq!(limits["cpu"].0, "250m");
    }

    #[test]
    fn a_service_container_gets_its_cpu_and_memory_limits_from_the_downward_api() {
        use crate::builders::target::{tests::resource_field, CPU_LIMIT_ENV, MEMORY_LIMIT_ENV};
        let run = with_services();
        for index in [0, 1] {
            let d = build_service_deployment(&owner(), &run, index, &BTreeMap::new(), "Never");
            let c = d.spec.unwrap().template.spec.unwrap().containers[0].clone();
            let env = c.env.clone().unwrap();
            assert_eq!(
                resource_field(&env, CPU_LIMIT_ENV),
                (SERVICE_CONTAINER.into(), "limits.cpu".into(), "1m".into())
            );
            assert_eq!(
                resource_field(&env, MEMORY_LIMIT_ENV),
                (SERVICE_CONTAINER.into(), "limits.memory".into(), "1".into())
            );
        }
    }

    #[test]
    fn the_service_selects_its_pod_on_its_port() {
        let run = with_services();
        let d = build_service_deployment(&owner(), &run, 0, &BTreeMap::new(), "Never");
        let s = build_service_service(&owner(), &run, 0);
        assert_eq!(s.metadata.name, d.metadata.name);
        let spec = s.spec.unwrap();
        assert_eq!(spec.selector, d.spec.unwrap().selector.match_labels);
        assert_eq!(spec.ports.unwrap()[0].port, 9000);
    }

    #[test]
    fn the_seed_job_runs_its_image_with_every_address_before_its_own_env() {
        let run = with_services();
        let j = build_seed_job(&owner(), &run, 0, &addresses(), "Never");
        assert_eq!(j.metadata.name.as_deref(), Some("demo-seed-store"));
        let spec = j.spec.unwrap();
        assert_eq!(spec.active_deadline_seconds, Some(90));
        assert_eq!(spec.backoff_limit, Some(SEED_RETRIES));
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
        let c = &pod.containers[0];
        assert_eq!(c.image.as_deref(), Some("example/loader:1"));
        let env: Vec<&str> = c
            .env
            .as_ref()
            .unwrap()
            .iter()
            .map(|v| v.name.as_str())
            .collect();
        assert_eq!(env[2], "BENCHRUN_SERVICE_STORE_ADDR");
        assert_eq!(env[5], "BENCHRUN_SERVICE_CACHE_2_ADDR");
        assert_eq!(
            c.args.as_ref().unwrap()[1],
            "http://$(BENCHRUN_SERVICE_STORE_ADDR)/docs"
        );
    }

    #[test]
    fn targets_get_the_addresses_before_their_own_variables() {
        let run = with_services();
        let d = super::super::build_target_deployment(
            &owner(),
            &run,
            &run.cells[0],
            None,
            &addresses(),
            &Default::default(),
            "Never",
        );
        let c = &d.spec.unwrap().template.spec.unwrap().containers[0];
        let env = c.env.clone().unwrap();
        assert_eq!(
            env[0].name, "BENCHRUN_CPU_LIMIT_MILLICORES",
            "the limits first"
        );
        assert_eq!(env[2].name, "BENCHRUN_SERVICE_STORE_HOST");
        assert_eq!(env[2].value.as_deref(), Some("10.96.0.10"));
        assert_eq!(env[4].value.as_deref(), Some("10.96.0.10:9000"));
        assert_eq!(env[8].name, "MODE", "the target's own variable comes last");
    }

    #[test]
    fn service_pods_are_matched_by_deployment_replicaset_and_pod_suffix_only() {
        // Prometheus anchors the regex: `<run>-svc-store-<rs>-<pod>` matches, a target named
        // `svc-store` (`<run>-svc-store-<config>-<rs>-<pod>`) has one part too many.
        assert_eq!(
            names::service_pods_regex("demo", "store"),
            "demo-svc-store-[a-z0-9]+-[a-z0-9]+"
        );
    }
}
