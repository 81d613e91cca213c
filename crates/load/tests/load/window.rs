//! The measured window is the interval of sends, not their drain (issue 52), against servers
//! on 127.0.0.1 with a fixed delay: a target that keeps up reads the offered rate whatever
//! its latency, a closed-model straggler costs its own share only, a queueing target reads the
//! rate it served, and too few connections read their ceiling with the schedule lag to say
//! why. Every load is a few seconds; the bounds leave room for a busy machine.

use crate::common;

use std::time::Duration;

use benchrun_load::{run, Config, Limit, LoadResult, WindowCounts};
use common::{serve, Behavior, Server};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// An open-model config: `rate` over `connections` for `secs`, a 10 s timeout.
fn open(server: &Server, connections: usize, rate: f64, secs: u64) -> Config {
    let mut c = server.config(connections, Limit::Duration(Duration::from_secs(secs)));
    c.rate = Some(rate);
    c.timeout = Duration::from_secs(10);
    c
}

fn counts(r: &LoadResult) -> &WindowCounts {
    r.window_counts.as_ref().expect("window counts")
}

fn show(what: &str, r: &LoadResult) {
    let c = counts(r);
    println!(
        "{what}: {:.1} req/s over {:.3} s, {} requests ({:.1} counted), {} in flight at the end, drain {} ms, {} late, response lag {:?} ms, schedule lag {:?}",
        r.throughput,
        r.duration,
        r.requests,
        c.requests,
        c.in_flight_at_end,
        c.drain_ms,
        c.late,
        c.response_lag_ms,
        r.schedule_lag
    );
}

/// The example at a smaller size: 800 ms per response, 100 req/s over 200
/// connections. Counting the drain's 0.8 s read 100 × 4 / 4.8 = 83 req/s; the window of
/// sends reads the offered rate.
#[test]
fn an_open_model_target_that_keeps_up_reads_the_offered_rate_whatever_its_latency() {
    let server = serve(Behavior::Delay {
        delay: ms(800),
        straggler: None,
    });
    let r = run(&open(&server, 200, 100.0, 4)).unwrap();
    show("800 ms, 100 req/s", &r);
    let c = counts(&r);
    assert_eq!(r.errors.total, 0, "{:?}", r.errors);
    assert!(
        (r.duration - 4.0).abs() < 0.05,
        "the window is the sends': {}",
        r.duration
    );
    assert!(
        (97.0..=103.0).contains(&r.throughput),
        "{} req/s",
        r.throughput
    );
    assert_eq!(c.requests, r.requests as f64, "every request counts");
    assert_eq!(c.late, 0);
    assert!(
        (70..=90).contains(&c.in_flight_at_end),
        "{}",
        c.in_flight_at_end
    );
    assert!((780..=1200).contains(&c.drain_ms), "{} ms", c.drain_ms);
    let lag = c.response_lag_ms.unwrap();
    assert!((795.0..1000.0).contains(&lag), "response lag {lag} ms");
    // The target counted what the generator reports, the drain included.
    assert_eq!(server.requests(), r.requests);
    // The last response came a drain after the window's end.
    assert_eq!(r.last_end_ms(), r.window_end_ms + c.drain_ms);
}

/// Ten connections, 200 ms per response, and one response of 2 s at the end of the window:
/// the old window waited for it and read 150 / 4.8 s; each request still in flight at the end
/// now counts the share of its time inside the window, so the straggler costs 0.9 request.
#[test]
fn a_closed_model_straggler_in_the_drain_costs_its_own_share_only() {
    let server = serve(Behavior::Delay {
        delay: ms(200),
        straggler: Some((143, ms(2_000))),
    });
    let mut c = server.config(10, Limit::Duration(Duration::from_secs(3)));
    c.threads = 2;
    let r = run(&c).unwrap();
    show("closed, 200 ms, a 2 s straggler", &r);
    let w = counts(&r);
    assert_eq!(r.errors.total, 0, "{:?}", r.errors);
    assert!((r.duration - 3.0).abs() < 0.05, "{}", r.duration);
    assert!(
        w.drain_ms >= 1_500,
        "the straggler's drain: {} ms",
        w.drain_ms
    );
    assert_eq!(w.in_flight_at_end, 10, "one request per connection");
    assert!(
        (47.0..=51.0).contains(&r.throughput),
        "{} req/s, 50 expected",
        r.throughput
    );
    assert!(
        w.requests < r.requests as f64,
        "the last requests count in part"
    );
    assert_eq!(server.requests(), r.requests);
}

/// A server that answers one request at a time in 10 ms (100 req/s) asked for 200 req/s over
/// 400 connections: every request goes out on time and the queue grows. The throughput is
/// what it served, the requests it had not answered within the response lag after the window
/// are late.
#[test]
fn an_open_model_target_that_queues_reads_the_rate_it_served() {
    let server = serve(Behavior::Serial(ms(10)));
    let r = run(&open(&server, 400, 200.0, 3)).unwrap();
    show("serial 10 ms, 200 req/s", &r);
    let c = counts(&r);
    let lag = r.schedule_lag.as_ref().unwrap();
    assert!(lag.mean_us < 20_000.0, "sent on time: {lag:?}");
    assert!(
        (80.0..=130.0).contains(&r.throughput),
        "{} req/s served",
        r.throughput
    );
    assert!(c.late > 100, "{} late", c.late);
    assert!(c.drain_ms > 1_500, "the backlog's drain: {} ms", c.drain_ms);
}

/// Four connections to a 100 ms target carry 40 req/s at most: offered 100 req/s the window
/// reads the ceiling, nothing is late, and requests waited for a free connection.
#[test]
fn too_few_connections_read_their_ceiling_and_the_schedule_lag_says_why() {
    let server = serve(Behavior::Delay {
        delay: ms(100),
        straggler: None,
    });
    let mut c = open(&server, 4, 100.0, 3);
    c.threads = 1;
    let r = run(&c).unwrap();
    show("4 connections, 100 ms, 100 req/s", &r);
    let w = counts(&r);
    assert!(
        (36.0..=42.0).contains(&r.throughput),
        "{} req/s",
        r.throughput
    );
    assert_eq!(w.late, 0);
    assert!(w.in_flight_at_end <= 4);
    let lag = r.schedule_lag.as_ref().unwrap();
    assert!(
        lag.mean_us > 500_000.0,
        "requests waited for a connection: {lag:?}"
    );
}
