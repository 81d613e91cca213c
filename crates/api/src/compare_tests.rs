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

/// The standard deviation of the logs of log-normal values with coefficient of variation `cv`.
fn sigma(cv: f64) -> f64 {
    (1.0 + cv * cv).ln().sqrt()
}

/// How often `verdict` came out over `runs` experiments of `n` repeats a side, the candidate's
/// geometric mean `ratio` times the reference's, both at `cv`.
fn share(seed: u8, runs: usize, n: usize, ratio: f64, cv: f64, verdict: ComparisonVerdict) -> f64 {
    let mut r = rng(seed);
    let hits = (0..runs)
        .filter(|_| {
            let reference = repeats(&mut r, n, 1000.0, cv);
            let candidate = repeats(&mut r, n, 1000.0 * ratio, cv);
            compare_repeats(&candidate, &reference, TOL, true)
                .unwrap()
                .verdict
                == verdict
        })
        .count();
    hits as f64 / runs as f64
}

/// Issue 52's check of `repeatsNeeded`: at a true throughput drop of 1.5 times the tolerance
/// (on the log scale) the repeats it names give `Slower` in at least 80 % of simulated
/// experiments (2 000 each; the band allows the simulation's own ±0.9 % standard error), and
/// [`verdict_chance`] agrees with the simulation within 3 points at that count. One fewer
/// repeat is short of 80 %.
#[test]
fn slower_comes_out_in_80_percent_at_repeats_needed_for_a_true_change_of_one_and_a_half_tolerances()
{
    let delta = -1.5 * TOL.ln_1p();
    let mut table = String::from(
        "| CV of the repeats | `repeatsNeeded` a side | P(`Slower`) computed | P(`Slower`) in 2 000 simulated experiments |\n|---|---|---|---|\n",
    );
    for (seed, cv) in [(21, 0.02), (22, 0.05), (23, 0.10)] {
        let s = sigma(cv);
        let design = Design {
            sd_candidate: s,
            sd_reference: s,
            n_candidate: 2.0,
            n_reference: 2.0,
        };
        let n = repeats_needed(Aim::Below, delta, design, TOL).unwrap();
        let chance = verdict_chance(Aim::Below, delta, design.with_repeats(n), TOL);
        let simulated = share(seed, 2000, n as usize, delta.exp(), cv, Slower);
        table += &format!(
            "| {:.0} % | {n} | {:.1} % | {:.1} % |\n",
            cv * 100.0,
            chance * 100.0,
            simulated * 100.0
        );
        assert!(chance >= TARGET_POWER, "{chance}");
        if n > 2 {
            let before = verdict_chance(Aim::Below, delta, design.with_repeats(n - 1), TOL);
            assert!(before < TARGET_POWER, "{n} − 1 repeats: {before}");
        }
        assert!(
            simulated >= 0.78,
            "CV {cv}, {n} repeats: P(Slower) {simulated}"
        );
        assert!((simulated - chance).abs() < 0.03, "{simulated} vs {chance}");
    }
    println!("{table}");
    benchrun_docblock::check("docs/metrics.md", "power-at-repeats-needed", &table);
}

/// The chance of `Equivalent` (TOST) for identical sides agrees with simulation, and at a
/// true change of exactly the tolerance `Slower` stays near 2.5 % however many repeats: no
/// count is "needed" for a change the margin cannot tell.
#[test]
fn the_chance_of_equivalent_and_of_a_change_at_the_margin_match_simulation() {
    for (seed, n, cv) in [(24, 3, 0.02), (25, 5, 0.04), (26, 10, 0.05)] {
        let s = sigma(cv);
        let design = Design {
            sd_candidate: s,
            sd_reference: s,
            n_candidate: n as f64,
            n_reference: n as f64,
        };
        let chance = verdict_chance(Aim::Within, 0.0, design, TOL);
        let simulated = share(seed, 2000, n, 1.0, cv, Equivalent);
        println!(
            "{n} repeats at CV {cv}: P(Equivalent) computed {chance:.3}, simulated {simulated:.3}"
        );
        assert!((simulated - chance).abs() < 0.03, "{simulated} vs {chance}");
        let at_margin = verdict_chance(Aim::Below, -TOL.ln_1p(), design, TOL);
        assert!((0.015..=0.026).contains(&at_margin), "{at_margin}");
    }
    let s = sigma(0.05);
    let design = Design {
        sd_candidate: s,
        sd_reference: s,
        n_candidate: 3.0,
        n_reference: 3.0,
    };
    assert_eq!(repeats_needed(Aim::Below, -TOL.ln_1p(), design, TOL), None);
}

