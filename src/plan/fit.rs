//! Whether a cell's pods can fit the cluster at all, decided before the run takes the measuring
//! slot: a pod whose request no node it may go to can hold would wait for the ready timeout (a
//! target) or the Job deadline (a load pod) while every other run waits for the slot.
//!
//! Pure: from the nodes' allocatable CPU and memory minus the requests of the pods already on
//! them ([`NodeRoom`], observed) and the pods a cell makes ([`cell_asks`]), [`unfit_cells`]
//! names each cell that cannot run, what was asked, what the closest node offers and how to
//! change the spec. Taints are not judged (a pod that tolerates them is not known to fail).

use std::collections::BTreeMap;

use benchrun_api::{Cell, ValidatedRun};

use super::placement;
use crate::observed::{NodeRoles, NodeRoom};

/// One pod a cell makes, by what the scheduler places it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodAsk {
    /// What the pod is, e.g. `the target pod of demo`.
    pub what: String,
    /// The spec field that sets its resources, e.g. `spec.load.resources`.
    pub field: String,
    /// CPU request in millicores.
    pub cpu: i64,
    /// Memory request in bytes.
    pub memory: i64,
    /// Its node selector.
    pub selector: BTreeMap<String, String>,
}

/// The pods of `cell`: its target pod (each replica asks the same), each backing service's pod
/// and a load pod, with the node selectors the operator gives them.
pub fn cell_asks(run: &ValidatedRun, cell: &Cell, roles: NodeRoles) -> Vec<PodAsk> {
    let target = &run.targets[cell.target];
    let res = run.target_resources(cell);
    let swept = !run.matrix.cpu.is_empty() || !run.matrix.memory.is_empty();
    let mut asks = vec![PodAsk {
        what: format!(
            "the target pod of {} ({} CPU, {})",
            target.name, res.cpu_request, res.memory_request
        ),
        field: if swept {
            "spec.resources or spec.matrix.cpu/memory"
        } else {
            "spec.resources"
        }
        .into(),
        cpu: cpu(&res.cpu_request),
        memory: memory(&res.memory_request),
        selector: placement::target_selector(run, cell.target, roles),
    }];
    for (i, s) in run.services.iter().enumerate() {
        asks.push(PodAsk {
            what: format!(
                "the pod of service {} ({} CPU, {})",
                s.name, s.resources.cpu_request, s.resources.memory_request
            ),
            field: format!("spec.services[{i}].resources"),
            cpu: cpu(&s.resources.cpu_request),
            memory: memory(&s.resources.memory_request),
            selector: placement::service_selector(run, roles),
        });
    }
    let l = &run.load_resources;
    asks.push(PodAsk {
        what: format!("a load pod ({} CPU, {})", l.cpu_request, l.memory_request),
        field: "spec.load.resources".into(),
        cpu: cpu(&l.cpu_request),
        memory: memory(&l.memory_request),
        selector: placement::load_selector(run, roles),
    });
    asks
}

fn cpu(q: &str) -> i64 {
    benchrun_api::units::cpu_millis(q).unwrap_or(0)
}

fn memory(q: &str) -> i64 {
    benchrun_api::units::memory_bytes(q).unwrap_or(0)
}

/// `m` millicores as a CPU quantity: `"1.5"` CPUs from 1000m up, else `"250m"`.
fn cpu_text(m: i64) -> String {
    if m >= 1000 && m % 1000 == 0 {
        format!("{}", m / 1000)
    } else if m >= 1000 {
        format!("{:.2}", m as f64 / 1000.0)
    } else {
        format!("{m}m")
    }
}

/// `b` bytes in MiB.
fn memory_text(b: i64) -> String {
    format!("{}Mi", b / (1 << 20))
}

/// Why `ask` fits no node it may go to, or `None` when some node has room for it.
pub fn unfit(ask: &PodAsk, nodes: &[NodeRoom]) -> Option<String> {
    let eligible: Vec<&NodeRoom> = nodes.iter().filter(|n| n.matches(&ask.selector)).collect();
    if eligible.is_empty() {
        let sel: Vec<String> = ask
            .selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        return Some(format!(
            "{} can go to no node: none of the {} nodes has the labels {}; label a node or change the pod's nodeSelector",
            ask.what,
            nodes.len(),
            sel.join(",")
        ));
    }
    if eligible
        .iter()
        .any(|n| n.cpu_free() >= ask.cpu && n.memory_free() >= ask.memory)
    {
        return None;
    }
    // The node that comes closest: the largest share of the ask it could hold.
    let share = |n: &NodeRoom| {
        let c = if ask.cpu > 0 {
            n.cpu_free() as f64 / ask.cpu as f64
        } else {
            1.0
        };
        let m = if ask.memory > 0 {
            n.memory_free() as f64 / ask.memory as f64
        } else {
            1.0
        };
        c.min(1.0) + m.min(1.0)
    };
    let best = eligible
        .iter()
        .copied()
        .max_by(|a, b| share(a).total_cmp(&share(b)).then(b.name.cmp(&a.name)))?;
    let mut short = Vec::new();
    if best.cpu_free() < ask.cpu {
        short.push(format!(
            "Insufficient cpu: it has {} free of {} allocatable",
            cpu_text(best.cpu_free()),
            cpu_text(best.cpu_allocatable)
        ));
    }
    if best.memory_free() < ask.memory {
        short.push(format!(
            "Insufficient memory: it has {} free of {} allocatable",
            memory_text(best.memory_free()),
            memory_text(best.memory_allocatable)
        ));
    }
    Some(format!(
        "{} fits no node it may go to ({} eligible); the closest, {}: {}. Lower the requests in {} (cpuRequest/memoryRequest below the limits, or smaller limits) to at most what that node has free, or add a larger node",
        ask.what,
        eligible.len(),
        best.name,
        short.join("; "),
        ask.field
    ))
}

