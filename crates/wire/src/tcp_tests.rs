//! Tests of the `/proc` parsers on text captured from a Linux 6.x host, and of the window
//! arithmetic and merge.

use super::*;

const SNMP: &str = include_str!("../testdata/proc_net_snmp.txt");
const NETSTAT: &str = include_str!("../testdata/proc_net_netstat.txt");
/// Captured after opening three loopback connections to a listener on port 36925 and closing
/// two of them from the client side (so two client ports sit in TIME_WAIT).
const TCP: &str = include_str!("../testdata/proc_net_tcp.txt");

#[test]
fn the_tcp_section_of_proc_net_snmp_is_read_by_name() {
    let pairs = parse_pairs(SNMP);
    let tcp = &pairs["Tcp"];
    assert_eq!(tcp["MaxConn"], -1, "signed values parse");
    assert_eq!(tcp["ActiveOpens"], 22);
    assert_eq!(tcp["OutRsts"], 7);
    assert!(pairs.contains_key("Ip") && pairs.contains_key("Udp"));
}

#[test]
fn the_counters_come_from_both_files() {
    let c = parse_counters(SNMP, NETSTAT).unwrap();
    assert_eq!(
        c,
        Counters {
            active_opens: 22,
            attempt_fails: 1,
            estab_resets: 0,
            out_rsts: 7,
            retrans_segs: 0,
            in_errs: 0,
            syn_retrans: 0,
            timeouts: 2,
            listen_overflows: 0,
            listen_drops: 0,
            abort_on_data: 3,
            abort_on_close: 0,
            abort_on_timeout: 0,
        }
    );
}

#[test]
fn counters_missing_from_netstat_read_zero_and_no_tcp_section_is_no_snapshot() {
    let c = parse_counters(SNMP, "").unwrap();
    assert_eq!((c.active_opens, c.syn_retrans), (22, 0));
    assert_eq!(parse_counters("Ip: Forwarding\nIp: 1\n", NETSTAT), None);
    assert_eq!(parse_counters("", ""), None);
}

#[test]
fn the_port_range_is_two_ports_in_order() {
    assert_eq!(parse_port_range("32768\t60999\n"), Some((32768, 60999)));
    assert_eq!(parse_port_range("60999 32768"), None);
    assert_eq!(parse_port_range("x"), None);
}

#[test]
fn ports_held_count_every_socket_but_listeners_once_per_port() {
    let mut t = PortTally::new((32768, 60999));
    t.add(TCP);
    // Three outbound connections elsewhere, three loopback client ports (two in TIME_WAIT)
    // and the accepted socket on 36925 (its listener does not count).
    assert_eq!(t.ports_in_use(), 7);
    assert_eq!(t.time_wait, 2);
    let mut narrow = PortTally::new((40000, 41000));
    narrow.add(TCP);
    assert_eq!((narrow.ports_in_use(), narrow.time_wait), (3, 2));
}

fn at(counters: Counters, ports: Option<PortTally>) -> Snapshot {
    Snapshot { counters, ports }
}

#[test]
fn a_window_is_the_increase_from_start_to_end_with_the_busier_ports() {
    let start = parse_counters(SNMP, NETSTAT).unwrap();
    let end = Counters {
        active_opens: 1022,
        syn_retrans: 40,
        timeouts: 42,
        ..start
    };
    let mut busy = PortTally::new((32768, 60999));
    busy.add(TCP);
    let w = TcpStats::window(
        &at(start, Some(PortTally::new((32768, 60999)))),
        &at(end, Some(busy)),
    );
    assert_eq!((w.active_opens, w.syn_retrans, w.timeouts), (1000, 40, 40));
    assert_eq!((w.out_rsts, w.abort_on_data), (0, 0));
    assert_eq!(
        (w.ports_in_use, w.time_wait, w.port_range),
        (Some(7), Some(2), Some([32768, 60999]))
    );
    let no_ports = TcpStats::window(&at(start, None), &at(end, None));
    assert_eq!((no_ports.ports_in_use, no_ports.port_range), (None, None));
}

#[test]
fn a_counter_that_went_backwards_reads_zero() {
    let start = Counters {
        out_rsts: 10,
        ..Counters::default()
    };
    let w = TcpStats::window(&at(start, None), &at(Counters::default(), None));
    assert_eq!(w.out_rsts, 0);
}

#[test]
fn merged_namespaces_sum_counters_and_keep_the_most_ports_and_narrowest_range() {
    let mut a = TcpStats {
        active_opens: 10,
        syn_retrans: 1,
        ports_in_use: Some(100),
        time_wait: Some(90),
        port_range: Some([32768, 60999]),
        ..TcpStats::default()
    };
    let b = TcpStats {
        active_opens: 5,
        syn_retrans: 2,
        ports_in_use: Some(300),
        time_wait: Some(10),
        port_range: Some([40000, 41000]),
        ..TcpStats::default()
    };
    a.add(&b);
    assert_eq!((a.active_opens, a.syn_retrans), (15, 3));
    assert_eq!(
        (a.ports_in_use, a.time_wait, a.port_range),
        (Some(300), Some(90), Some([40000, 41000]))
    );
}
