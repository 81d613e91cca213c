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
    TlsHandshake,
    TlsCertificate,
    AlpnMismatch,
}

/// Latency, outcomes and counts of a set of requests: a whole thread's, or one scenario's.
pub(crate) struct Tally {
    pub latency: Histogram<u64>,
    pub requests: u64,
    pub successes: u64,
    pub errors: ErrorCounts,
}

impl Tally {
    pub fn new() -> Self {
        Tally {
            latency: hist::new_latency(),
            requests: 0,
            successes: 0,
            errors: ErrorCounts::default(),
        }
    }

    /// A complete response that took `us`; returns whether its status is an error (≥ 400).
    #[inline]
    fn response(&mut self, us: u64, status: u16) -> bool {
        self.latency.saturating_record(us);
        self.requests += 1;
        if status < 400 {
            self.successes += 1;
            return false;
        }
        let e = &mut self.errors;
        if status >= 500 {
            e.status_5xx += 1;
        } else {
            e.status_4xx += 1;
        }
        e.total += 1;
        *e.status_codes.entry(status).or_default() += 1;
        true
    }

    /// A request that ended without a complete response, counted in its class.
    #[inline]
    fn failure(&mut self, f: Failure) {
        self.requests += 1;
        let e = &mut self.errors;
        e.total += 1;
        match f {
            Failure::ConnectRefused => e.connect_refused += 1,
            Failure::ConnectTimeout => e.connect_timeout += 1,
            Failure::ConnectOther => e.connect_other += 1,
            Failure::Timeout => e.timeout += 1,
            Failure::Read => e.read += 1,
            Failure::BodyMismatch => e.body_mismatch += 1,
            Failure::Protocol => e.protocol += 1,
            Failure::TlsHandshake => e.tls_handshake += 1,
            Failure::TlsCertificate => e.tls_certificate += 1,
            Failure::AlpnMismatch => e.alpn_mismatch += 1,
        }
    }

    /// Adds another tally into this one.
    pub fn add(&mut self, o: &Tally) {
        hist::add(&mut self.latency, &o.latency).expect("latency histograms share their bounds");
        self.requests += o.requests;
        self.successes += o.successes;
        self.errors.add(&o.errors);
    }
}

/// Measurements of one thread over one phase.
pub(crate) struct Recorder {
    /// Whether anything is recorded (false during warm-up).
    pub record: bool,
    /// Every request of the thread. In a multi-scenario run it is only filled by
    /// [`Recorder::finish`], from `scenarios`, so each response is recorded once.
    pub total: Tally,
    pub uncorrected: Option<Histogram<u64>>,
    pub connect: Histogram<u64>,
    /// Requests ended so far (kept live for the progress line and the timeline).
    pub requests: u64,
    pub bytes: u64,
    pub sent: u64,
    /// Requests of an unrecorded phase (warm-up, ramp-up) that ended without a complete
    /// response: they may never have reached the target.
    pub unrecorded_failures: u64,
    /// Requests of an unrecorded phase that ended (answered or failed), and the summed latency
    /// of those answered (µs, from when each was due): what a warm-up until steady watches.
    pub unrecorded_ended: u64,
    pub unrecorded_latency_us: u64,
    pub unrecorded_answered: u64,
    pub lag_sum_us: u64,
    pub lag_max_us: u64,
    pub timeline: Vec<TimelineEntry>,
    /// Per-scenario figures; empty when the run has a single scenario.
    pub scenarios: Vec<Tally>,
    clock_start: Instant,
    clock_epoch_ms: u64,
    second: u64,
    /// When `second` ends: the clock is turned into a second only once per second.
    second_ends: Instant,
    second_requests: u64,
    second_errors: u64,
    second_hist: Histogram<u64>,
    /// The window's accounting (see [`Recorder::open_window`] and `crate::run`).
    pub window: Window,
    /// TLS and HTTP/2 facts (only the protocol worker, [`crate::proto::worker`], counts
    /// them, and only while recording).
    pub proto: crate::proto_tally::ProtoTally,
}

/// What a recording thread notes about the end of its measured window: when it stopped
/// sending, and which requests ended after that, so that the window's throughput can count
/// its drain without its time (see `benchrun_wire::result`, "The window and its drain").
#[derive(Default)]
pub(crate) struct Window {
    /// When this thread's window ends: the phase's time limit, or (with a request count) its
    /// last send; `None` while it is not known yet.
    pub end: Option<Instant>,
    /// With a request count: the send that closes the window.
    budget: Option<u64>,
    /// Requests sent before this instant (the window's first second) make the response lag.
    early_until: Option<Instant>,
    /// Sum (µs) and count of the send-to-response times of those requests.
    pub early_us: u64,
    pub early_count: u64,
    /// Requests that ended by `end` (or before it was known).
    pub ended_inside: u64,
    /// (sent, ended) of every request that ended after `end`: at most the thread's
    /// connections, as nothing is sent after `end`.
    pub ended_after: Vec<(Instant, Instant)>,
    /// The last send and the last end of a request.
    pub last_send: Option<Instant>,
    pub last_end: Option<Instant>,
}

