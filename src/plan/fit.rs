//! Whether a cell's pods can fit the cluster at all, decided before the run takes the measuring
//! slot: a pod whose request no node it may go to can hold would wait for the ready timeout (a
//! target) or the Job deadline (a load pod) while every other run waits for the slot.
//!
//! Pure: from the nodes' allocatable CPU and memory minus the requests of the pods already on
//! them, and their taints ([`NodeRoom`], observed), and the pods a cell makes ([`cell_asks`]:
//! every target replica, each backing service, every load pod), [`unfit_cells`] names each
//! cell that cannot run, what was asked, what the closest node offers and how to change the
//! spec. A pod may go to a node whose labels match its node selector and whose `NoSchedule`
//! and `NoExecute` taints it tolerates; the cell fits when all of its pods can be placed at
//! once, each on such a node ([`place_all`]). An operator that cannot read the nodes (a
//! namespaced install) does not check, and says so on the Accepted condition.

use std::collections::BTreeMap;

use benchrun_api::{Cell, ValidatedRun};
use k8s_openapi::api::core::v1::Toleration;

use super::placement;
use crate::observed::{NodeRoles, NodeRoom};

/// Pods of one kind a cell makes, by what the scheduler places them on.
#[derive(Clone, Debug, PartialEq)]
pub struct PodAsk {
    /// What one pod is, e.g. `the target pod of demo (500m CPU, 128Mi)`.
    pub what: String,
    /// The spec field that sets its resources, e.g. `spec.load.resources`.
    pub field: String,
    /// CPU request of one pod in millicores.
    pub cpu: i64,
    /// Memory request of one pod in bytes.
    pub memory: i64,
    /// Its node selector.
    pub selector: BTreeMap<String, String>,
    /// Its tolerations.
    pub tolerations: Vec<Toleration>,
    /// How many such pods the cell has at once (target replicas, load pods).
    pub count: usize,
    /// The spec field that sets `count` (`None` for a single pod, e.g. a backing service).
    pub count_field: Option<String>,
}

/// The pods of `cell`: its target pods (one per replica), each backing service's pod and its
/// load pods, with the node selectors and tolerations the operator gives them.
pub fn cell_asks(run: &ValidatedRun, cell: &Cell, roles: NodeRoles) -> Vec<PodAsk> {
    let target = &run.targets[cell.target];
    let res = run.target_resources(cell);
    let swept = !run.matrix.cpu.is_empty() || !run.matrix.memory.is_empty();
    let replicas_field = if !run.matrix.replicas.is_empty() {
        "spec.matrix.replicas"
    } else if run.search.is_some() {
        "spec.replicas or spec.search"
    } else {
        "spec.replicas"
    };
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
        tolerations: target.tolerations.clone(),
        count: cell.replicas.max(1) as usize,
        count_field: Some(replicas_field.into()),
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
            tolerations: Vec::new(),
            count: 1,
            count_field: None,
        });
    }
    let l = &run.load_resources;
    asks.push(PodAsk {
        what: format!("a load pod ({} CPU, {})", l.cpu_request, l.memory_request),
        field: "spec.load.resources".into(),
        cpu: cpu(&l.cpu_request),
        memory: memory(&l.memory_request),
        selector: placement::load_selector(run, roles),
        tolerations: Vec::new(),
        count: run.load_pods.max(1) as usize,
        count_field: Some("spec.load.pods".into()),
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

/// Whether a pod of `ask` may go to `node`: the labels match and no taint keeps it off.
fn may_go(ask: &PodAsk, node: &NodeRoom) -> bool {
    node.matches(&ask.selector) && node.untolerated(&ask.tolerations).is_none()
}

/// The node of `eligible` that comes closest to holding `cpu` and `memory`: the largest share
/// of the ask it could hold (ties: the first by name).
fn closest<'n>(eligible: &[&'n NodeRoom], cpu: i64, memory: i64) -> Option<&'n NodeRoom> {
    let share = |n: &NodeRoom| {
        let c = if cpu > 0 {
            n.cpu_free() as f64 / cpu as f64
        } else {
            1.0
        };
        let m = if memory > 0 {
            n.memory_free() as f64 / memory as f64
        } else {
            1.0
        };
        c.min(1.0) + m.min(1.0)
    };
    eligible
        .iter()
        .copied()
        .max_by(|a, b| share(a).total_cmp(&share(b)).then(b.name.cmp(&a.name)))
}

