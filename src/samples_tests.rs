use super::*;

const SPAN: Span = Span {
    start: 100.0,
    end: 115.0,
};

fn series(points: &[(f64, f64)]) -> Series {
    Series {
        points: points.to_vec(),
        ..Series::default()
    }
}

/// A counter growing at `rate` per second from `from` to `to`, idle outside, sampled at `ts`.
fn step_load(ts: &[f64], from: f64, to: f64, rate: f64) -> Series {
    let value = |t: f64| rate * (t.clamp(from, to) - from) + 1000.0;
    series(&ts.iter().map(|&t| (t, value(t))).collect::<Vec<_>>())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn a_steady_counter_reads_its_rate_exactly() {
    let s = series(&[(95.0, 10.0), (103.0, 14.0), (111.0, 18.0), (119.0, 22.0)]);
    let f = counter(&[s], SPAN).unwrap();
    assert!(close(f.avg, 0.5), "{f:?}");
    assert!(close(f.peak, 0.5), "{f:?}");
    assert!(close(f.increase, 7.5), "{f:?}");
    assert_eq!(f.samples, 2);
}

#[test]
fn load_that_stops_at_the_window_end_is_not_diluted_by_the_idle_sample_after_it() {
    // Plain interpolation between 111 and 119 would give the end 4/8 of 0.5·4 s: 1 s short.
    let s = step_load(&[95.0, 103.0, 111.0, 119.0], 90.0, 115.0, 0.5);
    let f = counter(&[s], SPAN).unwrap();
    assert!(close(f.avg, 0.5), "{f:?}");
}

#[test]
fn with_one_sample_inside_the_less_diluted_straddling_rate_fills_both_edges() {
    // Samples 8 s apart, one inside: load from 90 (warm-up) to 115.
    let s = step_load(&[98.0, 106.0, 114.0 + 8.0], 90.0, 115.0, 0.5);
    let f = counter(&[s], SPAN).unwrap();
    assert_eq!(f.samples, 1);
    assert!(close(f.avg, 0.5), "{f:?}");
}

#[test]
fn an_edge_never_gains_more_than_its_whole_interval() {
    // The inside rate is 1.0 but the counter only gains 0.5 between 111 and 119.
    let s = series(&[(95.0, 0.0), (103.0, 0.0), (111.0, 8.0), (119.0, 8.5)]);
    let f = counter(&[s], SPAN).unwrap();
    assert!(close(f.increase, 8.0 + 0.5), "{f:?}");
}

#[test]
fn a_counter_reset_counts_from_zero() {
    // Restarted between 103 and 111: 2 s of CPU before the reset is lost, 3 s after it counted.
    let s = series(&[(95.0, 50.0), (103.0, 54.0), (111.0, 3.0), (119.0, 7.0)]);
    let f = counter(&[s], SPAN).unwrap();
    // 103→111 gains 3 (from zero); edges use the neighbouring inside rate 3/8.
    assert!(close(f.increase, 3.0 / 8.0 * 15.0), "{f:?}");
}

#[test]
fn a_container_restarted_inside_the_window_adds_both_series() {
    // The old container stops after 107, the new one starts from zero inside the window.
    let old = series(&[(91.0, 20.0), (99.0, 24.0), (107.0, 28.0)]);
    let new = series(&[(109.0, 1.0), (117.0, 5.0)]);
    let f = counter(&[old, new], SPAN).unwrap();
    // Old: 0.5/s from 100 to 107 = 3.5; new: 1.0 by 109 then 0.5/s to 115 = 4.0.
    assert!(close(f.increase, 3.5 + 4.0), "{f:?}");
    assert_eq!(f.samples, 1, "the old series had one sample inside");
}

#[test]
fn no_samples_after_the_window_yet_carries_the_last_rate() {
    let s = series(&[(95.0, 10.0), (103.0, 14.0), (111.0, 18.0)]);
    let f = counter(&[s], SPAN).unwrap();
    assert!(close(f.avg, 0.5), "{f:?}");
}

#[test]
fn a_window_between_two_samples_has_no_counter_figures() {
    let s = series(&[(99.0, 10.0), (116.0, 20.0)]);
    assert_eq!(counter(&[s], SPAN), None);
    assert_eq!(counter(&[], SPAN), None);
}

#[test]
fn series_sum_at_aligned_times_and_the_peak_is_their_busiest_interval() {
    let a = series(&[(96.0, 0.0), (104.0, 4.0), (112.0, 8.0), (120.0, 12.0)]);
    let b = series(&[(98.0, 0.0), (106.0, 0.0), (114.0, 8.0), (122.0, 8.0)]);
    let f = counter(&[a, b], SPAN).unwrap();
    // b is busy (1.0/s) only between 106 and 114: summed peak 1.5.
    assert!(close(f.peak, 1.5), "{f:?}");
    assert!(f.peak >= f.avg);
    assert_eq!(f.samples, 2);
}

/// xorshift64*: a fixed pseudo-random sequence, so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn random_counter(rng: &mut Rng) -> Series {
    let mut t = 60.0 + rng.next() * 20.0;
    let mut v = rng.next() * 100.0;
    let mut points = Vec::new();
    while t < 150.0 {
        points.push((t, v));
        t += 0.5 + rng.next() * 15.0;
        v = if rng.next() < 0.05 {
            rng.next()
        } else {
            v + rng.next() * 2.0
        };
    }
    Series {
        points,
        ..Series::default()
    }
}

