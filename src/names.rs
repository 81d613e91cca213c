//! Deterministic names and labels of a run's children. Pure.
//!
//! A name is a function of the run and the measurement only, so that a restarted operator finds
//! the children it created before and a re-applied child lands on the same object. Run names
//! are cut to 30 characters; a short hash of the full input keeps cut names distinct.

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
    /// Name of the owning run.
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

fn short_run(run: &str) -> &str {
    let cut = &run[..run.len().min(30)];
    cut.trim_end_matches(['-', '.'])
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
        (label::RUN.into(), run.into()),
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
    fn cut_run_names_do_not_end_with_a_dash() {
        let run = format!("{}-{}", "a".repeat(29), "b".repeat(10));
        assert_eq!(short_run(&run), "a".repeat(29));
    }

    #[test]
    fn job_names_are_stable_and_distinct_per_measurement() {
        assert_eq!(job_name("demo", 1, 0), job_name("demo", 1, 0));
        assert_ne!(job_name("demo", 1, 0), job_name("demo", 0, 1));
        assert!(job_name("demo", 3, 1).starts_with("demo-c3-r1-"));
    }

    #[test]
    fn selector_joins_labels_in_key_order() {
        let l = BTreeMap::from([("b".to_string(), "2".to_string()), ("a".into(), "1".into())]);
        assert_eq!(selector(&l), "a=1,b=2");
    }
}