/// Why one pod of `ask` fits no node it may go to, or `None` when some node has room for it.
pub fn unfit(ask: &PodAsk, nodes: &[NodeRoom]) -> Option<String> {
    let labelled: Vec<&NodeRoom> = nodes.iter().filter(|n| n.matches(&ask.selector)).collect();
    if labelled.is_empty() {
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
    let eligible: Vec<&NodeRoom> = labelled
        .iter()
        .copied()
        .filter(|n| n.untolerated(&ask.tolerations).is_none())
        .collect();
    if eligible.is_empty() {
        let tainted: Vec<String> = labelled
            .iter()
            .filter_map(|n| {
                Some(format!(
                    "{} {}",
                    n.name,
                    n.untolerated(&ask.tolerations)?.text()
                ))
            })
            .collect();
        return Some(format!(
            "{} can go to no node: each of the {} nodes its labels select carries a taint it does not tolerate ({}); \
             remove the taint, or give the pod a toleration the operator's placement policy allows",
            ask.what,
            labelled.len(),
            tainted.join(", ")
        ));
    }
    if eligible
        .iter()
        .any(|n| n.cpu_free() >= ask.cpu && n.memory_free() >= ask.memory)
    {
        return None;
    }
    let best = closest(&eligible, ask.cpu, ask.memory)?;
    Some(format!(
        "{} fits no node it may go to ({} eligible); the closest, {}: {}. Lower the requests in {} (cpuRequest/memoryRequest below the limits, or smaller limits) to at most what that node has free, or add a larger node",
        ask.what,
        eligible.len(),
        best.name,
        shortfall(best, ask.cpu, ask.memory),
        ask.field
    ))
}

/// What `node` lacks for `cpu` and `memory`, in the scheduler's words.
fn shortfall(node: &NodeRoom, cpu: i64, memory: i64) -> String {
    let mut short = Vec::new();
    if node.cpu_free() < cpu {
        short.push(format!(
            "Insufficient cpu: it has {} free of {} allocatable",
            cpu_text(node.cpu_free()),
            cpu_text(node.cpu_allocatable)
        ));
    }
    if node.memory_free() < memory {
        short.push(format!(
            "Insufficient memory: it has {} free of {} allocatable",
            memory_text(node.memory_free()),
            memory_text(node.memory_allocatable)
        ));
    }
    short.join("; ")
}

/// How many placements [`place_all`] tries before it gives up and lets the cell run: the
/// scheduler has the last word, and a cell is failed only when no placement exists.
const PLACEMENT_BUDGET: usize = 100_000;

/// Whether every pod of `asks` (each `count` times) can be placed at once, each on a node it
/// may go to, within the nodes' free CPU and memory. `Err` with the index of the ask whose pod
/// could not be placed (the one the search got furthest without). A search that runs out of
/// its budget counts as a fit.
pub fn place_all(asks: &[PodAsk], nodes: &[NodeRoom]) -> Result<(), usize> {
    let eligible: Vec<Vec<usize>> = asks
        .iter()
        .map(|a| (0..nodes.len()).filter(|&n| may_go(a, &nodes[n])).collect())
        .collect();
    // Largest pods first, the pods of one ask together.
    let mut pods: Vec<usize> = asks
        .iter()
        .enumerate()
        .flat_map(|(i, a)| std::iter::repeat_n(i, a.count))
        .collect();
    pods.sort_by_key(|&i| (std::cmp::Reverse((asks[i].cpu, asks[i].memory)), i));
    let mut search = Search {
        asks,
        eligible: &eligible,
        pods: &pods,
        free: nodes
            .iter()
            .map(|n| (n.cpu_free(), n.memory_free()))
            .collect(),
        on: vec![0; pods.len()],
        tries: 0,
        furthest: 0,
    };
    match search.place(0) {
        Some(false) => Err(pods[search.furthest]),
        _ => Ok(()),
    }
}

/// A depth-first search for a placement: each pod on the eligible node with the most free CPU
/// first (as the scheduler spreads), backtracking when a later pod finds no room.
struct Search<'a> {
    asks: &'a [PodAsk],
    eligible: &'a [Vec<usize>],
    pods: &'a [usize],
    free: Vec<(i64, i64)>,
    /// The node of each placed pod.
    on: Vec<usize>,
    tries: usize,
    /// The first pod no placement of the pods before it left room for, at the deepest point.
    furthest: usize,
}

