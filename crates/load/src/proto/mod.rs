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
pub use crate::hpack;
mod state;
pub mod tls;
pub(crate) mod worker;

use benchrun_wire::proto::{mean, H2Stats, ProtocolStats, TlsStats};

pub use crate::protocol::Protocol;

pub(crate) use crate::proto_tally::ProtoTally;

impl ProtoTally {
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
