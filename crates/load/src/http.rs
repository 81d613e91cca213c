//! A minimal incremental HTTP/1.1 response parser: status line and headers via httparse,
//! bodies framed by Content-Length, chunked encoding or connection close. Body bytes are
//! counted, never stored; a head split across reads is kept in a reused buffer.
//!
//! A server answers a load test's requests with the same head over and over (nginx's
//! changes only with its `Date`, once a second), so the parser keeps the last head it
//! parsed and what it made of it: a response that starts with exactly those bytes has the
//! same status, framing and length, and is not parsed again. On a keep-alive loopback
//! benchmark that was a tenth of the generator's own (user-space) time.

/// What the parser made of the bytes fed so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The response is not complete yet.
    NeedMore,
    /// The response is complete.
    Done {
        /// Status code.
        status: u16,
        /// The server will close the connection (or already did).
        close: bool,
    },
    /// The bytes are not a valid HTTP/1.x response.
    Invalid,
    /// The connection closed before the head was complete.
    ClosedInHead,
    /// The connection closed before the body was complete.
    ClosedInBody,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    Size {
        val: u64,
        digits: u8,
    },
    Ext {
        val: u64,
    },
    Data(u64),
    DataCr,
    DataLf,
    /// After the last chunk: `empty` is true at the start of a trailer line.
    Trailer {
        empty: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilEof,
}

/// Incremental parser for one response at a time; [`ResponseParser::reset`] before reuse.
#[derive(Debug, Default)]
pub struct ResponseParser {
    head: Vec<u8>,
    state: State,
    status: u16,
    close: bool,
    no_body: bool,
    last: LastHead,
}

/// The last head parsed from one read, with what it was parsed into.
#[derive(Debug, Default)]
struct LastHead {
    /// Its bytes, up to and including the blank line; empty when there is none.
    bytes: Vec<u8>,
    /// The parse's outcome: status, close, the body's framing and whether the request was
    /// `HEAD` (which decides the framing too).
    status: u16,
    close: bool,
    state: State,
    no_body: bool,
}

impl LastHead {
    /// The length of the head at the start of `buf` if it is byte for byte the last one
    /// parsed for a request of the same kind.
    fn matches(&self, buf: &[u8], no_body: bool) -> Option<usize> {
        let n = self.bytes.len();
        (n > 0 && self.no_body == no_body && buf.get(..n) == Some(&self.bytes[..])).then_some(n)
    }
}

const MAX_HEAD: usize = 64 * 1024;

/// Heads up to this size are remembered for [`LastHead::matches`].
const MAX_REMEMBERED_HEAD: usize = 2048;

impl ResponseParser {
    /// A parser ready for a response to a request that is not `HEAD`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Prepares for the next response on the same or a new connection; `head_request`: the
    /// request was `HEAD`, so the response has no body whatever its headers say.
    pub fn reset(&mut self, head_request: bool) {
        self.head.clear();
        self.state = State::Head;
        self.status = 0;
        self.close = false;
        self.no_body = head_request;
    }

    /// Feeds freshly read bytes. Bytes after a complete response are ignored.
    pub fn feed(&mut self, mut data: &[u8]) -> Progress {
        loop {
            match self.state {
                State::Head => {
                    let used = if self.head.is_empty() {
                        match self.parse_head_cached(data) {
                            Ok(Some(n)) => n,
                            Ok(None) => {
                                self.head.extend_from_slice(data);
                                return Progress::NeedMore;
                            }
                            Err(()) => return Progress::Invalid,
                        }
                    } else {
                        let before = self.head.len();
                        self.head.extend_from_slice(data);
                        let head = std::mem::take(&mut self.head);
                        let parsed = self.parse_head(&head);
                        self.head = head;
                        match parsed {
                            Ok(Some(n)) => {
                                self.head.clear();
                                n - before
                            }
                            Ok(None) if self.head.len() > MAX_HEAD => return Progress::Invalid,
                            Ok(None) => return Progress::NeedMore,
                            Err(()) => return Progress::Invalid,
                        }
                    };
                    data = &data[used..];
                }
                State::Length(0) => return self.done(),
                State::Length(left) => {
                    let n = left.min(data.len() as u64);
                    self.state = State::Length(left - n);
                    if left == n {
                        return self.done();
                    }
                    return Progress::NeedMore;
                }
                State::Chunked(c) => return self.feed_chunked(c, data),
                State::UntilEof => return Progress::NeedMore,
            }
        }
    }

    /// Reports that the peer closed the connection.
    pub fn eof(&mut self) -> Progress {
        match self.state {
            State::Head => Progress::ClosedInHead,
            State::UntilEof => {
                self.close = true;
                self.done()
            }
            State::Length(0) => self.done(),
            _ => Progress::ClosedInBody,
        }
    }