impl Search<'_> {
    /// `Some(true)`: pods `i..` placed; `Some(false)`: no placement; `None`: out of budget.
    fn place(&mut self, i: usize) -> Option<bool> {
        if i == self.pods.len() {
            return Some(true);
        }
        self.furthest = self.furthest.max(i);
        let a = self.pods[i];
        let (cpu, memory) = (self.asks[a].cpu, self.asks[a].memory);
        // Pods of one ask are alike: placing them in node order skips permutations.
        let from = match i {
            0 => 0,
            _ if self.pods[i - 1] == a => self.on[i - 1],
            _ => 0,
        };
        let mut nodes: Vec<usize> = self.eligible[a]
            .iter()
            .copied()
            .filter(|&n| n >= from && self.free[n].0 >= cpu && self.free[n].1 >= memory)
            .collect();
        nodes.sort_by_key(|&n| (std::cmp::Reverse(self.free[n]), n));
        for n in nodes {
            self.tries += 1;
            if self.tries > PLACEMENT_BUDGET {
                return None;
            }
            self.free[n].0 -= cpu;
            self.free[n].1 -= memory;
            self.on[i] = n;
            let placed = self.place(i + 1);
            self.free[n].0 += cpu;
            self.free[n].1 += memory;
            if placed != Some(false) {
                return placed;
            }
        }
        Some(false)
    }
}

/// Why the pods of `asks`, each of which fits some node alone, cannot all be placed at once
/// on `nodes`; `None` when they can.
pub fn unplaceable(asks: &[PodAsk], nodes: &[NodeRoom]) -> Option<String> {
    let stuck = place_all(asks, nodes).err()?;
    let ask = &asks[stuck];
    let eligible: Vec<&NodeRoom> = nodes.iter().filter(|n| may_go(ask, n)).collect();
    // The cell's pods that compete with it: those that may go to one of its nodes.
    let sharing: Vec<&PodAsk> = asks
        .iter()
        .filter(|a| eligible.iter().any(|n| may_go(a, n)))
        .collect();
    let cpu_sum: i64 = sharing.iter().map(|a| a.cpu * a.count as i64).sum();
    let memory_sum: i64 = sharing.iter().map(|a| a.memory * a.count as i64).sum();
    let pods: Vec<String> = sharing
        .iter()
        .map(|a| match a.count {
            1 => a.what.clone(),
            n => format!("{n} × {}", a.what),
        })
        .collect();
    let best = closest(&eligible, cpu_sum, memory_sum)?;
    let mut fixes = Vec::new();
    if let Some(f) = ask.count_field.as_deref().filter(|_| ask.count > 1) {
        fixes.push(format!("fewer pods in {f}"));
    }
    fixes.push(format!("lower requests in {}", ask.field));
    for a in &sharing {
        if a.field != ask.field {
            fixes.push(format!("in {}", a.field));
        }
    }
    Some(format!(
        "the cell's pods do not fit at once on the {} node(s) they may go to: {} ask {} CPU and {} together, \
         and no placement leaves room for {}; the closest node, {}, has {} CPU free of {} allocatable and {} memory free. \
         Ask for {}, or add a node",
        eligible.len(),
        pods.join(" + "),
        cpu_text(cpu_sum),
        memory_text(memory_sum),
        ask.what,
        best.name,
        cpu_text(best.cpu_free()),
        cpu_text(best.cpu_allocatable),
        memory_text(best.memory_free()),
        fixes.join(", ")
    ))
}