/// The cells among `cells` that cannot run on `nodes`, each with the reason of its first pod
/// that fits nowhere, in matrix order.
pub fn unfit_cells<'c>(
    run: &ValidatedRun,
    cells: impl Iterator<Item = &'c Cell>,
    nodes: &[NodeRoom],
    roles: NodeRoles,
) -> Vec<(usize, String)> {
    cells
        .filter_map(|c| {
            let why = cell_asks(run, c, roles)
                .iter()
                .find_map(|a| unfit(a, nodes))?;
            Some((c.index, why))
        })
        .collect()
}

impl super::Planner<'_> {
    /// Before the run takes the measuring slot: every measurement of a cell whose pods fit no
    /// node fails at once with the reason (a Warning event each). Returns true when nothing is
    /// left to measure: the run has then finished as Failed without taking the slot. Skipped
    /// when the nodes were not observed.
    pub(super) fn fail_unfit_cells(&mut self) -> bool {
        let Some(nodes) = self.obs.nodes.as_deref() else {
            return false;
        };
        let results = &self.status.results;
        let repeats = self.run.repeats;
        let pending = self
            .run
            .cells
            .iter()
            .filter(|c| (0..repeats).any(|r| !super::has_result(results, c.index, r)));
        let unfit = unfit_cells(self.run, pending, nodes, self.obs.node_roles);
        if unfit.is_empty() {
            return false;
        }
        let mut failed = Vec::new();
        for (cell, why) in &unfit {
            let reason = format!("the pods cannot be scheduled: {why}");
            self.note(
                true,
                benchrun_api::Reason::MeasurementFailed,
                format!("cell {cell}: {reason}"),
            );
            for r in 0..repeats {
                if !super::has_result(&self.status.results, *cell, r) {
                    let c = &self.run.cells[*cell];
                    failed.push(crate::results::failed_result(
                        self.run,
                        c,
                        r,
                        reason.clone(),
                    ));
                }
            }
        }
        let mut all = self.status.clone();
        all.results.extend(failed.iter().cloned());
        if super::next_pending(self.run, &all).is_none() {
            // Nothing fits: the run ends here and the next queued run gets the slot.
            self.accept();
            self.record(failed);
            return true;
        }
        // Kept in matrix order; the cells that fit are measured once the slot is taken.
        self.status.results = all.results;
        self.status.results.sort_by_key(|r| (r.cell, r.repeat));
        self.progress();
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builders::fixtures::run as validated;

    const SPEC: &str = r#"
targets: [{name: demo, image: example/demo:1}]
scenarios: [{name: hello, path: /hello}]
resources: {cpu: "500m", memory: 128Mi}
load: {connections: 4, duration: 20s, resources: {cpu: "1", cpuRequest: 400m, memory: 64Mi}}
"#;

    const GI: i64 = 1 << 30;

    /// The local cluster: two nodes of 1 CPU, the load node holding two operator replicas
    /// (50m each) and each a 1m canary.
    fn local() -> Vec<NodeRoom> {
        let node = |name: &str, role: &str, requested: i64| NodeRoom {
            name: name.into(),
            labels: BTreeMap::from([(placement::NODE_ROLE.into(), role.into())]),
            cpu_allocatable: 1000,
            memory_allocatable: 4 * GI,
            cpu_requested: requested,
            memory_requested: 0,
        };
        vec![node("node-1", "target", 1), node("node-2", "load", 101)]
    }

    const ROLES: NodeRoles = NodeRoles {
        target: true,
        load: true,
    };

    fn reasons(spec: &str, nodes: &[NodeRoom], roles: NodeRoles) -> Vec<(usize, String)> {
        let run = validated(spec);
        unfit_cells(&run, run.cells.iter(), nodes, roles)
    }

    #[test]
    fn pods_that_fit_their_role_nodes_pass() {
        assert_eq!(reasons(SPEC, &local(), ROLES), []);
    }

    #[test]
    fn a_target_asking_100_cpus_fails_naming_the_resource_the_node_and_the_field() {
        let spec = SPEC.replace(
            "cpu: \"500m\", memory: 128Mi",
            "cpu: \"100\", memory: 128Mi",
        );
        let r = reasons(&spec, &local(), ROLES);
        assert_eq!(r.len(), 1);
        let why = &r[0].1;
        for part in [
            "target pod of demo (100 CPU",
            "Insufficient cpu",
            "node-1",
            "999m free of 1 allocatable",
            "spec.resources",
        ] {
            assert!(why.contains(part), "{part:?} missing from {why}");
        }
        assert!(
            !why.contains("node-2"),
            "the load node is not the target's: {why}"
        );
    }

    #[test]
    fn a_load_pod_asking_100_cpus_fails_on_the_load_node() {
        let spec = SPEC
            .replace("cpuRequest: 400m", "cpuRequest: \"100\"")
            .replace("cpu: \"1\",", "cpu: \"100\",");
        let why = &reasons(&spec, &local(), ROLES)[0].1;
        for part in [
            "a load pod (100 CPU",
            "node-2",
            "899m free",
            "spec.load.resources",
        ] {
            assert!(why.contains(part), "{part:?} missing from {why}");
        }
    }

    #[test]
    fn memory_short_is_named_as_memory() {
        let spec = SPEC.replace("memory: 128Mi", "memory: 64Gi");
        let why = &reasons(&spec, &local(), ROLES)[0].1;
        assert!(
            why.contains("Insufficient memory: it has 4096Mi free"),
            "{why}"
        );
        assert!(!why.contains("Insufficient cpu"), "{why}");
    }

    #[test]
    fn without_role_labels_any_node_with_room_will_do() {
        let mut nodes = local();
        for n in &mut nodes {
            n.labels.clear();
        }
        let spec = SPEC.replace(
            "cpu: \"500m\", memory: 128Mi",
            "cpu: \"950m\", memory: 128Mi",
        );
        // node-1 has 999m free: the target fits there.
        assert_eq!(reasons(&spec, &nodes, NodeRoles::default()), []);
    }

    #[test]
    fn a_selector_no_node_matches_is_named() {
        let spec = SPEC.replace(
            "{name: demo, image: example/demo:1}",
            "{name: demo, image: example/demo:1, nodeSelector: {pool: big}}",
        );
        let why = &reasons(&spec, &local(), ROLES)[0].1;
        assert!(
            why.contains("none of the 2 nodes has the labels pool=big"),
            "{why}"
        );
    }

    #[test]
    fn only_the_cells_that_do_not_fit_are_named() {
        let spec = format!("{SPEC}matrix: {{cpu: [\"500m\", \"2\"]}}\n");
        let r = reasons(&spec, &local(), ROLES);
        assert_eq!(r.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [1]);
        assert!(r[0].1.contains("spec.matrix.cpu"), "{}", r[0].1);
    }

    #[test]
    fn a_spec_that_sets_no_resources_fits_the_local_cluster() {
        let bare = "targets: [{name: demo, image: example/demo:1}]\nscenarios: [{name: hello, path: /hello}]\nservices: [{name: db, image: example/db:1}]\nload: {duration: 20s}\n";
        assert_eq!(reasons(bare, &local(), ROLES), []);
        // The target and the service share the target node: both fit at once.
        let run = validated(bare);
        let asks = cell_asks(&run, &run.cells[0], ROLES);
        assert!(
            asks[0].cpu + asks[1].cpu <= local()[0].cpu_free(),
            "{asks:?}"
        );
        // Two load pods (the next cell's is made while the current one runs) fit the load node.
        assert!(2 * asks[2].cpu <= local()[1].cpu_free(), "{asks:?}");
    }

    #[test]
    fn the_readme_quick_start_fits_the_local_cluster() {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        let start = readme
            .find("metadata: {name: hello-sweep}")
            .expect("the quick start run");
        let block = &readme[readme[..start].rfind("```yaml").unwrap() + 7..];
        let block = &block[..block.find("```").unwrap()];
        let run: benchrun_api::BenchmarkRun = serde_yaml::from_str(block).unwrap();
        let run = benchrun_api::validate(&run.spec).unwrap();
        assert_eq!(unfit_cells(&run, run.cells.iter(), &local(), ROLES), []);
    }

    #[test]
    fn the_closest_node_is_the_one_holding_the_largest_share() {
        let ask = PodAsk {
            what: "x".into(),
            field: "f".into(),
            cpu: 2000,
            memory: GI,
            selector: BTreeMap::new(),
        };
        let mut nodes = local();
        nodes[1].cpu_allocatable = 1800;
        let why = unfit(&ask, &nodes).unwrap();
        assert!(why.contains("the closest, node-2"), "{why}");
        assert!(why.contains("1.70 free of 1.80 allocatable"), "{why}");
    }
}
