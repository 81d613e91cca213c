//! A schedule's decisions, pure: when it fires, whether it creates a run, the run it creates,
//! which runs it deletes, and the status it reports. The reconcile ([`super::reconcile`])
//! gathers the facts and carries the decision out.

use std::str::FromStr as _;

use benchrun_api::history;
use benchrun_api::schedule::{
    BenchmarkSchedule, ConcurrencyPolicy, ScheduledRun, DEFAULT_MAX_QUEUED,
    SCHEDULED_AT_ANNOTATION, SCHEDULE_LABEL, TRIGGER_ANNOTATION,
};
use benchrun_api::{BaselineSpec, BenchmarkRun, Phase};
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

/// Default `historyLimit`.
pub const DEFAULT_HISTORY_LIMIT: usize = 10;

/// Default `startingDeadlineSeconds`.
pub const DEFAULT_DEADLINE: i64 = 300;

/// The cron expression parsed, or why it is not one (five fields or an @ alias, in UTC).
pub fn parse(expr: &str) -> Result<Cron, String> {
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
        .parse(expr.trim())
        .map_err(|e| format!("schedule {expr:?} is not a cron expression: {e}"))
}

/// The first time after `t` (exclusive) the expression fires.
pub fn next_after(cron: &Cron, t: Timestamp) -> Option<Timestamp> {
    cron.find_next_occurrence(&t.to_zoned(TimeZone::UTC), false)
        .ok()
        .map(|z| z.timestamp())
}

/// The newest time at or before `t` the expression fired.
pub fn latest_at_or_before(cron: &Cron, t: Timestamp) -> Option<Timestamp> {
    cron.find_previous_occurrence(&t.to_zoned(TimeZone::UTC), true)
        .ok()
        .map(|z| z.timestamp())
}

/// What the reconcile knows when it decides.
#[derive(Clone, Debug)]
pub struct Facts<'a> {
    /// The schedule.
    pub schedule: &'a BenchmarkSchedule,
    /// Its runs (from the operator's cache of runs), in any order.
    pub runs: Vec<&'a BenchmarkRun>,
    /// Now.
    pub now: Timestamp,
}

/// Why the schedule creates a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fire {
    /// The cron expression fired at this time.
    Scheduled(Timestamp),
    /// The trigger annotation has this new value.
    Manual(String),
}

/// What the schedule does in one reconcile.
#[derive(Clone, Debug)]
pub struct Decision {
    /// The run to create, and why.
    pub create: Option<(Fire, BenchmarkRun)>,
    /// Runs to delete (past `historyLimit`), oldest first.
    pub delete: Vec<String>,
    /// The newest schedule time acted on (a run created or the time skipped).
    pub last_schedule_time: Option<Timestamp>,
    /// A time skipped, and why.
    pub skip: Option<String>,
    /// The trigger value acted on.
    pub last_trigger: Option<String>,
    /// When the schedule fires next.
    pub next: Option<Timestamp>,
    /// Why the schedule cannot fire (an invalid cron expression or run template).
    pub invalid: Option<String>,
}

fn time_of(t: &Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> Option<Timestamp> {
    t.as_ref().map(|t| t.0)
}

/// The runs ordered by creation (then name), oldest first.
pub fn by_age<'a>(runs: &[&'a BenchmarkRun]) -> Vec<&'a BenchmarkRun> {
    let mut v = runs.to_vec();
    v.sort_by_key(|r| {
        (
            time_of(&r.metadata.creation_timestamp),
            r.metadata.name.clone(),
        )
    });
    v
}

fn phase(r: &BenchmarkRun) -> Option<Phase> {
    r.status.as_ref().and_then(|s| s.phase)
}

fn finished(r: &BenchmarkRun) -> bool {
    phase(r).is_some_and(Phase::is_final)
}

/// The newest Succeeded run: the next run's baseline.
pub fn last_succeeded<'a>(runs: &[&'a BenchmarkRun]) -> Option<&'a BenchmarkRun> {
    by_age(runs)
        .into_iter()
        .rev()
        .find(|r| phase(r) == Some(Phase::Succeeded))
}

