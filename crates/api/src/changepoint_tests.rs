use super::*;

/// Standard normal draw by Box-Muller.
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = 1.0 - rng.f64(); // in (0, 1]
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// `len` points at level 100 with relative Gaussian noise `noise`; from
/// index `at` on the level is `100 * (1 + step)`.
fn series(rng: &mut fastrand::Rng, len: usize, at: usize, step: f64, noise: f64) -> Vec<f64> {
    (0..len)
        .map(|i| level(i, at, step) * (1.0 + noise * normal(rng)))
        .collect()
}

fn level(i: usize, at: usize, step: f64) -> f64 {
    if i >= at {
        100.0 * (1.0 + step)
    } else {
        100.0
    }
}

fn pct(hits: usize, trials: usize) -> f64 {
    100.0 * hits as f64 / trials as f64
}

/// Exact optimal partitioning, O(n^2), to check the pruning in `pelt`.
fn exact(z: &[f64], m: usize, beta: f64) -> Vec<usize> {
    let n = z.len();
    let p = Prefix::new(z);
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -beta;
    for t in m..=n {
        for s in (0..=t - m).filter(|&s| s == 0 || s >= m) {
            let v = f[s] + p.cost(s, t) + beta;
            if v < f[t] {
                f[t] = v;
                last[t] = s;
            }
        }
    }
    backtrack(&last)
}

/// Runs `trials` series with one step of `step` at index `at`. Returns
/// the percentages of trials in which the detector reported exactly one
/// change, of the right sign, at `at` and within one of `at`, and the
/// percentage in which an oracle that knows both levels and the noise
/// (the best any locator can do: the maximum-likelihood index among the
/// allowed ones) picked `at`.
fn step_rates(
    len: usize,
    at: usize,
    step: f64,
    noise: f64,
    trials: usize,
    seed: u64,
) -> (f64, f64, f64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let opts = Options::default();
    let m = opts.min_segment;
    let (mut exact_hits, mut near_hits, mut oracle_hits) = (0, 0, 0);
    for _ in 0..trials {
        let x = series(&mut rng, len, at, step, noise);
        let c = changepoints(&x, &opts);
        if c.len() == 1 && c[0].step.signum() == step.signum() {
            exact_hits += usize::from(c[0].index == at);
            near_hits += usize::from(c[0].index.abs_diff(at) <= 1);
        }
        let misfit = |t: usize| -> f64 {
            x.iter()
                .enumerate()
                .map(|(i, v)| (v - level(i, t, step)).powi(2))
                .sum()
        };
        let best = (m..=len - m)
            .min_by(|&a, &b| misfit(a).total_cmp(&misfit(b)))
            .unwrap();
        oracle_hits += usize::from(best == at);
    }
    (
        pct(exact_hits, trials),
        pct(near_hits, trials),
        pct(oracle_hits, trials),
    )
}

/// A 10 % step is 3.3 noise sd at 3 % noise. The first point after it
/// then lies nearer the old level about 5 % of the time, and the last
/// point before it nearer the new one as often, so no method can place it
/// exactly in 95 % of trials: the oracle manages 88 to 92 %. The test
/// holds the detector to 95 % within one run, and to within 4 points of
/// the oracle for the exact index.
#[test]
fn ten_percent_step_at_three_percent_noise() {
    let trials = 2000;
    for (len, step, seed) in [(20, 0.1, 1), (20, -0.1, 2), (30, 0.1, 3), (30, -0.1, 4)] {
        let (exact_rate, near_rate, oracle) = step_rates(len, 10, step, 0.03, trials, seed);
        println!(
            "3 % noise, len {len}, step {step:+}: exact {exact_rate:.1} %, \
             within one {near_rate:.1} %, oracle exact {oracle:.1} % ({trials} trials)"
        );
        assert!(near_rate >= 95.0, "within one: {near_rate}");
        assert!(
            exact_rate >= oracle - 4.0,
            "exact {exact_rate}, oracle {oracle}"
        );
    }
}

/// At 2 % noise (5 sd) the exact index is attainable in 95 % of trials.
#[test]
fn ten_percent_step_at_two_percent_noise() {
    let trials = 2000;
    for (len, step, seed) in [(20, 0.1, 5), (20, -0.1, 6), (30, 0.1, 7), (30, -0.1, 8)] {
        let (exact_rate, near_rate, oracle) = step_rates(len, 10, step, 0.02, trials, seed);
        println!(
            "2 % noise, len {len}, step {step:+}: exact {exact_rate:.1} %, \
             within one {near_rate:.1} %, oracle exact {oracle:.1} % ({trials} trials)"
        );
        assert!(exact_rate >= 95.0, "exact: {exact_rate}");
    }
}

