//! Deterministic names and labels of a run's children. Pure.
//!
//! A name is a function of the run and the measurement only, so that a restarted operator finds
//! the children it created before and a re-applied child lands on the same object.
//!
//! A run name of up to 30 characters is used whole in child names. A longer one becomes its
//! first 25 characters and 4 hex digits of a hash of the whole name (e.g.
//! `nightly-regression-spring-3f2a`), so two runs that share a long prefix still get distinct
//! Deployments, Services, Jobs and detail ConfigMaps; every generated name stays within 63
//! characters. The `benchrun.dev/run` label holds the run name when it fits a label value (63
//! characters), else the same short form ([`run_label`]).

use std::collections::BTreeMap;

use benchrun_api::Cell;

/// Field manager of every server-side apply.
pub const MANAGER: &str = "benchrun-operator";

/// Label keys.
pub mod label {
    /// `benchrun`, on every child.
    pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
    /// `benchrun`, on every child.
    pub const PART_OF: &str = "app.kubernetes.io/part-of";
    /// Name of the owning run, as [`super::run_label`] writes it.
    pub const RUN: &str = "benchrun.dev/run";
    /// `target`, `load` or `detail`.
    pub const ROLE: &str = "benchrun.dev/role";
    /// Target name.
    pub const TARGET: &str = "benchrun.dev/target";
    /// Hash of the target configuration (target, cpu, memory, replicas).
    pub const CONFIG: &str = "benchrun.dev/config";
    /// Cell index.
    pub const CELL: &str = "benchrun.dev/cell";
    /// Repeat index.
    pub const REPEAT: &str = "benchrun.dev/repeat";
}

/// Values of the `benchrun.dev/role` label.
pub mod role {
    /// The system under test.
    pub const TARGET: &str = "target";
    /// The load generator pods.
    pub const LOAD: &str = "load";
    /// A detail ConfigMap.
    pub const DETAIL: &str = "detail";
}

/// Annotation on a load Job: the target pods' container restarts when the Job was created.
pub const RESTARTS_BASELINE: &str = "benchrun.dev/restarts-baseline";

/// Annotation on a load Job: each target pod's container restarts when the Job was created,
/// as `pod=count` pairs joined by `,` (see [`crate::kills`]).
pub const RESTARTS_BASELINE_PODS: &str = "benchrun.dev/restarts-baseline-pods";

/// Label selector matching every child of every run (used to scope the watches).
pub const MANAGED_SELECTOR: &str = "app.kubernetes.io/managed-by=benchrun";

/// 32-bit FNV-1a: small, stable across releases and platforms (unlike `DefaultHasher`).
fn fnv1a(parts: &[&str]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0)) {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// Longest run name used whole in child names.
const RUN_WHOLE_MAX: usize = 30;
/// Characters kept of a longer run name, before its hash.
const RUN_PREFIX: usize = 25;
/// Longest label value.
const LABEL_VALUE_MAX: usize = 63;

/// The first `n` bytes of `s`, or fewer to end on a character boundary.
fn prefix(s: &str, n: usize) -> &str {
    let end = (0..=n.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    &s[..end]
}

/// The run as child names write it: whole up to 30 characters, else its first 25 characters
/// and 4 hex digits of a hash of the whole name (at most 30 characters either way). Never
/// ends with `-` or `.`.
fn short_run(run: &str) -> String {
    let trim = |s: &str| s.trim_end_matches(['-', '.']).to_string();
    if run.len() <= RUN_WHOLE_MAX {
        return trim(run);
    }
    format!(
        "{}-{:04x}",
        trim(prefix(run, RUN_PREFIX)),
        fnv1a(&[run]) & 0xffff
    )
}

/// Value of the `benchrun.dev/run` label: the run name when it fits a label value (63
/// characters), else its short form (see the module doc).
pub fn run_label(run: &str) -> String {
    if run.len() <= LABEL_VALUE_MAX {
        run.to_string()
    } else {
        short_run(run)
    }
}

/// Hash of a cell's target configuration, 8 hex digits. Cells with the same hash share a
/// Deployment.
pub fn config_hash(target: &str, cell: &Cell) -> String {
    let replicas = cell.replicas.to_string();
    format!(
        "{:08x}",
        fnv1a(&[target, &cell.cpu, &cell.memory, &replicas])
    )
}

/// Name of the target Deployment and Service of a configuration.
pub fn target_name(run: &str, target: &str, config: &str) -> String {
    format!("{}-{target}-{config}", short_run(run))
}

/// Name of the load Job of one measurement.
pub fn job_name(run: &str, cell: usize, repeat: usize) -> String {
    let hash = fnv1a(&[run, &cell.to_string(), &repeat.to_string()]) & 0xffff;
    format!("{}-c{cell}-r{repeat}-{hash:04x}", short_run(run))
}

/// Name of the detail ConfigMap of one measurement.
pub fn detail_name(run: &str, cell: usize, repeat: usize) -> String {
    format!("{}-detail-c{cell}-r{repeat}", short_run(run))
}

/// Labels every child of a run carries.
pub fn common_labels(run: &str, role: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (label::MANAGED_BY.into(), "benchrun".into()),
        (label::PART_OF.into(), "benchrun".into()),
        (label::RUN.into(), run_label(run)),
        (label::ROLE.into(), role.into()),
    ])
}

/// Labels of a target configuration's Deployment, Service and pods.
pub fn target_labels(run: &str, target: &str, config: &str) -> BTreeMap<String, String> {
    let mut l = common_labels(run, role::TARGET);
    l.insert(label::TARGET.into(), target.into());
    l.insert(label::CONFIG.into(), config.into());
    l
}

