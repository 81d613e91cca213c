//! What the HTTP/2 frames a server sends do to the worker's state: responses (HEADERS,
//! CONTINUATION, DATA), SETTINGS and PING (acknowledged), RST_STREAM and GOAWAY (counted,
//! ending the streams they name), flow control (the connection window refilled).

use std::time::Instant;

use super::state::{ConnState, State};
use super::worker::WINDOW_REFILL;
use super::{frame, hpack};
use crate::recorder::{Failure, Recorder};

impl State {
    /// Acts on the complete frames at the start of `b`; returns the bytes they took.
    pub(super) fn frames(
        &mut self,
        c: usize,
        b: &[u8],
        end: Instant,
        rec: &mut Recorder,
    ) -> Result<usize, Failure> {
        let mut at = 0;
        while let Some(h) = frame::parse_header(&b[at..]) {
            if h.len > frame::MAX_FRAME {
                return Err(Failure::Protocol);
            }
            if b.len() - at < 9 + h.len {
                break;
            }
            let payload = &b[at + 9..at + 9 + h.len];
            self.on_frame(c, h, payload, end, rec)?;
            at += 9 + h.len;
            if self.conns[c].state == ConnState::Down {
                break;
            }
        }
        Ok(at)
    }

    pub(super) fn on_frame(
        &mut self,
        c: usize,
        h: frame::Header,
        payload: &[u8],
        end: Instant,
        rec: &mut Recorder,
    ) -> Result<(), Failure> {
        match h.kind {
            frame::DATA => {
                let conn = &mut self.conns[c];
                conn.unacked += h.len as u32;
                if conn.unacked >= WINDOW_REFILL {
                    frame::put_window_update(&mut conn.out, 0, conn.unacked);
                    conn.unacked = 0;
                    self.mark(c);
                }
                if h.flags & frame::END_STREAM != 0 {
                    self.end_stream(c, h.stream, end, rec);
                }
            }
            frame::HEADERS => {
                let block = frame::unpadded(&h, payload).ok_or(Failure::Protocol)?;
                let end_stream = h.flags & frame::END_STREAM != 0;
                if h.flags & frame::END_HEADERS != 0 {
                    self.on_block(c, h.stream, block, end_stream, end, rec)?;
                } else {
                    let conn = &mut self.conns[c];
                    conn.hblock.clear();
                    conn.hblock.extend_from_slice(block);
                    (conn.hstream, conn.hend) = (h.stream, end_stream);
                }
            }
            frame::CONTINUATION => {
                let conn = &mut self.conns[c];
                if h.stream != conn.hstream {
                    return Err(Failure::Protocol);
                }
                conn.hblock.extend_from_slice(payload);
                if h.flags & frame::END_HEADERS != 0 {
                    let block = std::mem::take(&mut conn.hblock);
                    let (stream, end_stream) = (conn.hstream, conn.hend);
                    let r = self.on_block(c, stream, &block, end_stream, end, rec);
                    self.conns[c].hblock = block;
                    r?;
                }
            }
            frame::RST_STREAM => {
                if rec.record {
                    rec.proto.rst_stream += 1;
                }
                if let Some(k) = self.slot_of(c, h.stream) {
                    self.conns[c].active -= 1;
                    self.fail_slot(k, Failure::Read, end, rec);
                    self.send_waiting(c);
                }
            }
            frame::SETTINGS if h.flags & frame::ACK == 0 => {
                for s in payload.chunks_exact(6) {
                    let id = u16::from_be_bytes([s[0], s[1]]);
                    let v = u32::from_be_bytes([s[2], s[3], s[4], s[5]]) as usize;
                    if id == frame::SETTINGS_MAX_CONCURRENT_STREAMS {
                        let limit = v.clamp(1, self.p.streams);
                        self.conns[c].limit = limit;
                        self.min_limit = Some(self.min_limit.map_or(limit, |m| m.min(limit)));
                    }
                }
                frame::put_header(&mut self.conns[c].out, 0, frame::SETTINGS, frame::ACK, 0);
                self.mark(c);
                self.send_waiting(c);
            }
            frame::PING if h.flags & frame::ACK == 0 => {
                let out = &mut self.conns[c].out;
                frame::put_header(out, payload.len(), frame::PING, frame::ACK, 0);
                out.extend_from_slice(payload);
                self.mark(c);
            }
            frame::GOAWAY => {
                if rec.record {
                    rec.proto.goaway += 1;
                }
                let last = payload.get(..4).map_or(0, |b| {
                    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff
                });
                self.conns[c].draining = true;
                let streams = self.p.streams;
                for k in c * streams..(c + 1) * streams {
                    let s = self.slots[k];
                    if s.busy && s.stream > last {
                        self.conns[c].active -= 1;
                        self.fail_slot(k, Failure::Read, end, rec);
                    }
                }
                // Closed by the worker once its last stream ended (retire_if_drained).
            }
            frame::PUSH_PROMISE => return Err(Failure::Protocol),
            _ => {} // WINDOW_UPDATE, PRIORITY, acks, unknown types
        }
        Ok(())
    }

    /// A complete header block on `stream`.
    pub(super) fn on_block(
        &mut self,
        c: usize,
        stream: u32,
        block: &[u8],
        end_stream: bool,
        end: Instant,
        rec: &mut Recorder,
    ) -> Result<(), Failure> {
        let status = hpack::decode_status(block).map_err(|_| Failure::Protocol)?;
        if let (Some(s), Some(k)) = (status, self.slot_of(c, stream)) {
            if s >= 200 && self.slots[k].status == 0 {
                self.slots[k].status = s;
            }
        }
        if end_stream {
            self.end_stream(c, stream, end, rec);
        }
        Ok(())
    }
}