    fn done(&mut self) -> Progress {
        Progress::Done {
            status: self.status,
            close: self.close,
        }
    }

    /// [`Self::parse_head`] of a head read in one piece, or the last such head's outcome
    /// if `buf` starts with the same bytes.
    fn parse_head_cached(&mut self, buf: &[u8]) -> Result<Option<usize>, ()> {
        if let Some(n) = self.last.matches(buf, self.no_body) {
            (self.status, self.close, self.state) =
                (self.last.status, self.last.close, self.last.state);
            return Ok(Some(n));
        }
        let parsed = self.parse_head(buf)?;
        if let Some(n) = parsed.filter(|&n| n <= MAX_REMEMBERED_HEAD) {
            self.last.bytes.clear();
            self.last.bytes.extend_from_slice(&buf[..n]);
            (self.last.status, self.last.close) = (self.status, self.close);
            (self.last.state, self.last.no_body) = (self.state, self.no_body);
        }
        Ok(parsed)
    }

    /// Parses a complete head if `buf` holds one: returns its length and sets the state.
    fn parse_head(&mut self, buf: &[u8]) -> Result<Option<usize>, ()> {
        let mut headers = [httparse::EMPTY_HEADER; 48];
        let mut resp = httparse::Response::new(&mut headers);
        let n = match resp.parse(buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(()),
        };
        let status = resp.code.ok_or(())?;
        if (100..200).contains(&status) {
            // Interim response (e.g. 100 Continue): skip it and parse the final one.
            let rest = &buf[n..];
            return Ok(self.parse_head(rest)?.map(|m| n + m));
        }
        let mut close = resp.version == Some(0);
        let mut length = None;
        let mut chunked = false;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value).map_err(|_| ())?;
                length = Some(v.trim().parse::<u64>().map_err(|_| ())?);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = contains_token(h.value, b"chunked");
            } else if h.name.eq_ignore_ascii_case("connection") {
                if contains_token(h.value, b"close") {
                    close = true;
                } else if contains_token(h.value, b"keep-alive") {
                    close = false;
                }
            }
        }
        self.status = status;
        self.close = close;
        self.state = if self.no_body || status == 204 || status == 304 {
            State::Length(0)
        } else if chunked {
            State::Chunked(Chunk::Size { val: 0, digits: 0 })
        } else if let Some(len) = length {
            State::Length(len)
        } else {
            State::UntilEof
        };
        Ok(Some(n))
    }

    fn feed_chunked(&mut self, mut c: Chunk, data: &[u8]) -> Progress {
        let mut i = 0;
        while i < data.len() {
            if let Chunk::Data(left) = c {
                let n = left.min((data.len() - i) as u64);
                i += n as usize;
                c = if n == left {
                    Chunk::DataCr
                } else {
                    Chunk::Data(left - n)
                };
                continue;
            }
            let b = data[i];
            c = match c {
                Chunk::Data(_) => unreachable!("handled above"),
                Chunk::Size { val, digits } => match hex(b) {
                    Some(d) if digits < 15 => Chunk::Size {
                        val: val * 16 + d,
                        digits: digits + 1,
                    },
                    Some(_) => return Progress::Invalid,
                    None if digits == 0 => return Progress::Invalid,
                    None if b == b'\n' => after_size(val),
                    None if b == b'\r' || b == b';' || b == b' ' || b == b'\t' => {
                        Chunk::Ext { val }
                    }
                    None => return Progress::Invalid,
                },
                Chunk::Ext { val } => {
                    if b == b'\n' {
                        after_size(val)
                    } else {
                        Chunk::Ext { val }
                    }
                }
                Chunk::DataCr if b == b'\r' => Chunk::DataLf,
                Chunk::DataCr | Chunk::DataLf if b == b'\n' => Chunk::Size { val: 0, digits: 0 },
                Chunk::DataCr | Chunk::DataLf => return Progress::Invalid,
                Chunk::Trailer { empty } => match b {
                    b'\n' if empty => {
                        self.state = State::Length(0);
                        return self.done();
                    }
                    b'\n' => Chunk::Trailer { empty: true },
                    b'\r' => Chunk::Trailer { empty },
                    _ => Chunk::Trailer { empty: false },
                },
            };
            i += 1;
        }
        self.state = State::Chunked(c);
        Progress::NeedMore
    }
}

fn after_size(val: u64) -> Chunk {
    if val == 0 {
        Chunk::Trailer { empty: true }
    } else {
        Chunk::Data(val)
    }
}

fn hex(b: u8) -> Option<u64> {
    (b as char).to_digit(16).map(u64::from)
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