/// `power` of a comparison is the chance of the verdict its observed ratio points to.
#[test]
fn power_is_for_the_verdict_the_observed_ratio_points_to() {
    let e = |xs: &[f64]| xs.iter().map(|x: &f64| x.exp()).collect::<Vec<_>>();
    // Logs 0.02 apart around 0 a side: equal, so the aim is Equivalent.
    let same = power(&e(&[-0.02, 0.0, 0.02]), &e(&[-0.02, 0.0, 0.02]), TOL).unwrap();
    assert_eq!(same.verdict, Some(Equivalent));
    assert_eq!(same.within_cap, Some(true));
    assert!(same.repeats_needed <= 5, "{same:?}");
    // 15 % lower: the aim is Slower, already likely.
    let lower = power(&e(&[-0.17, -0.15, -0.13]), &e(&[-0.02, 0.0, 0.02]), TOL).unwrap();
    assert_eq!(lower.verdict, Some(Slower));
    assert!(lower.power > 0.9 && lower.repeats_needed <= 3, "{lower:?}");
    // Right at the margin: no count of repeats tells.
    let m = TOL.ln_1p();
    let edge = power(
        &e(&[-m - 0.02, -m, -m + 0.02]),
        &e(&[-0.02, 0.0, 0.02]),
        TOL,
    )
    .unwrap();
    assert_eq!(edge.within_cap, Some(false));
    assert_eq!(edge.repeats_needed, MAX_REPEATS_NEEDED);
}

/// The figures of the `repeatsUntil` example in docs/metrics.md (Comparisons, adaptive
/// repeats): `0.943× [0.902–0.986]` Inconclusive from 3 repeats a side, at 5 %. Equal spreads
/// are assumed (ν = 4), which the interval's width gives back; the test prints the power and
/// `repeatsNeeded` the doc quotes (`cargo test --release -p benchrun-api docs_example --
/// --nocapture`).
#[test]
fn docs_example_power_and_repeats_needed() {
    let (ratio, low, high) = (0.943f64, 0.902f64, 0.986f64);
    let half = (high.ln() - low.ln()) / 2.0;
    let se = half / t_quantile(0.975, 4.0);
    let sd = se * (3.0f64 / 2.0).sqrt();
    let e = |xs: &[f64]| xs.iter().map(|x: &f64| x.exp()).collect::<Vec<_>>();
    let d = ratio.ln();
    // Three logs with standard deviation sd around 0 and around d.
    let reference = e(&[-sd, 0.0, sd]);
    let candidate = e(&[d - sd, d, d + sd]);
    let est = compare_repeats(&candidate, &reference, TOL, true).unwrap();
    let p = power(&candidate, &reference, TOL).unwrap();
    println!(
        "docs example: {} {}; power {:.2} for {:?}; repeatsNeeded {}",
        format_ratio(&est),
        est.verdict,
        p.power,
        p.verdict,
        p.repeats_needed
    );
    assert_eq!(format_ratio(&est), "0.94× [0.90–0.99]");
    assert_eq!(est.verdict, Inconclusive);
    assert_eq!(p.verdict, Some(Slower));
    assert!((50..=70).contains(&p.repeats_needed), "{p:?}");
}

/// Holm's procedure: the smallest p-value against α/k, the next against α/(k−1), stopping at
/// the first that fails.
#[test]
fn holm_steps_down_and_stops_at_the_first_failure() {
    assert_eq!(holm(&[0.01, 0.04, 0.03], 0.05), [true, false, false]);
    assert_eq!(holm(&[0.01, 0.02, 0.04], 0.05), [true, true, true]);
    assert_eq!(holm(&[0.02], 0.025), [true]);
    assert_eq!(holm(&[0.03], 0.025), [false]);
    assert!(holm(&[], 0.05).is_empty());
}

