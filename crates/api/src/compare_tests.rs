use proptest::prelude::Rng;
use proptest::test_runner::{RngAlgorithm, TestRng};

use super::*;
use ComparisonVerdict::*;

/// The tolerance of the checks.
const TOL: f64 = 0.05;
/// Simulated experiments per check.
const RUNS: usize = 1000;

fn rng(seed: u8) -> TestRng {
    TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32])
}

/// A standard normal draw (Box-Muller over the seeded generator).
fn normal(rng: &mut TestRng) -> f64 {
    let mut uniform = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let (u1, u2) = (uniform().max(f64::MIN_POSITIVE), uniform());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// `n` per-repeat values with mean `mean` and coefficient of variation `cv`, log-normal (a
/// throughput is positive, and a slow window is slow by a factor).
fn repeats(rng: &mut TestRng, n: usize, mean: f64, cv: f64) -> Vec<f64> {
    let sigma = (1.0 + cv * cv).ln().sqrt();
    (0..n)
        .map(|_| mean * (sigma * normal(rng) - sigma * sigma / 2.0).exp())
        .collect()
}

/// How often each verdict came out over [`RUNS`] experiments of `n` repeats a side, the
/// candidate's mean `ratio` times the reference's, both at `cv`.
fn verdicts(seed: u8, n: usize, ratio: f64, cv: f64) -> std::collections::BTreeMap<String, usize> {
    let mut r = rng(seed);
    let mut out = std::collections::BTreeMap::new();
    for _ in 0..RUNS {
        let reference = repeats(&mut r, n, 1000.0, cv);
        let candidate = repeats(&mut r, n, 1000.0 * ratio, cv);
        let v = compare_repeats(&candidate, &reference, TOL, true).unwrap();
        *out.entry(v.verdict.to_string()).or_default() += 1;
    }
    out
}

fn count(m: &std::collections::BTreeMap<String, usize>, v: ComparisonVerdict) -> usize {
    m.get(v.as_str()).copied().unwrap_or(0)
}

#[test]
fn a_ten_percent_drop_at_forty_percent_cv_over_three_repeats_is_almost_never_equivalent_or_faster()
{
    let m = verdicts(1, 3, 0.9, 0.40);
    let wrong = count(&m, Equivalent) + count(&m, Faster);
    assert!(wrong <= RUNS / 100, "{m:?}");
    // What it is instead: the repeats cannot tell.
    assert!(count(&m, Inconclusive) >= RUNS * 9 / 10, "{m:?}");
}

#[test]
fn a_ten_percent_drop_at_two_percent_cv_over_ten_repeats_is_slower_in_at_least_99_percent() {
    let m = verdicts(2, 10, 0.9, 0.02);
    assert!(count(&m, Slower) >= RUNS * 99 / 100, "{m:?}");
}

#[test]
fn identical_targets_at_two_percent_cv_over_ten_repeats_are_equivalent_in_at_least_95_percent() {
    let m = verdicts(3, 10, 1.0, 0.02);
    assert!(count(&m, Equivalent) >= RUNS * 95 / 100, "{m:?}");
    assert!(
        count(&m, Faster) + count(&m, Slower) <= RUNS * 5 / 100,
        "{m:?}"
    );
}

#[test]
fn a_ten_percent_rise_is_faster_for_throughput_and_slower_for_latency() {
    let mut r = rng(4);
    let reference = repeats(&mut r, 10, 1000.0, 0.02);
    let candidate = repeats(&mut r, 10, 1100.0, 0.02);
    let up = compare_repeats(&candidate, &reference, TOL, true).unwrap();
    assert_eq!(up.verdict, Faster, "{up:?}");
    assert!(
        up.low < up.ratio && up.ratio < up.high && up.low > 1.05,
        "{up:?}"
    );
    let p99 = compare_repeats(&candidate, &reference, TOL, false).unwrap();
    assert_eq!(p99.verdict, Slower);
    assert_eq!((p99.ratio, p99.low, p99.high), (up.ratio, up.low, up.high));
}

#[test]
fn the_95_percent_interval_covers_the_true_ratio_in_93_to_97_percent_of_experiments() {
    for (seed, n, ratio, cv) in [
        (5, 3, 0.9, 0.40),
        (6, 5, 0.9, 0.10),
        (7, 10, 1.0, 0.02),
        (8, 4, 1.3, 0.05),
    ] {
        let mut r = rng(seed);
        let covered = (0..RUNS)
            .filter(|_| {
                let reference = repeats(&mut r, n, 1000.0, cv);
                let candidate = repeats(&mut r, n, 1000.0 * ratio, cv);
                let e = compare_repeats(&candidate, &reference, TOL, true).unwrap();
                e.low <= ratio && ratio <= e.high
            })
            .count();
        assert!(
            (930..=970).contains(&covered),
            "{n} repeats, ratio {ratio}, CV {cv}: covered in {covered} of {RUNS}"
        );
    }
}

#[test]
fn the_interval_is_welchs_t_on_the_logs_worked_by_hand() {
    // Logs 1, 2, 3 against 0, 1, 2: d = 1, s² = 1 a side, se = √(2/3), ν = 4,
    // t(0.975, 4) = 2.776445, half-width 2.266958.
    let e = |xs: [f64; 3]| xs.map(f64::exp);
    let r = compare_repeats(&e([1.0, 2.0, 3.0]), &e([0.0, 1.0, 2.0]), TOL, true).unwrap();
    assert!((r.ratio - 1f64.exp()).abs() < 1e-9, "{r:?}");
    assert!((r.low - (1.0 - 2.266958f64).exp()).abs() < 1e-4, "{r:?}");
    assert!((r.high - (1.0 + 2.266958f64).exp()).abs() < 1e-2, "{r:?}");
    assert_eq!(r.verdict, Inconclusive);
    // Its p-value: t = 1/√(2/3) = 1.2247 on 4 degrees of freedom, p = 0.2879.
    let p = ratio_p_value(&e([1.0, 2.0, 3.0]), &e([0.0, 1.0, 2.0])).unwrap();
    assert!((p - 0.2879).abs() < 1e-3, "{p}");
}

#[test]
fn fewer_than_two_usable_repeats_on_a_side_give_no_estimate() {
    assert_eq!(compare_repeats(&[100.0], &[100.0, 101.0], TOL, true), None);
    assert_eq!(compare_repeats(&[100.0, 90.0], &[], TOL, true), None);
    // Zero, negative and non-finite values cannot enter a ratio.
    assert_eq!(
        compare_repeats(&[100.0, 0.0, f64::NAN], &[100.0, 101.0], TOL, true),
        None
    );
    assert!(compare_repeats(&[100.0, 0.0, 99.0], &[100.0, 101.0], TOL, true).is_some());
    assert_eq!(power(&[1.0], &[1.0, 2.0], TOL), None);
    assert_eq!(compare_spread(&[0.1], &[0.1, 0.2]), None);
}

#[test]
fn identical_repeats_without_any_noise_are_equivalent_and_a_constant_change_is_exact() {
    let same = compare_repeats(&[500.0, 500.0], &[500.0, 500.0], TOL, true).unwrap();
    assert_eq!((same.ratio, same.low, same.high), (1.0, 1.0, 1.0));
    assert_eq!(same.verdict, Equivalent);
    let half = compare_repeats(&[250.0, 250.0], &[500.0, 500.0], TOL, true).unwrap();
    assert_eq!(half.verdict, Slower);
    assert!((half.ratio - 0.5).abs() < 1e-12);
}

/// The per-second CV of each of `n` windows of 30 seconds whose per-second throughput varies by
/// `cv` around a window mean that varies by 2 % between windows; also the window means.
fn windows(rng: &mut TestRng, n: usize, cv: f64) -> (Vec<f64>, Vec<f64>) {
    (0..n)
        .map(|_| {
            let mean = 1000.0 * (1.0 + 0.02 * normal(rng));
            let secs: Vec<f64> = (0..30).map(|_| mean * (1.0 + cv * normal(rng))).collect();
            let (m, v) = mean_var(&secs);
            (v.sqrt() / m, m)
        })
        .unzip()
}

#[test]
fn a_variance_only_increase_is_flagged_where_the_throughput_alone_would_pass() {
    let mut r = rng(9);
    let (mut flagged, mut not_slower, mut false_alarms) = (0, 0, 0);
    for _ in 0..RUNS {
        // Per-second CV 5 % against 10 %: four times the variance, the same mean.
        let (ref_cv, ref_tp) = windows(&mut r, 5, 0.05);
        let (cand_cv, cand_tp) = windows(&mut r, 5, 0.10);
        let s = compare_spread(&cand_cv, &ref_cv).unwrap();
        flagged += usize::from(s.increased);
        let tp = compare_repeats(&cand_tp, &ref_tp, TOL, true).unwrap();
        not_slower += usize::from(tp.verdict != Slower);
        let overall = overall_verdict(Some(&tp), None, Some(&s), None);
        assert!(!s.increased || overall == Slower, "{s:?} {overall}");
        // The same spread on both sides.
        let (again_cv, _) = windows(&mut r, 5, 0.05);
        false_alarms += usize::from(compare_spread(&again_cv, &ref_cv).unwrap().increased);
    }
    assert!(flagged >= RUNS * 95 / 100, "flagged {flagged} of {RUNS}");
    // The throughput alone would not have caught it.
    assert!(not_slower >= RUNS * 99 / 100, "not slower {not_slower}");
    assert!(
        false_alarms <= RUNS * 3 / 100,
        "{false_alarms} false alarms"
    );
}

#[test]
fn error_rates_are_compared_exactly_even_with_zero_errors() {
    // Fisher's classic table [[1, 9], [11, 3]]: two-sided p = 0.002759.
    let e = compare_error_rates(1, 10, 11, 14).unwrap();
    assert!((e.p_value - 0.002759).abs() < 1e-5, "{e:?}");
    assert_eq!(e.verdict, Faster, "fewer errors");
    let none = compare_error_rates(0, 50_000, 0, 48_000).unwrap();
    assert_eq!((none.p_value, none.verdict), (1.0, Equivalent));
    // 120 errors in 100 000 (0.12 %) against none: exact, significant, and large enough.
    let more = compare_error_rates(120, 100_000, 0, 100_000).unwrap();
    assert!(more.p_value < 1e-20, "{more:?}");
    assert_eq!(more.verdict, Slower);
    // Significant but below 0.1 percentage points: not a regression.
    let tiny = compare_error_rates(40, 1_000_000, 5, 1_000_000).unwrap();
    assert!(tiny.p_value < ERROR_ALPHA, "{tiny:?}");
    assert_eq!(tiny.verdict, Inconclusive);
    // 2 against 1 in 1 000: no evidence either way.
    assert_eq!(
        compare_error_rates(2, 1000, 1, 1000).unwrap().verdict,
        Inconclusive
    );
    assert_eq!(compare_error_rates(1, 0, 0, 10), None);
    assert_eq!(compare_error_rates(11, 10, 0, 10), None);
}

#[test]
fn power_grows_with_repeats_and_names_the_repeats_needed() {
    let mut r = rng(10);
    let (a, b) = (
        repeats(&mut r, 10, 1000.0, 0.02),
        repeats(&mut r, 10, 1000.0, 0.02),
    );
    let sure = power(&a, &b, TOL).unwrap();
    // At 2 % CV a side (σ of the logs 0.02): n = 4 gives power 0.80, n = 5 about 0.92.
    assert!(
        sure.power > 0.99 && (4..=5).contains(&sure.repeats_needed),
        "{sure:?}"
    );
    // 10 % CV (σ of the logs ≈ 0.1) at 5 %: n ≈ 2·(1.96 + 0.84)²·0.01/ln(1.05)² ≈ 66.
    let e = |xs: &[f64]| xs.iter().map(|x: &f64| x.exp()).collect::<Vec<_>>();
    let noisy = power(&e(&[-0.1, 0.0, 0.1]), &e(&[-0.1, 0.0, 0.1]), TOL).unwrap();
    assert!(noisy.power < 0.2, "{noisy:?}");
    assert!((60..=75).contains(&noisy.repeats_needed), "{noisy:?}");
    let hopeless = power(&e(&[-3.0, 0.0, 3.0]), &e(&[-3.0, 0.0, 3.0]), 0.01).unwrap();
    assert_eq!(hopeless.repeats_needed, MAX_REPEATS_NEEDED);
}

#[test]
fn the_overall_verdict_is_slower_when_any_part_is_worse() {
    let est = |verdict| RatioEstimate {
        ratio: 1.0,
        low: 0.9,
        high: 1.1,
        verdict,
    };
    let errors = |verdict| ErrorRateEstimate {
        candidate_rate: 0.0,
        reference_rate: 0.0,
        p_value: 1.0,
        verdict,
    };
    let eq = est(Equivalent);
    assert_eq!(overall_verdict(Some(&eq), None, None, None), Equivalent);
    let tail = est(Inconclusive);
    assert_eq!(
        overall_verdict(Some(&eq), Some(&tail), None, None),
        Equivalent
    );
    let slow = est(Slower);
    assert_eq!(overall_verdict(Some(&eq), Some(&slow), None, None), Slower);
    let fast = est(Faster);
    assert_eq!(overall_verdict(Some(&fast), Some(&eq), None, None), Faster);
    assert_eq!(
        overall_verdict(Some(&fast), None, None, Some(&errors(Slower))),
        Slower
    );
    assert_eq!(
        overall_verdict(Some(&eq), None, None, Some(&errors(Equivalent))),
        Equivalent
    );
    assert_eq!(overall_verdict(None, None, None, None), Inconclusive);
    assert_eq!(overall_verdict(Some(&tail), None, None, None), Inconclusive);
    assert_eq!(format_ratio(&est(Faster)), "1.00× [0.90–1.10]");
}
