//! Collections after the load (see [`super`] for the planner's contract).
//!
//! A measurement's result is recorded as soon as its load ends, with `metricsDue`: its CPU and
//! memory are read once the samples after the window have been scraped, while the next
//! measurement runs. When Prometheus cannot be reached for a window (transport error, timeout, HTTP 5xx), the
//! measurement's result is recorded at once with its load figures and `metricsPending`
//! (attempts, first failure, next attempt, bound), and the run moves on. The window is asked
//! for again with backoff ([`super::metrics_retry_delay`]) until the bound (the window's end
//! plus the operator's `--metrics-retry-for`); an answer fills the figures in and recomputes the
//! result's warnings, SLO verdict, the summary and the conditions. After the bound the figures
//! stay absent with `MetricsUnavailable` and the reason.
//!
//! While a collection is pending within its bound, Prometheus is taken to be down: the next
//! load does not start (a window Prometheus does not scrape can never be read back) and the run
//! does not finish.

use std::time::Duration;

use benchrun_api::{CellResult, ConditionType, MetricsPending, Reason};
use benchrun_wire::LoadResult;
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{metrics_retry_delay, Planner};
use crate::observed::{Collection, PendingObserved};
use crate::results;
use crate::results::validity;

/// Reason of `Running=True` while a load waits for Prometheus.
const WAITING_FOR_PROMETHEUS: Reason = Reason::WaitingForPrometheus;
/// Reason of `Running=True` once every measurement is done but some figures are pending.
const COLLECTING_METRICS: Reason = Reason::CollectingMetrics;

fn ms_to_time(ms: i64) -> Timestamp {
    Timestamp::from_millisecond(ms).unwrap_or(Timestamp::MAX)
}

fn label(r: &CellResult) -> String {
    format!("cell {} repeat {}", r.cell, r.repeat)
}

