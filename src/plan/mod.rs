//! The run's state machine. Pure: from the validated run, its status, what was observed and
//! `now`, decide the actions, the next status and when to look again.
//!
//! One measurement (cell × repeat) at a time, in the run's order (matrix order, or interleaved
//! rounds with `spec.repeatOrder: Interleaved`), each through the stages
//! Deploying → Loading, its result appended to `status.results` exactly once (a run an older
//! operator left in stage `Collecting` is read as `Loading`, see [`benchrun_api::Stage`]).
//! Everything needed to resume lives in `status.current` and in the children (the Job's
//! restart-baseline annotation, the detail ConfigMap), so a restarted operator continues where
//! the last one stopped without losing or repeating a measurement.
//!
//! Cells run back to back: once a load Job has succeeded, the measurement's result is recorded
//! with its load figures and `metricsDue`, and the next measurement starts at once. When the
//! window's end is fixed in advance, the next measurement's load Job on the same target is made
//! during the current warm-up and told to begin when this window ends ([`chained_start`]), so
//! the next measurement finds its Job made and its pod waiting. The
//! window's CPU and memory are read from Prometheus while the next one runs, once the samples
//! after it have been scraped (the operator's sample interval, [`Observed::sample_interval`]); the queries name their window, so the next
//! load does not disturb them. When Prometheus cannot be reached for a window, the result gets
//! `metricsPending` and the window is asked for again later (see `src/plan/metrics.rs`); that
//! state, too, lives in status alone, so a restarted operator still collects it.
//!
//! A run that is not yet `Running` starts only once it holds a measuring slot: the planner
//! decides from the observed slot facts ([`crate::slots::decide`]); a run the slot is free for
//! gets only [`Action::TakeSlot`] and an immediate requeue, a run that must wait is `Queued`
//! and is woken by the controller when it is next in line for a free slot (it is not polled,
//! and observation reads nothing from the apiserver for it).

use std::collections::BTreeMap;
use std::time::Duration;

use benchrun_api::validate::{FieldError, Limit, Warmup};
use benchrun_api::{
    BenchmarkRunStatus, Cell, CellResult, ConditionType, CurrentMeasurement, Phase, Reason,
    ServiceAddress, ValidatedRun,
};
use benchrun_wire::LoadResult;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::observed::Observed;

/// When a queued run looks again at the slots although nobody woke it: the controller wakes
/// the runs next in line as soon as a slot is free for them ([`crate::slots::to_wake`]), so
/// this is only a safety net. A queued run's reconcile reads nothing from the apiserver.
pub const QUEUED_RECHECK: Duration = Duration::from_secs(300);
/// When a queued run looks again while the controller cannot wake it in turn (the cache of
/// runs not ready yet).
pub const QUEUE_POLL: Duration = Duration::from_secs(5);
/// How far ahead of the load Job's creation its pods are told to begin when there are several
/// (`--start-at`): time for all of them to be scheduled and started, so they begin together.
pub const START_LEAD: Duration = Duration::from_secs(5);
/// Between the planned end of a window and the agreed start of the next measurement's load
/// when that load was made ahead (cells back to back): time for the last responses.
pub const CHAIN_GAP: Duration = Duration::from_millis(250);
/// A load Job is made ahead of its turn only while at least this much of the current
/// warm-up is left, so that its pods have started before the current window begins (their
/// start-up takes CPU on the node).
pub const PRESTART: Duration = Duration::from_secs(1);
/// The kubelet reports when a container started to the second: its process began at most
/// this long after the time reported.
const STARTED_MARGIN_MS: i64 = 1_100;
pub use crate::observed::DEFAULT_METRICS_RETRY_FOR;
/// First wait before asking an unreachable Prometheus again; it doubles per failed attempt
/// up to [`METRICS_RETRY_MAX`].
pub const METRICS_RETRY_FIRST: Duration = Duration::from_secs(10);
/// Longest wait between two attempts.
pub const METRICS_RETRY_MAX: Duration = Duration::from_secs(60);
/// Largest detail JSON kept whole; beyond it the per-second histograms are dropped.
const DETAIL_MAX_BYTES: usize = 900 * 1024;

