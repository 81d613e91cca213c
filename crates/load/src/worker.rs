//! One event loop driving a set of connections, each a small state machine, over an I/O
//! back end ([`crate::backend`]: io_uring or epoll). Per request: one pre-serialized write,
//! reads parsed in place, no allocation; a clock read per event and per send.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::Io;
use crate::batch;
use crate::http::{Progress, ResponseParser};
use crate::recorder::{Failure, Recorder};
use crate::template::{Draw, Template};

/// How often in-flight requests are checked against their deadline.
const SCAN_EVERY: Duration = Duration::from_millis(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Connecting,
    Writing(usize),
    Reading,
}

struct Conn {
    state: State,
    parser: ResponseParser,
    /// Scenario of the current request.
    scenario: usize,
    /// When the current request was due (latency start).
    due: Instant,
    /// When it was actually started.
    sent_at: Instant,
    deadline: Instant,
    /// Open model: when the next request is due.
    next_due: Instant,
    /// Per scenario, this connection's source of template values (empty without templates).
    draws: Vec<Draw>,
    /// The current request, rendered from its scenario's template (unused without one).
    rendered: Vec<u8>,
    /// Recent latency of this connection's requests, seconds (zero: none yet).
    latency: f64,
    /// What the request in flight adds to [`Worker::expected`].
    share: f64,
}

/// What one phase (warm-up or measured) of a worker may do.
pub(crate) struct Phase {
    /// Start of the phase; open-model schedules count from here.
    pub start: Instant,
    /// Requests this worker may send, if limited by count.
    pub budget: Option<u64>,
    /// No new request is sent from this instant on, if limited by time.
    pub until: Option<Instant>,
    /// Position in the scenario cycle of this worker's first request of the phase.
    pub first_request: u64,
    /// Ramp-up: connection `i` of `N` sends its first request `ramp * i / N` after `start`
    /// (closed model), or begins its schedule then (open model).
    pub ramp: Option<Duration>,
    /// No new request is sent once this is set (a warm-up until steady that is over).
    pub stop: Option<Arc<AtomicBool>>,
}

/// What a thread's unrecorded phases (ramp-up, warm-up) have seen so far, published once per
/// loop turn for a warm-up until steady to read: requests ended, those answered and their
/// summed latency (µs, from when each was due). Only ever grows.
#[derive(Debug, Default)]
pub(crate) struct WarmProgress {
    pub ended: AtomicU64,
    pub answered: AtomicU64,
    pub latency_us: AtomicU64,
}

impl WarmProgress {
    pub(crate) fn publish(&self, rec: &Recorder) {
        if !rec.record {
            self.ended.store(rec.unrecorded_ended, Ordering::Relaxed);
            self.answered
                .store(rec.unrecorded_answered, Ordering::Relaxed);
            self.latency_us
                .store(rec.unrecorded_latency_us, Ordering::Relaxed);
        }
    }
}

/// One scenario's request, serialized once.
pub(crate) struct Request {
    /// The bytes sent for every request of the scenario.
    pub bytes: Box<[u8]>,
    /// The method is HEAD: responses have no body.
    pub head: bool,
    /// The scenario's template, when it declares values: each request is rendered from it
    /// and `bytes` is not sent.
    pub template: Option<Template>,
}

/// Static settings of a worker.
pub(crate) struct WorkerSettings {
    pub addr: SocketAddr,
    /// The request of each scenario.
    pub requests: Arc<[Request]>,
    /// The weighted order of scenario indices; each worker walks it from its own start.
    pub cycle: Arc<[u16]>,
    pub keepalive: bool,
    pub timeout: Duration,
    /// Open model: interval between two requests of one connection.
    pub interval: Option<Duration>,
    /// Open model: the step of the schedule's slots (see `slot_offset`; zero: none).
    pub quantum: Duration,
    /// Non-blocking polls before blocking while requests are in flight (0 in the open
    /// model, which should stay cheap rather than spin).
    pub spin: u32,
    /// A blocking wait may sleep until half the requests in flight have completed or this
    /// long has passed (zero: wakes on the first completion; `None`: the default, see
    /// [`crate::config::Config::batch_wait`]).
    pub batch_wait: Option<Duration>,
    /// Closed model: pause between a response and the connection's next request.
    pub think: Option<Duration>,
    /// Global indices of this worker's connections, and the total connection count.
    pub conn_ids: Vec<usize>,
    pub total_conns: usize,
    pub progress: Arc<AtomicU64>,
    /// What the unrecorded phases saw (see [`WarmProgress`]).
    pub warm: Arc<WarmProgress>,
    /// Seed of template values, this generator's instance number and the instance count.
    pub seed: u64,
    pub instance: u64,
    pub instances: u64,
}

