use benchrun_api::{CellResult, RetransmitStep, ScheduleLagMs, TcpCounters};
use benchrun_wire::TcpStats;

use super::*;
use crate::results::tests::{load, measured, measured_from, run};
use crate::results::validity;

fn codes(r: &CellResult) -> Vec<&'static str> {
    validity::warnings(&run(), r, 2, true)
        .iter()
        .map(|w| w.code.as_str())
        .collect()
}

/// A clean keep-alive closed-model window like the demo's: connections opened once, nothing
/// reset or retransmitted, a few ports held.
fn clean_tcp() -> TcpCounters {
    TcpCounters {
        connections_opened: 0,
        resets_sent: 2,
        ports_in_use: Some(18),
        time_wait: Some(4),
        ephemeral_ports: Some(28_232),
        ..TcpCounters::default()
    }
}

/// An open-model cell offered 20 000 req/s that achieved 1000.
fn open(target_cpu: f64) -> CellResult {
    let mut r = measured();
    r.coordinates.rate = Some(20_000);
    r.usage.cpu_avg_of_limit = Some(target_cpu);
    r.usage.cpu_avg_cores = Some(0.25);
    r.coordinates.cpu = "250m".into();
    r.schedule_lag_ms = Some(ScheduleLagMs {
        mean: 850.0,
        max: 1900.0,
    });
    r
}

#[test]
fn the_tcp_counters_and_the_lag_are_mapped_from_the_load_result() {
    let mut l = load();
    l.tcp = Some(TcpStats {
        active_opens: 1200,
        attempt_fails: 3,
        estab_resets: 4,
        out_rsts: 5,
        retrans_segs: 60,
        syn_retrans: 40,
        timeouts: 42,
        abort_on_close: 1,
        ports_in_use: Some(2000),
        time_wait: Some(1900),
        port_range: Some([32768, 60999]),
        ..TcpStats::default()
    });
    let t = measured_from(&l, None).tcp.unwrap();
    assert_eq!(
        (
            t.connections_opened,
            t.failed_connection_attempts,
            t.resets_while_established
        ),
        (1200, 3, 4)
    );
    assert_eq!(
        (t.resets_sent, t.aborts_on_close, t.retransmitted_segments),
        (5, 1, 60)
    );
    assert_eq!((t.syn_retransmits, t.timeouts), (40, 42));
    assert_eq!(
        (t.ports_in_use, t.time_wait, t.ephemeral_ports),
        (Some(2000), Some(1900), Some(28_232))
    );
    assert!(measured().tcp.is_none(), "no counters read: no tcp object");
}

#[test]
fn connects_are_counted_at_the_kernels_retransmit_steps() {
    let mut h = benchrun_wire::hist::new_latency();
    for (us, n) in [
        (300, 500),
        (1_004_000, 3),
        (1_150_000, 1),
        (1_500_000, 2),
        (3_010_000, 1),
    ] {
        h.record_n(us, n).unwrap();
    }
    let steps = retransmit_steps(&benchrun_wire::hist::encode(&h));
    assert_eq!(
        steps,
        vec![
            RetransmitStep {
                seconds: 1,
                connects: 4
            },
            RetransmitStep {
                seconds: 3,
                connects: 1
            }
        ]
    );
    assert!(retransmit_steps("not base64").is_empty());
}

#[test]
fn an_unmet_rate_against_a_target_at_its_cpu_limit_names_the_target() {
    let w = rate_not_met(&open(0.98), None).unwrap();
    assert_eq!(w.code, WarningCode::RateNotMet);
    assert!(
        w.message.starts_with("achieved 1000 req/s of the 20000 req/s offered (5.0%): the target was the limit: it used 98% of its CPU limit (0.25 cores); requests were sent 850.0ms late on average (at most 1900.0ms)"),
        "{w}"
    );
}

#[test]
fn an_unmet_rate_from_a_generator_at_its_cpu_limit_names_the_generator() {
    let mut r = open(0.3);
    r.usage.load_cpu_of_limit = Some(0.97);
    let ws = validity::warnings(&run(), &r, 2, true);
    let w = ws
        .iter()
        .find(|w| w.code == WarningCode::RateNotMet)
        .unwrap();
    assert!(
        w.message
            .contains(": the generator was the limit: load pods used 97% of their CPU limit;"),
        "{w}"
    );
    assert!(codes(&r).contains(&"GeneratorBound"));
}

