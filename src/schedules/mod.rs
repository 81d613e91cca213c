//! The BenchmarkSchedule controller: creates a schedule's runs when its cron expression fires
//! (or its trigger annotation changes), adds each finished run's per-cell figures to the
//! schedule's series, looks for steps in them, and deletes runs past `historyLimit`.
//!
//! The decisions are pure ([`decide`]); this module gathers the facts (the schedule from its
//! watch, its runs from the run controller's cache: no LIST per reconcile) and carries them out.
//! Each schedule is reconciled when it changes, when one of its runs changes, and at its next
//! fire time.
//!
//! A schedule never breaks silently: when the apiserver refuses to create one of its runs, the
//! schedule says so in `Ready=False` (reason `RunCreateFailed`, with the apiserver's words; kstatus
//! reads a `Ready=False` that does not resolve as stalled) and a Warning event, retries the fire
//! while it is within `startingDeadlineSeconds`, and keeps saying so until a run is created or
//! the spec changes.

pub mod decide;

use std::sync::Arc;
use std::time::Duration;

use benchrun_api::history;
use benchrun_api::schedule::{
    BenchmarkSchedule, BenchmarkScheduleStatus, CellSeries, SCHEDULE_LABEL,
};
use benchrun_api::{BenchmarkRun, Phase};
use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};

use crate::names::MANAGER;
use decide::{Decision, Facts, Fire};

/// What every schedule reconcile shares.
struct Ctx {
    client: Client,
    /// The run controller's cache of runs.
    runs: Store<BenchmarkRun>,
    /// Publishes the schedules' events.
    recorder: Recorder,
}

/// Reason of `Ready=False` and of the Warning event when the apiserver refused a run.
pub const RUN_CREATE_FAILED: &str = "RunCreateFailed";

/// How soon a fire whose run could not be created is tried again.
const RETRY_CREATE: Duration = Duration::from_secs(30);

/// Runs the schedule controller until shutdown: `runs` is the run controller's cache, which the
/// schedules read their runs from.
pub async fn run(client: Client, namespace: Option<String>, runs: Store<BenchmarkRun>) {
    let (schedules, owned): (Api<BenchmarkSchedule>, Api<BenchmarkRun>) = match &namespace {
        Some(ns) => (
            Api::namespaced(client.clone(), ns),
            Api::namespaced(client.clone(), ns),
        ),
        None => (Api::all(client.clone()), Api::all(client.clone())),
    };
    // A schedule's first reconcile must see its runs: wait for the run cache.
    while tokio::time::timeout(Duration::from_secs(1), runs.wait_until_ready())
        .await
        .is_err()
    {}
    let reporter = Reporter {
        controller: MANAGER.into(),
        instance: std::env::var("POD_NAME").ok(),
    };
    let recorder = Recorder::new(client.clone(), reporter);
    let ctx = Arc::new(Ctx {
        client,
        runs,
        recorder,
    });
    Controller::new(schedules, watcher::Config::default())
        .owns(owned, watcher::Config::default().labels(SCHEDULE_LABEL))
        .shutdown_on_signal()
        .run(reconcile, error_policy, ctx)
        .for_each(|res| async move {
            match res {
                Ok((obj, _)) => tracing::debug!(schedule = %obj, "reconciled"),
                Err(e) => tracing::warn!(error = %e, "schedule reconcile failed"),
            }
        })
        .await;
}

fn error_policy(s: Arc<BenchmarkSchedule>, error: &kube::Error, _: Arc<Ctx>) -> Action {
    tracing::warn!(schedule = %s.name_any(), error = %error, "schedule reconcile failed; retrying in 10s");
    Action::requeue(Duration::from_secs(10))
}

/// The schedule's runs in the cache: same namespace, its label, owned by this schedule.
fn runs_of(s: &BenchmarkSchedule, runs: &Store<BenchmarkRun>) -> Vec<Arc<BenchmarkRun>> {
    let name = s.name_any();
    let ns = s.namespace();
    let uid = s.metadata.uid.clone();
    runs.state()
        .into_iter()
        .filter(|r| r.namespace() == ns && r.labels().get(SCHEDULE_LABEL) == Some(&name))
        .filter(|r| {
            r.owner_references()
                .iter()
                .any(|o| o.kind == "BenchmarkSchedule" && Some(&o.uid) == uid.as_ref())
        })
        .collect()
}

