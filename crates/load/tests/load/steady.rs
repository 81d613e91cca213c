//! A warm-up until steady against servers on 127.0.0.1 whose speed changes over time: it lasts
//! while the per-second throughput still rises and ends once it has been flat for the trailing
//! seconds the rule looks at (10 here); a server that is still warming when the cap comes is
//! reported as not steady. Slow responses (tens of milliseconds) keep the per-second
//! throughput steady on a busy machine; each test takes 10 to 40 s.

use crate::common;

use std::time::{Duration, Instant};

use benchrun_load::steady::{MIN_STEADY_SECONDS, STEADY_CHECKS};
use benchrun_load::{run, Limit, SteadyFigure, Warmup};
use common::{serve, Behavior};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A server whose responses speed up from 80 ms to 20 ms over 6 s (8 connections: about 100
/// rising to 400 req/s): the warm-up goes on past the rise, then ends after the 10 flat seconds
/// the rule looks back over and its 3 checks; the measured window runs at the final speed.
#[test]
fn a_warm_up_until_steady_lasts_while_the_throughput_rises() {
    let server = serve(Behavior::Warming {
        from: ms(80),
        to: ms(20),
        over: Duration::from_secs(6),
    });
    let mut c = server.config(8, Limit::Duration(Duration::from_secs(2)));
    c.warmup = Warmup::UntilSteady {
        min: Duration::ZERO,
        max: Duration::from_secs(45),
    };
    let began = Instant::now();
    let r = run(&c).unwrap();
    let w = r.warmup_until_steady.clone().expect("reported");
    println!(
        "warming server: steady after {:.1} s (change {:?}), window {:.0} req/s, took {:?}",
        w.seconds,
        w.change,
        r.throughput,
        began.elapsed()
    );
    assert!(w.steady, "{w:?}");
    assert_eq!(
        (w.figure, w.trailing_seconds, w.max_seconds),
        (SteadyFigure::Throughput, 10, 45.0)
    );
    let earliest = 6.0 + (MIN_STEADY_SECONDS + STEADY_CHECKS - 1) as f64 - 4.0;
    assert!(
        (earliest..45.0).contains(&w.seconds),
        "steady after {} s, not before the rise had ended",
        w.seconds
    );
    assert!(w.change.is_some_and(|c| c.abs() < 0.025), "{w:?}");
    assert!(
        (250.0..=420.0).contains(&r.throughput),
        "the window ran at the final speed: {} req/s",
        r.throughput
    );
    assert!(
        r.warmup_requests as f64 >= 200.0 * w.seconds,
        "{}",
        r.warmup_requests
    );
}

/// A server steady from the start: the warm-up ends as soon as the rule can judge, after
/// [`MIN_STEADY_SECONDS`] and [`STEADY_CHECKS`] − 1 seconds; `--warmup` holds it to its least.
#[test]
fn a_steady_server_ends_the_warm_up_at_once_or_at_the_least() {
    let server = serve(Behavior::Warming {
        from: ms(20),
        to: ms(20),
        over: Duration::from_secs(1),
    });
    let mut c = server.config(8, Limit::Requests(100));
    c.warmup = Warmup::UntilSteady {
        min: Duration::from_secs(15),
        max: Duration::from_secs(40),
    };
    let r = run(&c).unwrap();
    let w = r.warmup_until_steady.expect("reported");
    println!("steady server, at least 15 s: {:.1} s", w.seconds);
    assert!(w.steady, "{w:?}");
    assert!((15.0..25.0).contains(&w.seconds), "{w:?}");
    assert_eq!(r.requests, 100);
}

/// A server still speeding up when the cap comes: the warm-up ends at the cap and says it was
/// not steady, with the rise it saw over its last 10 s.
#[test]
fn a_server_still_warming_at_the_cap_is_reported_not_steady() {
    let server = serve(Behavior::Warming {
        from: ms(100),
        to: ms(10),
        over: Duration::from_secs(60),
    });
    let mut c = server.config(8, Limit::Duration(Duration::from_secs(1)));
    c.warmup = Warmup::UntilSteady {
        min: Duration::ZERO,
        max: Duration::from_secs(14),
    };
    let r = run(&c).unwrap();
    let w = r.warmup_until_steady.expect("reported");
    println!("still warming at the cap: {w:?}");
    assert!(!w.steady, "{w:?}");
    assert!((14.0..16.0).contains(&w.seconds), "{w:?}");
    assert!(
        w.change.is_some_and(|c| c > 0.1),
        "rose over the last 10 s: {w:?}"
    );
}
