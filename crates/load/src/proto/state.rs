//! The protocol state of the TLS/HTTP/2 worker apart from its I/O: connections, their
//! request slots, and what a response (HTTP/1.1 bytes, HTTP/2 frames: [`super::h2`]) does to
//! them. No sockets here: the worker ([`super::worker`]) reads and writes, this decides.

use std::time::Instant;

use rustls::ClientConnection;

use super::worker::ProtoSettings;
use super::{frame, tls, Protocol};
use crate::http::{Progress, ResponseParser};
use crate::recorder::{Failure, Recorder};
use crate::worker::WorkerSettings;

/// Where a connection is: no socket, TCP connecting, TLS handshaking, ready for requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ConnState {
    Down,
    Connecting,
    Handshaking,
    Up,
}

/// One connection: its socket's progress, TLS session, output and HTTP/2 state.
pub(super) struct Conn {
    pub(super) state: ConnState,
    pub(super) tls: Option<ClientConnection>,
    /// When the connect began, and when TCP was connected (the handshake's start).
    pub(super) opened: Instant,
    pub(super) connected: Instant,
    /// Plaintext to send, gathered over a turn; `out_at` of it is written (cleartext).
    pub(super) out: Vec<u8>,
    pub(super) out_at: usize,
    /// Queued for the worker's flush at the end of the turn.
    pub(super) dirty: bool,
    /// HTTP/2: the start of a frame not complete yet.
    pub(super) inbuf: Vec<u8>,
    /// HTTP/2: a header block awaiting CONTINUATION, its stream and END_STREAM flag.
    pub(super) hblock: Vec<u8>,
    pub(super) hstream: u32,
    pub(super) hend: bool,
    /// HTTP/1.1: the response parser.
    pub(super) parser: ResponseParser,
    pub(super) next_stream: u32,
    /// Requests on the wire, and how many may be (the server's limit, at most `streams`).
    pub(super) active: usize,
    pub(super) limit: usize,
    /// No new stream may start (GOAWAY received, or stream ids used up).
    pub(super) draining: bool,
    /// DATA bytes received since the connection window was last opened again.
    pub(super) unacked: u32,
}

/// One request slot (an HTTP/2 stream, or the one request of an HTTP/1.1 connection).
#[derive(Clone, Copy)]
pub(super) struct Slot {
    pub(super) busy: bool,
    /// HTTP/2 stream id of the request (HTTP/1.1: 1); 0 while it waits to be sent.
    pub(super) stream: u32,
    pub(super) scenario: usize,
    pub(super) due: Instant,
    pub(super) sent_at: Instant,
    pub(super) deadline: Instant,
    pub(super) next_due: Instant,
    pub(super) status: u16,
}

/// The protocol state of a worker, apart from its I/O back end.
pub(super) struct State {
    pub(super) s: WorkerSettings,
    pub(super) p: ProtoSettings,
    pub(super) conns: Vec<Conn>,
    pub(super) slots: Vec<Slot>,
    /// Closed model: slots free to send.
    pub(super) ready: Vec<usize>,
    pub(super) dirty: Vec<usize>,
    pub(super) in_flight: usize,
    pub(super) cursor: usize,
    /// Read buffers: what the back end read, and TLS plaintext.
    pub(super) bufs: (Vec<u8>, Vec<u8>),
    /// The smallest SETTINGS_MAX_CONCURRENT_STREAMS (capped at `streams`) a server sent.
    pub(super) min_limit: Option<usize>,
}

impl State {
    /// Queues connection `c` for this turn's flush.
    pub(super) fn mark(&mut self, c: usize) {
        if !self.conns[c].dirty {
            self.conns[c].dirty = true;
            self.dirty.push(c);
        }
    }

    /// The class of an I/O error on connection `c`: a handshake failure while handshaking.
    pub(super) fn io_failure(&self, c: usize) -> Failure {
        if self.conns[c].state == ConnState::Handshaking {
            Failure::TlsHandshake
        } else {
            Failure::Read
        }
    }

    /// Connection `c` is ready for requests: HTTP/2's opening, then the waiting requests.
    pub(super) fn up(&mut self, c: usize) {
        let h2 = self.p.protocol == Protocol::H2;
        let conn = &mut self.conns[c];
        conn.state = ConnState::Up;
        conn.next_stream = 1;
        conn.active = 0;
        conn.limit = self.p.streams;
        conn.draining = false;
        conn.unacked = 0;
        if h2 {
            frame::put_opening(&mut conn.out);
        }
        self.mark(c);
        self.send_waiting(c);
    }

