//! Ramp-up and think time against a real server on 127.0.0.1: a pause after each response
//! paces a closed-model connection without entering its latency, and a ramp-up starts the
//! connections (or their schedules) one after another before an unrecorded warm-up count.
//! Every load is bounded in time and count; the bounds on counts are loose, as the machine
//! may be busy.

use crate::common;

use std::time::{Duration, Instant};

use benchrun_load::{run, Limit};
use common::{serve, Behavior};

#[test]
fn think_time_paces_each_connection_and_stays_out_of_the_latency() {
    let server = serve(Behavior::Ok);
    // Two connections on two threads, 10 requests each, 100 ms apart: 9 pauses per connection.
    let mut c = server.config(2, Limit::Requests(20));
    c.think_time = Some(Duration::from_millis(100));
    let began = Instant::now();
    let r = run(&c).unwrap();
    let took = began.elapsed();
    println!(
        "20 requests 100 ms apart: {took:?}, p99 {} us",
        r.latency.p99_us
    );
    assert_eq!((r.requests, r.errors.total), (20, 0), "{:?}", r.errors);
    assert!(
        took >= Duration::from_millis(900),
        "20 requests took {took:?}"
    );
    assert!(
        r.latency.p99_us < 100_000,
        "the pause is not latency: p99 {} us",
        r.latency.p99_us
    );
    // Over a time window: 4 connections, 250 ms pauses, 1 s: about 4 requests each.
    let mut c = server.config(4, Limit::Duration(Duration::from_secs(1)));
    c.think_time = Some(Duration::from_millis(250));
    let r = run(&c).unwrap();
    println!(
        "4 connections, 250 ms think time, 1 s: {} requests",
        r.requests
    );
    assert!((12..=24).contains(&r.requests), "{} requests", r.requests);
}

#[test]
fn think_time_with_a_rate_or_out_of_range_is_refused() {
    let server = serve(Behavior::Ok);
    let mut c = server.config(1, Limit::Duration(Duration::from_secs(1)));
    c.rate = Some(10.0);
    c.think_time = Some(Duration::from_millis(10));
    let e = run(&c).unwrap_err().to_string();
    assert!(e.contains("think time is for the closed model"), "{e}");
    let mut c = server.config(1, Limit::Requests(1));
    c.ramp_up = Some(Duration::ZERO);
    let e = run(&c).unwrap_err().to_string();
    assert!(e.contains("ramp-up must be positive"), "{e}");
    assert_eq!(server.requests(), 0);
}

#[test]
fn a_closed_ramp_up_starts_the_connections_one_after_another_unrecorded() {
    let server = serve(Behavior::Ok);
    // 4 connections pausing 100 ms join at 0, 250, 500 and 750 ms of a 1 s ramp: about
    // 10 + 7.5 + 5 + 2.5 = 25 ramp requests, against 40 had they all started at once.
    let mut c = server.config(4, Limit::Requests(8));
    c.ramp_up = Some(Duration::from_secs(1));
    c.think_time = Some(Duration::from_millis(100));
    let began = Instant::now();
    let r = run(&c).unwrap();
    assert_eq!((r.requests, r.errors.total), (8, 0), "{:?}", r.errors);
    println!("closed ramp-up: {} ramp requests", r.warmup_requests);
    assert!(
        (15..=34).contains(&r.warmup_requests),
        "{} ramp requests",
        r.warmup_requests
    );
    let ramp_end = began
        .elapsed()
        .saturating_sub(Duration::from_millis(r.window_end_ms - r.window_start_ms));
    assert!(
        ramp_end >= Duration::from_millis(950),
        "window began after {ramp_end:?}"
    );
    // Kept alive from the ramp into the window: one connection each.
    assert_eq!(server.connections(), 4);
    assert_eq!(server.requests(), 8 + r.warmup_requests);
}

#[test]
fn an_open_ramp_up_raises_the_rate_in_steps() {
    let server = serve(Behavior::Ok);
    // 200 req/s over 4 connections (one request every 20 ms each), schedules beginning at 0,
    // 250, 500 and 750 ms of a 1 s ramp: about 50 + 37 + 25 + 12 = 125 ramp requests, not 200.
    let mut c = server.config(4, Limit::Duration(Duration::from_millis(500)));
    c.rate = Some(200.0);
    c.ramp_up = Some(Duration::from_secs(1));
    let r = run(&c).unwrap();
    assert_eq!(r.errors.total, 0, "{:?}", r.errors);
    println!(
        "open ramp-up: {} ramp requests, {} in the window",
        r.warmup_requests, r.requests
    );
    assert!(
        (100..=150).contains(&r.warmup_requests),
        "{} ramp requests",
        r.warmup_requests
    );
    assert!(
        (90..=110).contains(&r.requests),
        "{} requests in 0.5 s at 200/s",
        r.requests
    );
}

#[test]
fn a_closed_ramp_up_without_think_time_wakes_by_the_poll_timeout() {
    // No timer in this worker (no rate, no think time): the ramp still spaces the
    // connections and ends before the window.
    let server = serve(Behavior::Ok);
    let mut c = server.config(4, Limit::Requests(8));
    c.ramp_up = Some(Duration::from_millis(400));
    let began = Instant::now();
    let r = run(&c).unwrap();
    assert_eq!((r.requests, r.errors.total), (8, 0), "{:?}", r.errors);
    let window = Duration::from_millis(r.window_end_ms - r.window_start_ms);
    let ramp_end = began.elapsed().saturating_sub(window);
    println!(
        "ramp without think time: {} ramp requests, window after {ramp_end:?}",
        r.warmup_requests
    );
    assert!(r.warmup_requests > 0);
    assert!(
        ramp_end >= Duration::from_millis(380),
        "window began after {ramp_end:?}"
    );
    assert_eq!(server.connections(), 4);
}
