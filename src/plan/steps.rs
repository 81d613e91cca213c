//! The planner's steps, one method per stage (see [`super`] for the contract).

use std::time::Duration;

use benchrun_api::validate::{CleanupPolicy, Warmup};
use benchrun_api::{
    CellResult, ConditionType, CurrentMeasurement, MetricsDue, Outcome, Phase, Reason, Stage,
    Warning, WarningCode,
};
use benchrun_wire::LoadResult;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{
    detail_json, has_result, merge_pods, next_pending, placement, scrape_ready_at, set_condition,
    Action, Note, Planner, START_LEAD,
};
use crate::adaptive;
use crate::baseline;
use crate::capacity;
use crate::comparisons;
use crate::kills::{self, RestartBaseline};
use crate::names;
use crate::observed::JobObserved;
use crate::slots::SlotDecision;

/// How the queue is ordered, in a queued run's `Running` condition (which names neither the
/// holders nor the place: they change at every hand-over, the message does not).
pub const QUEUE_RULE: &str = "namespaces take turns (the one served least recently first), \
    oldest first within a namespace; `kubectl benchrun list` shows the place in the queue";

/// How far past a stage's own limit a measurement may go without progress (see
/// [`Planner::stage_limit`]).
const STALL_GRACE: Duration = Duration::from_secs(60);
use crate::results::{self, PodFacts};

