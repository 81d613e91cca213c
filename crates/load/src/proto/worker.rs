//! The event loop of TLS and HTTP/2 loads: connections, each with `streams` request slots
//! (1 for HTTP/1.1), over an I/O back end ([`crate::backend`], epoll: its writes are done
//! when they return, so a connection's output buffer can be reused at once).
//!
//! A slot is to HTTP/2 what a connection is to the HTTP/1.1 loop: the closed model sends
//! its next request when its last one ended, the open model gives it a schedule of its own
//! (one request every `slots / rate`) and a request due while the slot is still busy leaves
//! late, its latency counted from when it was due (coordinated-omission correction). A
//! request whose connection is not up yet (connect, TLS handshake) waits for it, and one
//! beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS waits for a stream.
//!
//! Per turn each connection's output (requests, HTTP/2 control frames) is gathered in one
//! buffer and written, through rustls when TLS, once: one TLS record and one `write` for
//! all the requests a turn sends on it. No allocation per request.

use std::io::{self, Read as _, Write as _};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use rustls::ClientConnection;

use super::state::{Conn, ConnState, Slot, State};
use super::{frame, tls, Protocol};
use crate::backend::Io;
use crate::http::{Progress, ResponseParser};
use crate::recorder::{Failure, Recorder};
use crate::worker::{Phase, WorkerSettings};

/// How often in-flight requests are checked against their deadline.
const SCAN_EVERY: Duration = Duration::from_millis(10);
/// Received DATA bytes after which the connection window is opened again.
pub(super) const WINDOW_REFILL: u32 = 1 << 30;

/// One scenario's request in both protocols, serialized once.
pub(crate) struct ProtoRequest {
    /// HTTP/1.1: the request's bytes.
    pub h1: Box<[u8]>,
    /// The method is HEAD (HTTP/1.1 responses have no body).
    pub head: bool,
    /// HTTP/2: the HPACK header block and the body.
    pub block: Box<[u8]>,
    pub body: Box<[u8]>,
}

/// What the protocol worker adds to [`WorkerSettings`].
pub(crate) struct ProtoSettings {
    pub protocol: Protocol,
    /// TLS client configuration and server name, for `https://` targets.
    pub tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    /// Request slots per connection (HTTP/2 streams; 1 for HTTP/1.1).
    pub streams: usize,
    pub requests: Arc<[ProtoRequest]>,
}

pub(crate) struct ProtoWorker<B> {
    io: B,
    st: State,
}

/// Writes through the back end to connection `i` (rustls' `write_tls`).
struct IoWriter<'a, B> {
    io: &'a mut B,
    i: usize,
}

