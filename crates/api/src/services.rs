//! Backing services (`spec.services[]`): the databases and other dependencies a target calls,
//! deployed once per run before the first measurement and made known to the targets through
//! environment variables (see [`env_prefix`]).
//!
//! Pure: the spec types and the names of the variables; [`crate::validate`] parses them into a
//! [`crate::validate::ServicePlan`] each.

use std::time::Duration;

use k8s_openapi::api::core::v1::EnvVar;
use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::resources::Resources;

/// Most backing services one run may declare.
pub const MAX_SERVICES: usize = 4;

/// How long a seeding Job may run when `seed.timeout` is not set.
pub const DEFAULT_SEED_TIMEOUT: Duration = Duration::from_secs(600);

/// A backing service: one container image the targets call (a database, a cache, another HTTP
/// service). It is deployed once per run, before the first measurement, as a one-replica
/// Deployment and a ClusterIP Service, kept across all cells and deleted with the targets by
/// the cleanup policy. Its pod runs with the targets: on nodes labelled
/// `benchrun.dev/role=target` where there are such, else where the first target is pinned
/// (`targets[0].nodeSelector`). Every target and seeding container gets its address in
/// `BENCHRUN_SERVICE_<NAME>_HOST`, `BENCHRUN_SERVICE_<NAME>_PORT` and
/// `BENCHRUN_SERVICE_<NAME>_ADDR` (`host:port`), where `<NAME>` is the service name in upper
/// case with `-` as `_`; the host is the Service's ClusterIP, so no cluster DNS is needed. A
/// target's own `env` can build on them with `$(...)`, e.g.
/// `MONGO_URL: mongodb://$(BENCHRUN_SERVICE_MONGO_ADDR)/bench`. Its CPU and memory over every
/// measured window are reported in `status.results[].usage.services`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BackingService {
    /// Name of the service, unique in the run: a lowercase DNS label of at most 20
    /// characters. It names the environment variables (`mongo-db` → `BENCHRUN_SERVICE_MONGO_DB_ADDR`).
    #[x_kube(validation = Rule::new("self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')").message("services[].name must be a lowercase DNS label (a-z, 0-9, '-'), starting with a letter"))]
    #[schemars(length(min = 1, max = 20))]
    pub name: String,

    /// Container image, e.g. `ghcr.io/ferretdb/ferretdb:1.24.0`.
    #[schemars(length(min = 1))]
    pub image: String,

    /// TCP port the container serves on (default 8080).
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,

    /// Overrides the image's entrypoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,

    /// Arguments to the entrypoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,

    /// Environment variables of the container, at most 128, after the two the operator sets
    /// from the Downward API: `BENCHRUN_CPU_LIMIT_MILLICORES` and `BENCHRUN_MEMORY_LIMIT_BYTES`,
    /// the container's CPU limit in millicores and memory limit in bytes. Names starting with
    /// `BENCHRUN_` are reserved for the variables the operator injects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Item bound: keeps the apiserver's CEL cost estimate of the rule below within its budget.
    #[schemars(length(max = 128))]
    #[x_kube(validation = Rule::new("self.all(v, !v.name.startsWith('BENCHRUN_'))").message("services[].env: names starting with BENCHRUN_ are reserved for the variables the operator injects (service addresses, the container's limits): rename the variable; its value may still refer to them, e.g. $(BENCHRUN_SERVICE_DB_ADDR)"))]
    pub env: Vec<EnvVar>,

    /// CPU and memory of the service's pod (default 250m and 256Mi, requests equal to the
    /// limits, sized to fit a node of 1 CPU beside a target of the default size). Give it enough: its usage is reported per cell, and a cell whose service
    /// reached its CPU limit gets the `ServiceBound` warning.
    #[serde(default = "default_service_resources")]
    pub resources: Resources,

    /// HTTP path of the readiness probe, e.g. `/healthz`. When absent, readiness is a TCP
    /// connect to `port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.startsWith('/')").message("services[].readinessPath must start with '/'"))]
    pub readiness_path: Option<String>,

    /// Image pull policy (`Always`, `IfNotPresent`, `Never`); defaults to the operator's setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self in ['Always', 'IfNotPresent', 'Never']").message("services[].imagePullPolicy must be Always, IfNotPresent or Never"))]
    pub image_pull_policy: Option<String>,

    /// Pod Security Standard of the service's pod and of its seeding Job, as
    /// `targets[].podSecurity` (default `Restricted`; `Baseline` for images that run as root,
    /// as many database images do).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self in ['Restricted', 'Baseline']").message("services[].podSecurity must be Restricted or Baseline"))]
    pub pod_security: Option<String>,

    /// User id the service container runs as, overriding the image's `USER`; not 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2147483647))]
    pub run_as_user: Option<i64>,

    /// A step that loads the service's data once it is ready, before any target is deployed:
    /// a Job running one container to completion. The run's measurements wait for it; if it
    /// fails or runs past its timeout, every measurement fails with its reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<SeedStep>,
}

