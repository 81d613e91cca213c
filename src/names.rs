//! Deterministic names and labels of a run's children. Pure.
//!
//! A name is a function of the run and the measurement only, so that a restarted operator finds
//! the children it created before and a re-applied child lands on the same object.
//!
//! Every child name is a DNS-1035 label (`[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters):
//! the strictest rule of the kinds it names (Service), so it is also a valid Deployment, Job
//! and ConfigMap name and a valid `job-name` label value. The run name is a DNS-1123 subdomain
//! (up to 253 characters, may start with a digit, may contain dots), so it is written in child
//! names by [`short_run`]:
//!
//! - a DNS-1035 label of up to 30 characters is used whole (`demo` → `demo-web-92b5937a`);
//! - a longer name whose first 25 characters form a DNS-1035 label keeps them and appends 4 hex
//!   digits of a hash of the whole name (`nightly-regression-spring-3f2a`), so two runs that
//!   share a long prefix still get distinct children;
//! - any other name (leading digit, dots) is rewritten: characters other than `a-z`, `0-9` and
//!   `-` become `-`, `r-` is put in front of a leading digit, the result is cut to 25
//!   characters and the hash appended (`1st-run` → `r-1st-run-xxxx`, `run.v2` →
//!   `run-v2-xxxx`). The hash keeps `run.v2` and a run named `run-v2` apart.
//!
//! Names that were valid before stay unchanged, so children of running runs are not orphaned.
//! Target names are DNS labels of at most 20 characters by validation; anything else is
//! rewritten the same way ([`short_target`]). The `benchrun.dev/run` label holds the run name
//! when it fits a label value (63 characters), else the short form ([`run_label`]).

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
    /// Hash of the target deployment: its configuration (target, cpu, memory, replicas) and,
    /// when every round deploys afresh, the round ([`super::deployment_hash`]).
    pub const CONFIG: &str = "benchrun.dev/config";
    /// Cell index.
    pub const CELL: &str = "benchrun.dev/cell";
    /// Repeat index.
    pub const REPEAT: &str = "benchrun.dev/repeat";
    /// Backing service name (`spec.services[].name`).
    pub const SERVICE: &str = "benchrun.dev/service";
}

/// Values of the `benchrun.dev/role` label.
pub mod role {
    /// The system under test.
    pub const TARGET: &str = "target";
    /// The load generator pods.
    pub const LOAD: &str = "load";
    /// A detail ConfigMap.
    pub const DETAIL: &str = "detail";
    /// A backing service's Deployment, Service and pod.
    pub const SERVICE: &str = "service";
    /// A backing service's seeding Job and its pod.
    pub const SEED: &str = "seed";
}

/// Annotation on a load Job: the target pods' container restarts when the Job was created.
pub const RESTARTS_BASELINE: &str = "benchrun.dev/restarts-baseline";

/// Annotation on a load Job: each target pod's container restarts when the Job was created,
/// as `pod=count` pairs joined by `,` (see [`crate::kills`]).
pub const RESTARTS_BASELINE_PODS: &str = "benchrun.dev/restarts-baseline-pods";
/// Annotation on a load pod: the name of its run (labels may hold only a shortened form), so
/// that a pod's change wakes its run's reconcile.
pub const RUN_NAME: &str = "benchrun.dev/run-name";

/// Annotation on a load Job: the agreed start of its pods (`--start-at`, Unix milliseconds),
/// from which the planner knows when its window ends and the next load may begin.
pub const START_AT: &str = "benchrun.dev/start-at";

/// Label selector matching every child of every run (used to scope the watches).
pub const MANAGED_SELECTOR: &str = "app.kubernetes.io/managed-by=benchrun";

/// 32-bit FNV-1a ([`crate::hash`]) of `parts`, each followed by a zero byte.
fn fnv1a(parts: &[&str]) -> u32 {
    crate::hash::fnv1a(
        parts
            .iter()
            .flat_map(|p| p.bytes().chain(std::iter::once(0))),
    )
}

/// Longest run name used whole in child names.
const RUN_WHOLE_MAX: usize = 30;
/// Longest target name used whole in child names (validation allows no longer one).
const TARGET_WHOLE_MAX: usize = 20;
/// Length of the hash suffix `-xxxx` of a shortened or rewritten name.
const HASH_SUFFIX: usize = 5;
/// Longest label value.
const LABEL_VALUE_MAX: usize = 63;
/// Longest DNS label.
const DNS_LABEL_MAX: usize = 63;

/// The first `n` bytes of `s`, or fewer to end on a character boundary.
fn prefix(s: &str, n: usize) -> &str {
    let end = (0..=n.min(s.len()))
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    &s[..end]
}

