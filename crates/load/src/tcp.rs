//! Reads the TCP figures of this process's network namespace from `/proc`: the only I/O of
//! the TCP counters, whose parsers and result type ([`TcpStats`]) live in
//! [`benchrun_wire::tcp`] and are re-exported here.

pub use benchrun_wire::tcp::*;

/// Reads the counters and ports of this process's network namespace; `None` when
/// `/proc/net/snmp` cannot be read or has no `Tcp` section.
pub fn snapshot() -> Option<Snapshot> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let counters = parse_counters(
        &read("/proc/net/snmp")?,
        &read("/proc/net/netstat").unwrap_or_default(),
    )?;
    let ports = read("/proc/sys/net/ipv4/ip_local_port_range")
        .as_deref()
        .and_then(parse_port_range)
        .map(|range| {
            let mut tally = PortTally::new(range);
            for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
                tally.add(&read(file).unwrap_or_default());
            }
            tally
        });
    Some(Snapshot { counters, ports })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_hosts_proc_is_readable_on_linux() {
        if cfg!(target_os = "linux") {
            let s = snapshot().expect("/proc/net/snmp on Linux");
            assert!(s.ports.is_some());
        }
    }
}