async fn reconcile(s: Arc<BenchmarkSchedule>, ctx: Arc<Ctx>) -> Result<Action, kube::Error> {
    if s.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let ns = s.namespace().unwrap_or_default();
    let name = s.name_any();
    let cached = runs_of(&s, &ctx.runs);
    let now = Timestamp::now();
    let facts = Facts {
        schedule: &s,
        runs: cached.iter().map(Arc::as_ref).collect(),
        now,
    };
    let mut d = decide::decide(&facts);
    let runs_api: Api<BenchmarkRun> = Api::namespaced(ctx.client.clone(), &ns);
    let mut created = None;
    let mut create_failed = None;
    if let Some((fire, run)) = &d.create {
        let pp = PostParams {
            field_manager: Some(MANAGER.into()),
            ..PostParams::default()
        };
        match runs_api.create(&pp, run).await {
            Ok(r) => {
                tracing::info!(schedule = %name, run = %r.name_any(), fire = ?fire, "created a run");
                created = Some(r);
            }
            // A second attempt at the same scheduled time (or trigger value) finds the first.
            Err(kube::Error::Api(e)) if e.code == 409 => {
                tracing::info!(schedule = %name, run = ?run.metadata.name, "run exists already");
            }
            Err(e) => {
                let why = create_error(run.metadata.name.as_deref().unwrap_or_default(), &e);
                let error = e.to_string();
                let error = crate::logtext::cap(&error, crate::logtext::LOG_MAX);
                tracing::warn!(schedule = %name, %error, "could not create a run");
                // Not acted on: the fire is tried again (within the starting deadline).
                let old = s.status.clone().unwrap_or_default();
                d.last_schedule_time = old.last_schedule_time.map(|t| t.0);
                d.last_trigger = old.last_trigger;
                create_failed = Some(why);
            }
        }
    }
    for victim in &d.delete {
        match runs_api.delete(victim, &DeleteParams::background()).await {
            Ok(_) => {
                tracing::info!(schedule = %name, run = %victim, "deleted a run past historyLimit")
            }
            Err(kube::Error::Api(e)) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let (series, mut runs) = after_pruning(&s, &facts.runs, &d.delete);
    if let Some(r) = &created {
        runs.push(r);
    }
    let unfinished = runs.iter().any(|r| {
        !r.status
            .as_ref()
            .and_then(|s| s.phase)
            .is_some_and(Phase::is_final)
    });
    let status = status(&s, &runs, series, &d, create_failed.as_deref(), now);
    publish(&ctx, &s, &d, create_failed.as_deref()).await;
    let again = match create_failed {
        Some(_) => Action::requeue(RETRY_CREATE),
        None => requeue(&d, now, unfinished),
    };
    if s.status.as_ref() == Some(&status) {
        return Ok(again);
    }
    let body = serde_json::json!({
        "apiVersion": "benchrun.dev/v1alpha1",
        "kind": "BenchmarkSchedule",
        "status": status,
    });
    Api::<BenchmarkSchedule>::namespaced(ctx.client.clone(), &ns)
        .patch_status(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await?;
    Ok(again)
}

/// Why creating the run `run` failed, in the apiserver's words when it answered.
pub fn create_error(run: &str, e: &kube::Error) -> String {
    let why = match e {
        kube::Error::Api(s) => format!("{} ({} {})", s.message, s.code, s.reason),
        other => other.to_string(),
    };
    format!("could not create run {run}: {why}")
}

/// The schedule's events: a Warning when a run could not be created, a Normal one when a fire
/// was skipped (once per skipped time). Best effort: a failure to record one is logged.
async fn publish(ctx: &Ctx, s: &BenchmarkSchedule, d: &Decision, create_failed: Option<&str>) {
    let old_skip = s.status.as_ref().and_then(|st| st.last_skip.as_ref());
    let mut events = Vec::new();
    if let Some(why) = create_failed {
        events.push((EventType::Warning, RUN_CREATE_FAILED, why.to_string()));
    }
    if let Some(skip) = d.skip.as_ref().filter(|k| Some(*k) != old_skip) {
        events.push((EventType::Normal, "Skipped", skip.clone()));
    }
    let reference = s.object_ref(&());
    for (type_, reason, note) in events {
        let ev = Event {
            type_,
            reason: reason.into(),
            note: Some(crate::logtext::cap(&note, crate::logtext::EVENT_MAX).into_owned()),
            action: reason.into(),
            secondary: None,
        };
        if let Err(e) = ctx.recorder.publish(&ev, &reference).await {
            let error = e.to_string();
            let error = crate::logtext::cap(&error, crate::logtext::LOG_MAX);
            tracing::warn!(%error, reason, "failed to publish a schedule event");
        }
    }
}

/// How often a schedule with an unfinished run looks again. Its reconcile is woken by its runs'
/// changes, but reads them from the run controller's cache, which may not show the change yet:
/// without this a run's last change (its end) could wait for the next fire time to be read.
/// A reconcile that changes nothing writes nothing.
const WHILE_RUNNING: Duration = Duration::from_secs(10);

/// When to look again: at once after a manual run (a scheduled time may also be due), else
/// just after the next fire time, and within [`WHILE_RUNNING`] while a run is unfinished; a
/// suspended or invalid schedule without unfinished runs waits for a change.
fn requeue(d: &Decision, now: Timestamp, unfinished: bool) -> Action {
    if matches!(d.create, Some((Fire::Manual(_), _))) {
        return Action::requeue(Duration::from_secs(1));
    }
    let next = d.next.map(|next| {
        let ms = next.duration_since(now).as_millis().max(0) as u64 + 500;
        Duration::from_millis(ms)
    });
    match (next, unfinished) {
        (Some(n), true) => Action::requeue(n.min(WHILE_RUNNING)),
        (Some(n), false) => Action::requeue(n),
        (None, true) => Action::requeue(WHILE_RUNNING),
        (None, false) => Action::await_change(),
    }
}

/// The schedule's new status from the decision, its runs (those it keeps) and its `series`
/// ([`grow`]n by every run, the ones pruned now included): the steps found, the conditions.
fn status(
    s: &BenchmarkSchedule,
    runs: &[&BenchmarkRun],
    series: Vec<CellSeries>,
    d: &Decision,
    create_failed: Option<&str>,
    now: Timestamp,
) -> BenchmarkScheduleStatus {
    let old = s.status.clone().unwrap_or_default();
    let changes = history::changes(&series, &history::options(s.spec.changepoints.as_ref()));
    let newest = decide::by_age(runs).last().copied();
    let mut conditions = Vec::new();
    // A refused run keeps the schedule not Ready until a run is created or the spec changes:
    // the apiserver's answer does not change by itself, and a later skipped fire (the deadline
    // passed) must not hide it.
    let refused = create_failed.map(str::to_string).or_else(|| {
        old.conditions
            .iter()
            .find(|c| c.type_ == "Ready" && c.status == "False" && c.reason == RUN_CREATE_FAILED)
            .filter(|c| c.observed_generation == s.metadata.generation)
            .filter(|_| d.create.is_none())
            .map(|c| c.message.clone())
    });
    let (ready, reason, message) = match (&d.invalid, &refused, s.spec.suspend) {
        (Some(e), _, _) => ("False", "InvalidSchedule", e.clone()),
        (None, Some(why), _) => ("False", RUN_CREATE_FAILED, why.clone()),
        (None, None, true) => (
            "True",
            "Suspended",
            "suspended: only the trigger annotation creates runs".into(),
        ),
        (None, None, false) => (
            "True",
            "Scheduled",
            format!(
                "next run at {}",
                d.next.map_or("-".into(), |t| t.to_string())
            ),
        ),
    };
    conditions.push(condition(
        &old.conditions,
        "Ready",
        ready,
        reason,
        &message,
        s,
        now,
    ));
    let (worse, reason, message) = benchrun_api::history::regressed(&changes);
    conditions.push(condition(
        &old.conditions,
        "Regressed",
        if worse { "True" } else { "False" },
        &reason,
        &message,
        s,
        now,
    ));
    BenchmarkScheduleStatus {
        observed_generation: s.metadata.generation,
        conditions,
        last_schedule_time: d.last_schedule_time.map(Time),
        next_schedule_time: d.next.map(Time),
        last_run: newest.map(|r| r.name_any()),
        last_run_verdict: newest.map(history::verdict),
        last_succeeded_run: decide::last_succeeded(runs)
            .map(|r| r.name_any())
            .or(old.last_succeeded_run),
        last_trigger: d.last_trigger.clone(),
        last_skip: d.skip.clone().or(old.last_skip),
        runs: decide::scheduled_runs(runs),
        series,
        changes,
    }
}

/// The schedule's series grown by every run in `all` (the ones pruned now included: a run may
/// have finished since the last reconcile, and once deleted it is gone from the cache for
/// good), and the runs it keeps (`all` but those in `deleted`). Pure.
pub fn after_pruning<'a>(
    s: &BenchmarkSchedule,
    all: &[&'a BenchmarkRun],
    deleted: &[String],
) -> (Vec<CellSeries>, Vec<&'a BenchmarkRun>) {
    let old = s
        .status
        .as_ref()
        .map(|st| st.series.clone())
        .unwrap_or_default();
    let series = grow(old, all);
    let kept = all
        .iter()
        .copied()
        .filter(|r| !deleted.contains(&r.name_any()))
        .collect();
    (series, kept)
}

/// Adds the Succeeded runs that finished after the newest point already kept, oldest first (a
/// run whose points were dropped for age is not added again).
pub fn grow(mut series: Vec<CellSeries>, runs: &[&BenchmarkRun]) -> Vec<CellSeries> {
    let newest = series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.time.as_ref().map(|t| t.0)))
        .max();
    let mut done: Vec<&BenchmarkRun> = runs
        .iter()
        .copied()
        .filter(|r| r.status.as_ref().and_then(|s| s.phase) == Some(Phase::Succeeded))
        .filter(|r| !history::has_run(&series, &r.name_any()))
        .filter(|r| {
            let t = r
                .status
                .as_ref()
                .and_then(|s| s.completion_time.as_ref())
                .map(|t| t.0);
            newest.is_none_or(|n| t.is_none_or(|t| t > n))
        })
        .collect();
    done.sort_by_key(|r| {
        r.status
            .as_ref()
            .and_then(|s| s.completion_time.as_ref())
            .map(|t| t.0)
    });
    for r in done {
        history::add_run(&mut series, r);
    }
    series
}

/// A condition, keeping its transition time when its status did not change.
fn condition(
    old: &[Condition],
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    s: &BenchmarkSchedule,
    now: Timestamp,
) -> Condition {
    let since = old
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map_or(Time(now), |c| c.last_transition_time.clone());
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: message.chars().take(1000).collect(),
        last_transition_time: since,
        observed_generation: s.metadata.generation,
    }
}

#[cfg(test)]
mod tests;
