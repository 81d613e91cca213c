//! Thread-local measurements of one event loop: histograms, counters and the sealed
//! per-second timeline. Nothing here is shared, so the hot path takes no lock.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::hist;
use crate::result::{timeline_entry, ErrorCounts, TimelineEntry};

/// Why a request failed; each maps to one field of [`ErrorCounts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    ConnectRefused,
    ConnectTimeout,
    ConnectOther,
    Timeout,
    Read,
    BodyMismatch,
    Protocol,
}

/// What one thread measured for one scenario of a multi-scenario run.
pub(crate) struct ScenarioRecorder {
    pub latency: Histogram<u64>,
    pub requests: u64,
    pub successes: u64,
    pub errors: ErrorCounts,
}

impl ScenarioRecorder {
    fn new() -> Self {
        ScenarioRecorder {
            latency: hist::new_latency(),
            requests: 0,
            successes: 0,
            errors: ErrorCounts::default(),
        }
    }
}

/// Measurements of one thread over one phase.
pub(crate) struct Recorder {
    /// Whether anything is recorded (false during warm-up).
    pub record: bool,
    pub latency: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub connect: Histogram<u64>,
    pub requests: u64,
    pub successes: u64,
    pub bytes: u64,
    pub errors: ErrorCounts,
    pub sent: u64,
    pub lag_sum_us: u64,
    pub lag_max_us: u64,
    pub timeline: Vec<TimelineEntry>,
    /// Per-scenario figures; empty when the run has a single scenario.
    pub scenarios: Vec<ScenarioRecorder>,
    clock_start: Instant,
    clock_epoch_ms: u64,
    second: u64,
    second_requests: u64,
    second_errors: u64,
    second_hist: Histogram<u64>,
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}

/// Counts a complete response's status; returns whether it is an error (≥ 400).
fn count_status(e: &mut ErrorCounts, status: u16) -> bool {
    if status < 400 {
        return false;
    }
    if status >= 500 {
        e.status_5xx += 1;
    } else {
        e.status_4xx += 1;
    }
    e.total += 1;
    *e.status_codes.entry(status).or_default() += 1;
    true
}

/// Counts a request that ended without a complete response in its class.
fn count_failure(e: &mut ErrorCounts, f: Failure) {
    e.total += 1;
    match f {
        Failure::ConnectRefused => e.connect_refused += 1,
        Failure::ConnectTimeout => e.connect_timeout += 1,
        Failure::ConnectOther => e.connect_other += 1,
        Failure::Timeout => e.timeout += 1,
        Failure::Read => e.read += 1,
        Failure::BodyMismatch => e.body_mismatch += 1,
        Failure::Protocol => e.protocol += 1,
    }
}

impl Recorder {
    /// `clock_start` is the instant that corresponds to `clock_epoch_ms` (unix epoch ms);
    /// with `scenarios` > 1 each scenario is also recorded on its own.
    pub fn new(
        record: bool,
        open_model: bool,
        scenarios: usize,
        clock_start: Instant,
        clock_epoch_ms: u64,
    ) -> Self {
        let per_scenario = if record && scenarios > 1 {
            scenarios
        } else {
            0
        };
        Recorder {
            scenarios: (0..per_scenario).map(|_| ScenarioRecorder::new()).collect(),
            record,
            latency: hist::new_latency(),
            uncorrected: open_model.then(hist::new_latency),
            connect: hist::new_latency(),
            requests: 0,
            successes: 0,
            bytes: 0,
            errors: ErrorCounts::default(),
            sent: 0,
            lag_sum_us: 0,
            lag_max_us: 0,
            timeline: Vec::new(),
            clock_start,
            clock_epoch_ms,
            second: clock_epoch_ms / 1000,
            second_requests: 0,
            second_errors: 0,
            second_hist: hist::new_timeline(),
        }
    }

    /// A request went out `lag` after it was due.
    #[inline]
    pub fn sent(&mut self, lag: Duration) {
        self.sent += 1;
        if self.record && self.uncorrected.is_some() {
            let us = micros(lag);
            self.lag_sum_us += us;
            self.lag_max_us = self.lag_max_us.max(us);
        }
    }

    #[inline]
    pub fn connected(&mut self, took: Duration) {
        if self.record {
            self.connect.saturating_record(micros(took).max(1));
        }
    }

    #[inline]
    pub fn received(&mut self, n: usize) {
        if self.record {
            self.bytes += n as u64;
        }
    }

    /// A complete response: `since_due` from the intended start, `since_sent` from the send.
    #[inline]
    pub fn response(
        &mut self,
        now: Instant,
        scenario: usize,
        status: u16,
        since_due: Duration,
        since_sent: Duration,
    ) {
        if !self.record {
            return;
        }
        let us = micros(since_due).max(1);
        self.latency.saturating_record(us);
        if let Some(u) = &mut self.uncorrected {
            u.saturating_record(micros(since_sent).max(1));
        }
        let error = count_status(&mut self.errors, status);
        self.successes += u64::from(!error);
        if let Some(s) = self.scenarios.get_mut(scenario) {
            s.latency.saturating_record(us);
            s.requests += 1;
            s.successes += u64::from(!count_status(&mut s.errors, status));
        }
        self.tick(now, error);
        self.second_hist.saturating_record(us);
    }

    /// A request that ended without a complete response.
    #[inline]
    pub fn failure(&mut self, now: Instant, scenario: usize, f: Failure) {
        if !self.record {
            return;
        }
        count_failure(&mut self.errors, f);
        if let Some(s) = self.scenarios.get_mut(scenario) {
            s.requests += 1;
            count_failure(&mut s.errors, f);
        }
        self.tick(now, true);
    }

    fn tick(&mut self, now: Instant, error: bool) {
        self.requests += 1;
        let second = (self.clock_epoch_ms + micros(now - self.clock_start) / 1000) / 1000;
        if second != self.second {
            self.seal();
            self.second = second;
        }
        self.second_requests += 1;
        self.second_errors += u64::from(error);
    }

    fn seal(&mut self) {
        if self.second_requests > 0 {
            let h = &self.second_hist;
            self.timeline.push(timeline_entry(
                self.second,
                self.second_requests,
                self.second_errors,
                h,
            ));
            self.second_hist.reset();
        }
        self.second_requests = 0;
        self.second_errors = 0;
    }

    /// Seals the current second; call once at the end of the phase.
    pub fn finish(&mut self) {
        self.seal();
    }
}
