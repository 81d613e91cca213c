//! The run's state machine. Pure: from the validated run, its status, what was observed and
//! `now`, decide the actions, the next status and when to look again.
//!
//! One measurement (cell × repeat) at a time, in matrix order, each through the stages
//! Deploying → Loading → Collecting, its result appended to `status.results` exactly once.
//! Everything needed to resume lives in `status.current` and in the children (the Job's
//! restart-baseline annotation, the detail ConfigMap), so a restarted operator continues where
//! the last one stopped without losing or repeating a measurement.

use std::time::Duration;

use benchrun_api::validate::FieldError;
use benchrun_api::{condition, phase, BenchmarkRunStatus, CellResult, ValidatedRun};
use benchrun_load::LoadResult;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::observed::Observed;

/// How long after a window ends before Prometheus is queried for it (see [`scrape_ready_at`]),
/// and how long freshly ready target pods are left before the load starts: one cAdvisor
/// sample interval as [`crate::promql::DEFAULT_SAMPLE_INTERVAL`] assumes it. Samples are 6–10 s
/// apart on the local cluster (Prometheus scrapes every 5 s there) and 10–15 s apart with
/// kubelet defaults, so on the local cluster a sample from after the window has normally been
/// stored by then.
pub const SCRAPE_SETTLE: Duration = Duration::from_secs(10);
/// Largest detail JSON kept whole; beyond it the per-second histograms are dropped.
const DETAIL_MAX_BYTES: usize = 900 * 1024;

/// A change the I/O layer makes, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Apply the Deployment and Service of a cell's target configuration.
    ApplyTarget {
        /// Cell index.
        cell: usize,
    },
    /// Delete this run's target Deployments and Services, except one configuration.
    DeleteTargets {
        /// Config hash to keep.
        except: Option<String>,
    },
    /// Create the load Job of a measurement.
    CreateJob {
        /// Cell index.
        cell: usize,
        /// Repeat index.
        repeat: usize,
        /// ClusterIP of the target Service.
        cluster_ip: String,
        /// Target container restarts at creation.
        restarts_baseline: crate::kills::RestartBaseline,
    },
    /// Delete load Jobs of this run by name.
    DeleteJobs(Vec<String>),
    /// Store the merged load result in the measurement's detail ConfigMap.
    StoreDetail {
        /// Cell index.
        cell: usize,
        /// Repeat index.
        repeat: usize,
        /// The merged `LoadResult` as JSON.
        json: String,
    },
    /// Delete the run itself (its TTL after finishing has passed).
    DeleteRun,
}

/// An event to record on the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// Warning rather than Normal.
    pub warning: bool,
    /// PascalCase reason.
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
}

/// The planner's output.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Changes to make, in order.
    pub actions: Vec<Action>,
    /// The status to write (unchanged when nothing happened).
    pub status: BenchmarkRunStatus,
    /// Events to record.
    pub notes: Vec<Note>,
    /// Reconcile again after this long (besides watch events).
    pub requeue: Option<Duration>,
}

/// The measurement the run is on: the current one, or else the first without a result.
pub fn focus(run: &ValidatedRun, status: &BenchmarkRunStatus) -> Option<(usize, usize)> {
    if let Some(c) = &status.current {
        return Some((c.cell.max(0) as usize, c.repeat.max(0) as usize));
    }
    next_pending(run, &status.results)
}

fn next_pending(run: &ValidatedRun, results: &[CellResult]) -> Option<(usize, usize)> {
    run.cells.iter().find_map(|cell| {
        (0..run.repeats)
            .find_map(|r| (!has_result(results, cell.index, r)).then_some((cell.index, r)))
    })
}

fn has_result(results: &[CellResult], cell: usize, repeat: usize) -> bool {
    results
        .iter()
        .any(|x| x.cell as usize == cell && x.repeat as usize == repeat)
}

/// When the measured window of `load` counts as scraped, in Unix milliseconds:
/// [`SCRAPE_SETTLE`] after the window ends. Prometheus is queried for it from then on.
pub fn scrape_ready_at(load: &LoadResult) -> i64 {
    load.window_end_ms as i64 + SCRAPE_SETTLE.as_millis() as i64
}

/// True for `Succeeded` and `Failed`.
pub fn is_finished(status: &BenchmarkRunStatus) -> bool {
    matches!(
        status.phase.as_deref(),
        Some(phase::SUCCEEDED | phase::FAILED)
    )
}