/// The start of the window whose requests make the response lag: its first second.
pub(crate) const RESPONSE_LAG_SPAN: Duration = Duration::from_secs(1);

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
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
        let second = clock_epoch_ms / 1000;
        Recorder {
            scenarios: (0..per_scenario).map(|_| Tally::new()).collect(),
            record,
            total: Tally::new(),
            uncorrected: open_model.then(hist::new_latency),
            connect: hist::new_latency(),
            requests: 0,
            bytes: 0,
            sent: 0,
            unrecorded_failures: 0,
            unrecorded_ended: 0,
            unrecorded_latency_us: 0,
            unrecorded_answered: 0,
            lag_sum_us: 0,
            lag_max_us: 0,
            timeline: Vec::new(),
            clock_start,
            clock_epoch_ms,
            second,
            second_ends: second_end(clock_start, clock_epoch_ms, second),
            second_requests: 0,
            second_errors: 0,
            second_hist: hist::new_timeline(),
            window: Window::default(),
            proto: Default::default(),
        }
    }

    /// Opens the measured window at the clock's start: it ends at `until` (a time limit) or
    /// at the send that reaches `budget` (a request count), whichever is given; `conns`
    /// bounds the requests that can end after it. The requests sent in its first
    /// [`RESPONSE_LAG_SPAN`] (or all of it, if shorter) make the response lag.
    pub fn open_window(&mut self, until: Option<Instant>, budget: Option<u64>, conns: usize) {
        let early = self.clock_start + RESPONSE_LAG_SPAN;
        self.window = Window {
            end: until,
            budget,
            early_until: Some(until.map_or(early, |u| u.min(early))),
            ended_after: Vec::with_capacity(conns),
            ..Window::default()
        };
    }

    /// A request went out at `now`, `lag` after it was due.
    #[inline]
    pub fn sent(&mut self, now: Instant, lag: Duration) {
        self.sent += 1;
        if !self.record {
            return;
        }
        if self.uncorrected.is_some() {
            let us = micros(lag);
            self.lag_sum_us += us;
            self.lag_max_us = self.lag_max_us.max(us);
        }
        let w = &mut self.window;
        w.last_send = Some(now);
        if w.budget == Some(self.sent) {
            w.end = Some(now);
        }
    }

    /// A request sent at `sent` ended at `now`, with a response that took `us` (µs) from the
    /// send, or without one.
    #[inline]
    fn ended(&mut self, now: Instant, sent: Instant, response_us: Option<u64>) {
        let w = &mut self.window;
        if let (Some(us), Some(early)) = (response_us, w.early_until) {
            if sent < early {
                w.early_us += us;
                w.early_count += 1;
            }
        }
        match w.end {
            Some(end) if now > end => w.ended_after.push((sent, now)),
            _ => w.ended_inside += 1,
        }
        if w.last_end.is_none_or(|e| now > e) {
            w.last_end = Some(now);
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

    /// Where a request of `scenario` is counted: its scenario's tally, or the total.
    #[inline]
    fn tally(&mut self, scenario: usize) -> &mut Tally {
        if self.scenarios.is_empty() {
            &mut self.total
        } else {
            &mut self.scenarios[scenario]
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
        let us = micros(since_due).max(1);
        if !self.record {
            self.unrecorded_ended += 1;
            self.unrecorded_answered += 1;
            self.unrecorded_latency_us += us;
            return;
        }
        let service_us = micros(since_sent).max(1);
        if let Some(u) = &mut self.uncorrected {
            u.saturating_record(service_us);
        }
        let error = self.tally(scenario).response(us, status);
        self.tick(now, error);
        self.second_hist.saturating_record(us);
        self.ended(now, now - since_sent, Some(service_us));
    }

    /// A request sent at `sent` that ended without a complete response.
    #[inline]
    pub fn failure(&mut self, now: Instant, sent: Instant, scenario: usize, f: Failure) {
        if !self.record {
            self.unrecorded_failures += 1;
            self.unrecorded_ended += 1;
            return;
        }
        self.tally(scenario).failure(f);
        self.tick(now, true);
        self.ended(now, sent, None);
    }

    fn tick(&mut self, now: Instant, error: bool) {
        self.requests += 1;
        if now >= self.second_ends {
            let second = (self.clock_epoch_ms + micros(now - self.clock_start) / 1000) / 1000;
            if second != self.second {
                self.seal();
                self.second = second;
            }
            self.second_ends = second_end(self.clock_start, self.clock_epoch_ms, self.second);
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

    /// Continues the unrecorded counts of `earlier` (the ramp-up's, in the warm-up's
    /// recorder), so that what a warm-up until steady reads never goes back.
    pub fn continue_from(&mut self, earlier: &Recorder) {
        self.unrecorded_ended = earlier.unrecorded_ended;
        self.unrecorded_answered = earlier.unrecorded_answered;
        self.unrecorded_latency_us = earlier.unrecorded_latency_us;
    }

    /// Seals the current second and adds the scenarios' tallies into the total; call once
    /// at the end of the phase. A window whose end was not known (a request count not reached,
    /// a stop requested) ends at its last send.
    pub fn finish(&mut self) {
        let w = &mut self.window;
        let last_send = w.last_send.unwrap_or(self.clock_start);
        if w.end.is_none() || crate::signal::stop_requested() {
            w.end = Some(w.end.map_or(last_send, |e| e.min(last_send)));
        }
        self.seal();
        for s in &self.scenarios {
            self.total.add(s);
        }
    }
}

/// The instant at which unix second `second` ends, on a clock where `clock_start` is
/// `clock_epoch_ms`.
fn second_end(clock_start: Instant, clock_epoch_ms: u64, second: u64) -> Instant {
    clock_start + Duration::from_millis(((second + 1) * 1000).saturating_sub(clock_epoch_ms))
}
