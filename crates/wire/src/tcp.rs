//! What the kernel's TCP stack saw during the measured window: the counters of the
//! generator's own network namespace (`/proc/net/snmp`, `/proc/net/netstat`) at the window's
//! start and end, and the local ports held against the ephemeral range.
//!
//! Pure: the parsers take the files' text; the load generator reads the files
//! (`benchrun_load::tcp::snapshot`). In a Kubernetes pod the namespace is the pod's, so the
//! counters are the generator's alone; on a host they are the host's (other traffic counts
//! too). Where `/proc` is missing or unreadable (not Linux, a sandbox) there is no snapshot
//! and the result has no `tcp` object.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The TCP counters of one moment (cumulative since the namespace was created).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// `Tcp: ActiveOpens`: connections this side opened (SYN sent).
    pub active_opens: u64,
    /// `Tcp: AttemptFails`: connection attempts that failed (SYN-SENT or SYN-RECV to CLOSED).
    pub attempt_fails: u64,
    /// `Tcp: EstabResets`: connections that went straight to CLOSED from ESTABLISHED or
    /// CLOSE-WAIT (a reset received, or one sent on abort).
    pub estab_resets: u64,
    /// `Tcp: OutRsts`: segments sent with RST.
    pub out_rsts: u64,
    /// `Tcp: RetransSegs`: segments retransmitted.
    pub retrans_segs: u64,
    /// `Tcp: InErrs`: segments received in error (bad checksum, no memory, ...).
    pub in_errs: u64,
    /// `TcpExt: TCPSynRetrans`: SYNs (and SYN-ACKs) retransmitted.
    pub syn_retrans: u64,
    /// `TcpExt: TCPTimeouts`: retransmission timer expiries.
    pub timeouts: u64,
    /// `TcpExt: ListenOverflows`: SYNs or handshake ACKs dropped because a listener's accept
    /// queue was full.
    pub listen_overflows: u64,
    /// `TcpExt: ListenDrops`: everything a listener dropped (overflows included).
    pub listen_drops: u64,
    /// `TcpExt: TCPAbortOnData`: resets sent because data arrived on a closed socket.
    pub abort_on_data: u64,
    /// `TcpExt: TCPAbortOnClose`: resets sent because a socket was closed with unread data.
    pub abort_on_close: u64,
    /// `TcpExt: TCPAbortOnTimeout`: connections aborted after too many retransmissions.
    pub abort_on_timeout: u64,
}

/// The header/value line pairs of a `/proc/net/snmp` or `/proc/net/netstat` text, by prefix
/// (`Tcp`, `TcpExt`, ...) and field name. Lines that do not pair up are skipped.
pub fn parse_pairs(text: &str) -> BTreeMap<String, BTreeMap<String, i64>> {
    let mut out: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(header) = lines.next() {
        let Some((prefix, names)) = header.split_once(':') else {
            continue;
        };
        let Some(values) = lines.next().and_then(|l| l.strip_prefix(prefix)) else {
            break;
        };
        let Some(values) = values.strip_prefix(':') else {
            continue;
        };
        let fields = out.entry(prefix.trim().to_string()).or_default();
        for (name, value) in names.split_whitespace().zip(values.split_whitespace()) {
            if let Ok(v) = value.parse::<i64>() {
                fields.insert(name.to_string(), v);
            }
        }
    }
    out
}