/// The data-seeding step of a backing service.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.image) || has(self.command) || has(self.args)").message("services[].seed: set command or args (what to run), and image unless the service's own image has the tool"))]
pub struct SeedStep {
    /// Image of the seeding container; defaults to the service's image (e.g. its shell client).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub image: Option<String>,

    /// Overrides the image's entrypoint.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,

    /// Arguments to the entrypoint. `$(BENCHRUN_SERVICE_<NAME>_ADDR)` and the other address
    /// variables are expanded here, as in `command` and `env`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,

    /// Environment variables of the seeding container (after the address variables), at most
    /// 128. Names starting with `BENCHRUN_` are reserved for the variables the operator injects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    // Item bound: keeps the apiserver's CEL cost estimate of the rule below within its budget.
    #[schemars(length(max = 128))]
    #[x_kube(validation = Rule::new("self.all(v, !v.name.startsWith('BENCHRUN_'))").message("services[].seed.env: names starting with BENCHRUN_ are reserved for the variables the operator injects (service addresses, the container's limits): rename the variable; its value may still refer to them, e.g. $(BENCHRUN_SERVICE_DB_ADDR)"))]
    pub env: Vec<EnvVar>,

    /// Longest the Job may run, e.g. `"5m"` (default `10m`, at most `1h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

fn default_port() -> i32 {
    8080
}

/// Resources of a backing service when `services[].resources` is not set.
pub fn default_service_resources() -> Resources {
    Resources {
        cpu: "250m".into(),
        memory: "256Mi".into(),
        cpu_request: None,
        memory_request: None,
    }
}

/// Where a ready backing service answers: what the address variables hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceAddress {
    /// `services[].name`.
    pub name: String,
    /// The Service's ClusterIP.
    pub host: String,
    /// `services[].port`.
    pub port: i32,
}

/// `BENCHRUN_SERVICE_<NAME>`: the prefix of a service's address variables.
pub fn env_prefix(service: &str) -> String {
    format!(
        "BENCHRUN_SERVICE_{}",
        service.to_ascii_uppercase().replace('-', "_")
    )
}

/// The address variables of every service, in order: `_HOST`, `_PORT`, `_ADDR` per service.
/// They go before a container's own variables so that those can refer to them with `$(...)`.
pub fn address_env(addresses: &[ServiceAddress]) -> Vec<EnvVar> {
    let var = |name: String, value: String| EnvVar {
        name,
        value: Some(value),
        value_from: None,
    };
    addresses
        .iter()
        .flat_map(|a| {
            let p = env_prefix(&a.name);
            [
                var(format!("{p}_HOST"), a.host.clone()),
                var(format!("{p}_PORT"), a.port.to_string()),
                var(format!("{p}_ADDR"), format!("{}:{}", a.host, a.port)),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_variables_are_upper_case_with_underscores_in_order() {
        let env = address_env(&[ServiceAddress {
            name: "mongo-db".into(),
            host: "10.96.0.7".into(),
            port: 27017,
        }]);
        let pairs: Vec<(&str, &str)> = env
            .iter()
            .map(|v| (v.name.as_str(), v.value.as_deref().unwrap()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("BENCHRUN_SERVICE_MONGO_DB_HOST", "10.96.0.7"),
                ("BENCHRUN_SERVICE_MONGO_DB_PORT", "27017"),
                ("BENCHRUN_SERVICE_MONGO_DB_ADDR", "10.96.0.7:27017"),
            ]
        );
    }
}