/// Decides what the schedule does now.
pub fn decide(f: &Facts) -> Decision {
    let spec = &f.schedule.spec;
    let status = f.schedule.status.clone().unwrap_or_default();
    let mut d = Decision {
        create: None,
        delete: prune(&f.runs, spec.history_limit),
        last_schedule_time: time_of(&status.last_schedule_time),
        skip: None,
        last_trigger: status.last_trigger.clone(),
        next: None,
        invalid: None,
    };
    let trigger = f
        .schedule
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(TRIGGER_ANNOTATION))
        .filter(|v| !v.is_empty());
    // A new trigger value creates a run whatever the schedule, the suspension or the policy:
    // someone asked for it. The scheduled time (if also due) is decided in the next reconcile.
    if let Some(v) = trigger.filter(|v| status.last_trigger.as_ref() != Some(*v)) {
        d.last_trigger = Some(v.clone());
        let fire = Fire::Manual(v.clone());
        // The cache of schedules may not show the status written with the run yet.
        if !exists(f, &fire) {
            d.create = Some((fire.clone(), new_run(f, &fire)));
        }
    }
    // A template the operator would refuse makes runs that fail at once: none is created.
    if let Err(errors) = benchrun_api::validate(&spec.run_template.spec) {
        d.create = None;
        d.invalid = Some(format!(
            "runTemplate: {}",
            errors
                .iter()
                .map(|e| format!(
                    "{}: {}",
                    e.field.replacen("spec.", "runTemplate.spec.", 1),
                    e.message
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        return d;
    }
    let cron = match parse(&spec.schedule) {
        Ok(c) => c,
        Err(e) => {
            d.invalid = Some(e);
            return d;
        }
    };
    if spec.suspend {
        return d;
    }
    d.next = next_after(&cron, f.now);
    if d.create.is_some() {
        return d;
    }
    let created = time_of(&f.schedule.metadata.creation_timestamp).unwrap_or(f.now);
    let anchor = d.last_schedule_time.map_or(created, |t| t.max(created));
    let Some(due) = latest_at_or_before(&cron, f.now).filter(|t| *t > anchor) else {
        return d;
    };
    d.last_schedule_time = Some(due);
    if exists(f, &Fire::Scheduled(due)) {
        // Acted on already: the status that says so has not reached the cache yet.
        return d;
    }
    let deadline = spec.starting_deadline_seconds.unwrap_or(DEFAULT_DEADLINE);
    let late = f.now.duration_since(due);
    if late > SignedDuration::from_secs(deadline) {
        d.skip = Some(format!(
            "{due}: missed by {}s, more than startingDeadlineSeconds ({deadline})",
            late.as_secs()
        ));
        return d;
    }
    let unfinished: Vec<&str> = by_age(&f.runs)
        .into_iter()
        .filter(|r| !finished(r))
        .filter_map(|r| r.metadata.name.as_deref())
        .collect();
    if spec.concurrency_policy == ConcurrencyPolicy::Skip && !unfinished.is_empty() {
        d.skip = Some(format!(
            "{due}: skipped, {} has not finished (concurrencyPolicy Skip)",
            unfinished.join(", ")
        ));
        return d;
    }
    let waiting: Vec<&str> = by_age(&f.runs)
        .into_iter()
        .filter(|r| benchrun_api::queue::is_waiting(r))
        .filter_map(|r| r.metadata.name.as_deref())
        .collect();
    let max_queued = spec.max_queued.unwrap_or(DEFAULT_MAX_QUEUED).max(1) as usize;
    if spec.concurrency_policy == ConcurrencyPolicy::Queue && waiting.len() >= max_queued {
        d.skip = Some(format!(
            "{due}: skipped, {} runs of this schedule wait for the measuring slot already ({}): \
             maxQueued is {max_queued} (concurrencyPolicy Queue)",
            waiting.len(),
            waiting.join(", ")
        ));
        return d;
    }
    d.create = Some((Fire::Scheduled(due), new_run(f, &Fire::Scheduled(due))));
    d
}

/// Whether the run a fire creates exists already.
fn exists(f: &Facts, fire: &Fire) -> bool {
    let name = run_name(
        f.schedule.metadata.name.as_deref().unwrap_or_default(),
        fire,
    );
    f.runs
        .iter()
        .any(|r| r.metadata.name.as_deref() == Some(name.as_str()))
}

/// The runs past `historyLimit`: the oldest finished runs beyond the newest `limit` finished
/// ones. Unfinished runs are kept, and so is every run a later run will compare with: the
/// newest Succeeded run (the next run's baseline) and each run an unfinished run names in
/// `spec.baseline` (under `Queue` or a manual trigger a queued run names an older one).
pub fn prune(runs: &[&BenchmarkRun], limit: Option<i32>) -> Vec<String> {
    let limit = limit.map_or(DEFAULT_HISTORY_LIMIT, |l| l.max(1) as usize);
    let mut keep: Vec<String> = runs
        .iter()
        .filter(|r| !finished(r))
        .filter_map(|r| Some(r.spec.baseline.as_ref()?.run.clone()))
        .collect();
    keep.extend(last_succeeded(runs).and_then(|r| r.metadata.name.clone()));
    let done: Vec<&BenchmarkRun> = by_age(runs).into_iter().filter(|r| finished(r)).collect();
    let extra = done.len().saturating_sub(limit);
    done.into_iter()
        .take(extra)
        .filter_map(|r| r.metadata.name.clone())
        .filter(|n| !keep.contains(n))
        .collect()
}

/// The name of the run a fire creates: `<schedule>-<yyyymmddhhmm>` for a scheduled time (so a
/// second attempt at the same time finds the first), `<schedule>-t<hash>` for a trigger value.
pub fn run_name(schedule: &str, fire: &Fire) -> String {
    match fire {
        Fire::Scheduled(t) => format!("{schedule}-{}", t.strftime("%Y%m%d%H%M")),
        Fire::Manual(v) => format!("{schedule}-t{:08x}", crate::hash::fnv1a::<u32>(v.bytes())),
    }
}

/// The run a fire creates: the template's spec and metadata, the schedule's label, owned by
/// the schedule (deleting the schedule deletes its runs), with `spec.baseline.run` set to the
/// schedule's newest Succeeded run unless the template names one.
pub fn new_run(f: &Facts, fire: &Fire) -> BenchmarkRun {
    let s = f.schedule;
    let name = s.metadata.name.clone().unwrap_or_default();
    let template = &s.spec.run_template;
    let meta = template.metadata.clone().unwrap_or_default();
    let mut labels = meta.labels;
    labels.insert(SCHEDULE_LABEL.into(), name.clone());
    let mut annotations = meta.annotations;
    annotations.insert(
        SCHEDULED_AT_ANNOTATION.into(),
        match fire {
            Fire::Scheduled(t) => t.to_string(),
            Fire::Manual(_) => "manual".into(),
        },
    );
    let mut spec = template.spec.clone();
    if spec.baseline.is_none() {
        spec.baseline = last_succeeded(&f.runs)
            .and_then(|r| r.metadata.name.clone())
            .map(|run| BaselineSpec {
                run,
                tolerance: s.spec.baseline_tolerance.clone(),
            });
    }
    let mut run = BenchmarkRun::new(&run_name(&name, fire), spec);
    run.metadata = ObjectMeta {
        name: run.metadata.name,
        namespace: s.metadata.namespace.clone(),
        labels: Some(labels),
        annotations: Some(annotations),
        owner_references: Some(vec![OwnerReference {
            api_version: "benchrun.dev/v1alpha1".into(),
            kind: "BenchmarkSchedule".into(),
            name,
            uid: s.metadata.uid.clone().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        ..ObjectMeta::default()
    };
    run
}

/// `status.runs`: the schedule's runs that exist, oldest first, with phase and verdict.
pub fn scheduled_runs(runs: &[&BenchmarkRun]) -> Vec<ScheduledRun> {
    by_age(runs)
        .into_iter()
        .map(|r| {
            let at = r
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(SCHEDULED_AT_ANNOTATION))
                .and_then(|v| Timestamp::from_str(v).ok());
            ScheduledRun {
                name: r.metadata.name.clone().unwrap_or_default(),
                scheduled_time: at.map(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time),
                phase: phase(r).map(|p| p.to_string()),
                verdict: finished(r).then(|| history::verdict(r)),
            }
        })
        .collect()
}
