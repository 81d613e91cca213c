//! TLS and HTTP/2 in the load generator: HTTP/1.1 over TLS, HTTP/2 over TLS (ALPN `h2`) and
//! cleartext HTTP/2 with prior knowledge (h2c), on a worker of their own (`worker`) over
//! the epoll back end, so the cleartext HTTP/1.1 loop (`crate::worker`) is untouched.
//!
//! Why not the `h2` crate: it needs tokio (a second runtime and task wake-ups per stream)
//! where the generator already has its own loop; a client that only sends requests and
//! reads `:status` needs a small part of HTTP/2: the frames of `frame`, and HPACK without
//! a dynamic table ([`hpack`], announced by SETTINGS_HEADER_TABLE_SIZE 0). See
//! docs/load-generator.md, "TLS and HTTP/2".

pub(crate) mod frame;
mod h2;
pub mod hpack;
mod state;
pub mod tls;
pub(crate) mod worker;

use benchrun_wire::proto::{mean, H2Stats, ProtocolStats, TlsStats};

/// The application protocol of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// HTTP/1.1 (over TLS for `https://` targets, by ALPN `http/1.1`).
    #[default]
    Http1,
    /// HTTP/2: over TLS by ALPN `h2` for `https://`, with prior knowledge (h2c) for `http://`.
    H2,
}

impl Protocol {
    /// The name in results and accepted by `--protocol`: `http1` or `h2`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "http1",
            Protocol::H2 => "h2",
        }
    }

    /// The ALPN identifier.
    pub fn alpn(self) -> &'static [u8] {
        match self {
            Protocol::Http1 => b"http/1.1",
            Protocol::H2 => b"h2",
        }
    }
}

/// What one thread counted of the protocol in a recorded phase.
#[derive(Debug, Default, Clone)]
pub(crate) struct ProtoTally {
    pub handshakes: u64,
    pub resumed: u64,
    pub handshake_total_us: u64,
    pub handshake_max_us: u64,
    /// Bit 0: TLS 1.2 seen, bit 1: TLS 1.3, bit 2: another.
    pub versions: u8,
    /// Bit 0: ALPN `http/1.1` negotiated, bit 1: `h2`.
    pub alpn: u8,
    pub rst_stream: u64,
    pub goaway: u64,
    pub stream_waits: u64,
    /// Smallest stream limit in force on a connection (0: none seen yet).
    pub max_streams: u64,
}

impl ProtoTally {
    /// Adds another thread's counts.
    pub fn add(&mut self, o: &ProtoTally) {
        self.handshakes += o.handshakes;
        self.resumed += o.resumed;
        self.handshake_total_us += o.handshake_total_us;
        self.handshake_max_us = self.handshake_max_us.max(o.handshake_max_us);
        self.versions |= o.versions;
        self.alpn |= o.alpn;
        self.rst_stream += o.rst_stream;
        self.goaway += o.goaway;
        self.stream_waits += o.stream_waits;
        self.max_streams = match (self.max_streams, o.max_streams) {
            (0, b) => b,
            (a, 0) => a,
            (a, b) => a.min(b),
        };
    }

    /// The result's protocol block for a run of `protocol`, `tls` or not, with `streams`
    /// asked per connection.
    pub fn stats(&self, protocol: Protocol, tls: bool, streams: usize) -> ProtocolStats {
        let names = |bits: u8, all: &[&str]| -> Vec<String> {
            all.iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .map(|(_, n)| n.to_string())
                .collect()
        };
        let mut versions = names(self.versions, &["TLSv1_2", "TLSv1_3", "other"]);
        versions.sort();
        ProtocolStats {
            protocol: String::from_utf8_lossy(protocol.alpn()).into_owned(),
            tls,
            tls_stats: tls.then(|| TlsStats {
                versions,
                alpn: names(self.alpn, &["http/1.1", "h2"]),
                handshakes: self.handshakes,
                resumed: self.resumed,
                handshake_total_us: self.handshake_total_us,
                handshake_mean_us: mean(self.handshake_total_us, self.handshakes),
                handshake_max_us: self.handshake_max_us,
            }),
            h2: (protocol == Protocol::H2).then_some(H2Stats {
                max_concurrent_streams: if self.max_streams == 0 {
                    streams as u64
                } else {
                    self.max_streams
                },
                rst_stream_received: self.rst_stream,
                goaway_received: self.goaway,
                stream_waits: self.stream_waits,
            }),
        }
    }
}