pub(crate) struct Worker<B> {
    s: WorkerSettings,
    io: B,
    conns: Vec<Conn>,
    /// Connections the back end reported, to be handled this loop turn.
    events: Vec<usize>,
    ready: Vec<usize>,
    in_flight: usize,
    /// Position of the next request in the scenario cycle.
    cursor: usize,
    /// Current number of non-blocking polls before sleeping (adapts, at most `s.spin`).
    spin_budget: u32,
    /// Closed model, this phase: connections send when their `next_due` comes (ramp-up or
    /// think time) rather than as soon as they are idle.
    paced: bool,
    /// The batch wait in force (`None`: wake on the first completion).
    batch_wait: Option<Duration>,
    /// Closed model on a back end that waits for a count: the batch wait, sized to the
    /// responses expected within it ([`crate::batch`]); `None` otherwise, and then no
    /// latency or share is tracked per request.
    sized_wait: Option<Duration>,
    /// Open model: the earliest next due time of a connection with a request in flight
    /// (as of the last [`Worker::fire_due`]): its response should be read by then.
    busy_due: Option<Instant>,
    /// With a sized wait ([`Self::sized_wait`]): the responses expected within it, the sum
    /// of the requests in flight's [`Conn::share`] (see [`crate::batch`]).
    expected: f64,
}

/// The batch wait in force: as asked, or by default [`crate::config::DEFAULT_BATCH_WAIT`]
/// when receives are timestamped (so a batch adds nothing to latencies) and, in the closed
/// model, the back end can wait for half the responses (`counts`; epoll cannot, and
/// sleeping the whole wait cost it a sixth of its throughput at 50 connections); else none.
fn resolve_batch_wait(
    asked: Option<Duration>,
    timestamps: bool,
    open: bool,
    counts: bool,
) -> Option<Duration> {
    match asked {
        Some(d) if d.is_zero() => None,
        Some(d) => Some(d),
        None => (timestamps && (open || counts)).then_some(crate::config::DEFAULT_BATCH_WAIT),
    }
}

/// Open model: where in one `interval` a connection's schedule begins, for a connection
/// at `share` (its place among all connections, in [0, 1)). The interval is cut into as
/// many equal slots as fit steps of at least `step`, and each connection begins at the
/// start of the slot its share falls in: the connections of one slot are due at the same
/// instants, run after run, so the sends leave in bursts each exactly when due, one
/// wake-up per burst. A zero `step` gives every connection its own place (evenly spread).
pub(crate) fn slot_offset(share: f64, interval: Duration, step: Duration) -> Duration {
    if step.is_zero() {
        return interval.mul_f64(share);
    }
    let slots = (interval.as_nanos() / step.as_nanos()).max(1);
    let slot = ((share * slots as f64) as u128).min(slots - 1);
    Duration::from_nanos(u64::try_from(interval.as_nanos() * slot / slots).unwrap_or(u64::MAX))
}

/// Open model: a ramp-up offset cut to whole intervals (when the schedule is in slots), so
/// a connection's requests stay on its slot's instants after the ramp.
fn align_ramp(ramp: Duration, interval: Duration, step: Duration) -> Duration {
    if step.is_zero() || interval.is_zero() {
        return ramp;
    }
    let whole = ramp.as_nanos() / interval.as_nanos();
    Duration::from_nanos(u64::try_from(whole * interval.as_nanos()).unwrap_or(u64::MAX))
}