/// The counters from the texts of `/proc/net/snmp` and `/proc/net/netstat`; `None` when the
/// snmp text has no `Tcp` section (a counter missing from an older kernel reads 0).
pub fn parse_counters(snmp: &str, netstat: &str) -> Option<Counters> {
    let snmp = parse_pairs(snmp);
    let tcp = snmp.get("Tcp")?;
    let ext = parse_pairs(netstat).remove("TcpExt").unwrap_or_default();
    let get = |m: &BTreeMap<String, i64>, k: &str| m.get(k).copied().unwrap_or(0).max(0) as u64;
    Some(Counters {
        active_opens: get(tcp, "ActiveOpens"),
        attempt_fails: get(tcp, "AttemptFails"),
        estab_resets: get(tcp, "EstabResets"),
        out_rsts: get(tcp, "OutRsts"),
        retrans_segs: get(tcp, "RetransSegs"),
        in_errs: get(tcp, "InErrs"),
        syn_retrans: get(&ext, "TCPSynRetrans"),
        timeouts: get(&ext, "TCPTimeouts"),
        listen_overflows: get(&ext, "ListenOverflows"),
        listen_drops: get(&ext, "ListenDrops"),
        abort_on_data: get(&ext, "TCPAbortOnData"),
        abort_on_close: get(&ext, "TCPAbortOnClose"),
        abort_on_timeout: get(&ext, "TCPAbortOnTimeout"),
    })
}

/// `/proc/sys/net/ipv4/ip_local_port_range` (`32768\t60999`): the first and last port.
pub fn parse_port_range(text: &str) -> Option<(u16, u16)> {
    let mut it = text.split_whitespace().map(str::parse::<u16>);
    match (it.next(), it.next()) {
        (Some(Ok(a)), Some(Ok(b))) if a <= b => Some((a, b)),
        _ => None,
    }
}

/// Local ports of the ephemeral range held by TCP sockets, counted over `/proc/net/tcp` and
/// `/proc/net/tcp6`.
#[derive(Debug, Clone)]
pub struct PortTally {
    range: (u16, u16),
    held: Vec<u64>,
    /// Sockets in TIME_WAIT on a port of the range.
    pub time_wait: u64,
}

impl PortTally {
    /// An empty tally for the range `first..=last`.
    pub fn new(range: (u16, u16)) -> Self {
        PortTally {
            range,
            held: vec![0; 65536 / 64],
            time_wait: 0,
        }
    }

    /// Counts the sockets of one `/proc/net/tcp` or `/proc/net/tcp6` text: every socket
    /// except listeners holds its local port.
    pub fn add(&mut self, text: &str) {
        for line in text.lines().skip(1) {
            let mut cols = line.split_whitespace();
            let (Some(_), Some(local), Some(_), Some(state)) =
                (cols.next(), cols.next(), cols.next(), cols.next())
            else {
                continue;
            };
            let port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            let (Some(port), Ok(state)) = (port, u8::from_str_radix(state, 16)) else {
                continue;
            };
            if state == TCP_LISTEN || port < self.range.0 || port > self.range.1 {
                continue;
            }
            self.held[usize::from(port) / 64] |= 1 << (port % 64);
            if state == TCP_TIME_WAIT {
                self.time_wait += 1;
            }
        }
    }