impl Planner<'_> {
    fn later(&self, d: Duration) -> Timestamp {
        ms_to_time(
            self.now
                .as_millisecond()
                .saturating_add(d.as_millis() as i64),
        )
    }

    /// The measurement just collected found Prometheus unreachable: keep the result with its
    /// CPU and memory pending, or, when its bound has already passed (the operator was down
    /// longer), give them up at once.
    pub(super) fn defer_metrics(&mut self, r: &mut CellResult, load: &LoadResult, error: String) {
        let bound = self.obs.metrics_retry_for;
        let give_up_at =
            ms_to_time((load.window_end_ms as i64).saturating_add(bound.as_millis() as i64));
        if self.now >= give_up_at {
            let why = format!(
                "Prometheus could not be reached and the window ended more than {} ago: {error}",
                benchrun_api::units::format_duration(bound)
            );
            return self.metrics_lost(r, why);
        }
        let next = self.later(metrics_retry_delay(1)).min(give_up_at);
        results::set_metrics_warning(r, validity::metrics_pending(&error, give_up_at));
        self.note(
            true,
            Reason::MetricsDeferred,
            format!(
                "{}: Prometheus could not be reached ({error}); the load figures are kept and CPU and memory will be read for the same window when it answers (until {})",
                label(r),
                validity::second(give_up_at)
            ),
        );
        r.metrics_pending = Some(MetricsPending {
            attempts: 1,
            first_failure: Time(self.now),
            next_attempt: Time(next),
            give_up_at: Time(give_up_at),
            last_error: error,
        });
    }

    /// CPU and memory of a measurement are lost for good, for the reason `why`.
    pub(super) fn metrics_lost(&mut self, r: &mut CellResult, why: String) {
        r.metrics_pending = None;
        r.metrics_due = None;
        results::set_metrics_warning(r, validity::metrics_given_up(&why));
        self.note(
            true,
            Reason::MetricsUnavailable,
            format!("{}: {why}", label(r)),
        );
    }

    /// Fills in, reschedules or gives up the collections observed in this reconcile (due
    /// windows and deferred ones), then looks again when the next one is due.
    pub(super) fn collect_pending(&mut self) {
        let mut changed = false;
        for p in &self.obs.pending {
            let Some(i) = self.status.results.iter().position(|r| {
                (r.cell as usize, r.repeat as usize) == (p.cell, p.repeat)
                    && (r.metrics_pending.is_some() || r.metrics_due.is_some())
            }) else {
                continue;
            };
            changed = true;
            let mut r = self.status.results[i].clone();
            let Some(pending) = r.metrics_pending.clone() else {
                self.collect_due(&mut r, p);
                self.status.results[i] = r;
                continue;
            };
            match (&p.collected, self.run.cells.get(p.cell)) {
                (Ok((load, Collection::Answered(Ok((usage, extra))))), Some(cell)) => {
                    r = results::with_late_usage(self.run, cell, &r, load, usage, extra.clone());
                    self.filled_in(&r, &pending);
                }
                (Ok((_, Collection::Answered(Err(e)))), _) => self.metrics_lost(&mut r, e.clone()),
                (Ok((_, Collection::Unreachable(e))), _) if self.now >= pending.give_up_at.0 => {
                    let why = format!(
                        "Prometheus could not be reached from {} until {} ({} attempts; last: {e})",
                        validity::second(pending.first_failure.0),
                        validity::second(pending.give_up_at.0),
                        pending.attempts.saturating_add(1)
                    );
                    self.metrics_lost(&mut r, why);
                }
                (Ok((_, Collection::Unreachable(e))), _) => {
                    let attempts = pending.attempts.saturating_add(1);
                    let next = self
                        .later(metrics_retry_delay(attempts))
                        .min(pending.give_up_at.0);
                    results::set_metrics_warning(
                        &mut r,
                        validity::metrics_pending(e, pending.give_up_at.0),
                    );
                    r.metrics_pending = Some(MetricsPending {
                        attempts,
                        next_attempt: Time(next),
                        last_error: e.clone(),
                        ..pending
                    });
                }
                (Err(e), _) => self.metrics_lost(&mut r, e.clone()),
                (Ok(_), None) => {
                    let why = format!("cell {} is not in the spec any more", p.cell);
                    self.metrics_lost(&mut r, why);
                }
            }
            self.status.results[i] = r;
        }
        if changed {
            self.refresh();
        }
        self.requeue_for_pending();
    }

    /// The first reading of a window whose samples have been scraped (`metricsDue`).
    fn collect_due(&mut self, r: &mut CellResult, p: &PendingObserved) {
        match (&p.collected, self.run.cells.get(p.cell)) {
            (Ok((load, Collection::Answered(Ok((usage, extra))))), Some(cell)) => {
                *r = results::with_late_usage(self.run, cell, r, load, usage, extra.clone());
            }
            (Ok((_, Collection::Answered(Err(e)))), _) | (Err(e), _) => {
                self.metrics_lost(r, e.clone())
            }
            (Ok((load, Collection::Unreachable(e))), _) => {
                // Kept in `metricsDue` too: the load's creation time is read from it.
                self.defer_metrics(r, load, e.clone())
            }
            (Ok(_), None) => {
                let why = format!("cell {} is not in the spec any more", p.cell);
                self.metrics_lost(r, why);
            }
        }
    }

    /// How long until the samples after every window already measured have been scraped, if
    /// some have not yet: the pods of a window must outlive that.
    pub(super) fn until_scraped(&self) -> Option<Duration> {
        let last = self
            .status
            .results
            .iter()
            .filter_map(|r| r.metrics_due.as_ref())
            .map(|d| d.at.0)
            .max()?;
        let ms = last.as_millisecond() - self.now.as_millisecond();
        (ms > 0).then(|| Duration::from_millis(ms as u64))
    }

    fn filled_in(&mut self, r: &CellResult, pending: &MetricsPending) {
        let u = &r.usage;
        let (Some(cpu), Some(mem)) = (u.cpu_avg_cores, u.memory_avg_bytes) else {
            return self.note(
                true,
                Reason::MetricsUnavailable,
                format!(
                    "{}: Prometheus answered again but had no CPU or memory samples of the window",
                    label(r)
                ),
            );
        };
        self.note(
            false,
            Reason::MetricsCollected,
            format!(
                "{}: CPU {cpu:.3} cores, memory {:.1} MiB, read after Prometheus came back ({} failed attempts since {})",
                label(r),
                mem as f64 / (1024.0 * 1024.0),
                pending.attempts,
                validity::second(pending.first_failure.0)
            ),
        );
    }

    /// Looks again when the earliest collection is due.
    fn requeue_for_pending(&mut self) {
        let due: Vec<Timestamp> = self
            .status
            .results
            .iter()
            .filter_map(|r| match (&r.metrics_pending, &r.metrics_due) {
                (Some(p), _) => Some(p.next_attempt.0.min(p.give_up_at.0)),
                (None, Some(d)) => Some(d.at.0),
                (None, None) => None,
            })
            .collect();
        for at in due {
            let ms = (at.as_millisecond() - self.now.as_millisecond()).max(1000);
            self.after(Duration::from_millis(ms as u64));
        }
    }

    /// Some measurement's CPU and memory wait for an unreachable Prometheus.
    pub(super) fn metrics_pending(&self) -> bool {
        self.status
            .results
            .iter()
            .any(|r| r.metrics_pending.is_some())
    }

    /// Some measurement's CPU and memory have not been read yet (due or pending): the run
    /// does not finish before.
    pub(super) fn metrics_outstanding(&self) -> bool {
        self.status
            .results
            .iter()
            .any(|r| r.metrics_pending.is_some() || r.metrics_due.is_some())
    }

    /// Holds the load of the next measurement while Prometheus is taken to be down, so that its
    /// window is not measured unseen. True when held.
    pub(super) fn hold_load(&mut self, cell: usize, repeat: usize) -> bool {
        if !self.metrics_pending() {
            if self.running_reason() == Some(WAITING_FOR_PROMETHEUS) {
                self.set_measuring();
            }
            return false;
        }
        let message = format!(
            "the load of cell {cell} repeat {repeat} waits for Prometheus, which could not be reached for {}: a window it does not scrape could never be read back",
            self.pending_list(false)
        );
        if self.running_reason() != Some(WAITING_FOR_PROMETHEUS) {
            self.note(true, WAITING_FOR_PROMETHEUS, message.clone());
        }
        self.condition(
            ConditionType::Running,
            true,
            WAITING_FOR_PROMETHEUS,
            message,
        );
        self.requeue_for_pending();
        true
    }

    /// Every measurement is done but some CPU and memory are still to be read: stay
    /// `Running` (an event only when Prometheus could not be reached).
    pub(super) fn wait_for_metrics(&mut self) {
        self.status.current = None;
        let message = format!(
            "every measurement is done; waiting for Prometheus to give CPU and memory of {}",
            self.pending_list(true)
        );
        if self.running_reason() != Some(COLLECTING_METRICS) && self.metrics_pending() {
            self.note(false, COLLECTING_METRICS, message.clone());
        }
        self.condition(ConditionType::Running, true, COLLECTING_METRICS, message);
        self.requeue_for_pending();
    }

    fn running_reason(&self) -> Option<Reason> {
        self.status
            .conditions
            .iter()
            .find(|c| c.type_ == ConditionType::Running.as_str())
            .and_then(|c| c.reason.parse().ok())
    }

    /// The measurements whose CPU and memory wait for Prometheus (`with_due`: also those whose
    /// windows are yet to be scraped).
    fn pending_list(&self, with_due: bool) -> String {
        let pending: Vec<String> = self
            .status
            .results
            .iter()
            .filter_map(|r| match (&r.metrics_pending, &r.metrics_due) {
                (Some(p), _) => Some(format!(
                    "{} (until {})",
                    label(r),
                    validity::second(p.give_up_at.0)
                )),
                (None, Some(d)) if with_due => Some(format!(
                    "{} (once scraped, from {})",
                    label(r),
                    validity::second(d.at.0)
                )),
                _ => None,
            })
            .collect();
        pending.join(", ")
    }
}