impl Planner<'_> {
    pub(super) fn note(&mut self, warning: bool, reason: Reason, message: String) {
        self.notes.push(Note {
            warning,
            reason,
            message,
        });
    }

    pub(super) fn condition(
        &mut self,
        type_: ConditionType,
        ok: bool,
        reason: Reason,
        message: String,
    ) {
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

    pub(super) fn after(&mut self, d: Duration) {
        self.requeue = Some(self.requeue.map_or(d, |r| r.min(d)));
    }

    pub(super) fn elapsed(&self, since: &Time) -> Duration {
        let ms = self.now.as_millisecond() - since.0.as_millisecond();
        Duration::from_millis(ms.max(0) as u64)
    }

    /// `progress` and `total`: the measurements as far as decided, which the rounds of
    /// `spec.repeatsUntil` raise as they are added.
    pub(super) fn progress(&mut self) {
        let total = super::total(self.run, &self.status);
        self.status.total = Some(total as i32);
        self.status.progress = Some(format!("{}/{total}", self.status.results.len()));
    }

    /// `Accepted=True`, with the warning about a short `load.duration` when there is one, and
    /// that the fit check cannot be done when the operator cannot read the nodes.
    pub(super) fn accept(&mut self) {
        let mut message = match self.run.short_window_warning(self.obs.sample_interval) {
            Some(w) => format!("the spec is valid; warning: {w}"),
            None => "the spec is valid".into(),
        };
        if let Some(order) = self.run.order_note() {
            message += &format!("; {order}");
        }
        if let Some(until) = self.run.until_note() {
            message += &format!("; {until}");
        }
        if let Some(search) = crate::search::note(self.run) {
            message += &format!("; {search}");
        }
        if let Some(why) = &self.obs.fit_unchecked {
            message += &format!("; {}", super::fit::unchecked_note(why));
        }
        self.condition(ConditionType::Accepted, true, Reason::Valid, message);
    }

    /// Starts the run once it holds a measuring slot: asks for the slot when it is free for
    /// the run (and does nothing else until the grant is applied), or queues the run.
    pub(super) fn start(&mut self) {
        match self.obs.slot.decision() {
            SlotDecision::Holds => {}
            SlotDecision::Grant => {
                if self.fail_unfit_cells() {
                    return;
                }
                self.actions.push(Action::TakeSlot);
                self.after(Duration::ZERO);
                return;
            }
            SlotDecision::Wait(holders) => return self.queue(&holders),
            SlotDecision::QueueFull { queued, limit } => return self.queue_full(queued, limit),
        }
        self.status.phase = Some(Phase::Running);
        self.status.start_time.get_or_insert(Time(self.now));
        self.accept();
        if let Some(w) = self.run.short_window_warning(self.obs.sample_interval) {
            self.note(true, Reason::WindowTooShort, w.to_string());
        }
        self.set_measuring();
        let started = match (&self.run.search, self.run.until) {
            (Some(s), _) => format!(
                "search {} of {} configurations, at most {} measurements",
                s.kind(),
                s.configurations,
                s.max_total()
            ),
            (None, Some(_)) => format!(
                "{} measurements, up to {} with repeatsUntil",
                self.run.total(),
                self.run.max_total()
            ),
            (None, None) => format!("{} measurements", self.run.total()),
        };
        self.note(false, Reason::Started, started);
        self.progress();
        self.advance();
    }

    /// Phase `Queued`, waiting for a measuring slot held by `holders`. The condition's message
    /// does not name them, nor the run's place: neither changes the status when a slot changes
    /// hands (the place is computed where it is shown, by `kubectl benchrun list`). The event
    /// on entering the queue names the holders of the moment.
    fn queue(&mut self, holders: &[String]) {
        let message = if holders.iter().any(|h| h == crate::slots::CACHE_NOT_READY) {
            format!(
                "waiting for a measuring slot: {}",
                crate::slots::CACHE_NOT_READY
            )
        } else {
            format!("waiting for a measuring slot: {QUEUE_RULE}")
        };
        if self.status.phase != Some(Phase::Queued) {
            self.note(
                false,
                Reason::Queued,
                format!(
                    "waiting for a measuring slot, held by {} (or taken by runs before it)",
                    holders.join(", ")
                ),
            );
        }
        self.status.phase = Some(Phase::Queued);
        self.accept();
        self.condition(ConditionType::Running, false, Reason::Queued, message);
        self.progress();
        self.after(match self.obs.slot.woken_in_turn() {
            true => super::QUEUED_RECHECK,
            false => super::QUEUE_POLL,
        });
    }

    /// Fails a run its namespace has no room for in the queue: `queued` of its runs wait
    /// before it, at least the administrator's `limit` (`--max-queued-per-namespace`). Failing
    /// (rather than waiting unqueued) is what bounds the queue, as a quota refuses an object:
    /// the run says why and can be applied again.
    fn queue_full(&mut self, queued: usize, limit: usize) {
        let namespace = self.obs.slot.me.split_once('/').map_or("", |(ns, _)| ns);
        let message = format!(
            "not queued: namespace {namespace} has {queued} runs waiting for a measuring slot \
             already, the operator's limit (--max-queued-per-namespace={limit}); apply the run \
             again once some of them have started or been deleted, or ask the cluster's \
             administrator to raise the limit"
        );
        self.accept();
        self.status.phase = Some(Phase::Failed);
        self.status.current = None;
        self.status.completion_time = Some(Time(self.now));
        self.progress();
        for (t, ok) in [
            (ConditionType::Running, false),
            (ConditionType::Succeeded, false),
            (ConditionType::Failed, true),
        ] {
            self.condition(t, ok, Reason::QueueFull, message.clone());
        }
        self.note(true, Reason::QueueFull, message);
        self.finished();
    }

    /// `Running=True` with reason `Measuring`.
    pub(super) fn set_measuring(&mut self) {
        if let Some(s) = &self.run.search {
            let message = format!(
                "searching the {} of {} configurations",
                s.kind(),
                s.configurations
            );
            self.condition(ConditionType::Running, true, Reason::Measuring, message);
            return;
        }
        let message = match self.run.until {
            Some(u) => format!(
                "measuring {} cells × {}–{} repeats",
                self.run.cells.len(),
                self.run.repeats,
                u.max_repeats
            ),
            None => format!(
                "measuring {} cells × {} repeats",
                self.run.cells.len(),
                self.run.repeats
            ),
        };
        self.condition(ConditionType::Running, true, Reason::Measuring, message);
    }

    /// Moves to the next measurement without a result, or finishes the run once no
    /// collection is pending.
    pub(super) fn advance(&mut self) {
        match next_pending(self.run, &self.status) {
            Some((cell, repeat)) => {
                self.status.current = Some(CurrentMeasurement {
                    cell: cell as i32,
                    repeat: repeat as i32,
                    stage: Stage::Deploying,
                    since: Time(self.now),
                    job: None,
                });
                self.after(Duration::from_millis(500));
            }
            None if self.metrics_outstanding() => self.wait_for_metrics(),
            None => self.finish(),
        }
    }

    pub(super) fn step(&mut self) {
        self.collect_pending();
        let Some(cur) = self.status.current.clone() else {
            self.advance();
            return;
        };
        let Some((cell, repeat)) = super::current_in_range(self.run, &cur) else {
            // Status from another spec version (or written by hand): it cannot be continued.
            self.status.current = None;
            self.advance();
            return;
        };
        let (limit, stalled) = self.stage_limit(cur.stage);
        if self.obs.retrying && self.elapsed(&cur.since) > limit {
            // Reconciles keep failing (an apply or a read) before the stage's own check can end
            // it: give up the measurement rather than hold the measuring slot. Only while
            // retrying, so a restarted operator still collects what finished while it was away.
            let reason = format!(
                "no progress in stage {} for {} ({stalled}); see the run's Warning events",
                cur.stage,
                benchrun_api::units::format_duration(limit)
            );
            self.fail_measurement(cell, repeat, reason);
            return;
        }
        match cur.stage {
            Stage::Loading => self.loading(&cur, cell, repeat),
            Stage::Deploying => self.deploying(&cur, cell, repeat),
        }
    }

    /// The longest a measurement may stay in `stage` before it fails for lack of progress,
    /// and what was stuck. Past each stage's own limit (the ready timeout, the load Job's
    /// deadline), so that limit reports first whenever a reconcile gets that far.
    pub(super) fn stage_limit(&self, stage: Stage) -> (Duration, &'static str) {
        match stage {
            Stage::Loading => (
                self.run.expected_load_time() + self.run.load_grace + STALL_GRACE * 2,
                "the load result could not be read or stored",
            ),
            // Backing services come up and are seeded first, then the target.
            Stage::Deploying => (
                self.services_time() + self.run.ready_timeout + STALL_GRACE,
                "the target or the load Job could not be applied",
            ),
        }
    }

    pub(super) fn deploying(&mut self, cur: &CurrentMeasurement, cell: usize, repeat: usize) {
        let c = &self.run.cells[cell];
        // This measurement's deployment: the configuration's, or its round's when every round
        // deploys afresh; any other is stale (another configuration, or an earlier round's).
        let config = super::deployment(self.run, cell, repeat);
        let stale = self.obs.target_configs.iter().any(|h| *h != config);
        let target = self.obs.target.clone().unwrap_or_default();
        let up = !stale && target.ready && self.obs.service_ip.is_some();
        let Some(services) = self.services_up(cur) else {
            return;
        };
        // The timeout comes before any action: an apply that keeps failing must not stop it.
        // It counts from when the backing services were up, if that was later.
        let since = services
            .settled_ms
            .map_or(cur.since.0.as_millisecond(), |t| {
                t.max(cur.since.0.as_millisecond())
            });
        let waited =
            Duration::from_millis(self.now.as_millisecond().saturating_sub(since).max(0) as u64);
        // The previous configuration stays until its last window has been read (below): that
        // wait does not count against this one's ready timeout.
        let held = stale && self.metrics_outstanding();
        if !up && !held && (target.fatal || waited >= self.run.ready_timeout) {
            let problem = match (&target.problem, stale) {
                (Some(p), _) => p.clone(),
                (None, true) => "the previous configuration's pods were still being deleted".into(),
                (None, false) => "the pods never became ready".into(),
            };
            let reason = format!(
                "target not ready after {}: {problem}",
                benchrun_api::units::format_duration(Duration::from_secs(waited.as_secs()))
            );
            self.fail_configuration(cell, reason);
            return;
        }
        if stale {
            // Not before the samples after the last window of the previous configuration
            // have been scraped, and read if Prometheus was down: its pods' series end when
            // they are deleted.
            if self.hold_load(cell, repeat) {
                return;
            }
            if let Some(wait) = self.until_scraped() {
                self.after(wait.max(Duration::from_millis(500)));
                return;
            }
            // The previous configuration's pods go first: they would compete for CPU.
            self.actions.push(Action::DeleteTargets {
                except: Some(config),
            });
            self.after(Duration::from_secs(2));
            return;
        }
        self.actions.push(Action::ApplyTarget {
            cell,
            round: self.run.deployment_round(repeat),
            services: services.addresses,
            node_selector: placement::target_selector(self.run, c.target, self.obs.node_roles),
        });
        // Fresh pods: leave them a sample interval before the load starts, or the first
        // window of a configuration has too few CPU samples for a rate.
        let settle = i64::try_from(self.obs.sample_interval.as_millis()).unwrap_or(i64::MAX);
        let settled = target.ready_since_ms.is_none_or(|t| {
            // Saturating: the time comes from the cluster, not from this clock.
            let ready_for = self.now.as_millisecond().saturating_sub(t);
            ready_for >= settle
        });
        if target.ready && !settled {
            self.after(Duration::from_secs(2));
            return;
        }
        if let (true, Some(ip)) = (target.ready, self.obs.service_ip.clone()) {
            if self.obs.job == JobObserved::Absent && self.hold_load(cell, repeat) {
                return;
            }
            let job = names::job_name(&self.obs.run_name, cell, repeat);
            if self.obs.job == JobObserved::Absent {
                // Several load pods start together: one time far enough ahead for all of
                // them to be scheduled and started.
                let start_at_ms = (self.run.load_pods > 1)
                    .then(|| self.now.as_millisecond() + START_LEAD.as_millis() as i64);
                self.actions.push(Action::CreateJob {
                    cell,
                    repeat,
                    start_at_ms,
                    node_selector: placement::load_selector(self.run, self.obs.node_roles),
                    cluster_ip: ip,
                    restarts_baseline: RestartBaseline::of(target.restarts, &target.containers),
                });
            }
            self.note(
                false,
                Reason::LoadStarted,
                format!("cell {cell} repeat {repeat}: load Job {job}"),
            );
            self.status.current = Some(CurrentMeasurement {
                stage: Stage::Loading,
                since: Time(self.now),
                job: Some(job),
                ..cur.clone()
            });
            self.after(Duration::from_secs(5));
            return;
        }
        self.after(Duration::from_secs(2));
    }

    pub(super) fn loading(&mut self, cur: &CurrentMeasurement, cell: usize, repeat: usize) {
        match &self.obs.job {
            JobObserved::Absent => {
                if let Some(load) = self.obs.detail.clone() {
                    // The load ran, its result was stored and its Job deleted: this status was
                    // read before the patch that recorded it (the controller's cache can lag
                    // its own writes). Record it again from the stored detail rather than run
                    // the load a second time; the result is the same one.
                    let created = self.obs.job_created.unwrap_or(cur.since.0);
                    self.measured(cell, repeat, &load, created);
                    return;
                }
                // Lost before it was created (or deleted by hand): deploy and create it again.
                self.status.current = Some(CurrentMeasurement {
                    stage: Stage::Deploying,
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
                    self.make_next_ahead(cell, repeat);
                    self.after(Duration::from_secs(10));
                }
            }
            JobObserved::Failed(reason) => {
                let reason = format!("load Job failed: {reason}");
                self.fail_measurement(cell, repeat, reason);
            }
            JobObserved::Succeeded(pods) => {
                // A stored detail means a restart lost the status patch: collect from it.
                let merged = match &self.obs.detail {
                    Some(d) => Ok((d.clone(), false)),
                    None => merge_pods(pods).map(|m| (m, true)),
                };
                match merged {
                    Ok((load, store)) => {
                        if store {
                            self.actions.push(Action::StoreDetail {
                                cell,
                                repeat,
                                json: detail_json(&load),
                            });
                        }
                        let created = self.obs.job_created.unwrap_or(cur.since.0);
                        self.measured(cell, repeat, &load, created);
                    }
                    Err(reason) => self.fail_measurement(cell, repeat, reason),
                }
            }
        }
    }

    /// Cells back to back: while this measurement's load warms up, the next measurement on the
    /// same target configuration gets its load Job, told to begin when this window ends
    /// ([`super::chained_start`]), so that its pods are up and waiting by then instead of being
    /// made after this Job has been seen to finish (seconds of Job and pod bookkeeping).
    fn make_next_ahead(&mut self, cell: usize, repeat: usize) {
        let c = &self.run.cells[cell];
        let this_job = names::job_name(&self.obs.run_name, cell, repeat);
        let Some(start_at) = super::chained_start(
            self.run,
            c,
            self.obs.job_starts.get(&this_job).copied(),
            self.obs.load_started_ms,
            self.now.as_millisecond(),
        ) else {
            return;
        };
        let Some((next_cell, next_repeat)) = super::following(self.run, &self.status, cell, repeat)
        else {
            return;
        };
        let next = &self.run.cells[next_cell];
        // Only on the same pods: a measurement of another deployment (another configuration,
        // or this one's next round) waits for its own.
        let same_pods = super::deployment(self.run, next_cell, next_repeat)
            == super::deployment(self.run, cell, repeat);
        if !same_pods || super::fixed_load_time(self.run, next).is_none() {
            return;
        }
        let job = names::job_name(&self.obs.run_name, next_cell, next_repeat);
        // A collection Prometheus could not answer holds every next load (see `hold_load`).
        if self.obs.jobs.contains(&job) || self.metrics_pending() {
            return;
        }
        let (Some(target), Some(ip)) = (self.obs.target.clone(), self.obs.service_ip.clone())
        else {
            return;
        };
        if !target.ready {
            return;
        }
        self.actions.push(Action::CreateJob {
            cell: next_cell,
            repeat: next_repeat,
            cluster_ip: ip,
            restarts_baseline: RestartBaseline::of(target.restarts, &target.containers),
            start_at_ms: Some(start_at),
            node_selector: placement::load_selector(self.run, self.obs.node_roles),
        });
        let at = Timestamp::from_millisecond(start_at).unwrap_or(Timestamp::MAX);
        self.note(
            false,
            Reason::LoadStarted,
            format!(
                "cell {next_cell} repeat {next_repeat}: load Job {job} made ahead, to begin at {} when the window of cell {cell} repeat {repeat} has ended",
                at.strftime("%H:%M:%S%.3f")
            ),
        );
    }

    /// The next measurement's load, made ahead, began before this window's last response:
    /// the end of this window had extra load on the target.
    fn overlap_warning(&self, cell: usize, repeat: usize, load: &LoadResult) -> Option<Warning> {
        let (next_cell, next_repeat) = super::following(self.run, &self.status, cell, repeat)?;
        let job = names::job_name(&self.obs.run_name, next_cell, next_repeat);
        let next_start = *self.obs.job_starts.get(&job)?;
        // The window's last response, after its drain: the target worked until then.
        let end = i64::try_from(load.last_end_ms()).unwrap_or(i64::MAX);
        (end > next_start).then(|| Warning {
            code: WarningCode::LoadOverlap,
            message: format!(
                "the load of cell {next_cell} repeat {next_repeat}, made ahead to begin when this window ended, began {} ms before this window's last response: measure again",
                end - next_start
            ),
        })
    }

    /// The load of a measurement is over: its result is recorded now with the load figures,
    /// and its CPU and memory are due once Prometheus has scraped the samples after its window
    /// (`metricsDue`, read by [`Planner::collect_pending`] while the next measurement runs).
    fn measured(&mut self, cell: usize, repeat: usize, load: &LoadResult, created: Timestamp) {
        let pods = self.pod_facts(cell, repeat, load);
        let c = &self.run.cells[cell];
        let detail = names::detail_name(&self.obs.run_name, cell, repeat);
        let mut result = results::measured_result(
            self.run,
            c,
            repeat,
            load,
            None,
            Default::default(),
            &pods,
            Some(detail),
        );
        results::clear_metrics_warning(&mut result);
        result
            .warnings
            .extend(self.overlap_warning(cell, repeat, load));
        self.judge_baseline(&mut result);
        let at = Timestamp::from_millisecond(scrape_ready_at(load, self.obs.sample_interval))
            .unwrap_or(Timestamp::MAX);
        // Memory "before the load" is read at the last sample before it began: the agreed
        // start when there was one (a Job made ahead was created during the previous window).
        let began = load
            .start_at_ms
            .and_then(|t| Timestamp::from_millisecond(i64::try_from(t).ok()?).ok())
            .map_or(created, |t| t.max(created));
        result.metrics_due = Some(MetricsDue {
            at: Time(at),
            load_created: Some(Time(began)),
        });
        self.note(
            false,
            Reason::Measured,
            format!(
                "cell {cell} repeat {repeat}: {:.0} req/s, p99 {:.1} ms (CPU and memory read from {})",
                load.throughput,
                load.latency.p99_us as f64 / 1000.0,
                crate::results::validity::second(at)
            ),
        );
        self.record(vec![result]);
    }

    pub(super) fn pod_facts(&self, cell: usize, repeat: usize, load: &LoadResult) -> PodFacts {
        let target = self.obs.target.clone().unwrap_or_default();
        // Time to ready is the configuration's start-up: taken at its first measurement. Read
        // again later it would count a pod that the load made fail its readiness probe and
        // that became Ready again (the condition keeps only its last transition).
        let deployment = |i: usize, r: usize| super::deployment(self.run, i, r);
        let this = deployment(cell, repeat);
        let first_ready_ms = self
            .status
            .results
            .iter()
            .filter(|r| r.cell >= 0 && (r.cell as usize) < self.run.cells.len())
            .filter(|r| r.repeat >= 0 && (r.repeat as usize) < self.run.max_repeats())
            .filter(|r| deployment(r.cell as usize, r.repeat as usize) == this)
            .find_map(|r| r.target_ready_seconds)
            .map(|s| (s * 1000.0).round() as i64);
        let warmup_ms = match (self.run.warmup, &load.warmup_until_steady) {
            (_, Some(w)) => (w.seconds * 1000.0) as i64,
            (Warmup::Duration(d), None) => d.as_millis() as i64,
            _ => 0,
        };
        let load_start = i64::try_from(load.window_start_ms)
            .unwrap_or(i64::MAX)
            .saturating_sub(warmup_ms);
        PodFacts {
            restarts: target
                .restarts
                .saturating_sub(self.obs.restarts_baseline.unwrap_or(target.restarts))
                .max(0),
            oom_kills: kills::oom_kills(
                &target.containers,
                self.obs.restarts_baseline_pods.as_ref(),
                load_start,
            ),
            target_nodes: target.nodes,
            target_pods: target.pods,
            load_nodes: self.obs.load_nodes.clone(),
            target_ready_ms: first_ready_ms.or(target.ready_ms),
            target_image_bytes: target.image_bytes,
            target_images: target.image_ids,
            node_facts: self.obs.node_facts.clone(),
            operator: self.obs.operator_version.clone(),
            service_restarts: self
                .obs
                .services
                .iter()
                .map(|s| results::ServiceRestart {
                    name: s.name.clone(),
                    terminations: s.state.containers.iter().map(|c| c.terminations()).sum(),
                    last_reason: s
                        .state
                        .containers
                        .iter()
                        .filter(|c| c.terminations() > 0)
                        .max_by_key(|c| c.last_finished_ms)
                        .and_then(|c| c.last_reason.clone()),
                })
                .filter(|s| s.terminations > 0)
                .collect(),
        }
    }

    /// The measurement's `baseline` verdict (with `spec.baseline`): its cell's measured repeats
    /// so far, this one included, against the baseline cell's; the cell's `Baseline`
    /// comparison is updated with it.
    fn judge_baseline(&mut self, result: &mut CellResult) {
        let run = self.run;
        let Some(plan) = &run.baseline else {
            return;
        };
        let (b, c) = {
            let mut cell: Vec<&CellResult> = self
                .status
                .results
                .iter()
                .filter(|r| r.cell == result.cell && r.repeat != result.repeat)
                .filter(|r| r.outcome == Outcome::Measured)
                .collect();
            cell.push(&*result);
            baseline::judge(plan, self.obs.baseline.as_ref(), run, &cell)
        };
        result.baseline = Some(b);
        if let Some(c) = c {
            comparisons::upsert_baseline(&mut self.status.comparisons, c);
        }
    }

    /// Appends results (never twice for a measurement), updates the derived fields and moves on.
    pub(super) fn record(&mut self, new: Vec<CellResult>) {
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
        self.refresh();
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

    /// Recomputes what derives from the results: variance warnings, summary, conditions.
    pub(super) fn refresh(&mut self) {
        self.status.results.sort_by_key(|r| (r.cell, r.repeat));
        results::apply_variance(&mut self.status.results, self.run.max_repeats());
        self.refresh_comparisons();
        self.status.summary = Some(self.summary());
        self.status.capacity = capacity::capacity(self.run, &self.status.results);
        crate::search::sync(self.run, &mut self.status.search, &self.status.results);
        for (type_, ok, reason, message) in
            results::result_conditions(self.run, &self.status.results, &self.status.comparisons)
        {
            self.condition(type_, ok, reason, message);
        }
    }

    /// The comparisons from the results, marked against the goal of `spec.repeatsUntil`, and
    /// what its rounds reached.
    fn refresh_comparisons(&mut self) {
        self.status.comparisons =
            comparisons::refresh(self.run, &self.status.results, &self.status.comparisons);
        adaptive::mark(self.run, &mut self.status.comparisons);
        self.status.repeats_until =
            adaptive::reached(self.run, &self.status.results, &self.status.comparisons);
    }

    /// The summary with the headline comparison.
    fn summary(&self) -> benchrun_api::Summary {
        let headline = match crate::search::headline(&self.status.search) {
            Some(h) => Some(h),
            None => comparisons::headline(&self.status.comparisons),
        };
        benchrun_api::Summary {
            headline,
            ..results::summarize(self.run, &self.status.results)
        }
    }

    pub(super) fn fail_measurement(&mut self, cell: usize, repeat: usize, reason: String) {
        self.note(
            true,
            Reason::MeasurementFailed,
            format!("cell {cell} repeat {repeat}: {reason}"),
        );
        let result = results::failed_result(self.run, &self.run.cells[cell], repeat, reason);
        self.record(vec![result]);
    }

    /// The target configuration cannot run: every pending measurement that needs it fails with
    /// the same reason at once, instead of waiting out the timeout again for each.
    pub(super) fn fail_configuration(&mut self, cell: usize, reason: String) {
        let c = &self.run.cells[cell];
        let mut failed = Vec::new();
        for (i, r) in super::measurement_order(self.run, &self.status) {
            let Some(other) = self.run.cells.get(i) else {
                continue;
            };
            if other.same_deployment(c) && !has_result(&self.status.results, i, r) {
                failed.push(results::failed_result(self.run, other, r, reason.clone()));
            }
        }
        self.note(
            true,
            Reason::MeasurementFailed,
            format!(
                "cells of target configuration of cell {cell} ({} measurements): {reason}",
                failed.len()
            ),
        );
        self.record(failed);
    }

    pub(super) fn finish(&mut self) {
        let measured = self
            .status
            .results
            .iter()
            .filter(|r| r.outcome == Outcome::Measured)
            .count();
        let ok = measured > 0;
        self.status.phase = Some(if ok { Phase::Succeeded } else { Phase::Failed });
        self.status.current = None;
        self.status.completion_time = Some(Time(self.now));
        if self.run.until.is_some() {
            // What the rounds reached, from every result (derived, so the same as after the
            // last record).
            self.refresh_comparisons();
        }
        self.status.summary = Some(self.summary());
        self.status.capacity = capacity::capacity(self.run, &self.status.results);
        self.progress();
        let total = self.status.results.len();
        let mut message = format!("{measured} of {total} measurements measured");
        if let Some(r) = &self.status.repeats_until {
            message += &format!("; repeatsUntil: {}", r.message);
        }
        self.condition(
            ConditionType::Running,
            false,
            Reason::Completed,
            message.clone(),
        );
        if ok {
            self.condition(
                ConditionType::Succeeded,
                true,
                Reason::Completed,
                message.clone(),
            );
            self.condition(
                ConditionType::Failed,
                false,
                Reason::Completed,
                message.clone(),
            );
            self.note(false, Reason::Completed, message);
        } else {
            self.condition(
                ConditionType::Succeeded,
                false,
                Reason::NothingMeasured,
                message.clone(),
            );
            self.condition(
                ConditionType::Failed,
                true,
                Reason::NothingMeasured,
                message.clone(),
            );
            self.note(true, Reason::Failed, message);
        }
        self.finished();
    }

    /// A finished run: clean up per policy (idempotently) and delete the run after its TTL.
    pub(super) fn finished(&mut self) {
        let succeeded = self.status.phase == Some(Phase::Succeeded);
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
        if clean && self.obs.service_children {
            self.actions.push(Action::DeleteServices);
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