/// `p_worse` is below 2.5 % exactly when the verdict is `Slower`.
#[test]
fn the_one_sided_p_value_agrees_with_the_slower_verdict() {
    let mut r = rng(27);
    for _ in 0..500 {
        let ratio = 0.85 + 0.3 * (r.next_u32() as f64 / u32::MAX as f64);
        let reference = repeats(&mut r, 3, 1000.0, 0.05);
        let candidate = repeats(&mut r, 3, 1000.0 * ratio, 0.05);
        for higher in [true, false] {
            let e = compare_repeats(&candidate, &reference, TOL, higher).unwrap();
            let p = e.p_worse.unwrap();
            assert_eq!(e.verdict == Slower, p < FAMILY_ALPHA, "{e:?}");
        }
    }
}

/// `repeatsUntil` as the operator runs it on one comparison: `start` repeats a side, then one
/// more a side while the 95 % interval is wider than `within` (or the repeats are fewer than
/// `min_to_stop`), up to `max`. The share of experiments whose final interval covers the true
/// ratio.
fn adaptive_coverage(
    seed: u8,
    runs: usize,
    start: usize,
    within: f64,
    cv: f64,
    min_to_stop: usize,
) -> f64 {
    let mut r = rng(seed);
    let (ratio, max) = (0.95, crate::repeats::MAX_REPEATS as usize);
    let covered = (0..runs)
        .filter(|_| {
            let mut reference = repeats(&mut r, start, 1000.0, cv);
            let mut candidate = repeats(&mut r, start, 1000.0 * ratio, cv);
            loop {
                let e = compare_repeats(&candidate, &reference, TOL, true).unwrap();
                let n = reference.len();
                let stop =
                    n >= max || (n >= min_to_stop && crate::repeats::within(e.low, e.high, within));
                if stop {
                    return e.low <= ratio && ratio <= e.high;
                }
                reference.extend(repeats(&mut r, 1, 1000.0, cv));
                candidate.extend(repeats(&mut r, 1, 1000.0 * ratio, cv));
            }
        })
        .count();
    covered as f64 / runs as f64
}

/// Issue 52's check of adaptive repeats: stopping as soon as the interval is narrow enough
/// covers the true ratio less often than 95 %; with [`MIN_REPEATS_TO_STOP`] repeats before
/// the width rule may stop the coverage is at least 94 % (4 000 experiments per setting, a
/// standard error of 0.35 points: the lowest setting is printed with its figures).
#[test]
fn adaptive_repeats_keep_a_coverage_of_at_least_94_percent() {
    use crate::repeats::MIN_REPEATS_TO_STOP;
    let mut table = format!(
        "  | `repeats` | `ratioWithin` | CV | coverage, stopping on width alone | coverage, at least {MIN_REPEATS_TO_STOP} repeats |\n  |---|---|---|---|---|\n"
    );
    for (seed, start, within, cv) in [
        (31, 2, 0.05, 0.03),
        (32, 3, 0.05, 0.05),
        (33, 3, 0.03, 0.03),
        (34, 3, 0.05, 0.03),
        (35, 2, 0.10, 0.08),
    ] {
        let naive = adaptive_coverage(seed, 4000, start, within, cv, 0);
        let kept = adaptive_coverage(seed, 4000, start, within, cv, MIN_REPEATS_TO_STOP);
        table += &format!(
            "  | {start} | {:.0} % | {:.0} % | {:.1} % | {:.1} % |\n",
            within * 100.0,
            cv * 100.0,
            naive * 100.0,
            kept * 100.0
        );
        assert!(kept >= 0.94, "{kept}");
    }
    println!("{table}");
    benchrun_docblock::check("docs/metrics.md", "adaptive-coverage", &table);
}

#[test]
fn the_overall_verdict_is_slower_when_any_part_is_worse() {
    let est = |verdict| RatioEstimate {
        ratio: 1.0,
        low: 0.9,
        high: 1.1,
        verdict,
        p_worse: None,
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