/// A change the I/O layer makes, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Apply the Deployment and Service of one deployment of a cell's target configuration.
    ApplyTarget {
        /// Cell index.
        cell: usize,
        /// The round deployed afresh (`repeatOrder: Interleaved`), `None` for the run's one
        /// deployment of the configuration ([`crate::names::deployment_hash`]).
        round: Option<usize>,
        /// The backing services' addresses, given to the target as variables.
        services: Vec<ServiceAddress>,
        /// Node labels the target pods must match ([`placement::target_selector`]).
        node_selector: BTreeMap<String, String>,
    },
    /// Apply the Deployment and Service of every backing service, its pods on nodes matching
    /// `node_selector` (the target nodes where nodes have roles: a backing service is part
    /// of the system under test, not of the load).
    ApplyServices {
        node_selector: BTreeMap<String, String>,
    },
    /// Create the seeding Job of a backing service.
    CreateSeedJob {
        /// Index in `spec.services`.
        service: usize,
        /// Every backing service's address, given to the seeding container as variables.
        addresses: Vec<ServiceAddress>,
    },
    /// Delete this run's backing services and their seeding Jobs.
    DeleteServices,
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
        /// When every load pod begins (unix ms): so that several pods' windows coincide, or so
        /// that a Job made ahead begins when the current window ends; `None` otherwise.
        start_at_ms: Option<i64>,
        /// Node labels the load pods must match ([`placement::load_selector`]).
        node_selector: BTreeMap<String, String>,
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
    /// Grant this run a measuring slot: the slot decision said [`crate::slots::SlotDecision::Grant`]. The
    /// only action of its reconcile, which requeues at once: nothing that assumes the slot
    /// happens before the grant is applied. Applied atomically ([`crate::slots::Slots::take`]:
    /// decided again against the runs as they are then, granted only if still `Grant`); the
    /// next reconcile observes the grant (the run then holds) or the run waiting.
    TakeSlot,
}

impl Action {
    /// What a log line says of this action: its kind, the child it writes or deletes (by its
    /// deterministic name where the action alone gives it) and its size, never its body (a
    /// detail ConfigMap's JSON reaches 900 KiB). Pure.
    pub fn describe(&self, run: &str) -> String {
        match self {
            Action::ApplyTarget { cell, round, .. } => match round {
                Some(r) => format!("apply the target of cell {cell}, round {r}"),
                None => format!("apply the target of cell {cell}"),
            },
            Action::ApplyServices { .. } => "apply the backing services".into(),
            Action::CreateSeedJob { service, .. } => {
                format!("create the seeding Job of backing service {service}")
            }
            Action::DeleteServices => "delete the backing services".into(),
            Action::DeleteTargets { except: Some(c) } => {
                format!("delete the targets but configuration {c}")
            }
            Action::DeleteTargets { except: None } => "delete the targets".into(),
            Action::CreateJob {
                cell,
                repeat,
                start_at_ms,
                ..
            } => {
                let job = crate::names::job_name(run, *cell, *repeat);
                match start_at_ms {
                    Some(t) => format!("create Job {job} (start at {t})"),
                    None => format!("create Job {job}"),
                }
            }
            Action::DeleteJobs(jobs) => {
                let all = jobs.join(", ");
                let names = crate::logtext::cap(&all, crate::logtext::LOG_MAX);
                format!("delete {} Job(s): {names}", jobs.len())
            }
            Action::StoreDetail { cell, repeat, json } => format!(
                "apply ConfigMap {} ({} bytes)",
                crate::names::detail_name(run, *cell, *repeat),
                json.len()
            ),
            Action::DeleteRun => "delete the run".into(),
            Action::TakeSlot => "take a measuring slot".into(),
        }
    }
}

/// An event to record on the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// Warning rather than Normal.
    pub warning: bool,
    /// Why, in one word.
    pub reason: Reason,
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

/// A child the apiserver refused to store (see [`crate::error::Class::Refused`]): waiting
/// cannot make it acceptable, so the cell that needs it fails.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// The planner's action whose apply was refused.
    pub action: Action,
    /// `Kind name` of the refused child.
    pub child: String,
    /// The apiserver's HTTP code.
    pub code: u16,
    /// The apiserver's message, e.g. `Deployment.apps "x" is invalid: spec.template.spec...`;
    /// for a [`Refusal::foreign`] one, the operator's own, naming the object and its owner.
    pub message: String,
    /// The operator refused it itself, sending nothing: the child's name is held by an object
    /// that is not the run's ([`crate::ownership`]).
    pub foreign: bool,
}

/// The measurement the run is on: the current one, or else the first without a result.
/// Always in range of `run.cells` and the most repeats: a `status.current` that is not (written
/// for another spec version, or by hand) is ignored, so callers may index with it.
pub fn focus(run: &ValidatedRun, status: &BenchmarkRunStatus) -> Option<(usize, usize)> {
    status
        .current
        .as_ref()
        .and_then(|c| current_in_range(run, c))
        .or_else(|| next_pending(run, status))
}