/// Sets a condition, keeping its transition time when the status did not change.
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
    now: Timestamp,
    generation: Option<i64>,
) {
    let status = if status { "True" } else { "False" }.to_string();
    let old = conditions.iter().position(|c| c.type_ == type_);
    let last_transition_time = match old {
        Some(i) if conditions[i].status == status => conditions[i].last_transition_time.clone(),
        _ => Time(now),
    };
    let new = Condition {
        type_: type_.into(),
        status,
        reason: reason.into(),
        message,
        last_transition_time,
        observed_generation: generation,
    };
    match old {
        Some(i) => conditions[i] = new,
        None => conditions.push(new),
    }
}

/// A spec that failed validation: the run fails with `Accepted=False` and no children.
pub fn plan_invalid(
    status: &BenchmarkRunStatus,
    errors: &[FieldError],
    generation: Option<i64>,
    now: Timestamp,
) -> Decision {
    let mut s = status.clone();
    let message = benchrun_api::validate::describe(errors);
    let notes = if s.phase.as_deref() == Some(phase::FAILED) {
        Vec::new()
    } else {
        vec![Note {
            warning: true,
            reason: "InvalidSpec",
            message: message.clone(),
        }]
    };
    s.phase = Some(phase::FAILED.into());
    s.observed_generation = generation;
    s.current = None;
    set_condition(
        &mut s.conditions,
        condition::ACCEPTED,
        false,
        "InvalidSpec",
        message,
        now,
        generation,
    );
    set_condition(
        &mut s.conditions,
        condition::FAILED,
        true,
        "InvalidSpec",
        "the spec is invalid; see the Accepted condition".into(),
        now,
        generation,
    );
    Decision {
        actions: Vec::new(),
        status: s,
        notes,
        requeue: None,
    }
}

/// Decides the next step of a valid run.
pub fn plan(
    run: &ValidatedRun,
    status: &BenchmarkRunStatus,
    observed: &Observed,
    now: Timestamp,
) -> Decision {
    let mut p = Planner {
        run,
        obs: observed,
        now,
        status: status.clone(),
        actions: Vec::new(),
        notes: Vec::new(),
        requeue: None,
    };
    p.status.observed_generation = observed.generation;
    p.status.total = Some(run.total() as i32);
    if is_finished(status) {
        p.finished();
    } else if status.phase.as_deref() != Some(phase::RUNNING) {
        p.start();
    } else {
        p.step();
    }
    Decision {
        actions: p.actions,
        status: p.status,
        notes: p.notes,
        requeue: p.requeue,
    }
}

struct Planner<'a> {
    run: &'a ValidatedRun,
    obs: &'a Observed,
    now: Timestamp,
    status: BenchmarkRunStatus,
    actions: Vec<Action>,
    notes: Vec<Note>,
    requeue: Option<Duration>,
}

/// Merges the load pods' results; a pod without a result fails the measurement.
fn merge_pods(pods: &[Result<LoadResult, String>]) -> Result<LoadResult, String> {
    let mut ok = Vec::with_capacity(pods.len());
    for (i, p) in pods.iter().enumerate() {
        match p {
            Ok(r) => ok.push(r.clone()),
            Err(e) => return Err(format!("load pod {i} produced no result: {e}")),
        }
    }
    match ok.len() {
        0 => return Err("the load Job has no pods with results".into()),
        1 => return Ok(ok.remove(0)),
        _ => {}
    }
    benchrun_load::merge(&ok).map_err(|e| format!("failed to merge the load pods' results: {e}"))
}

/// The detail JSON, bounded to fit a ConfigMap: per-second histograms go first, then the
/// timeline (the run-wide histograms are what the report needs most).
pub fn detail_json(load: &LoadResult) -> String {
    let json = serde_json::to_string(load).unwrap_or_default();
    if json.len() <= DETAIL_MAX_BYTES {
        return json;
    }
    let mut slim = load.clone();
    for t in &mut slim.timeline {
        t.histogram.clear();
    }
    let json = serde_json::to_string(&slim).unwrap_or_default();
    if json.len() <= DETAIL_MAX_BYTES {
        return json;
    }
    slim.timeline.clear();
    serde_json::to_string(&slim).unwrap_or_default()
}

#[path = "plan_steps.rs"]
mod steps;

#[cfg(test)]
#[path = "plan_tests.rs"]
pub(crate) mod tests;