#[test]
fn an_unmet_rate_with_neither_cpu_at_its_limit_names_the_connections() {
    let w = rate_not_met(&open(0.4), None).unwrap();
    assert!(
        w.message.contains(
            "the generator's connections were the limit: the target was at 40% of its CPU limit"
        ),
        "{w}"
    );
    let mut unknown = open(0.4);
    unknown.usage.cpu_avg_of_limit = None;
    let w = rate_not_met(&unknown, None).unwrap();
    assert!(
        w.message
            .contains("the target was not known (no CPU figures)"),
        "{w}"
    );
}

#[test]
fn a_met_rate_or_the_closed_model_raises_nothing() {
    let mut r = open(0.98);
    r.throughput = Some(19_000.0);
    assert!(rate_not_met(&r, None).is_none(), "95% is met");
    r.throughput = Some(18_999.0);
    assert!(rate_not_met(&r, None).is_some());
    assert!(rate_not_met(&measured(), None).is_none(), "closed model");
}

#[test]
fn syn_retransmits_with_connects_at_the_steps_are_named_with_their_count() {
    let mut r = measured();
    r.tcp = Some(TcpCounters {
        syn_retransmits: 412,
        connects_at_retransmit_steps: vec![
            RetransmitStep {
                seconds: 1,
                connects: 380,
            },
            RetransmitStep {
                seconds: 3,
                connects: 18,
            },
        ],
        ..clean_tcp()
    });
    r.connect_times_ms.as_mut().unwrap().count = 12_000;
    let w = syn_retransmits(&r).unwrap();
    assert!(
        w.message.starts_with("the kernel retransmitted 412 SYNs and 398 of 12000 connects took one of its retransmit steps (1 s: 380, 3 s: 18): SYNs were dropped"),
        "{w}"
    );
    r.tcp.as_mut().unwrap().connects_at_retransmit_steps.clear();
    assert!(
        syn_retransmits(&r).is_none(),
        "retransmits without the steps"
    );
    r.tcp.as_mut().unwrap().syn_retransmits = 0;
    assert!(syn_retransmits(&r).is_none());
}

#[test]
fn a_load_pod_near_the_end_of_its_ports_is_warned_with_the_mechanism() {
    let mut r = measured();
    r.coordinates.keep_alive = Some(false);
    r.tcp = Some(TcpCounters {
        ports_in_use: Some(25_000),
        time_wait: Some(24_900),
        ..clean_tcp()
    });
    let w = ephemeral_ports_low(&r).unwrap();
    assert!(
        w.message.starts_with(
            "a load pod held 25000 of its 28232 ephemeral ports (89%, 24900 in TIME_WAIT)"
        ),
        "{w}"
    );
    assert!(w.message.contains("keep connections alive"), "{w}");
    r.tcp.as_mut().unwrap().ports_in_use = Some(22_000);
    assert!(ephemeral_ports_low(&r).is_none(), "78% is fine");
}

#[test]
fn resets_beyond_a_small_share_are_warned() {
    let mut r = measured();
    r.requests = Some(10_000);
    r.tcp = Some(TcpCounters {
        resets_while_established: 300,
        resets_sent: 200,
        aborts_on_close: 150,
        ..clean_tcp()
    });
    let w = resets(&r).unwrap();
    assert!(
        w.message.starts_with("300 connections were reset while established and the generator sent 200 RSTs (150 of them aborting"),
        "{w}"
    );
    r.tcp.as_mut().unwrap().resets_while_established = 5;
    r.tcp.as_mut().unwrap().resets_sent = 5;
    assert!(resets(&r).is_none(), "10 is noise");
    r.requests = Some(1_000_000);
    r.tcp.as_mut().unwrap().resets_sent = 900;
    assert!(resets(&r).is_none(), "below 0.1%");
}

#[test]
fn a_clean_demo_like_measurement_raises_none_of_the_wire_warnings() {
    let mut r = measured();
    r.tcp = Some(clean_tcp());
    assert!(codes(&r).is_empty(), "{:?}", codes(&r));
}
