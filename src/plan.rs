//! The run's state machine. Pure: from the validated run, its status, what was observed and
//! `now`, decide the actions, the next status and when to look again.
//!
//! One measurement (cell × repeat) at a time, in matrix order, each through the stages
//! Deploying → Loading → Collecting, its result appended to `status.results` exactly once.
//! Everything needed to resume lives in `status.current` and in the children (the Job's
//! restart-baseline annotation, the detail ConfigMap), so a restarted operator continues where
//! the last one stopped without losing or repeating a measurement.

use std::time::Duration;

use benchrun_api::validate::{CleanupPolicy, FieldError, Warmup};
use benchrun_api::{
    condition, phase, stage, BenchmarkRunStatus, CellResult, CurrentMeasurement, ValidatedRun,
};
use benchrun_load::LoadResult;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

use crate::names;
use crate::observed::{JobObserved, Observed, Slot};
use crate::results::{self, PodFacts};

/// Prometheus scrapes every 5 s: wait two intervals after the window before querying it.
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
        restarts_baseline: i32,
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

impl Planner<'_> {
    fn note(&mut self, warning: bool, reason: &'static str, message: String) {
        self.notes.push(Note {
            warning,
            reason,
            message,
        });
    }

    fn condition(&mut self, type_: &str, ok: bool, reason: &str, message: String) {
        let generation = self.obs.generation;
        set_condition(
            &mut self.status.conditions,
            type_,
            ok,
            reason,
            message,
            self.now,
            generation,
        );
    }

    fn after(&mut self, d: Duration) {
        self.requeue = Some(self.requeue.map_or(d, |r| r.min(d)));
    }

    fn elapsed(&self, since: &Time) -> Duration {
        let ms = self.now.as_millisecond() - since.0.as_millisecond();
        Duration::from_millis(ms.max(0) as u64)
    }

    fn progress(&mut self) {
        self.status.progress = Some(format!(
            "{}/{}",
            self.status.results.len(),
            self.run.total()
        ));
    }

    fn start(&mut self) {
        if let Slot::HeldBy(holders) = &self.obs.slot {
            let message = format!(
                "waiting for a measuring slot, held by {}",
                holders.join(", ")
            );
            if self.status.phase.as_deref() != Some(phase::QUEUED) {
                self.note(false, "Queued", message.clone());
            }
            self.status.phase = Some(phase::QUEUED.into());
            self.condition(
                condition::ACCEPTED,
                true,
                "Valid",
                "the spec is valid".into(),
            );
            self.condition(condition::RUNNING, false, "Queued", message);
            self.progress();
            self.after(Duration::from_secs(5));
            return;
        }
        self.status.phase = Some(phase::RUNNING.into());
        self.status.start_time.get_or_insert(Time(self.now));
        self.condition(
            condition::ACCEPTED,
            true,
            "Valid",
            "the spec is valid".into(),
        );
        self.condition(
            condition::RUNNING,
            true,
            "Measuring",
            format!(
                "measuring {} cells × {} repeats",
                self.run.cells.len(),
                self.run.repeats
            ),
        );
        self.note(
            false,
            "Started",
            format!("{} measurements", self.run.total()),
        );
        self.progress();
        self.advance();
    }

    /// Moves to the next measurement without a result, or finishes the run.
    fn advance(&mut self) {
        match next_pending(self.run, &self.status.results) {
            Some((cell, repeat)) => {
                self.status.current = Some(CurrentMeasurement {
                    cell: cell as i32,
                    repeat: repeat as i32,
                    stage: stage::DEPLOYING.into(),
                    since: Time(self.now),
                    job: None,
                });
                self.after(Duration::from_millis(500));
            }
            None => self.finish(),
        }
    }

    fn step(&mut self) {
        let Some(cur) = self.status.current.clone() else {
            self.advance();
            return;
        };
        let (cell, repeat) = (cur.cell as usize, cur.repeat as usize);
        if cell >= self.run.cells.len() || repeat >= self.run.repeats {
            // Status from another spec version: it cannot be continued.
            self.status.current = None;
            self.advance();
            return;
        }
        match cur.stage.as_str() {
            stage::LOADING => self.loading(&cur, cell, repeat),
            stage::COLLECTING => self.collecting(cell, repeat),
            _ => self.deploying(&cur, cell, repeat),
        }
    }

    fn deploying(&mut self, cur: &CurrentMeasurement, cell: usize, repeat: usize) {
        let c = &self.run.cells[cell];
        let config = names::config_hash(&self.run.spec.targets[c.target].name, c);
        if self.obs.target_configs.iter().any(|h| *h != config) {
            // The previous configuration's pods go first: they would compete for CPU.
            self.actions.push(Action::DeleteTargets {
                except: Some(config),
            });
            self.after(Duration::from_secs(2));
            return;
        }
        self.actions.push(Action::ApplyTarget { cell });
        let target = self.obs.target.clone().unwrap_or_default();
        if let (true, Some(ip)) = (target.ready, self.obs.service_ip.clone()) {
            let job = names::job_name(&self.obs.run_name, cell, repeat);
            if self.obs.job == JobObserved::Absent {
                self.actions.push(Action::CreateJob {
                    cell,
                    repeat,
                    cluster_ip: ip,
                    restarts_baseline: target.restarts,
                });
            }
            self.note(
                false,
                "LoadStarted",
                format!("cell {cell} repeat {repeat}: load Job {job}"),
            );
            self.status.current = Some(CurrentMeasurement {
                stage: stage::LOADING.into(),
                since: Time(self.now),
                job: Some(job),
                ..cur.clone()
            });
            self.after(Duration::from_secs(5));
            return;
        }
        let waited = self.elapsed(&cur.since);
        if target.fatal || waited >= self.run.ready_timeout {
            let problem = target
                .problem
                .unwrap_or_else(|| "the pods never became ready".into());
            let reason = format!(
                "target not ready after {}: {problem}",
                benchrun_api::units::format_duration(Duration::from_secs(waited.as_secs()))
            );
            self.fail_configuration(cell, reason);
            return;
        }
        self.after(Duration::from_secs(2));
    }

    fn loading(&mut self, cur: &CurrentMeasurement, cell: usize, repeat: usize) {
        match &self.obs.job {
            JobObserved::Absent => {
                // Lost before it was created (or deleted by hand): deploy and create it again.
                self.status.current = Some(CurrentMeasurement {
                    stage: stage::DEPLOYING.into(),
                    job: None,
                    ..cur.clone()
                });
                self.after(Duration::from_millis(500));
            }
            JobObserved::Running => {
                let limit =
                    self.run.expected_load_time() + self.run.load_grace + Duration::from_secs(60);
                if self.elapsed(&cur.since) > limit {
                    self.fail_measurement(
                        cell,
                        repeat,
                        "the load Job did not finish in time".into(),
                    );
                } else {
                    self.after(Duration::from_secs(10));
                }
            }
            JobObserved::Failed(reason) => {
                let reason = format!("load Job failed: {reason}");
                self.fail_measurement(cell, repeat, reason);
            }
            JobObserved::Succeeded(pods) => match merge_pods(pods) {
                Ok(merged) => {
                    self.actions.push(Action::StoreDetail {
                        cell,
                        repeat,
                        json: detail_json(&merged),
                    });
                    self.status.current = Some(CurrentMeasurement {
                        stage: stage::COLLECTING.into(),
                        since: Time(self.now),
                        ..cur.clone()
                    });
                    self.wait_for_scrape(&merged);
                }
                Err(reason) => self.fail_measurement(cell, repeat, reason),
            },
        }
    }

    fn wait_for_scrape(&mut self, load: &LoadResult) {
        let ready_at = load.window_end_ms as i64 + SCRAPE_SETTLE.as_millis() as i64;
        let wait = (ready_at - self.now.as_millisecond()).max(0) as u64;
        self.after(Duration::from_millis(wait.max(500)));
    }

    fn collecting(&mut self, cell: usize, repeat: usize) {
        let load = match (&self.obs.detail, &self.obs.job) {
            (Some(d), _) => d.clone(),
            (None, JobObserved::Succeeded(pods)) => match merge_pods(pods) {
                Ok(merged) => {
                    self.actions.push(Action::StoreDetail {
                        cell,
                        repeat,
                        json: detail_json(&merged),
                    });
                    self.after(Duration::from_secs(1));
                    return;
                }
                Err(reason) => return self.fail_measurement(cell, repeat, reason),
            },
            _ => {
                return self.fail_measurement(
                    cell,
                    repeat,
                    "the load result was lost (no detail ConfigMap and no finished Job)".into(),
                )
            }
        };
        let ready_at = load.window_end_ms as i64 + SCRAPE_SETTLE.as_millis() as i64;
        if self.now.as_millisecond() < ready_at {
            return self.wait_for_scrape(&load);
        }
        let Some(usage) = self.obs.usage.clone() else {
            self.after(Duration::from_secs(2));
            return;
        };
        let (usage, extra) = match usage {
            Ok((u, extra)) => (Some(u), extra),
            Err(e) => {
                self.note(
                    true,
                    "MetricsUnavailable",
                    format!("cell {cell} repeat {repeat}: {e}"),
                );
                (None, Default::default())
            }
        };
        let pods = self.pod_facts(&load);
        let c = &self.run.cells[cell];
        let detail = names::detail_name(&self.obs.run_name, cell, repeat);
        let result = results::measured_result(
            self.run,
            c,
            repeat,
            &load,
            usage.as_ref(),
            extra,
            &pods,
            Some(detail),
        );
        self.note(
            false,
            "Measured",
            format!(
                "cell {cell} repeat {repeat}: {:.0} req/s, p99 {:.1} ms",
                result.throughput, result.latency_ms.p99
            ),
        );
        self.record(vec![result]);
    }

    fn pod_facts(&self, load: &LoadResult) -> PodFacts {
        let target = self.obs.target.clone().unwrap_or_default();
        let warmup_ms = match self.run.warmup {
            Warmup::Duration(d) => d.as_millis() as i64,
            _ => 0,
        };
        let load_start = load.window_start_ms as i64 - warmup_ms;
        PodFacts {
            restarts: (target.restarts - self.obs.restarts_baseline.unwrap_or(target.restarts))
                .max(0),
            oom_kills: target
                .oom_kill_times_ms
                .iter()
                .filter(|t| **t >= load_start)
                .count() as i32,
            target_nodes: target.nodes,
            load_nodes: self.obs.load_nodes.clone(),
        }
    }

    /// Appends results (never twice for a measurement), updates the derived fields and moves on.
    fn record(&mut self, new: Vec<CellResult>) {
        let mut finished_jobs = Vec::new();
        for r in new {
            if has_result(&self.status.results, r.cell as usize, r.repeat as usize) {
                continue;
            }
            finished_jobs.push(names::job_name(
                &self.obs.run_name,
                r.cell as usize,
                r.repeat as usize,
            ));
            self.status.results.push(r);
        }
        self.status.results.sort_by_key(|r| (r.cell, r.repeat));
        results::apply_variance(&mut self.status.results, self.run.repeats);
        self.status.summary = Some(results::summarize(self.run, &self.status.results));
        for (type_, ok, reason, message) in
            results::result_conditions(self.run, &self.status.results)
        {
            self.condition(type_, ok, &reason, message);
        }
        let existing: Vec<String> = finished_jobs
            .into_iter()
            .filter(|j| self.obs.jobs.contains(j))
            .collect();
        if !existing.is_empty() {
            self.actions.push(Action::DeleteJobs(existing));
        }
        self.status.current = None;
        self.progress();
        self.advance();
    }

    fn fail_measurement(&mut self, cell: usize, repeat: usize, reason: String) {
        self.note(
            true,
            "MeasurementFailed",
            format!("cell {cell} repeat {repeat}: {reason}"),
        );
        let result = results::failed_result(self.run, &self.run.cells[cell], repeat, reason);
        self.record(vec![result]);
    }

    /// The target configuration cannot run: every pending measurement that needs it fails with
    /// the same reason at once, instead of waiting out the timeout again for each.
    fn fail_configuration(&mut self, cell: usize, reason: String) {
        let c = &self.run.cells[cell];
        let mut failed = Vec::new();
        for other in self.run.cells.iter().filter(|o| o.same_deployment(c)) {
            for r in 0..self.run.repeats {
                if !has_result(&self.status.results, other.index, r) {
                    failed.push(results::failed_result(self.run, other, r, reason.clone()));
                }
            }
        }
        self.note(
            true,
            "MeasurementFailed",
            format!(
                "cells of target configuration of cell {cell} ({} measurements): {reason}",
                failed.len()
            ),
        );
        self.record(failed);
    }

    fn finish(&mut self) {
        let measured = self
            .status
            .results
            .iter()
            .filter(|r| r.outcome == "Measured")
            .count();
        let ok = measured > 0;
        self.status.phase = Some(if ok { phase::SUCCEEDED } else { phase::FAILED }.into());
        self.status.current = None;
        self.status.completion_time = Some(Time(self.now));
        self.status.summary = Some(results::summarize(self.run, &self.status.results));
        self.progress();
        let total = self.status.results.len();
        let message = format!("{measured} of {total} measurements measured");
        self.condition(condition::RUNNING, false, "Completed", message.clone());
        if ok {
            self.condition(condition::SUCCEEDED, true, "Completed", message.clone());
            self.condition(condition::FAILED, false, "Completed", message.clone());
            self.note(false, "Completed", message);
        } else {
            self.condition(
                condition::SUCCEEDED,
                false,
                "NothingMeasured",
                message.clone(),
            );
            self.condition(condition::FAILED, true, "NothingMeasured", message.clone());
            self.note(true, "Failed", message);
        }
        self.finished();
    }

    /// A finished run: clean up per policy (idempotently) and delete the run after its TTL.
    fn finished(&mut self) {
        let succeeded = self.status.phase.as_deref() == Some(phase::SUCCEEDED);
        let clean = match self.run.cleanup {
            CleanupPolicy::Delete => true,
            CleanupPolicy::KeepOnFailure => succeeded,
            CleanupPolicy::Keep => false,
        };
        if clean && !self.obs.target_configs.is_empty() {
            self.actions.push(Action::DeleteTargets { except: None });
        }
        if clean && !self.obs.jobs.is_empty() {
            self.actions.push(Action::DeleteJobs(self.obs.jobs.clone()));
        }
        if let (Some(ttl), Some(done)) = (
            self.run.ttl_after_finished,
            self.status.completion_time.clone(),
        ) {
            let age = self.elapsed(&done);
            if age >= ttl {
                self.actions.push(Action::DeleteRun);
            } else {
                self.after(ttl - age);
            }
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

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