    pub(super) fn handshake_done(
        &mut self,
        c: usize,
        now: Instant,
        rec: &mut Recorder,
    ) -> Result<(), Failure> {
        let conn = &self.conns[c];
        let t = conn.tls.as_ref().expect("TLS connection");
        let alpn = t.alpn_protocol();
        if rec.record {
            let p = &mut rec.proto;
            let us = (now - conn.connected).as_micros() as u64;
            p.handshakes += 1;
            p.handshake_total_us += us;
            p.handshake_max_us = p.handshake_max_us.max(us);
            if t.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
                p.resumed += 1;
            }
            p.versions |= match t.protocol_version().map(tls::version_name) {
                Some("TLSv1_2") => 1,
                Some("TLSv1_3") => 2,
                _ => 4,
            };
            p.alpn |= match alpn {
                Some(b"http/1.1") => 1,
                Some(b"h2") => 2,
                _ => 0,
            };
        }
        // An h2 client must not speak HTTP/2 to a server that did not agree to it.
        if self.p.protocol == Protocol::H2 && alpn != Some(b"h2") {
            return Err(Failure::AlpnMismatch);
        }
        self.up(c);
        Ok(())
    }

    /// Puts waiting requests of connection `c` on the wire while streams are free.
    pub(super) fn send_waiting(&mut self, c: usize) {
        let streams = self.p.streams;
        for k in c * streams..(c + 1) * streams {
            let conn = &self.conns[c];
            if conn.state != ConnState::Up || conn.draining || conn.active >= conn.limit {
                return;
            }
            if self.slots[k].busy && self.slots[k].stream == 0 {
                self.transmit(k);
            }
        }
    }

    /// Writes slot `k`'s request into its connection's output.
    pub(super) fn transmit(&mut self, k: usize) {
        let c = k / self.p.streams;
        let request = &self.p.requests[self.slots[k].scenario];
        let conn = &mut self.conns[c];
        let stream = match self.p.protocol {
            Protocol::Http1 => {
                conn.out.extend_from_slice(&request.h1);
                conn.parser.reset(request.head);
                1
            }
            Protocol::H2 => {
                let id = conn.next_stream;
                conn.next_stream += 2;
                if conn.next_stream > (1 << 31) - 2 {
                    conn.draining = true; // ids used up: a new connection for what follows
                }
                frame::put_request(&mut conn.out, id, &request.block, &request.body);
                id
            }
        };
        conn.active += 1;
        self.slots[k].stream = stream;
        self.mark(c);
    }

    /// Connection `c` received `data` (plaintext). Err: a failure of the whole connection.
    pub(super) fn feed(
        &mut self,
        c: usize,
        data: &[u8],
        end: Instant,
        rec: &mut Recorder,
    ) -> Result<(), Failure> {
        if self.p.protocol == Protocol::Http1 {
            if !self.slots[c].busy || self.slots[c].stream == 0 {
                return Err(Failure::Read); // unsolicited bytes: start afresh
            }
            return match self.conns[c].parser.feed(data) {
                Progress::NeedMore => Ok(()),
                Progress::Done { status, close } => {
                    self.complete(c, status, end, rec);
                    if close {
                        Err(Failure::Read) // nothing in flight any more: only closes
                    } else {
                        Ok(())
                    }
                }
                _ => Err(Failure::Protocol),
            };
        }
        let mut inbuf = std::mem::take(&mut self.conns[c].inbuf);
        let result = if inbuf.is_empty() {
            let used = self.frames(c, data, end, rec);
            used.map(|n| inbuf.extend_from_slice(&data[n..]))
        } else {
            inbuf.extend_from_slice(data);
            let used = self.frames(c, &inbuf, end, rec);
            used.map(|n| {
                inbuf.drain(..n);
            })
        };
        if self.conns[c].state != ConnState::Down {
            self.conns[c].inbuf = inbuf;
        }
        result
    }

    /// The slot whose request is on `stream` of connection `c`.
    pub(super) fn slot_of(&self, c: usize, stream: u32) -> Option<usize> {
        let streams = self.p.streams;
        (c * streams..(c + 1) * streams)
            .find(|&k| self.slots[k].busy && self.slots[k].stream == stream)
    }

    pub(super) fn end_stream(&mut self, c: usize, stream: u32, end: Instant, rec: &mut Recorder) {
        let Some(k) = self.slot_of(c, stream) else {
            return; // a stream given up (timed out)
        };
        self.conns[c].active -= 1;
        match self.slots[k].status {
            0 => self.fail_slot(k, Failure::Protocol, end, rec),
            status => self.complete(k, status, end, rec),
        }
        self.send_waiting(c);
    }

    /// Slot `k`'s response is complete.
    pub(super) fn complete(&mut self, k: usize, status: u16, end: Instant, rec: &mut Recorder) {
        let slot = &mut self.slots[k];
        let end = end.max(slot.sent_at);
        rec.response(
            end,
            slot.scenario,
            status,
            end - slot.due,
            end - slot.sent_at,
        );
        if self.p.protocol == Protocol::Http1 {
            self.conns[k].active = 0;
        }
        self.free(k);
    }

    /// Ends slot `k`'s request with `f` (the caller deals with its connection).
    pub(super) fn fail_slot(&mut self, k: usize, f: Failure, now: Instant, rec: &mut Recorder) {
        let slot = &self.slots[k];
        rec.failure(now, slot.sent_at, slot.scenario, f);
        self.free(k);
    }

    pub(super) fn free(&mut self, k: usize) {
        self.slots[k].busy = false;
        self.slots[k].stream = 0;
        self.in_flight -= 1;
        if self.s.interval.is_none() {
            self.ready.push(k);
        }
    }
}