/// The (cell, repeat) of `current` when both are in range of the run.
fn current_in_range(run: &ValidatedRun, c: &CurrentMeasurement) -> Option<(usize, usize)> {
    let cell = usize::try_from(c.cell)
        .ok()
        .filter(|&i| i < run.cells.len())?;
    let repeat = usize::try_from(c.repeat)
        .ok()
        .filter(|&r| r < run.max_repeats())?;
    Some((cell, repeat))
}

/// The hash of the deployment measurement (`cell`, `repeat`) runs on
/// ([`crate::names::deployment_hash`]): the cell's configuration, and its round when every
/// round deploys afresh. `cell` must be in range.
pub fn deployment(run: &ValidatedRun, cell: usize, repeat: usize) -> String {
    let c = &run.cells[cell];
    crate::names::deployment_hash(&run.targets[c.target].name, c, run.deployment_round(repeat))
}

/// From the start of a cell's load to the end of its measured window, when durations fix it
/// in advance: ramp-up, warm-up and window by duration; `None` for request counts.
pub fn fixed_load_time(run: &ValidatedRun, cell: &Cell) -> Option<Duration> {
    let Limit::Duration(window) = run.limit else {
        return None;
    };
    if cell.requests.is_some() {
        return None;
    }
    Some(warmup_time(run)? + window)
}

/// Ramp-up plus warm-up when both are durations (no warm-up counts as none; a warm-up until
/// steady lasts as long as the target needs).
fn warmup_time(run: &ValidatedRun) -> Option<Duration> {
    let warm = match run.warmup {
        Warmup::Duration(d) => d,
        Warmup::None => Duration::ZERO,
        Warmup::Requests(_) | Warmup::UntilSteady { .. } => return None,
    };
    Some(run.ramp_up.unwrap_or_default() + warm)
}

/// The latest a load Job's generators began (Unix ms): its agreed start, unless the pods'
/// containers started too close to it or after it to be sure, then the kubelet's start time
/// plus its rounding. `None` until every pod has started.
fn begun_by(start_at_ms: Option<i64>, started_ms: Option<i64>) -> Option<i64> {
    let started = started_ms? + STARTED_MARGIN_MS;
    Some(start_at_ms.map_or(started, |s| s.max(started)))
}

/// The measurement after (`cell`, `repeat`) in the run's order that has no result yet.
fn following(
    run: &ValidatedRun,
    status: &BenchmarkRunStatus,
    cell: usize,
    repeat: usize,
) -> Option<(usize, usize)> {
    measurement_order(run, status)
        .into_iter()
        .skip_while(|&m| m != (cell, repeat))
        .skip(1)
        .find(|&(c, r)| !has_result(&status.results, c, r))
}

/// Every measurement of the run in the order measured, as far as decided: the matrix order
/// with the rounds of `spec.repeatsUntil` ([`crate::adaptive::order`]), or the measurements of
/// `spec.search` and the one it asks for next ([`crate::search::order`]).
pub(crate) fn measurement_order(
    run: &ValidatedRun,
    status: &BenchmarkRunStatus,
) -> Vec<(usize, usize)> {
    match run.search {
        Some(_) => crate::search::order(run, status),
        None => crate::adaptive::order(run, &status.results),
    }
}

/// The measurements the run takes as far as decided ([`measurement_order`]).
pub(crate) fn total(run: &ValidatedRun, status: &BenchmarkRunStatus) -> usize {
    match run.search {
        Some(_) => crate::search::order(run, status).len(),
        None => crate::adaptive::total(run, &status.results),
    }
}

/// When the next measurement's load may be made ahead of its turn, its agreed start (Unix
/// ms): the planned end of the current window plus [`CHAIN_GAP`]. Only for a current load
/// whose window durations fix, with its generators' start known, and while at least
/// [`PRESTART`] of its warm-up is left; `None` otherwise (the next load is then made after
/// this one has ended).
pub fn chained_start(
    run: &ValidatedRun,
    cell: &Cell,
    start_at_ms: Option<i64>,
    started_ms: Option<i64>,
    now_ms: i64,
) -> Option<i64> {
    let len = fixed_load_time(run, cell)?;
    let begun = begun_by(start_at_ms, started_ms)?;
    let window_start = begun + warmup_time(run)?.as_millis() as i64;
    (now_ms + PRESTART.as_millis() as i64 <= window_start)
        .then(|| begun + len.as_millis() as i64 + CHAIN_GAP.as_millis() as i64)
}

