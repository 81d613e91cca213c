//! Closed model: how many responses a thread's blocking wait waits for.
//!
//! A thread that sleeps until several responses are in wakes once per batch rather than
//! once per response, which is most of what a request costs the generator besides the
//! kernel's TCP work. The wait is sized to the responses the thread can expect within the
//! batch wait: each request in flight counts for the batch wait over its connection's
//! recent latency (at most one), and the wait is for their sum, at least one response and
//! at most half of those in flight (the server keeps the other half to work on). A
//! connection then waits about the batch wait between its response and its next request,
//! whatever the server's latency, and a fast connection is not held for slow ones: against
//! one connection answered in 50 µs and three in 30 ms, a 100 µs batch waits for one.
//!
//! The wait's own timeout is not the batch wait but [`SAFETY_TIMEOUT`], longer than a
//! scheduler tick: a timer that is not the CPU's next event costs nothing to set and to
//! cancel, while a 50 µs one is put into the timer hardware on every wait and usually
//! fires, which in a virtual machine is a trap to the hypervisor each time (a tenth of the
//! generator's CPU at 50 connections on loopback, docs/load-generator.md). The safety
//! timeout ends a wait only when responses stop coming as they did (a server that stalls):
//! one wait of up to 5 ms, after which the latencies seen size the waits again.

use std::time::Duration;

/// The longest a closed-model batch wait sleeps without its responses: past one scheduler
/// tick at 250 Hz (4 ms), so setting and cancelling it does not reprogram the timer.
pub(crate) const SAFETY_TIMEOUT: Duration = Duration::from_millis(5);

/// A connection's recent latency in seconds: `prev` (zero: none yet) moved a quarter of
/// the way to `sample`.
pub(crate) fn smooth_latency(prev: f64, sample: Duration) -> f64 {
    let s = sample.as_secs_f64();
    if prev == 0.0 {
        s
    } else {
        prev + (s - prev) / 4.0
    }
}

/// How much a request in flight on a connection of recent latency `latency` (seconds;
/// zero: not known yet) counts towards the responses expected within `wait`: the wait over
/// the latency, at most one; nothing while the latency is unknown.
pub(crate) fn expected_share(latency: f64, wait: Duration) -> f64 {
    if latency <= 0.0 {
        return 0.0;
    }
    (wait.as_secs_f64() / latency).min(1.0)
}

/// How many of `in_flight` responses a wait waits for when `expected` are expected within
/// the batch wait: at least one, at most half of them.
pub(crate) fn batch_size(in_flight: usize, expected: f64) -> usize {
    (expected.max(0.0) as usize).clamp(1, (in_flight / 2).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn a_connections_latency_is_smoothed_from_its_first_sample() {
        assert_eq!(smooth_latency(0.0, us(400)), 400e-6);
        assert!((smooth_latency(400e-6, us(800)) - 500e-6).abs() < 1e-12);
        assert!((smooth_latency(400e-6, us(0)) - 300e-6).abs() < 1e-12);
    }

    #[test]
    fn a_request_counts_for_the_wait_over_its_latency_at_most_once() {
        assert_eq!(expected_share(0.0, us(100)), 0.0, "latency not known yet");
        assert!((expected_share(400e-6, us(100)) - 0.25).abs() < 1e-12);
        assert_eq!(expected_share(50e-6, us(100)), 1.0);
    }

    #[test]
    fn a_batch_is_what_is_expected_at_least_one_at_most_half_in_flight() {
        // 50 connections answered in 260 µs, a 100 µs wait: 19 expected, 19 waited for.
        let uniform = 50.0 * expected_share(260e-6, us(100));
        assert_eq!(batch_size(50, uniform), 19);
        // 500 of them: 192 expected, under half of those in flight.
        assert_eq!(
            batch_size(500, 500.0 * expected_share(260e-6, us(100))),
            192
        );
        // One connection answered in 50 µs, three in 30 ms: one response.
        let mixed = expected_share(50e-6, us(100)) + 3.0 * expected_share(30e-3, us(100));
        assert_eq!(batch_size(4, mixed), 1);
        // Nothing expected, or a single request in flight: one.
        assert_eq!(batch_size(50, 0.0), 1);
        assert_eq!(batch_size(1, 40.0), 1);
        // Everything expected: half.
        assert_eq!(batch_size(50, 50.0), 25);
    }
}
