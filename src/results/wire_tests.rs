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

/// The example as the status shows it: 800 ms per response, 100 req/s offered over
/// 200 connections, requests sent on time; the window of sends reads 100 req/s.
fn eight_hundred_ms(throughput: f64, requests: i64, late: i64) -> CellResult {
    let mut r = measured();
    r.coordinates.rate = Some(100);
    r.coordinates.connections = 200;
    r.throughput = Some(throughput);
    r.requests = Some(requests);
    r.usage.cpu_avg_of_limit = Some(0.05);
    r.latency_ms.as_mut().unwrap().mean = 800.4;
    r.schedule_lag_ms = Some(ScheduleLagMs {
        mean: 0.15,
        max: 10.0,
    });
    r.drain = Some(benchrun_api::Drain {
        in_flight: 80,
        ms: 800.0,
        response_lag_ms: Some(800.3),
        late: Some(late),
    });
    r
}

#[test]
fn a_target_that_keeps_up_at_a_long_latency_meets_its_rate() {
    // 1000 requests in the 10 s window: all answered, none late.
    assert!(rate_not_met(&eight_hundred_ms(100.0, 1000, 0), None).is_none());
    // What counting the drain's 0.8 s read: 92.6 req/s, a false RateNotMet.
    let old = rate_not_met(&eight_hundred_ms(92.6, 1000, 0), None).unwrap();
    assert!(old.message.contains("connections were the limit"), "{old}");
}

#[test]
fn an_unmet_rate_sent_on_schedule_and_answered_late_names_the_target() {
    // Every request went out on time (1000 sent, 0.15 ms late on average); 300 of them were
    // answered after the window's end plus its response lag: the target queued them.
    let r = eight_hundred_ms(70.0, 1000, 300);
    assert_eq!(
        rate_limit(&r, None),
        Some(RateLimit::TargetBacklog { late: 300 })
    );
    let w = rate_not_met(&r, None).unwrap();
    assert!(
        w.message.starts_with("achieved 70 req/s of the 100 req/s offered (70.0%): the target was the limit (at 5% of its CPU limit): the generator sent the requests on schedule; requests were sent 0.1ms late on average (at most 10.0ms), but the target answered 300 of the 1000 sent later than 800.3ms after the window's end"),
        "{w}"
    );
    assert!(!rate_limit(&r, None).unwrap().is_generator());
    // The generator's CPU at its limit comes first, whatever the target did.
    let cpu = rate_limit(&r, Some("load pods used 97% of their CPU limit".into())).unwrap();
    assert!(cpu.is_generator());
}

#[test]
fn requests_the_schedule_lag_pushed_out_of_the_window_are_the_generators_shortfall() {
    // Four connections at 100 ms: 400 of the 1000 due requests sent, none late.
    let mut r = eight_hundred_ms(40.0, 400, 0);
    r.coordinates.connections = 4;
    r.latency_ms.as_mut().unwrap().mean = 2_600.0;
    r.schedule_lag_ms = Some(ScheduleLagMs {
        mean: 2_500.0,
        max: 5_000.0,
    });
    assert_eq!(shortfall(&r), Some((600.0, 0.0)));
    assert_eq!(service_ms(&r), Some(100.0));
    assert_eq!(rate_limit(&r, None), Some(RateLimit::Connections));
    let w = rate_not_met(&r, None).unwrap();
    assert!(
        w.message.contains("requests were sent 2500.0ms late on average (at most 5000.0ms), and 600 requests due in the window were never sent in it; at 100.0ms per request on a connection they carry at most 4 ÷ 100.0ms = 40 req/s — add connections (load.connections ≥ 10"),
        "{w}"
    );
    // The same shortfall with the target at its CPU limit is the target's.
    r.usage.cpu_avg_of_limit = Some(0.97);
    assert_eq!(rate_limit(&r, None), Some(RateLimit::TargetCpu(0.97)));
}

#[test]
fn connections_that_cannot_carry_the_rate_at_the_targets_fastest_make_the_window_the_generators() {
    let mut r = eight_hundred_ms(40.0, 400, 0);
    r.coordinates.connections = 4;
    r.latency_ms.as_mut().unwrap().mean = 2_600.0;
    r.schedule_lag_ms = Some(ScheduleLagMs {
        mean: 2_500.0,
        max: 5_000.0,
    });
    // 4 connections at 100 ms carry 40 req/s, not 100.
    let why = connection_bound(&r, &[]).unwrap();
    assert!(
        why.starts_with("the generator's 4 connections could not carry 100 req/s"),
        "{why}"
    );
    assert!(
        why.contains("4 connections carry at most 40.0 req/s"),
        "{why}"
    );
    // A lighter measurement of the configuration answered in 2 ms: there 4 connections carry
    // 2000 req/s, so the 100 ms here were the target slowing under the load.
    let mut light = measured();
    light.coordinates.rate = Some(20);
    light.latency_ms.as_mut().unwrap().mean = 2.0;
    assert!(connection_bound(&r, &[&light]).is_none());
    // The closed model sets no rate to carry.
    assert!(connection_bound(&measured(), &[]).is_none());
}