/// The first measurement in the run's order ([`measurement_order`]) without a result. With
/// `spec.search` its cell may be one the search has not made yet: the next reconcile's run
/// has it ([`crate::search::extend`]).
fn next_pending(run: &ValidatedRun, status: &BenchmarkRunStatus) -> Option<(usize, usize)> {
    measurement_order(run, status)
        .into_iter()
        .find(|&(c, r)| !has_result(&status.results, c, r))
}

fn has_result(results: &[CellResult], cell: usize, repeat: usize) -> bool {
    results
        .iter()
        .any(|x| x.cell as usize == cell && x.repeat as usize == repeat)
}

/// When the measured window of `load` counts as scraped, in Unix milliseconds:
/// `settle` (the cluster's sample interval, [`Observed::sample_interval`]) after the window
/// ends. Prometheus is queried for it from then on.
pub fn scrape_ready_at(load: &LoadResult, settle: Duration) -> i64 {
    i64::try_from(load.window_end_ms)
        .unwrap_or(i64::MAX)
        .saturating_add(i64::try_from(settle.as_millis()).unwrap_or(i64::MAX))
}

/// The wait after the `attempts`-th failed attempt to reach Prometheus: 10 s, 20 s, 40 s,
/// then 60 s.
pub fn metrics_retry_delay(attempts: i32) -> Duration {
    let doublings = attempts.clamp(1, 8) as u32 - 1;
    (METRICS_RETRY_FIRST * 2u32.pow(doublings)).min(METRICS_RETRY_MAX)
}

/// A measurement whose CPU and memory are to be read from Prometheus in this reconcile.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionDue {
    /// Cell index.
    pub cell: usize,
    /// Repeat index.
    pub repeat: usize,
    /// When its load Job was created, if recorded (`metricsDue.loadCreated`).
    pub load_created: Option<Timestamp>,
}

/// The measurements whose collection is due at `now`: a window whose samples have been
/// scraped since its load ended (`metricsDue`), or a deferred one whose next attempt or bound
/// has come (`metricsPending`). These are the windows [`crate::observe`] asks Prometheus for.
pub fn collections_due(status: &BenchmarkRunStatus, now: Timestamp) -> Vec<CollectionDue> {
    status
        .results
        .iter()
        .filter(|r| match (&r.metrics_pending, &r.metrics_due) {
            (Some(p), _) => now >= p.next_attempt.0 || now >= p.give_up_at.0,
            (None, Some(d)) => now >= d.at.0,
            (None, None) => false,
        })
        .map(|r| CollectionDue {
            cell: r.cell.max(0) as usize,
            repeat: r.repeat.max(0) as usize,
            load_created: r
                .metrics_due
                .as_ref()
                .and_then(|d| d.load_created.clone())
                .map(|t| t.0),
        })
        .collect()
}

/// True for `Succeeded` and `Failed`.
pub fn is_finished(status: &BenchmarkRunStatus) -> bool {
    matches!(status.phase, Some(Phase::Succeeded | Phase::Failed))
}

/// Sets a condition, keeping its transition time when the status did not change.
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    type_: ConditionType,
    status: bool,
    reason: Reason,
    message: String,
    now: Timestamp,
    generation: Option<i64>,
) {
    let status = if status { "True" } else { "False" }.to_string();
    let old = conditions.iter().position(|c| c.type_ == type_.as_str());
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
    let why = "the spec is invalid; see the Accepted condition";
    plan_rejected(status, Reason::InvalidSpec, why, errors, generation, now)
}

/// A valid spec that names what the operator's allow-lists ([`crate::policy`]) exclude: the
/// run fails with `Accepted=False`, reason `NotAllowed`, and no children.
pub fn plan_not_allowed(
    status: &BenchmarkRunStatus,
    errors: &[FieldError],
    generation: Option<i64>,
    now: Timestamp,
) -> Decision {
    let why = "the operator's allow-lists refuse the run; see the Accepted condition";
    plan_rejected(status, Reason::NotAllowed, why, errors, generation, now)
}

