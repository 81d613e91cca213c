//! Pure builders of a run's children: typed k8s-openapi objects from a validated run.
//!
//! Pure: no client, no clock. Each child carries a controller owner reference to the run (so
//! garbage collection removes it with the run), deterministic names and labels from
//! [`crate::names`]. Builders take [`benchrun_api::ValidatedRun`] only, never a raw spec.

mod detail;
mod load;
mod security;
mod service;
mod target;

pub use detail::{build_detail_configmap, DETAIL_KEY};
pub use load::{build_load_job, LoadSettings, LOAD_CONTAINER};
pub use service::{
    build_seed_job, build_service_deployment, build_service_service, SEED_CONTAINER,
    SERVICE_CONTAINER,
};
pub use target::{
    build_target_deployment, build_target_service, CPU_LIMIT_ENV, MEMORY_LIMIT_ENV,
    TARGET_CONTAINER,
};

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

#[cfg(test)]
mod name_tests {
    use super::fixtures::{owner, run as validated, DEMO};
    use super::*;
    use crate::names::checks::{
        is_dns1035_label, is_dns1123_subdomain, is_label_key, is_label_value,
    };
    use crate::names::tests::NASTY_RUNS;
    use k8s_openapi::api::core::v1::PodTemplateSpec;

    fn labels_valid(what: &str, labels: Option<&BTreeMap<String, String>>) {
        for (k, v) in labels.expect("labelled") {
            assert!(is_label_key(k), "{what}: label key {k:?}");
            assert!(is_label_value(v), "{what}: {k}={v:?}");
        }
    }

    fn template_valid(what: &str, t: &PodTemplateSpec) {
        labels_valid(what, t.metadata.as_ref().and_then(|m| m.labels.as_ref()));
    }

    /// Every child of a run with a legal but awkward name (leading digit, dots, 253
    /// characters) carries names the apiserver accepts for its kind, and valid labels.
    #[test]
    fn every_child_is_named_validly_for_nasty_run_and_target_names() {
        let mut runs: Vec<String> = NASTY_RUNS.iter().map(|s| s.to_string()).collect();
        runs.extend(["a".repeat(253), format!("7{}", ".a".repeat(126))]);
        let settings = LoadSettings {
            image: "img:1".into(),
            pull_policy: "Never".into(),
        };
        let with_services = validated(&format!(
            "{DEMO}services: [{{name: s2345678901234567890, image: x, seed: {{args: [a]}}}}]\n"
        ));
        for run_name in &runs {
            let mut owner = owner();
            owner.name = run_name.clone();
            let what = format!("run {run_name:?} service");
            let d =
                build_service_deployment(&owner, &with_services, 0, &Default::default(), "Never");
            let name = d.metadata.name.clone().unwrap();
            assert!(is_dns1035_label(&name), "{what}: {name}");
            assert!(
                is_dns1123_subdomain(&format!("{name}-5d9f8c7b6c")),
                "{what}: {name}"
            );
            template_valid(&what, &d.spec.unwrap().template);
            let s = build_service_service(&owner, &with_services, 0);
            labels_valid(&what, s.metadata.labels.as_ref());
            let j = build_seed_job(&owner, &with_services, 0, &[], "Never");
            let name = j.metadata.name.clone().unwrap();
            assert!(
                is_dns1035_label(&name) && is_label_value(&name),
                "{what}: Job {name}"
            );
            template_valid(&what, &j.spec.unwrap().template);
        }
        for run_name in &runs {
            for target in ["web", "t2345678901234567890", "9.bad_Target"] {
                let mut owner = owner();
                owner.name = run_name.clone();
                let mut run = validated(DEMO);
                run.targets[0].name = target.into();
                let what = format!("run {run_name:?} target {target:?}");
                for cell in &run.cells {
                    let d = build_target_deployment(
                        &owner,
                        &run,
                        cell,
                        Some(999),
                        &[],
                        &Default::default(),
                        "Never",
                    );
                    let name = d.metadata.name.clone().unwrap();
                    // The ReplicaSet is named `<deployment>-<hash>` and must be a subdomain.
                    assert!(
                        is_dns1123_subdomain(&format!("{name}-5d9f8c7b6c")),
                        "{what}: {name}"
                    );
                    labels_valid(&what, d.metadata.labels.as_ref());
                    let spec = d.spec.unwrap();
                    labels_valid(&what, spec.selector.match_labels.as_ref());
                    template_valid(&what, &spec.template);

                    let s = build_target_service(&owner, &run, cell, Some(999));
                    let name = s.metadata.name.clone().unwrap();
                    assert!(is_dns1035_label(&name), "{what}: Service {name}");
                    labels_valid(&what, s.metadata.labels.as_ref());
                    labels_valid(&what, s.spec.unwrap().selector.as_ref());

                    for repeat in 0..run.repeats {
                        let j = build_load_job(
                            &owner,
                            &run,
                            cell,
                            repeat,
                            "10.0.0.1",
                            &crate::kills::RestartBaseline::default(),
                            Some(1_700_000_000_000),
                            1_700_000_000_000,
                            &Default::default(),
                            &settings,
                        );
                        let name = j.metadata.name.clone().unwrap();
                        assert!(is_dns1123_subdomain(&name), "{what}: Job {name}");
                        // The Job name is also the pods' `job-name` label value.
                        assert!(is_label_value(&name), "{what}: Job {name}");
                        labels_valid(&what, j.metadata.labels.as_ref());
                        template_valid(&what, &j.spec.unwrap().template);

                        let cm = build_detail_configmap(&owner, cell.index, repeat, "{}".into());
                        let name = cm.metadata.name.clone().unwrap();
                        assert!(is_dns1123_subdomain(&name), "{what}: ConfigMap {name}");
                        labels_valid(&what, cm.metadata.labels.as_ref());
                    }
                }
            }
        }
    }
}