#[test]
fn the_peak_is_never_below_the_average_and_nothing_is_negative() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for _ in 0..5000 {
        let n = 1 + (rng.next() * 3.0) as usize;
        let all: Vec<Series> = (0..n).map(|_| random_counter(&mut rng)).collect();
        let start = 90.0 + rng.next() * 20.0;
        let span = Span {
            start,
            end: start + 1.0 + rng.next() * 30.0,
        };
        if let Some(f) = counter(&all, span) {
            assert!(f.peak >= f.avg, "{f:?} {span:?} {all:?}");
            assert!(f.increase >= 0.0, "{f:?}");
            assert!(f.samples >= 1);
            checked += 1;
        }
    }
    assert!(checked > 2000, "only {checked} cases had figures");
}

#[test]
fn memory_average_and_peak_come_from_the_samples_inside() {
    let a = series(&[(95.0, 10.0), (103.0, 20.0), (111.0, 40.0), (119.0, 90.0)]);
    let f = gauge(&[a], SPAN).unwrap();
    assert!(close(f.avg, 30.0) && close(f.peak, 40.0), "{f:?}");
    assert_eq!(f.samples, 2);
}

#[test]
fn memory_of_several_pods_is_summed_at_each_sample_time() {
    let a = series(&[(100.0, 10.0), (110.0, 10.0)]);
    let b = series(&[(105.0, 4.0), (115.0, 8.0)]);
    let f = gauge(&[a, b], SPAN).unwrap();
    // t=100: 10 + 0 (b not yet sampled); 105: 10 + 4; 110: 10 + 6; 115: 0 + 8.
    assert!(close(f.peak, 16.0), "{f:?}");
    assert!(close(f.avg, (10.0 + 14.0 + 16.0 + 8.0) / 4.0), "{f:?}");
    assert_eq!(f.samples, 4);
    assert_eq!(gauge(&[series(&[(90.0, 1.0), (120.0, 1.0)])], SPAN), None);
}

#[test]
fn the_sample_interval_is_the_widest_gap_around_the_window() {
    let a = series(&[
        (50.0, 0.0),
        (80.0, 0.0),
        (97.0, 0.0),
        (106.0, 0.0),
        (113.0, 0.0),
        (121.0, 0.0),
    ]);
    assert_eq!(sample_interval(&[a], SPAN), Some(9.0));
    assert_eq!(sample_interval(&[series(&[(1.0, 0.0)])], SPAN), None);
}

#[test]
fn the_minimum_window_holds_the_samples_wherever_it_falls() {
    assert_eq!(min_window_secs(9.6, 2), 20);
    assert_eq!(min_window_secs(10.0, 2), 20);
    assert_eq!(min_window_secs(0.2, 2), 1);
}

#[test]
fn a_series_that_ended_before_the_window_does_not_count_as_held_no_sample() {
    // A container replaced before the window: its series stops at 97; the new one is sampled
    // at 98, 106 and 114.
    let gone = series(&[(89.0, 40.0), (97.0, 44.0)]);
    let now = series(&[(98.0, 1.0), (106.0, 5.0), (114.0, 9.0)]);
    assert_eq!(fewest_samples(&[gone.clone(), now.clone()], SPAN), Some(2));
    let f = counter(&[gone, now], SPAN).unwrap();
    assert_eq!(f.samples, 2);
    assert!(close(f.avg, 0.5), "{f:?}");
    // Straddled by one interval only: covered, with no sample inside.
    assert_eq!(
        fewest_samples(&[series(&[(99.0, 1.0), (116.0, 2.0)])], SPAN),
        Some(0)
    );
    assert_eq!(fewest_samples(&[], SPAN), None);
}