impl<B: Io> Worker<B> {
    pub fn new(s: WorkerSettings) -> io::Result<Self> {
        let now = Instant::now();
        let templated = s.requests.iter().any(|r| r.template.is_some());
        let conns = s
            .conn_ids
            .iter()
            .map(|&id| Conn {
                state: State::Idle,
                parser: ResponseParser::new(),
                scenario: 0,
                due: now,
                sent_at: now,
                deadline: now,
                next_due: now,
                // Connection numbers count over every instance sharing the seed.
                draws: if templated {
                    let conns = s.instances.saturating_mul(s.total_conns as u64);
                    let global = s.instance.saturating_mul(s.total_conns as u64) + id as u64;
                    (0..s.requests.len())
                        .map(|scenario| Draw::new(s.seed, global, conns, scenario))
                        .collect()
                } else {
                    Vec::new()
                },
                rendered: Vec::new(),
                latency: 0.0,
                share: 0.0,
            })
            .collect();
        let io = B::new(s.conn_ids.len(), s.addr)?;
        let batch_wait = resolve_batch_wait(
            s.batch_wait,
            io.timestamps(),
            s.interval.is_some(),
            io.waits_for_count(),
        );
        Ok(Worker {
            batch_wait,
            sized_wait: batch_wait.filter(|_| s.interval.is_none() && io.waits_for_count()),
            busy_due: None,
            expected: 0.0,
            io,
            events: Vec::new(),
            conns,
            ready: Vec::new(),
            in_flight: 0,
            cursor: 0,
            spin_budget: s.spin,
            paced: false,
            s,
        })
    }

    fn may_send(&self, p: &Phase, rec: &Recorder, now: Instant) -> bool {
        !crate::signal::stop_requested()
            && p.stop.as_ref().is_none_or(|s| !s.load(Ordering::Relaxed))
            && p.budget.is_none_or(|b| rec.sent < b)
            && p.until.is_none_or(|u| now < u)
    }

    /// Runs one phase until its limit is reached and every in-flight request has ended.
    pub fn run_phase(&mut self, p: &Phase, rec: &mut Recorder) {
        self.cursor = (p.first_request % self.s.cycle.len() as u64) as usize;
        self.paced = self.s.interval.is_none() && (self.s.think.is_some() || p.ramp.is_some());
        let share = |i: usize| self.s.conn_ids[i] as f64 / self.s.total_conns as f64;
        let ramp = |i: usize| p.ramp.map_or(Duration::ZERO, |r| r.mul_f64(share(i)));
        if let Some(interval) = self.s.interval {
            // Stagger the connections' schedules over the slots of one interval (after
            // their place in the ramp-up, if any).
            let step = self.s.quantum;
            for i in 0..self.conns.len() {
                self.conns[i].next_due = p.start
                    + align_ramp(ramp(i), interval, step)
                    + slot_offset(share(i), interval, step);
            }
        } else if self.paced {
            for i in 0..self.conns.len() {
                self.conns[i].next_due = p.start + ramp(i);
            }
        } else {
            self.ready.extend(0..self.conns.len());
        }
        let mut next_scan = Instant::now() + SCAN_EVERY;
        loop {
            let mut now = Instant::now();
            let mut wake = now + SCAN_EVERY;
            if let Some(interval) = self.s.interval {
                wake = wake.min(self.fire_due(interval, p, rec, now));
            } else if self.paced {
                wake = wake.min(self.fire_paced(p, rec, now));
            } else {
                self.drain_ready(p, rec);
            }
            let sending = self.may_send(p, rec, now);
            if !sending && self.in_flight == 0 {
                break;
            }
            if now >= next_scan {
                self.scan_timeouts(rec, now);
                next_scan = now + SCAN_EVERY;
            }
            if sending {
                if let Some(u) = p.until {
                    wake = wake.min(u);
                }
            }
            let precise = self.paced || self.s.interval.is_some();
            let mut events = std::mem::take(&mut self.events);
            if !self.ready.is_empty() {
                // Hand over what was queued, take what completed, without sleeping.
                self.io.wait(None, false, 1, &mut events);
            } else if !self.spin_poll(&mut events) {
                let (want, until) = self.batch(wake, sending);
                self.io.wait(Some(until), precise, want, &mut events);
            }
            // With receive timestamps a response's latency ends at its arrival, so one
            // clock reading serves the whole batch; without, each event reads the clock.
            let stamped = self.io.timestamps();
            if stamped && !events.is_empty() {
                now = Instant::now();
            }
            for &i in &events {
                if !stamped {
                    now = Instant::now();
                }
                self.on_event(i, rec, now);
            }
            events.clear();
            self.events = events;
            self.s.progress.store(rec.requests, Ordering::Relaxed);
            self.s.warm.publish(rec);
        }
        rec.finish();
        self.s.progress.store(rec.requests, Ordering::Relaxed);
        self.s.warm.publish(rec);
    }