    /// Distinct local ports of the range held by some socket.
    pub fn ports_in_use(&self) -> u64 {
        self.held.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

const TCP_TIME_WAIT: u8 = 0x06;
const TCP_LISTEN: u8 = 0x0A;

/// One reading of the namespace: its counters and, when the port range is readable, the
/// local ports held.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The cumulative counters.
    pub counters: Counters,
    /// The ephemeral range and what was held of it.
    pub ports: Option<PortTally>,
}

/// The TCP figures of a measured window (`tcp` in the load result): counter increases from
/// its start to its end, and the ephemeral ports held at the busier of the two moments.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpStats {
    /// Connections opened (`ActiveOpens`).
    pub active_opens: u64,
    /// Failed connection attempts (`AttemptFails`): refused, timed out, or reset in the
    /// handshake.
    pub attempt_fails: u64,
    /// Connections reset while established, by either side (`EstabResets`).
    pub estab_resets: u64,
    /// Segments sent with RST (`OutRsts`).
    pub out_rsts: u64,
    /// Retransmitted segments (`RetransSegs`).
    pub retrans_segs: u64,
    /// Segments received in error (`InErrs`).
    pub in_errs: u64,
    /// Retransmitted SYNs (`TCPSynRetrans`): a connect that needed one took at least the
    /// initial retransmission timeout (1 s).
    pub syn_retrans: u64,
    /// Retransmission timer expiries (`TCPTimeouts`).
    pub timeouts: u64,
    /// Handshakes dropped by a full accept queue of a listener in this namespace
    /// (`ListenOverflows`; a load pod has none, so 0 there).
    pub listen_overflows: u64,
    /// Everything dropped by a listener in this namespace (`ListenDrops`).
    pub listen_drops: u64,
    /// Resets sent because data arrived on a closed socket (`TCPAbortOnData`).
    pub abort_on_data: u64,
    /// Resets sent on closing a socket with unread data (`TCPAbortOnClose`).
    pub abort_on_close: u64,
    /// Connections given up after too many retransmissions (`TCPAbortOnTimeout`).
    pub abort_on_timeout: u64,
    /// Distinct local ports of the ephemeral range held by a socket (TIME_WAIT included), at
    /// the window's start or end, whichever held more. Merged: the largest of the inputs
    /// (each load pod has its own namespace and range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports_in_use: Option<u64>,
    /// Of the sockets holding those ports, those in TIME_WAIT (same moment). Merged: the
    /// largest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_wait: Option<u64>,
    /// The ephemeral range, `[first, last]` (`net.ipv4.ip_local_port_range`). Merged: the
    /// narrowest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_range: Option<[u16; 2]>,
}

impl TcpStats {
    /// The figures of the window from `start` to `end`.
    pub fn window(start: &Snapshot, end: &Snapshot) -> Self {
        let (a, b) = (&start.counters, &end.counters);
        let d = |f: fn(&Counters) -> u64| f(b).saturating_sub(f(a));
        let busier = [&start.ports, &end.ports]
            .into_iter()
            .flatten()
            .max_by_key(|t| t.ports_in_use());
        TcpStats {
            active_opens: d(|c| c.active_opens),
            attempt_fails: d(|c| c.attempt_fails),
            estab_resets: d(|c| c.estab_resets),
            out_rsts: d(|c| c.out_rsts),
            retrans_segs: d(|c| c.retrans_segs),
            in_errs: d(|c| c.in_errs),
            syn_retrans: d(|c| c.syn_retrans),
            timeouts: d(|c| c.timeouts),
            listen_overflows: d(|c| c.listen_overflows),
            listen_drops: d(|c| c.listen_drops),
            abort_on_data: d(|c| c.abort_on_data),
            abort_on_close: d(|c| c.abort_on_close),
            abort_on_timeout: d(|c| c.abort_on_timeout),
            ports_in_use: busier.map(PortTally::ports_in_use),
            time_wait: busier.map(|t| t.time_wait),
            port_range: busier.map(|t| [t.range.0, t.range.1]),
        }
    }

    /// Adds another namespace's figures: counters summed, ports the larger, range the
    /// narrower.
    pub fn add(&mut self, o: &TcpStats) {
        self.active_opens += o.active_opens;
        self.attempt_fails += o.attempt_fails;
        self.estab_resets += o.estab_resets;
        self.out_rsts += o.out_rsts;
        self.retrans_segs += o.retrans_segs;
        self.in_errs += o.in_errs;
        self.syn_retrans += o.syn_retrans;
        self.timeouts += o.timeouts;
        self.listen_overflows += o.listen_overflows;
        self.listen_drops += o.listen_drops;
        self.abort_on_data += o.abort_on_data;
        self.abort_on_close += o.abort_on_close;
        self.abort_on_timeout += o.abort_on_timeout;
        self.ports_in_use = self.ports_in_use.max(o.ports_in_use);
        self.time_wait = self.time_wait.max(o.time_wait);
        let size = |r: &[u16; 2]| r[1] - r[0];
        self.port_range = match (self.port_range, o.port_range) {
            (Some(a), Some(b)) => Some(if size(&b) < size(&a) { b } else { a }),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
#[path = "tcp_tests.rs"]
mod tests;