/// Labels of a measurement's Job, load pods or detail ConfigMap.
pub fn measurement_labels(
    run: &str,
    role: &str,
    cell: usize,
    repeat: usize,
) -> BTreeMap<String, String> {
    let mut l = common_labels(run, role);
    l.insert(label::CELL.into(), cell.to_string());
    l.insert(label::REPEAT.into(), repeat.to_string());
    l
}

/// Renders labels as a selector string (`k=v,k=v`).
pub fn selector(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(cpu: &str, replicas: i32, connections: i32) -> Cell {
        Cell {
            index: 0,
            target: 0,
            cpu: cpu.into(),
            memory: "1Gi".into(),
            replicas,
            scenario: 0,
            connections,
            rate: None,
        }
    }

    #[test]
    fn config_hash_ignores_load_settings() {
        assert_eq!(
            config_hash("web", &cell("1", 1, 10)),
            config_hash("web", &cell("1", 1, 1000))
        );
    }

    #[test]
    fn config_hash_differs_by_cpu_replicas_and_target() {
        let base = config_hash("web", &cell("1", 1, 10));
        assert_ne!(base, config_hash("web", &cell("2", 1, 10)));
        assert_ne!(base, config_hash("web", &cell("1", 2, 10)));
        assert_ne!(base, config_hash("api", &cell("1", 1, 10)));
        assert_eq!(base.len(), 8);
        // A literal: a change of the hash across releases would orphan existing Deployments.
        assert_eq!(base, "92b5937a");
    }

    #[test]
    fn names_fit_in_a_dns_label_for_the_longest_inputs() {
        let run = "a".repeat(253);
        let target = "t".repeat(20);
        let n = target_name(&run, &target, "0123abcd");
        assert!(n.len() <= 63, "{n}");
        assert!(job_name(&run, 199, 9).len() <= 63);
        assert!(detail_name(&run, 199, 9).len() <= 63);
    }

    #[test]
    fn labels_of_the_longest_run_fit_in_a_label_value() {
        let run = "a".repeat(253);
        let target = "t".repeat(20);
        for labels in [
            common_labels(&run, role::TARGET),
            target_labels(&run, &target, "0123abcd"),
            measurement_labels(&run, role::LOAD, 199, 9),
        ] {
            for (k, v) in &labels {
                assert!(v.len() <= 63, "{k}={v}");
            }
            assert_eq!(labels[label::RUN], short_run(&run));
        }
        let run63 = "b".repeat(63);
        assert_eq!(run_label(&run63), run63);
    }

    #[test]
    fn cut_run_names_do_not_end_with_a_dash() {
        let run = format!("{}-{}", "a".repeat(24), "b".repeat(15));
        let short = short_run(&run);
        assert!(
            short.starts_with(&format!("{}-", "a".repeat(24))),
            "{short}"
        );
        assert!(!short.contains("--"), "{short}");
        assert_eq!(short.len(), 24 + 1 + 4);
    }

    #[test]
    fn long_runs_sharing_a_prefix_get_distinct_children() {
        let a = format!("{}{}", "x".repeat(30), "a".repeat(10));
        let b = format!("{}{}", "x".repeat(30), "b".repeat(10));
        assert_eq!((a.len(), b.len()), (40, 40));
        let config = "0123abcd";
        assert_ne!(
            target_name(&a, "web", config),
            target_name(&b, "web", config)
        );
        assert_ne!(detail_name(&a, 0, 0), detail_name(&b, 0, 0));
        assert_ne!(job_name(&a, 0, 0), job_name(&b, 0, 0));
        assert_ne!(run_label(&a), run_label(&b));
        assert_eq!(
            target_name(&a, "web", config),
            format!("{}-bf55-web-0123abcd", "x".repeat(25))
        );
        assert_eq!(
            detail_name(&b, 0, 0),
            format!("{}-20e7-detail-c0-r0", "x".repeat(25))
        );
    }

    #[test]
    fn names_and_labels_of_short_runs_are_the_run_name_itself() {
        assert_eq!(target_name("demo", "web", "0123abcd"), "demo-web-0123abcd");
        assert_eq!(detail_name("demo", 1, 0), "demo-detail-c1-r0");
        assert_eq!(run_label("demo"), "demo");
        assert_eq!(common_labels("demo", role::LOAD)[label::RUN], "demo");
        let run30 = "r".repeat(30);
        assert_eq!(
            target_name(&run30, "web", "0123abcd"),
            format!("{run30}-web-0123abcd")
        );
        assert_eq!(detail_name(&run30, 2, 1), format!("{run30}-detail-c2-r1"));
    }

    #[test]
    fn job_names_are_stable_and_distinct_per_measurement() {
        assert_eq!(job_name("demo", 1, 0), job_name("demo", 1, 0));
        assert_ne!(job_name("demo", 1, 0), job_name("demo", 0, 1));
        assert!(job_name("demo", 3, 1).starts_with("demo-c3-r1-"));
        // Literals: a change of the hash across releases would orphan running Jobs.
        assert_eq!(job_name("demo", 1, 0), "demo-c1-r0-edd3");
        assert_eq!(job_name("demo", 3, 1), "demo-c3-r1-4268");
    }

    #[test]
    fn selector_joins_labels_in_key_order() {
        let l = BTreeMap::from([("b".to_string(), "2".to_string()), ("a".into(), "1".into())]);
        assert_eq!(selector(&l), "a=1,b=2");
    }
}