    /// With requests in flight: polls without blocking up to `spin` times
    /// before the caller blocks; returns whether events arrived. Falling asleep while a
    /// response is microseconds away made the server's core pay for waking this thread,
    /// which slowed the server (see docs/load-generator.md, "What limits us").
    ///
    /// The budget adapts: a spin that found events doubles it (up to `spin`), one that had
    /// to give up halves it (down to 1), so against a slow server the thread soon sleeps
    /// almost at once and wastes next to no CPU.
    fn spin_poll(&mut self, events: &mut Vec<usize>) -> bool {
        // A batch wait sleeps through responses on purpose; a spin would end it at the first.
        let batching = self.batch_wait.is_some() && self.in_flight >= 2;
        if self.in_flight == 0 || self.s.spin == 0 || batching {
            return false;
        }
        for _ in 0..self.spin_budget {
            if self.io.wait(None, false, 1, events) {
                self.spin_budget = (self.spin_budget * 2).min(self.s.spin);
                return true;
            }
        }
        self.spin_budget = (self.spin_budget / 2).max(1);
        false
    }

    /// How many completions a blocking wait waits for, and until when (never past `wake`,
    /// the next due send or scan). Without a batch wait: one. With one, closed model, on a
    /// back end that waits for a count (io_uring): the responses expected within the batch
    /// wait ([`batch::batch_size`]), for at most [`batch::SAFETY_TIMEOUT`]; on one that
    /// does not (epoll): half the requests in flight, for at most the batch wait. Either
    /// way the server keeps at least half to work on, and this thread wakes once per batch
    /// instead of once per response. Open model with timestamped receives: while sending,
    /// none — responses are read at the next due send, their latencies ending when they
    /// arrived; then all of them. Without timestamps a latency may include up to the batch
    /// wait of waiting for others.
    fn batch(&self, wake: Instant, sending: bool) -> (usize, Instant) {
        let Some(limit) = self.batch_wait else {
            return (1, wake);
        };
        if self.in_flight < 2 {
            return (1, wake);
        }
        if self.s.interval.is_some() {
            if self.io.timestamps() {
                // Up to the next due send of an idle connection or of a busy one (whose
                // response should be in by then); a busy connection already due is sent
                // on as soon as its response comes.
                return match self.busy_due {
                    Some(due) if due <= Instant::now() => (1, wake),
                    Some(due) => (self.in_flight + usize::from(sending), wake.min(due)),
                    None => (self.in_flight + usize::from(sending), wake),
                };
            }
            return (self.in_flight, wake.min(Instant::now() + limit));
        }
        if self.sized_wait.is_none() {
            return (self.in_flight / 2, wake.min(Instant::now() + limit));
        }
        let want = batch::batch_size(self.in_flight, self.expected);
        let safety = batch::SAFETY_TIMEOUT.max(limit);
        (want, wake.min(Instant::now() + safety))
    }

    fn drain_ready(&mut self, p: &Phase, rec: &mut Recorder) {
        // Only the connections queued so far: a synchronous failure re-queues its
        // connection for the next loop turn instead of spinning here.
        // One clock reading for the batch: each of these connections was free to send
        // (due) before it.
        let mut ready = std::mem::take(&mut self.ready);
        let now = Instant::now();
        for &i in &ready {
            if self.conns[i].state == State::Idle && self.may_send(p, rec, now) {
                self.start(i, now, now, rec);
            }
        }
        ready.clear();
        if self.ready.is_empty() {
            self.ready = ready;
        }
    }