impl<B: Io> io::Write for IoWriter<'_, B> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.io.write(self.i, b)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<B: Io> ProtoWorker<B> {
    pub fn new(s: WorkerSettings, p: ProtoSettings) -> io::Result<Self> {
        let now = Instant::now();
        let n = s.conn_ids.len();
        let conns = (0..n)
            .map(|_| Conn {
                state: ConnState::Down,
                tls: None,
                opened: now,
                connected: now,
                out: Vec::with_capacity(16 * 1024),
                out_at: 0,
                dirty: false,
                inbuf: Vec::new(),
                hblock: Vec::new(),
                hstream: 0,
                hend: false,
                parser: ResponseParser::new(),
                next_stream: 1,
                active: 0,
                limit: p.streams,
                draining: false,
                unacked: 0,
            })
            .collect();
        let slot = Slot {
            busy: false,
            stream: 0,
            scenario: 0,
            due: now,
            sent_at: now,
            deadline: now,
            next_due: now,
            status: 0,
        };
        let io = B::new(n, s.addr)?;
        Ok(ProtoWorker {
            io,
            st: State {
                slots: vec![slot; n * p.streams],
                conns,
                ready: Vec::new(),
                dirty: Vec::new(),
                in_flight: 0,
                cursor: 0,
                bufs: (vec![0; 64 * 1024], vec![0; 64 * 1024]),
                min_limit: None,
                s,
                p,
            },
        })
    }

    /// Runs one phase until its limit is reached and every in-flight request has ended.
    pub fn run_phase(&mut self, ph: &Phase, rec: &mut Recorder) {
        let st = &mut self.st;
        st.cursor = (ph.first_request % st.s.cycle.len() as u64) as usize;
        let streams = st.p.streams;
        let total = (st.s.total_conns * streams) as f64;
        // Per slot: one request every `slots / rate` (run's interval is per connection).
        let interval = st.s.interval.map(|i| i * streams as u32);
        if let Some(interval) = interval {
            for k in 0..st.slots.len() {
                let global = st.s.conn_ids[k / streams] * streams + k % streams;
                st.slots[k].next_due = ph.start
                    + crate::worker::slot_offset(global as f64 / total, interval, st.s.quantum);
            }
        } else {
            st.ready.extend(0..st.slots.len());
        }
        let mut events = Vec::new();
        let mut next_scan = Instant::now() + SCAN_EVERY;
        loop {
            let now = Instant::now();
            let mut wake = now + SCAN_EVERY;
            if let Some(interval) = interval {
                wake = wake.min(self.fire_due(interval, ph, rec, now));
            } else {
                self.drain_ready(ph, rec, now);
            }
            let sending = may_send(ph, rec, now);
            if !sending && self.st.in_flight == 0 {
                break;
            }
            if now >= next_scan {
                self.scan_timeouts(rec, now);
                next_scan = now + SCAN_EVERY;
            }
            if let (true, Some(u)) = (sending, ph.until) {
                wake = wake.min(u);
            }
            self.flush_dirty(rec, now);
            let batch = self
                .st
                .s
                .batch_wait
                .filter(|d| !d.is_zero() && interval.is_none() && self.io.timestamps());
            if let (true, Some(d)) = (self.st.ready.is_empty() && self.st.in_flight >= 2, batch) {
                // --batch-wait: sleep through several responses (their latencies end at their
                // receive timestamps), one wake-up per batch instead of per response.
                self.io.wait(Some(wake.min(now + d)), true, 2, &mut events);
            } else if self.st.ready.is_empty() {
                self.io.wait(Some(wake), interval.is_some(), 1, &mut events);
            } else {
                self.io.wait(None, false, 1, &mut events);
            }
            let now = Instant::now();
            for &c in &events {
                self.on_event(c, rec, now);
            }
            events.clear();
            self.st.s.progress.store(rec.requests, Ordering::Relaxed);
            self.st.s.warm.publish(rec);
        }
        // Connections stay up for the next phase; their output is already flushed.
        if rec.record {
            rec.proto.max_streams = self.st.min_limit.unwrap_or(0) as u64;
        }
        rec.finish();
        self.st.s.progress.store(rec.requests, Ordering::Relaxed);
        self.st.s.warm.publish(rec);
    }

    fn drain_ready(&mut self, ph: &Phase, rec: &mut Recorder, now: Instant) {
        let mut ready = std::mem::take(&mut self.st.ready);
        for &k in &ready {
            if !self.st.slots[k].busy && may_send(ph, rec, now) {
                self.start(k, now, now, rec);
            }
        }
        ready.clear();
        if self.st.ready.is_empty() {
            self.st.ready = ready;
        }
    }

    /// Open model: starts every due request of an idle slot; returns the next wake-up.
    fn fire_due(
        &mut self,
        interval: Duration,
        ph: &Phase,
        rec: &mut Recorder,
        now: Instant,
    ) -> Instant {
        let mut wake = now + SCAN_EVERY;
        for k in 0..self.st.slots.len() {
            let slot = self.st.slots[k];
            if !slot.busy && slot.next_due <= now && may_send(ph, rec, now) {
                self.st.slots[k].next_due += interval;
                self.start(k, slot.next_due, now, rec);
            }
            let slot = &self.st.slots[k];
            if !slot.busy {
                wake = wake.min(slot.next_due);
            }
        }
        wake
    }

    /// Starts a request on idle slot `k`, due at `due`.
    fn start(&mut self, k: usize, due: Instant, now: Instant, rec: &mut Recorder) {
        let st = &mut self.st;
        rec.sent(now, now.saturating_duration_since(due));
        st.in_flight += 1;
        let scenario = usize::from(st.s.cycle[st.cursor]);
        st.cursor = (st.cursor + 1) % st.s.cycle.len();
        st.slots[k] = Slot {
            busy: true,
            stream: 0,
            scenario,
            due,
            sent_at: now,
            deadline: now + st.s.timeout,
            next_due: st.slots[k].next_due,
            status: 0,
        };
        let c = k / st.p.streams;
        match st.conns[c].state {
            ConnState::Down => self.open(c, now, rec),
            ConnState::Up => {
                let conn = &st.conns[c];
                if !conn.draining && conn.active < conn.limit {
                    st.transmit(k);
                } else if rec.record {
                    rec.proto.stream_waits += 1;
                }
            }
            // Sent once the connection is up.
            ConnState::Connecting | ConnState::Handshaking => {}
        }
    }

    fn open(&mut self, c: usize, now: Instant, rec: &mut Recorder) {
        match self.io.connect(c) {
            Ok(()) => {
                let conn = &mut self.st.conns[c];
                conn.state = ConnState::Connecting;
                conn.opened = now;
            }
            Err(e) => {
                let f = if e.kind() == io::ErrorKind::ConnectionRefused {
                    Failure::ConnectRefused
                } else {
                    Failure::ConnectOther
                };
                self.conn_fail(c, f, now, rec);
            }
        }
    }

    fn on_event(&mut self, c: usize, rec: &mut Recorder, now: Instant) {
        if !self.io.is_open(c) {
            return;
        }
        if self.st.conns[c].state == ConnState::Connecting {
            match self.io.connect_result(c) {
                None => return,
                Some(Err(e)) => {
                    let f = if e.kind() == io::ErrorKind::ConnectionRefused {
                        Failure::ConnectRefused
                    } else {
                        Failure::ConnectOther
                    };
                    return self.conn_fail(c, f, now, rec);
                }
                Some(Ok(())) => {
                    rec.connected(now - self.st.conns[c].opened);
                    if let Some((config, name)) = &self.st.p.tls {
                        match ClientConnection::new(config.clone(), name.clone()) {
                            Ok(t) => {
                                let conn = &mut self.st.conns[c];
                                conn.tls = Some(t);
                                conn.state = ConnState::Handshaking;
                                conn.connected = now;
                                self.st.mark(c);
                            }
                            Err(_) => return self.conn_fail(c, Failure::TlsHandshake, now, rec),
                        }
                    } else {
                        self.st.up(c);
                    }
                }
            }
        }
        if self.flush(c).is_err() {
            return self.conn_fail(c, self.st.io_failure(c), now, rec);
        }
        self.read(c, rec, now);
    }

    /// Reads what arrived on connection `c` and acts on it.
    fn read(&mut self, c: usize, rec: &mut Recorder, now: Instant) {
        let mut bufs = std::mem::take(&mut self.st.bufs);
        if let Err(f) = self.read_into(c, rec, now, &mut bufs) {
            self.conn_fail(c, f, now, rec);
        } else if self.st.conns[c].dirty && self.flush(c).is_err() {
            self.conn_fail(c, self.st.io_failure(c), now, rec);
        } else {
            self.retire_if_drained(c, now, rec);
        }
        self.st.bufs = bufs;
    }

    /// [`Self::read`]'s loop; Err: a failure of the whole connection. What the back end read
    /// is copied out first, so that the back end can be asked for its arrival time and the
    /// state fed while the bytes are in hand.
    fn read_into(
        &mut self,
        c: usize,
        rec: &mut Recorder,
        now: Instant,
        bufs: &mut (Vec<u8>, Vec<u8>),
    ) -> Result<(), Failure> {
        let (raw, plain) = bufs;
        loop {
            if self.st.conns[c].state == ConnState::Down {
                return Ok(());
            }
            let n = match self.io.read(c) {
                Ok([]) => {
                    self.eof(c, rec, now);
                    return Ok(());
                }
                Ok(data) => {
                    rec.received(data.len());
                    let n = data.len().min(raw.len());
                    raw[..n].copy_from_slice(&data[..n]);
                    n
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Err(self.st.io_failure(c)),
            };
            let end = self.io.arrival().map_or(now, |at| at.min(now));
            if self.st.conns[c].tls.is_none() {
                self.st.feed(c, &raw[..n], end, rec)?;
                continue;
            }
            // Record by record as rustls takes them, the plaintext read out in between: its
            // buffer of received plaintext is bounded (16 KiB), a read may hold 64 KiB.
            let mut rest = &raw[..n];
            while !rest.is_empty() {
                let handshaking = self.st.conns[c].state == ConnState::Handshaking;
                let Some(t) = self.st.conns[c].tls.as_mut() else {
                    return Ok(());
                };
                let outcome = match t.read_tls(&mut rest) {
                    Ok(_) => t.process_new_packets().map(|_| ()),
                    Err(e) => Err(rustls::Error::General(e.to_string())),
                };
                if let Err(e) = outcome {
                    let _ = self.flush(c); // the alert
                    return Err(if handshaking {
                        tls::classify(&e)
                    } else {
                        Failure::Protocol
                    });
                }
                if handshaking && !t.is_handshaking() {
                    self.st.handshake_done(c, now, rec)?;
                }
                self.read_plain(c, end, rec, plain)?;
            }
        }
    }

    /// Feeds the plaintext rustls decrypted. Err: a failure of the whole connection.
    fn read_plain(
        &mut self,
        c: usize,
        end: Instant,
        rec: &mut Recorder,
        plain: &mut [u8],
    ) -> Result<(), Failure> {
        loop {
            let Some(t) = self.st.conns[c].tls.as_mut() else {
                return Ok(());
            };
            match t.reader().read(plain) {
                Ok(0) => {
                    self.eof(c, rec, end);
                    return Ok(());
                }
                Ok(n) => {
                    self.st.feed(c, &plain[..n], end, rec)?;
                    if self.st.conns[c].state == ConnState::Down {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(_) => return Err(Failure::Read),
            }
        }
    }

    /// The peer closed connection `c`.
    fn eof(&mut self, c: usize, rec: &mut Recorder, now: Instant) {
        let st = &mut self.st;
        match st.conns[c].state {
            ConnState::Handshaking => return self.conn_fail(c, Failure::TlsHandshake, now, rec),
            ConnState::Up if st.p.protocol == Protocol::Http1 && st.slots[c].busy => {
                match st.conns[c].parser.eof() {
                    Progress::Done { status, .. } => st.complete(c, status, now, rec),
                    Progress::ClosedInBody => st.fail_slot(c, Failure::BodyMismatch, now, rec),
                    _ => st.fail_slot(c, Failure::Read, now, rec),
                }
            }
            _ => {}
        }
        self.conn_fail(c, Failure::Read, now, rec);
    }

    /// Writes connection `c`'s pending output (through rustls when TLS).
    fn flush(&mut self, c: usize) -> io::Result<()> {
        let conn = &mut self.st.conns[c];
        conn.dirty = false;
        if let Some(t) = conn.tls.as_mut() {
            if !conn.out.is_empty() {
                t.writer().write_all(&conn.out)?;
                conn.out.clear();
            }
            while t.wants_write() {
                let mut w = IoWriter {
                    io: &mut self.io,
                    i: c,
                };
                match t.write_tls(&mut w) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            return Ok(());
        }
        while conn.out_at < conn.out.len() {
            match self.io.write(c, &conn.out[conn.out_at..]) {
                Ok(n) => conn.out_at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        conn.out.clear();
        conn.out_at = 0;
        Ok(())
    }

    fn flush_dirty(&mut self, rec: &mut Recorder, now: Instant) {
        let mut dirty = std::mem::take(&mut self.st.dirty);
        for &c in &dirty {
            if self.st.conns[c].dirty
                && self.st.conns[c].state != ConnState::Down
                && self.flush(c).is_err()
            {
                self.conn_fail(c, self.st.io_failure(c), now, rec);
            }
        }
        dirty.clear();
        self.st.dirty = dirty;
    }

    fn scan_timeouts(&mut self, rec: &mut Recorder, now: Instant) {
        for k in 0..self.st.slots.len() {
            let slot = &self.st.slots[k];
            if !slot.busy || slot.deadline > now {
                continue;
            }
            let c = k / self.st.p.streams;
            match self.st.conns[c].state {
                ConnState::Connecting | ConnState::Handshaking => {
                    self.conn_fail(c, Failure::ConnectTimeout, now, rec)
                }
                _ if self.st.p.protocol == Protocol::Http1 => {
                    self.conn_fail(c, Failure::Timeout, now, rec)
                }
                _ => {
                    // HTTP/2: cancel the stream; the connection serves the others on.
                    let stream = slot.stream;
                    let conn = &mut self.st.conns[c];
                    if stream != 0 {
                        frame::put_rst(&mut conn.out, stream, frame::CANCEL);
                        conn.active -= 1;
                        self.st.mark(c);
                    }
                    self.st.fail_slot(k, Failure::Timeout, now, rec);
                    self.retire_if_drained(c, now, rec);
                }
            }
        }
    }

    /// Ends every request of connection `c` with `f` and closes it.
    /// Requests not sent yet on a connection that was up are not its failures: they wait for
    /// a new connection, opened at once.
    fn conn_fail(&mut self, c: usize, f: Failure, now: Instant, rec: &mut Recorder) {
        let was_up = self.st.conns[c].state == ConnState::Up;
        let streams = self.st.p.streams;
        let mut waiting = false;
        for k in c * streams..(c + 1) * streams {
            let slot = &self.st.slots[k];
            if slot.busy && was_up && slot.stream == 0 {
                waiting = true;
            } else if slot.busy {
                self.st.fail_slot(k, f, now, rec);
            }
        }
        self.close(c);
        if waiting {
            self.open(c, now, rec);
        }
    }

    /// A connection that may start no stream (GOAWAY, stream ids used up) is closed once its
    /// last stream ended; requests waiting for it get a new one.
    fn retire_if_drained(&mut self, c: usize, now: Instant, rec: &mut Recorder) {
        let conn = &self.st.conns[c];
        if conn.state == ConnState::Up && conn.draining && conn.active == 0 {
            self.conn_fail(c, Failure::Read, now, rec);
        }
    }

    fn close(&mut self, c: usize) {
        self.io.close(c);
        let conn = &mut self.st.conns[c];
        conn.state = ConnState::Down;
        conn.tls = None;
        conn.out.clear();
        conn.out_at = 0;
        conn.inbuf.clear();
        conn.hblock.clear();
        conn.active = 0;
    }
}

/// Whether a new request may leave now.
fn may_send(p: &Phase, rec: &Recorder, now: Instant) -> bool {
    !crate::signal::stop_requested()
        && p.stop.as_ref().is_none_or(|s| !s.load(Ordering::Relaxed))
        && p.budget.is_none_or(|b| rec.sent < b)
        && p.until.is_none_or(|u| now < u)
}
