//! What observation is to read for a reconcile, decided from the validated run, its status
//! and the slot facts alone (see [`crate::reads`]). Pure.

use benchrun_api::{BenchmarkRunStatus, Phase, Stage, ValidatedRun};
use jiff::Timestamp;

use crate::names::{self, role};
use crate::reads::{EndReads, FocusRead, Reads, ServiceRead, WindowRead};
use crate::slots::{SlotDecision, SlotFacts};

use super::{collections_due, focus, is_finished, CollectionDue};

/// The reads of one reconcile of `run` (its name `name`): nothing for a run waiting for a
/// measuring slot; the children alone for a finished run; else the backing services, the
/// nodes' roles (and their room when the run is about to take a slot), the Prometheus
/// windows that are due, and the focus measurement's children — with what is recorded beside
/// the load's figures while its stage is `Loading`.
pub fn reads(
    run: &ValidatedRun,
    name: &str,
    status: &BenchmarkRunStatus,
    slot: &SlotFacts,
    now: Timestamp,
) -> Reads {
    let finished = is_finished(status);
    let started = status.phase == Some(Phase::Running);
    let decision = (!finished && !started).then(|| slot.decision());
    if matches!(
        decision,
        Some(SlotDecision::Wait(_) | SlotDecision::QueueFull { .. })
    ) {
        return Reads::default();
    }
    let mut r = Reads {
        children: true,
        ..Reads::default()
    };
    if finished {
        return r;
    }
    r.services = run
        .services
        .iter()
        .map(|s| ServiceRead {
            name: s.name.clone(),
            child: names::service_name(name, &s.name),
            seed_job: names::seed_job_name(name, &s.name),
        })
        .collect();
    r.node_roles = true;
    r.rooms = decision == Some(SlotDecision::Grant);
    r.windows = collections_due(status, now)
        .iter()
        .map(|due| window(run, name, due))
        .collect();
    r.focus = focus(run, status).map(|(cell_i, repeat)| {
        let cell = &run.cells[cell_i];
        let target = &run.targets[cell.target].name;
        let config = super::deployment(run, cell_i, repeat);
        let loading = status.current.as_ref().map(|c| c.stage) == Some(Stage::Loading);
        FocusRead {
            cell: cell_i,
            repeat,
            target: names::target_name(name, target, &config),
            target_pods: names::target_labels(name, target, &config),
            job: names::job_name(name, cell_i, repeat),
            load_pods: names::measurement_labels(name, role::LOAD, cell_i, repeat),
            load_pod_count: run.load_pods,
            detail: names::detail_name(name, cell_i, repeat),
            now,
            at_end: loading.then(|| EndReads {
                baseline: run
                    .baseline
                    .as_ref()
                    .map(|b| (b.run.clone(), crate::results::coordinates(run, cell))),
            }),
        }
    });
    r
}

/// The Prometheus read of a window that is due: the pod-name regexes from the deterministic
/// names, the limits from the cell, the rest from the spec.
fn window(run: &ValidatedRun, name: &str, due: &CollectionDue) -> WindowRead {
    let (cell_i, repeat) = (due.cell, due.repeat);
    let job = names::job_name(name, cell_i, repeat);
    let mut w = WindowRead {
        cell: cell_i,
        repeat,
        known: false,
        detail: names::detail_name(name, cell_i, repeat),
        url: run.prometheus.as_ref().and_then(|p| p.url.clone()),
        target_pods: String::new(),
        load_pods: format!("{job}-.*"),
        target_cpu_limit_cores: 0.0,
        target_pod_cpu_limit_cores: 0.0,
        job_created: due.load_created,
        extra: run
            .prometheus
            .as_ref()
            .map(|p| p.extra_queries.clone())
            .unwrap_or_default(),
        services: run
            .services
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    names::service_pods_regex(name, &s.name),
                    s.resources.cpu_millis as f64 / 1000.0,
                )
            })
            .collect(),
    };
    let Some(cell) = run.cells.get(cell_i) else {
        return w;
    };
    let target = &run.targets[cell.target].name;
    let target_name = names::target_name(name, target, &super::deployment(run, cell_i, repeat));
    let millis = run.target_resources(cell).cpu_millis as f64;
    w.known = true;
    w.target_pods = format!("{target_name}-.*");
    w.target_pod_cpu_limit_cores = millis / 1000.0;
    w.target_cpu_limit_cores = millis * f64::from(cell.replicas) / 1000.0;
    w
}
