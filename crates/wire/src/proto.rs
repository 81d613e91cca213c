//! What a load over TLS or HTTP/2 saw of its protocol: the TLS version, handshakes (full
//! and resumed) and their time, and the HTTP/2 wire facts (streams reset by the server,
//! GOAWAYs). Part of the load result ([`crate::LoadResult::protocol`]); absent for cleartext
//! HTTP/1.1 and in results of generators before it existed. Pure: no I/O.

use serde::{Deserialize, Serialize};

/// The protocol of a load and what was counted of it over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProtocolStats {
    /// `http/1.1` or `h2` (the application protocol asked for; with TLS, by ALPN).
    pub protocol: String,
    /// Whether the connections were TLS (`https://`).
    pub tls: bool,
    /// TLS facts; absent for cleartext.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_stats: Option<TlsStats>,
    /// HTTP/2 facts; absent for HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub h2: Option<H2Stats>,
}

/// TLS handshakes of the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TlsStats {
    /// Negotiated versions (`TLSv1_3`, `TLSv1_2`), sorted, without duplicates.
    pub versions: Vec<String>,
    /// Negotiated application protocols (ALPN: `h2`, `http/1.1`), sorted, without
    /// duplicates; empty when the server chose none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alpn: Vec<String>,
    /// Handshakes completed.
    pub handshakes: u64,
    /// Of those, the ones that resumed an earlier session (no certificate exchange).
    pub resumed: u64,
    /// Sum of the handshake times (from the TCP connection to the handshake's end), µs.
    pub handshake_total_us: u64,
    /// Mean handshake time, µs (0 without handshakes).
    pub handshake_mean_us: f64,
    /// Longest handshake, µs.
    pub handshake_max_us: u64,
}

/// HTTP/2 wire facts of the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct H2Stats {
    /// Streams (requests) each connection kept open at most: the `maxConcurrentStreams`
    /// asked for, lowered to the server's SETTINGS_MAX_CONCURRENT_STREAMS if smaller
    /// (merged: the smallest).
    pub max_concurrent_streams: u64,
    /// RST_STREAM frames received (each ends its request as a `read` error).
    pub rst_stream_received: u64,
    /// GOAWAY frames received (requests on streams the server did not process end as
    /// `read` errors; the connection is reopened for the next ones).
    pub goaway_received: u64,
    /// Times a request waited for a free stream on its connection (more due than
    /// `max_concurrent_streams` allows).
    pub stream_waits: u64,
}

impl TlsStats {
    /// Adds another window's handshakes into this one.
    pub fn add(&mut self, o: &TlsStats) {
        self.handshakes += o.handshakes;
        self.resumed += o.resumed;
        self.handshake_total_us += o.handshake_total_us;
        self.handshake_max_us = self.handshake_max_us.max(o.handshake_max_us);
        self.handshake_mean_us = mean(self.handshake_total_us, self.handshakes);
        union(&mut self.versions, &o.versions);
        union(&mut self.alpn, &o.alpn);
    }
}

impl H2Stats {
    /// Adds another window's facts into this one.
    pub fn add(&mut self, o: &H2Stats) {
        self.max_concurrent_streams = self.max_concurrent_streams.min(o.max_concurrent_streams);
        self.rst_stream_received += o.rst_stream_received;
        self.goaway_received += o.goaway_received;
        self.stream_waits += o.stream_waits;
    }
}

impl ProtocolStats {
    /// Merges the protocol facts of two results (one absent: the other's).
    pub fn merge(a: Option<Self>, b: Option<&Self>) -> Option<Self> {
        let (Some(mut a), Some(b)) = (a.clone(), b) else {
            return a.or_else(|| b.cloned());
        };
        a.tls_stats = match (a.tls_stats.take(), &b.tls_stats) {
            (Some(mut x), Some(y)) => {
                x.add(y);
                Some(x)
            }
            (x, y) => x.or_else(|| y.clone()),
        };
        a.h2 = match (a.h2.take(), &b.h2) {
            (Some(mut x), Some(y)) => {
                x.add(y);
                Some(x)
            }
            (x, y) => x.or_else(|| y.clone()),
        };
        Some(a)
    }
}

/// `total / n`, 0 when `n` is 0.
pub fn mean(total: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        total as f64 / n as f64
    }
}

fn union(a: &mut Vec<String>, b: &[String]) {
    a.extend(b.iter().cloned());
    a.sort();
    a.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_tls_facts_sum_counts_and_recompute_the_mean() {
        let a = TlsStats {
            versions: vec!["TLSv1_3".into()],
            alpn: vec!["h2".into()],
            handshakes: 2,
            resumed: 1,
            handshake_total_us: 300,
            handshake_mean_us: 150.0,
            handshake_max_us: 200,
        };
        let b = TlsStats {
            versions: vec!["TLSv1_2".into(), "TLSv1_3".into()],
            handshakes: 1,
            handshake_total_us: 600,
            handshake_max_us: 600,
            ..TlsStats::default()
        };
        let p = |t: TlsStats| ProtocolStats {
            protocol: "h2".into(),
            tls: true,
            tls_stats: Some(t),
            h2: Some(H2Stats {
                max_concurrent_streams: 10,
                rst_stream_received: 1,
                ..H2Stats::default()
            }),
        };
        let m = ProtocolStats::merge(Some(p(a)), Some(&p(b))).unwrap();
        let t = m.tls_stats.unwrap();
        assert_eq!((t.handshakes, t.resumed, t.handshake_max_us), (3, 1, 600));
        assert_eq!(t.handshake_mean_us, 300.0);
        assert_eq!(t.versions, ["TLSv1_2", "TLSv1_3"]);
        assert_eq!(m.h2.unwrap().rst_stream_received, 2);
        assert_eq!(ProtocolStats::merge(None, None), None);
    }
}