/// Why the pods of `asks` cannot run on `nodes`: the first that fits no node alone, else why
/// they do not fit together; `None` when they can all be placed.
pub fn unfit_pods(asks: &[PodAsk], nodes: &[NodeRoom]) -> Option<String> {
    asks.iter()
        .find_map(|a| unfit(a, nodes))
        .or_else(|| unplaceable(asks, nodes))
}

/// The cells among `cells` that cannot run on `nodes`, each with the reason, in matrix order.
pub fn unfit_cells<'c>(
    run: &ValidatedRun,
    cells: impl Iterator<Item = &'c Cell>,
    nodes: &[NodeRoom],
    roles: NodeRoles,
) -> Vec<(usize, String)> {
    cells
        .filter_map(|c| Some((c.index, unfit_pods(&cell_asks(run, c, roles), nodes)?)))
        .collect()
}

/// What the run says when the fit check cannot be done, e.g. for `no node read access`.
pub fn unchecked_note(why: &str) -> String {
    format!(
        "fit check: cannot check: {why}, so whether the cells' pods fit the nodes is not known before the run takes the measuring slot; \
         a pod no node can hold waits out the ready timeout"
    )
}

impl super::Planner<'_> {
    /// Before the run takes the measuring slot: every measurement of a cell whose pods fit no
    /// node fails at once with the reason (a Warning event each). Returns true when nothing is
    /// left to measure: the run has then finished as Failed without taking the slot. Not done
    /// when the nodes were not observed; an event says why when the operator cannot read them.
    pub(super) fn fail_unfit_cells(&mut self) -> bool {
        let Some(nodes) = self.obs.nodes.as_deref() else {
            if let Some(why) = self.obs.fit_unchecked.clone() {
                self.note(false, benchrun_api::Reason::Valid, unchecked_note(&why));
            }
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
    use crate::observed::NodeTaint;

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
            taints: Vec::new(),
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
            tolerations: Vec::new(),
            count: 1,
            count_field: None,
        };
        let mut nodes = local();
        nodes[1].cpu_allocatable = 1800;
        let why = unfit(&ask, &nodes).unwrap();
        assert!(why.contains("the closest, node-2"), "{why}");
        assert!(why.contains("1.70 free of 1.80 allocatable"), "{why}");
    }

    fn with_replicas(n: i32, cpu: &str) -> String {
        SPEC.replace(
            "resources: {cpu: \"500m\", memory: 128Mi}",
            &format!("resources: {{cpu: \"{cpu}\", memory: 128Mi}}\nreplicas: {n}"),
        )
    }

    #[test]
    fn two_replicas_of_600m_do_not_fit_one_cpu_naming_the_ask_and_the_closest_nodes_free_cpu() {
        // Each replica fits node-1 alone; both at once do not.
        let run = validated(&with_replicas(1, "600m"));
        assert_eq!(unfit_cells(&run, run.cells.iter(), &local(), ROLES), []);
        let r = reasons(&with_replicas(2, "600m"), &local(), ROLES);
        assert_eq!(r.len(), 1, "{r:?}");
        let why = &r[0].1;
        for part in [
            "2 × the target pod of demo (600m CPU, 128Mi)",
            "ask 1.20 CPU and 256Mi together",
            "no placement leaves room for the target pod of demo",
            "the closest node, node-1, has 999m CPU free of 1 allocatable",
            "fewer pods in spec.replicas",
            "lower requests in spec.resources",
        ] {
            assert!(why.contains(part), "{part:?} missing from {why}");
        }
        assert!(!why.contains("load pod"), "the load node is apart: {why}");
    }

    #[test]
    fn replicas_spread_over_two_target_nodes_fit() {
        let mut nodes = local();
        let mut second = nodes[0].clone();
        second.name = "node-3".into();
        nodes.push(second);
        assert_eq!(reasons(&with_replicas(2, "600m"), &nodes, ROLES), []);
        // Three do not: one node would need two.
        let why = &reasons(&with_replicas(3, "600m"), &nodes, ROLES)[0].1;
        assert!(why.contains("3 × the target pod of demo"), "{why}");
        assert!(why.contains("on the 2 node(s)"), "{why}");
    }

    #[test]
    fn backing_services_and_the_target_are_summed_on_the_target_node() {
        let spec = format!(
            "{}services: [{{name: db, image: example/db:1, resources: {{cpu: 400m, memory: 64Mi}}}}]\n",
            SPEC.replace("cpu: \"500m\", memory: 128Mi", "cpu: \"700m\", memory: 128Mi")
        );
        let why = &reasons(&spec, &local(), ROLES)[0].1;
        for part in [
            "the target pod of demo (700m CPU, 128Mi) + the pod of service db (400m CPU, 64Mi)",
            "ask 1.10 CPU",
            "node-1, has 999m CPU free",
            "in spec.services[0].resources",
        ] {
            assert!(why.contains(part), "{part:?} missing from {why}");
        }
        // At 500m the two fit together.
        let fits = spec.replace("cpu: \"700m\"", "cpu: \"500m\"");
        assert_eq!(reasons(&fits, &local(), ROLES), []);
    }

    #[test]
    fn load_pods_are_counted_on_the_load_node() {
        // node-2 has 899m free: two load pods of 400m fit, three do not.
        let two = SPEC.replace("load: {connections: 4,", "load: {pods: 2, connections: 6,");
        assert_eq!(reasons(&two, &local(), ROLES), []);
        let three = SPEC.replace("load: {connections: 4,", "load: {pods: 3, connections: 6,");
        let why = &reasons(&three, &local(), ROLES)[0].1;
        assert!(why.contains("3 × a load pod (400m CPU"), "{why}");
        assert!(why.contains("fewer pods in spec.load.pods"), "{why}");
        assert!(why.contains("node-2, has 899m CPU free"), "{why}");
    }

    #[test]
    fn a_node_with_a_taint_the_pod_does_not_tolerate_is_no_candidate() {
        let taint = NodeTaint {
            key: "dedicated".into(),
            value: "db".into(),
            effect: "NoSchedule".into(),
        };
        let mut nodes = local();
        nodes[0].taints.push(taint.clone());
        let why = &reasons(SPEC, &nodes, ROLES)[0].1;
        for part in [
            "the target pod of demo",
            "can go to no node",
            "node-1 dedicated=db:NoSchedule",
        ] {
            assert!(why.contains(part), "{part:?} missing from {why}");
        }
        // Tolerated, the node is a candidate again.
        let tolerating = SPEC.replace(
            "{name: demo, image: example/demo:1}",
            "{name: demo, image: example/demo:1, tolerations: [{key: dedicated, operator: Equal, value: db, effect: NoSchedule}]}",
        );
        assert_eq!(reasons(&tolerating, &nodes, ROLES), []);
        // Without roles the target avoids the tainted node for the other one, which then also
        // holds the load pod: 500m + 400m of 899m free does not fit.
        let mut plain = nodes.clone();
        for n in &mut plain {
            n.labels.clear();
        }
        let why = &reasons(SPEC, &plain, NodeRoles::default())[0].1;
        assert!(why.contains("on the 1 node(s)"), "{why}");
        assert!(why.contains("node-2"), "{why}");
        // A PreferNoSchedule taint is not observed at all; only these effects keep pods off.
        let exists = Toleration {
            operator: Some("Exists".into()),
            ..Toleration::default()
        };
        assert!(taint.tolerated_by(&exists));
        let other_effect = Toleration {
            key: Some("dedicated".into()),
            operator: Some("Exists".into()),
            effect: Some("NoExecute".into()),
            ..Toleration::default()
        };
        assert!(!taint.tolerated_by(&other_effect));
    }

    #[test]
    fn without_node_read_access_the_accepted_condition_says_the_fit_was_not_checked() {
        use crate::plan::tests::{cond, obs};
        let run = validated(SPEC);
        let o = crate::observed::Observed {
            fit_unchecked: Some(crate::observe::nodes::NO_NODE_ACCESS.into()),
            ..obs()
        };
        let d = super::super::plan(&run, &Default::default(), &o, jiff::Timestamp::UNIX_EPOCH);
        let accepted = cond(&d.status, benchrun_api::ConditionType::Accepted);
        assert_eq!(accepted.status, "True");
        assert!(
            accepted
                .message
                .contains("fit check: cannot check: no node read access"),
            "{}",
            accepted.message
        );
    }
}