/// Whether `s` is a DNS-1035 label (`[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters): the
/// rule of Service names, and the strictest rule any child name must meet.
pub fn is_dns1035_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= DNS_LABEL_MAX
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// `name` as child names write it, at most `whole_max` characters and a DNS-1035 label (see
/// the module doc for the three cases).
fn dns_part(name: &str, whole_max: usize) -> String {
    if name.len() <= whole_max && is_dns1035_label(name) {
        return name.to_string();
    }
    let hash = fnv1a(&[name]) & 0xffff;
    let keep = whole_max - HASH_SUFFIX;
    let head = prefix(name, keep).trim_end_matches(['-', '.']);
    if is_dns1035_label(head) {
        return format!("{head}-{hash:04x}");
    }
    let mut clean: String = name
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-') => c,
            _ => '-',
        })
        .collect();
    if !clean.starts_with(|c: char| c.is_ascii_lowercase()) {
        clean.insert_str(0, "r-");
    }
    let head = prefix(&clean, keep).trim_end_matches('-');
    format!("{head}-{hash:04x}")
}

/// The run as child names write it: a DNS-1035 label of at most 30 characters (see the
/// module doc).
pub fn short_run(run: &str) -> String {
    dns_part(run, RUN_WHOLE_MAX)
}

/// The target as child names write it: the target name itself (a DNS label of at most 20
/// characters, by validation), else a rewritten form of at most 20 characters.
pub fn short_target(target: &str) -> String {
    dns_part(target, TARGET_WHOLE_MAX)
}

/// Whether `s` is a label value: at most 63 characters, empty or alphanumeric at both ends
/// with `-`, `_` and `.` between.
pub fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    b.len() <= LABEL_VALUE_MAX
        && (b.is_empty()
            || (alnum(&b[0])
                && alnum(&b[b.len() - 1])
                && b.iter()
                    .all(|c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))))
}

/// Value of the `benchrun.dev/run` label: the run name when it fits a label value (63
/// characters), else its short form (see the module doc).
pub fn run_label(run: &str) -> String {
    if is_label_value(run) {
        run.to_string()
    } else {
        short_run(run)
    }
}