    /// Paced closed model: starts a request on every idle connection whose pause (ramp-up
    /// place or think time) is over; returns the next wake-up. Latency counts from the send.
    fn fire_paced(&mut self, p: &Phase, rec: &mut Recorder, now: Instant) -> Instant {
        let mut wake = now + SCAN_EVERY;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if c.state != State::Idle {
                continue;
            }
            if c.next_due <= now {
                if self.may_send(p, rec, now) {
                    self.start(i, now, now, rec);
                }
            } else {
                wake = wake.min(c.next_due);
            }
        }
        wake
    }

    /// Open model: starts every due request on an idle connection; returns the next wake-up.
    fn fire_due(
        &mut self,
        interval: Duration,
        p: &Phase,
        rec: &mut Recorder,
        now: Instant,
    ) -> Instant {
        let mut wake = now + SCAN_EVERY;
        // The connections of a slot fall due together (see `slot_offset`): one turn sends them.
        self.busy_due = None;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if c.state == State::Idle && c.next_due <= now {
                if !self.may_send(p, rec, now) {
                    continue;
                }
                let due = c.next_due;
                self.conns[i].next_due += interval;
                self.start(i, due, now, rec);
            }
            let c = &self.conns[i];
            if c.state == State::Idle {
                wake = wake.min(c.next_due);
            } else {
                self.busy_due = Some(self.busy_due.map_or(c.next_due, |d| d.min(c.next_due)));
            }
        }
        wake
    }

    fn scan_timeouts(&mut self, rec: &mut Recorder, now: Instant) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            if c.state != State::Idle && c.deadline <= now {
                let f = if c.state == State::Connecting {
                    Failure::ConnectTimeout
                } else {
                    Failure::Timeout
                };
                self.fail(i, f, now, rec);
            }
        }
    }

    /// Starts a request on idle connection `i`, due at `due`.
    fn start(&mut self, i: usize, due: Instant, now: Instant, rec: &mut Recorder) {
        rec.sent(now, now.saturating_duration_since(due));
        self.in_flight += 1;
        let c = &mut self.conns[i];
        if let Some(wait) = self.sized_wait {
            c.share = batch::expected_share(c.latency, wait);
            self.expected += c.share;
        }
        c.due = due;
        c.sent_at = now;
        c.deadline = now + self.s.timeout;
        c.scenario = usize::from(self.s.cycle[self.cursor]);
        self.cursor += 1;
        if self.cursor == self.s.cycle.len() {
            self.cursor = 0;
        }
        let request = &self.s.requests[c.scenario];
        c.parser.reset(request.head);
        if let Some(t) = &request.template {
            t.render(&mut c.draws[c.scenario], &mut c.rendered);
        }
        if self.io.is_open(i) {
            self.write(i, 0, now, rec);
            return;
        }
        match self.io.connect(i) {
            Ok(()) => c.state = State::Connecting,
            Err(e) => {
                let f = if e.kind() == io::ErrorKind::ConnectionRefused {
                    Failure::ConnectRefused
                } else {
                    Failure::ConnectOther
                };
                self.fail(i, f, now, rec);
            }
        }
    }

    fn on_event(&mut self, i: usize, rec: &mut Recorder, now: Instant) {
        if !self.io.is_open(i) {
            return;
        }
        match self.conns[i].state {
            State::Connecting => self.on_connecting(i, now, rec),
            State::Writing(off) => {
                self.write(i, off, now, rec);
                if self.conns[i].state == State::Reading {
                    self.read(i, now, rec);
                }
            }
            State::Reading => self.read(i, now, rec),
            State::Idle => self.read_idle(i),
        }
    }

    fn on_connecting(&mut self, i: usize, now: Instant, rec: &mut Recorder) {
        match self.io.connect_result(i) {
            None => {}
            Some(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
                self.fail(i, Failure::ConnectRefused, now, rec)
            }
            Some(Err(_)) => self.fail(i, Failure::ConnectOther, now, rec),
            Some(Ok(())) => {
                rec.connected(now - self.conns[i].sent_at);
                self.write(i, 0, now, rec);
            }
        }
    }

    fn write(&mut self, i: usize, mut off: usize, now: Instant, rec: &mut Recorder) {
        let c = &mut self.conns[i];
        let request = &self.s.requests[c.scenario];
        let req: &[u8] = match request.template {
            Some(_) => &c.rendered,
            None => &request.bytes,
        };
        while off < req.len() {
            match self.io.write(i, &req[off..]) {
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    c.state = State::Writing(off);
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => {
                    self.fail(i, Failure::Read, now, rec);
                    return;
                }
            }
        }
        c.state = State::Reading;
    }

    fn read(&mut self, i: usize, now: Instant, rec: &mut Recorder) {
        loop {
            let c = &mut self.conns[i];
            let progress = match self.io.read(i) {
                Ok([]) => c.parser.eof(),
                Ok(data) => {
                    rec.received(data.len());
                    c.parser.feed(data)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.fail(i, Failure::Read, now, rec);
                    return;
                }
            };
            match progress {
                Progress::NeedMore => {}
                Progress::Done { status, close } => {
                    // The latency ends when the response's last bytes arrived, if the kernel
                    // timestamped them (never before the send nor after now).
                    let end = self.io.arrival().map_or(now, |at| at.clamp(c.sent_at, now));
                    rec.response(end, c.scenario, status, end - c.due, end - c.sent_at);
                    if self.sized_wait.is_some() {
                        c.latency = batch::smooth_latency(c.latency, end - c.sent_at);
                        self.expected -= std::mem::take(&mut c.share);
                    }
                    self.in_flight -= 1;
                    c.state = State::Idle;
                    if close || !self.s.keepalive {
                        self.io.close(i);
                    } else {
                        self.io.watch_idle(i);
                    }
                    self.after_request(i, now);
                    return;
                }
                Progress::Invalid => return self.fail(i, Failure::Protocol, now, rec),
                Progress::ClosedInHead => return self.fail(i, Failure::Read, now, rec),
                Progress::ClosedInBody => return self.fail(i, Failure::BodyMismatch, now, rec),
            }
        }
    }

    /// An idle kept-alive connection became readable: normally the server closed it.
    fn read_idle(&mut self, i: usize) {
        match self.io.read(i) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            _ => self.io.close(i), // closed, reset or unsolicited bytes: reconnect next time
        }
    }

    /// Ends the in-flight request of connection `i` with a failure and drops its socket.
    fn fail(&mut self, i: usize, f: Failure, now: Instant, rec: &mut Recorder) {
        let c = &self.conns[i];
        rec.failure(now, c.sent_at, c.scenario, f);
        self.expected -= std::mem::take(&mut self.conns[i].share);
        self.in_flight -= 1;
        self.io.close(i);
        self.conns[i].state = State::Idle;
        self.after_request(i, now);
    }
    /// Closed model: queues idle connection `i` for its next request, at once or, paced,
    /// after the think time.
    fn after_request(&mut self, i: usize, now: Instant) {
        if self.s.interval.is_some() {
            return;
        }
        if self.paced {
            self.conns[i].next_due = now + self.s.think.unwrap_or_default();
        } else {
            self.ready.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_batch_wait_needs_timestamps_and_in_the_closed_model_a_counting_wait() {
        let d = crate::config::DEFAULT_BATCH_WAIT;
        let us = Duration::from_micros;
        // (asked, timestamps, open, counts)
        assert_eq!(resolve_batch_wait(None, true, false, true), Some(d));
        assert_eq!(resolve_batch_wait(None, true, false, false), None);
        assert_eq!(resolve_batch_wait(None, true, true, false), Some(d));
        assert_eq!(resolve_batch_wait(None, false, true, true), None);
        // Asked for: as asked, whatever the back end; zero is off.
        assert_eq!(
            resolve_batch_wait(Some(us(200)), false, false, false),
            Some(us(200))
        );
        assert_eq!(
            resolve_batch_wait(Some(Duration::ZERO), true, true, true),
            None
        );
    }

    #[test]
    fn connections_begin_at_the_start_of_their_slot_of_the_interval() {
        let us = Duration::from_micros;
        // 500 µs between a connection's requests, a step of 100 µs: five slots.
        let at = |share| slot_offset(share, us(500), us(100));
        assert_eq!(at(0.0), us(0));
        assert_eq!(at(0.19), us(0));
        assert_eq!(at(0.2), us(100));
        assert_eq!(at(0.5), us(200));
        assert_eq!(at(0.99), us(400));
        // A step that does not divide the interval: the slots are as long as fits (166.7 µs).
        assert_eq!(
            slot_offset(0.5, us(500), us(150)),
            Duration::from_nanos(166_666)
        );
        // A step as long as the interval or longer: one slot, every connection at once.
        assert_eq!(slot_offset(0.7, us(500), us(500)), us(0));
        assert_eq!(slot_offset(0.7, us(500), us(900)), us(0));
        // No step: each connection its own place.
        assert_eq!(slot_offset(0.5, us(500), Duration::ZERO), us(250));
    }

    #[test]
    fn fifty_connections_share_five_slots_evenly() {
        let us = Duration::from_micros;
        let mut per_slot = std::collections::BTreeMap::new();
        for i in 0..50 {
            *per_slot
                .entry(slot_offset(i as f64 / 50.0, us(500), us(100)))
                .or_insert(0) += 1;
        }
        let counts: Vec<i32> = per_slot.values().copied().collect();
        assert_eq!(counts, vec![10; 5], "{per_slot:?}");
    }

    #[test]
    fn a_ramp_offset_is_cut_to_whole_intervals_so_the_slot_is_kept() {
        let us = Duration::from_micros;
        assert_eq!(align_ramp(us(1_234), us(500), us(100)), us(1_000));
        assert_eq!(align_ramp(us(499), us(500), us(100)), us(0));
        assert_eq!(align_ramp(us(1_234), us(500), Duration::ZERO), us(1_234));
    }
}