#[test]
fn flat_series_stay_quiet() {
    let opts = Options::default();
    let mut rng = fastrand::Rng::with_seed(9);
    for (len, trials) in [
        (30, 4000),
        (8, 1000),
        (12, 1000),
        (20, 1000),
        (60, 1000),
        (200, 1000),
    ] {
        let quiet = (0..trials)
            .filter(|_| changepoints(&series(&mut rng, len, 0, 0.0, 0.03), &opts).is_empty())
            .count();
        let rate = pct(quiet, trials);
        println!("flat, {len} points, 3 % noise: quiet in {rate:.1} % of {trials} trials");
        assert!(rate >= 95.0, "len {len}: quiet {rate}");
    }
}

#[test]
fn never_in_the_first_or_last_min_segment_points() {
    let mut rng = fastrand::Rng::with_seed(10);
    let mut checked = 0;
    for m in [1, 2, 4, 6] {
        let opts = Options {
            min_segment: m,
            ..Options::default()
        };
        for len in [2 * m, 12, 20, 30] {
            for at in 0..=len {
                for step in [0.05, 0.3, 1.0, -0.5] {
                    for noise in [0.0, 0.03] {
                        let x = series(&mut rng, len, at, step, noise);
                        for c in changepoints(&x, &opts) {
                            assert!(c.index >= m && c.index <= len - m, "{c:?} m {m}");
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    println!("index bounds held in {checked} series");

    // A large step in the newest 1 to 3 runs is at most reported at the
    // latest allowed index, len - 4, never at its own.
    let opts = Options::default();
    for k in 1..=3 {
        let trials = 1000;
        let mut at_edge = 0;
        for _ in 0..trials {
            let c = changepoints(&series(&mut rng, 20, 20 - k, 0.5, 0.03), &opts);
            assert!(c.iter().all(|c| c.index <= 16), "{c:?}");
            at_edge += usize::from(c.iter().any(|c| c.index == 16));
        }
        println!(
            "+50 % in the newest {k} of 20 runs: reported at index 16 in {:.1} % \
             of {trials} trials, later never",
            pct(at_edge, trials)
        );
    }
    // A step exactly min_segment from the end is found where it is.
    let x = series(&mut rng, 30, 26, 0.3, 0.03);
    assert_eq!(changepoints(&x, &opts)[0].index, 26);
}

/// +1 % per run for 20 runs. The detector answers with a staircase of
/// upward changes; without noise it is fully determined.
#[test]
fn slow_drift_gives_an_upward_staircase() {
    let opts = Options::default();
    let ramp: Vec<f64> = (0..20).map(|i| 100.0 * (1.0 + 0.01 * i as f64)).collect();
    let c = changepoints(&ramp, &opts);
    println!("noise-free drift: {c:?}");
    let indices: Vec<usize> = c.iter().map(|c| c.index).collect();
    assert_eq!(indices, [5, 10, 15]);
    assert!(c.iter().all(|c| c.step > 0.03));

    // With noise the staircase varies, but (fixed seeds) in every trial
    // that flags anything the level rises overall; at 1 % noise every
    // trial is flagged and every change is upward.
    for noise in [0.01, 0.03] {
        let mut rng = fastrand::Rng::with_seed(12);
        let trials = 1000;
        let (mut flagged, mut rises, mut by_ten, mut down) = (0, 0, 0, 0);
        for _ in 0..trials {
            let x: Vec<f64> = ramp
                .iter()
                .map(|v| v * (1.0 + noise * normal(&mut rng)))
                .collect();
            let c = changepoints(&x, &opts);
            if let (Some(first), Some(last)) = (c.first(), c.last()) {
                flagged += 1;
                rises += usize::from(last.after > first.before);
                by_ten += usize::from(first.index <= 10);
            }
            down += c.iter().filter(|c| c.step < 0.0).count();
        }
        println!(
            "drift at {} % noise: flagged {:.1} %, first change by run 10 {:.1} %, \
             downward changes {down} ({trials} trials)",
            noise * 100.0,
            pct(flagged, trials),
            pct(by_ten, trials)
        );
        assert_eq!(rises, flagged);
        assert!(pct(flagged, trials) >= 99.0);
        if noise < 0.02 {
            assert_eq!(flagged, trials);
            assert_eq!(down, 0);
        }
    }
}

#[test]
fn edge_cases() {
    let opts = Options::default();
    assert!(changepoints(&[], &opts).is_empty());
    // Shorter than 2 * min_segment: nothing, however large the step.
    assert!(changepoints(&[1.0, 1.0, 1.0, 1.0, 9.0, 9.0, 9.0], &opts).is_empty());
    assert!(changepoints(&[5.0; 30], &opts).is_empty());
    assert!(changepoints(&[0.0; 30], &opts).is_empty());
    let mut x: Vec<f64> = (0..20).map(|i| level(i, 10, 0.5)).collect();
    // Noise-free step: found exactly, with exact levels.
    let c = changepoints(&x, &opts);
    assert_eq!(
        c,
        vec![Change {
            index: 10,
            before: 100.0,
            after: 150.0,
            step: 0.5
        }]
    );
    // min_segment 0 behaves as 1.
    let zero = Options {
        min_segment: 0,
        ..opts
    };
    let one = Options {
        min_segment: 1,
        ..opts
    };
    assert_eq!(changepoints(&x, &zero), changepoints(&x, &one));
    // Non-finite input is rejected.
    x[3] = f64::NAN;
    assert!(changepoints(&x, &opts).is_empty());
    x[3] = f64::INFINITY;
    assert!(changepoints(&x, &opts).is_empty());
}

#[test]
fn small_steps_are_merged_away() {
    let mut rng = fastrand::Rng::with_seed(13);
    let x = series(&mut rng, 30, 15, 0.015, 0.002);
    assert!(changepoints(&x, &Options::default()).is_empty());
    let fine = Options {
        min_step: 0.01,
        ..Options::default()
    };
    let c = changepoints(&x, &fine);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].index, 15);
    assert!((c[0].step - 0.015).abs() < 0.003, "{c:?}");
}

#[test]
fn deterministic_and_scale_free() {
    let mut rng = fastrand::Rng::with_seed(14);
    let opts = Options::default();
    for _ in 0..200 {
        let x = series(&mut rng, 25, 12, 0.08, 0.03);
        let a = changepoints(&x, &opts);
        assert_eq!(a, changepoints(&x, &opts));
        let scaled: Vec<f64> = x.iter().map(|v| v * 1000.0).collect();
        let b = changepoints(&scaled, &opts);
        let ia: Vec<usize> = a.iter().map(|c| c.index).collect();
        let ib: Vec<usize> = b.iter().map(|c| c.index).collect();
        assert_eq!(ia, ib);
    }
}

#[test]
fn pruning_matches_exact_search() {
    let mut rng = fastrand::Rng::with_seed(11);
    for trial in 0..300 {
        let len = 8 + trial % 60;
        let x = series(&mut rng, len, len / 2, 0.05, 0.03);
        let z: Vec<f64> = x.iter().map(|v| (v - 100.0) / 3.0).collect();
        for m in [1, 2, 4, 5] {
            for beta in [0.5, 3.0, 10.0] {
                assert_eq!(pelt(&z, m, beta), exact(&z, m, beta), "len {len} m {m}");
            }
        }
    }
}

/// The smallest segment a schedule allows (`changepoints.minSegment: 2`) on the short series a
/// young schedule has: flat series stay quiet, and a 23 % step (1.3× the work) after 4 runs is
/// found at its index in most series once 2 runs follow it, and in nearly all once 3 do.
#[test]
fn min_segment_two_on_short_series() {
    let opts = Options {
        min_segment: 2,
        ..Options::default()
    };
    let mut rng = fastrand::Rng::with_seed(21);
    let trials = 2000;
    for len in [4, 5, 6, 8] {
        let quiet = (0..trials)
            .filter(|_| changepoints(&series(&mut rng, len, 0, 0.0, 0.03), &opts).is_empty())
            .count();
        let rate = pct(quiet, trials);
        println!("flat, {len} points, min segment 2, 3 % noise: quiet in {rate:.1} %");
        assert!(rate >= 95.0, "len {len}: quiet {rate}");
    }
    // Two runs after the step: found most of the time; three or more: nearly always.
    for (len, bound) in [(6, 85.0), (7, 95.0), (8, 95.0)] {
        let found = (0..trials)
            .filter(|_| {
                let c = changepoints(&series(&mut rng, len, 4, -0.23, 0.03), &opts);
                c.len() == 1 && c[0].index == 4
            })
            .count();
        let rate = pct(found, trials);
        println!("23 % step after 4 of {len} points, 3 % noise: found at 4 in {rate:.1} %");
        assert!(rate >= bound, "len {len}: found {rate}");
    }
}