/// Value of the `benchrun.dev/target` label: the target name when it is a label value, else
/// its short form.
fn target_label(target: &str) -> String {
    if is_label_value(target) {
        target.to_string()
    } else {
        short_target(target)
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

/// Hash of one deployment of a cell's target configuration, 8 hex digits: the configuration's
/// [`config_hash`] when the run deploys each configuration once (`round` `None`), else a hash
/// of the configuration and the round, so that every round of `repeatOrder: Interleaved` gets
/// Deployment, Service and pods of its own. It is what the `benchrun.dev/config` label and the
/// children's names carry: measurements with the same hash share pods.
pub fn deployment_hash(target: &str, cell: &Cell, round: Option<usize>) -> String {
    let Some(round) = round else {
        return config_hash(target, cell);
    };
    let replicas = cell.replicas.to_string();
    let round = format!("round {round}");
    format!(
        "{:08x}",
        fnv1a(&[target, &cell.cpu, &cell.memory, &replicas, &round])
    )
}

/// Name of the target Deployment and Service of a configuration.
pub fn target_name(run: &str, target: &str, config: &str) -> String {
    format!("{}-{}-{config}", short_run(run), short_target(target))
}

/// Name of a backing service's Deployment and Service: `<run>-svc-<service>`.
pub fn service_name(run: &str, service: &str) -> String {
    format!("{}-svc-{}", short_run(run), short_target(service))
}

/// Regex of a backing service's pod names: its Deployment's name, the ReplicaSet hash and the
/// pod suffix, so that a target named like the service (`svc-x`, whose pods are
/// `<run>-svc-x-<config>-<hash>-<suffix>`) is never counted as the service.
pub fn service_pods_regex(run: &str, service: &str) -> String {
    format!("{}-[a-z0-9]+-[a-z0-9]+", service_name(run, service))
}

/// Name of a backing service's seeding Job: `<run>-seed-<service>`.
pub fn seed_job_name(run: &str, service: &str) -> String {
    format!("{}-seed-{}", short_run(run), short_target(service))
}

/// Labels of a backing service's Deployment, Service and pod (`role` [`role::SERVICE`]) or of
/// its seeding Job and pod ([`role::SEED`]).
pub fn service_labels(run: &str, role: &str, service: &str) -> BTreeMap<String, String> {
    let mut l = common_labels(run, role);
    l.insert(label::SERVICE.into(), target_label(service));
    l
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
    l.insert(label::TARGET.into(), target_label(target));
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

/// Checkers of the apiserver's name rules, for tests of every builder.
#[cfg(test)]
pub(crate) mod checks {
    /// DNS-1035 label (Service names).
    pub use super::is_dns1035_label;
    /// Label value.
    pub use super::is_label_value;

    /// One dot-separated part of a DNS-1123 subdomain: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
    fn is_subdomain_part(s: &str) -> bool {
        let b = s.as_bytes();
        let edge = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty()
            && edge(&b[0])
            && edge(&b[b.len() - 1])
            && b.iter().all(|c| edge(c) || *c == b'-')
    }

    /// DNS-1123 subdomain (Deployment, Job, ConfigMap names), as the apiserver checks it:
    /// dot-separated parts, at most 253 characters in all.
    pub fn is_dns1123_subdomain(s: &str) -> bool {
        s.len() <= 253 && s.split('.').all(is_subdomain_part)
    }

    /// Label key: an optional DNS-1123 subdomain prefix and `/`, then a name of at most 63
    /// characters, alphanumeric at both ends.
    pub fn is_label_key(k: &str) -> bool {
        let (prefix, name) = k.rsplit_once('/').unwrap_or(("", k));
        (prefix.is_empty() || is_dns1123_subdomain(prefix))
            && !name.is_empty()
            && is_label_value(name)
    }
}

#[cfg(test)]
pub(crate) mod tests {
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
            requests: None,
            keep_alive: true,
        }
    }

    /// Legal run names that are not DNS-1035 labels, and long and mixed ones.
    pub(crate) const NASTY_RUNS: &[&str] = &[
        "1st-run",
        "run.v2",
        "0",
        "9.9.9",
        "a.b.c.d",
        "r-1st-run",
        "x.-y",
        "abcdefghijklmnopqrstuvwxy.z",
        "1234567890123456789012345678901234567890",
        "a-------------------------------------b",
        "Mixed.Case_run",
        "",
    ];

    fn long_nasty_runs() -> Vec<String> {
        vec![
            "a".repeat(253),
            "1".repeat(253),
            format!("{}.{}", "a".repeat(126), "b".repeat(126)),
            format!("{}.x", "a".repeat(24)),
            format!("7{}", ".a".repeat(126)),
        ]
    }

    #[test]
    fn child_names_are_dns1035_labels_for_every_legal_run_name() {
        let mut runs: Vec<String> = NASTY_RUNS.iter().map(|s| s.to_string()).collect();
        runs.extend(long_nasty_runs());
        for run in &runs {
            for target in ["web", "t2345678901234567890", "1bad.target", ""] {
                let n = target_name(run, target, "0123abcd");
                assert!(is_dns1035_label(&n), "run {run:?} target {target:?}: {n}");
            }
            for n in [job_name(run, 199, 9), detail_name(run, 199, 9)] {
                assert!(is_dns1035_label(&n), "run {run:?}: {n}");
            }
            assert!(checks::is_label_value(&run_label(run)), "run {run:?}");
        }
    }

    #[test]
    fn rewritten_run_names_read_like_the_run_and_stay_distinct() {
        let v2 = short_run("run.v2");
        assert!(v2.starts_with("run-v2-") && v2.len() == 11, "{v2}");
        assert_ne!(v2, short_run("run-v2"));
        assert_eq!(short_run("run-v2"), "run-v2");
        let first = short_run("1st-run");
        assert!(first.starts_with("r-1st-run-"), "{first}");
        assert_ne!(short_run("a.b"), short_run("a-b"));
        assert_ne!(short_run("1a"), short_run("r-1a"));
        // Literals: a change would orphan the children of running runs.
        assert_eq!(
            target_name("run.v2", "web", "0123abcd"),
            "run-v2-4fbc-web-0123abcd"
        );
        assert_eq!(job_name("1st-run", 0, 0), "r-1st-run-73e9-c0-r0-0c19");
        // The label keeps the run name itself: it is a valid label value.
        assert_eq!(run_label("run.v2"), "run.v2");
        assert_eq!(run_label("1st-run"), "1st-run");
    }

    #[test]
    fn config_hash_ignores_load_settings() {
        assert_eq!(
            config_hash("web", &cell("1", 1, 10)),
            config_hash("web", &cell("1", 1, 1000))
        );
    }

    #[test]
    fn each_round_gets_a_deployment_of_its_own_and_one_deployment_keeps_the_config_hash() {
        let c = cell("1", 1, 10);
        assert_eq!(deployment_hash("web", &c, None), config_hash("web", &c));
        let rounds: Vec<String> = (0..4)
            .map(|r| deployment_hash("web", &c, Some(r)))
            .collect();
        let mut distinct = rounds.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{rounds:?}");
        assert!(!rounds.contains(&config_hash("web", &c)));
        assert_ne!(
            rounds[0],
            deployment_hash("web", &cell("2", 1, 10), Some(0))
        );
        assert!(rounds.iter().all(|h| h.len() == 8));
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