fn plan_rejected(
    status: &BenchmarkRunStatus,
    reason: Reason,
    why: &str,
    errors: &[FieldError],
    generation: Option<i64>,
    now: Timestamp,
) -> Decision {
    let mut s = status.clone();
    let message = benchrun_api::validate::describe(errors);
    let notes = if s.phase == Some(Phase::Failed) {
        Vec::new()
    } else {
        vec![Note {
            warning: true,
            reason,
            message: message.clone(),
        }]
    };
    s.phase = Some(Phase::Failed);
    s.observed_generation = generation;
    s.current = None;
    set_condition(
        &mut s.conditions,
        ConditionType::Accepted,
        false,
        reason,
        message,
        now,
        generation,
    );
    set_condition(
        &mut s.conditions,
        ConditionType::Failed,
        true,
        reason,
        why.into(),
        now,
        generation,
    );
    kstatus::set_kstatus_conditions(&mut s, now, generation);
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
    // A search's next cell, made from the status (nothing to do without a search).
    let run = crate::search::extend(run, status);
    let run = run.as_ref();
    let mut p = Planner::new(run, status, observed, now);
    crate::search::sync(run, &mut p.status.search, &status.results);
    p.status.total = Some(total(run, &p.status) as i32);
    if is_finished(status) {
        p.finished();
    } else if status.phase != Some(Phase::Running) {
        p.start();
    } else {
        p.step();
    }
    p.decision()
}

/// The decision after the apiserver refused a child of `status` (the status the refused
/// decision started from): a refused target Deployment or Service fails every pending
/// measurement of its target configuration, a refused load Job or detail ConfigMap fails its
/// measurement; either way with the apiserver's message (or, for a name held by an object
/// that is not the run's, the operator's own naming it), a Warning event `ApplyRefused` and
/// condition `ChildrenApplied=False`. The run then moves on, so it never holds the measuring
/// slot waiting for an apply that cannot succeed.
pub fn plan_refused(
    run: &ValidatedRun,
    status: &BenchmarkRunStatus,
    observed: &Observed,
    refusal: &Refusal,
    now: Timestamp,
) -> Decision {
    let run = crate::search::extend(run, status);
    let run = run.as_ref();
    let mut p = Planner::new(run, status, observed, now);
    let reason = match refusal.foreign {
        true => refusal.message.clone(),
        false => format!(
            "the apiserver refused {} ({}): {}",
            refusal.child, refusal.code, refusal.message
        ),
    };
    p.note(true, Reason::ApplyRefused, reason.clone());
    p.condition(
        ConditionType::ChildrenApplied,
        false,
        Reason::ApplyRefused,
        reason.clone(),
    );
    match &refusal.action {
        Action::ApplyTarget { cell, .. } if *cell < run.cells.len() => {
            p.fail_configuration(*cell, reason)
        }
        // Without its backing services no measurement can run.
        Action::ApplyServices { .. } | Action::CreateSeedJob { .. } => p.fail_remaining(reason),
        Action::CreateJob { cell, repeat, .. } | Action::StoreDetail { cell, repeat, .. }
            if *cell < run.cells.len() && *repeat < run.max_repeats() =>
        {
            p.fail_measurement(*cell, *repeat, reason)
        }
        // Deletions and the run itself are never refused this way; retrying is all there is.
        _ => p.after(Duration::from_secs(5)),
    }
    p.decision()
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

impl<'a> Planner<'a> {
    /// A planner starting from `status`, which it marks as describing the observed generation.
    fn new(
        run: &'a ValidatedRun,
        status: &BenchmarkRunStatus,
        obs: &'a Observed,
        now: Timestamp,
    ) -> Self {
        let mut status = status.clone();
        status.observed_generation = obs.generation;
        Planner {
            run,
            obs,
            now,
            status,
            actions: Vec::new(),
            notes: Vec::new(),
            requeue: None,
        }
    }

    fn decision(mut self) -> Decision {
        kstatus::set_kstatus_conditions(&mut self.status, self.now, self.obs.generation);
        Decision {
            actions: self.actions,
            status: self.status,
            notes: self.notes,
            requeue: self.requeue,
        }
    }
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
    benchrun_wire::merge(&ok).map_err(|e| format!("failed to merge the load pods' results: {e}"))
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

pub mod fit;
pub mod kstatus;
pub mod placement;
mod reads;
pub use reads::reads;

mod steps;

mod metrics;

mod services;

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod fault_tests;

#[cfg(test)]
mod chain_tests;

#[cfg(test)]
mod slot_tests;

#[cfg(test)]
mod services_tests;

#[cfg(test)]
mod rounds_tests;

#[cfg(test)]
mod fresh_tests;

#[cfg(test)]
mod fuzz_tests;
