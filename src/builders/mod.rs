//! Pure builders of a run's children: typed k8s-openapi objects from a validated run.
//!
//! Pure: no client, no clock. Each child carries a controller owner reference to the run (so
//! garbage collection removes it with the run), deterministic names and labels from
//! [`crate::names`]. Builders take [`benchrun_api::ValidatedRun`] only, never a raw spec.

mod detail;
mod load;
mod security;
mod target;

pub use detail::{build_detail_configmap, DETAIL_KEY};
pub use load::{build_load_job, LoadSettings, LOAD_CONTAINER};
pub use target::{build_target_deployment, build_target_service, TARGET_CONTAINER};

use benchrun_api::BenchmarkRun;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::{Resource, ResourceExt};
use std::collections::BTreeMap;

/// The run a child belongs to: where children go and how they point back to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Owner {
    /// Name of the run.
    pub name: String,
    /// Namespace of the run (and of all its children).
    pub namespace: String,
    /// Controller owner reference to the run.
    pub reference: OwnerReference,
}

impl Owner {
    /// The owner of a stored run; `None` for an object without namespace or uid.
    pub fn of(run: &BenchmarkRun) -> Option<Self> {
        Some(Self {
            name: run.name_any(),
            namespace: run.namespace()?,
            reference: run.controller_owner_ref(&())?,
        })
    }

    /// Object metadata of a child with this owner.
    pub(crate) fn meta(&self, name: String, labels: BTreeMap<String, String>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name),
            namespace: Some(self.namespace.clone()),
            labels: Some(labels),
            owner_references: Some(vec![self.reference.clone()]),
            ..ObjectMeta::default()
        }
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::Owner;
    use benchrun_api::{validate, BenchmarkRunSpec, ValidatedRun};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    /// The owner used in builder and planner tests.
    pub fn owner() -> Owner {
        Owner {
            name: "demo".into(),
            namespace: "bench".into(),
            reference: OwnerReference {
                api_version: "benchrun.dev/v1alpha1".into(),
                kind: "BenchmarkRun".into(),
                name: "demo".into(),
                uid: "uid-1".into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            },
        }
    }

    /// A validated run from YAML spec text.
    pub fn run(spec_yaml: &str) -> ValidatedRun {
        let spec: BenchmarkRunSpec = serde_yaml::from_str(spec_yaml).expect("spec parses");
        validate(&spec).expect("spec is valid")
    }

    /// Two CPU limits × two connection counts, two repeats, with a readiness path.
    pub const DEMO: &str = r#"
targets:
  - name: web
    image: example/web:1
    port: 3000
    readinessPath: /healthz
    env: [{name: MODE, value: fast}]
scenarios:
  - {name: hello, path: /hello, headers: {Accept: application/json}}
resources: {cpu: "500m", memory: 128Mi}
load:
  connections: 10
  duration: 10s
  warmup: 3s
  pods: 2
  resources: {cpu: "1500m", memory: 64Mi}
matrix:
  cpu: ["250m", "500m"]
  connections: [4, 16]
repeats: 2
"#;
}
