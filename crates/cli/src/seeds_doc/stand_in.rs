//! LOCAL STAND-IN for `benchrun_api::compare` (branch `cmp`, not merged when this was written):
//! the same signature and the same method — Welch's t interval of the ratio of the per-repeat
//! values on the log scale, `Faster`/`Slower` when the whole 95 % interval lies outside the
//! margin `[1/(1+τ), 1+τ]`, `Equivalent` when the whole 90 % interval lies inside it — so that
//! the generator can be written and tested now. **The lead replaces this module with
//! `use benchrun_api::compare::{compare_repeats, ComparisonVerdict, RatioEstimate}` when
//! merging** (and deletes this file); nothing else changes.

/// What the comparison of two sides says against the tolerance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComparisonVerdict {
    /// The candidate is better beyond the tolerance (95 % interval outside the margin).
    Faster,
    /// The candidate is worse beyond the tolerance.
    Slower,
    /// Within the tolerance (90 % interval inside the margin).
    Equivalent,
    /// Neither can be said with this many repeats.
    Inconclusive,
}

/// A ratio candidate / reference with its 95 % interval and its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioEstimate {
    /// Ratio of the geometric means of the per-repeat values.
    pub ratio: f64,
    /// Lower end of the 95 % interval.
    pub low: f64,
    /// Upper end of the 95 % interval.
    pub high: f64,
    /// The verdict against the tolerance.
    pub verdict: ComparisonVerdict,
}

/// Candidate over reference from their per-repeat values (see the module docs); `None` when
/// either side has fewer than 2 positive, finite values.
pub fn compare_repeats(
    candidate: &[f64],
    reference: &[f64],
    tolerance: f64,
    higher_is_better: bool,
) -> Option<RatioEstimate> {
    let logs = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .filter(|x| x.is_finite() && **x > 0.0)
            .map(|x| x.ln())
            .collect()
    };
    let (c, r) = (logs(candidate), logs(reference));
    if c.len() < 2 || r.len() < 2 {
        return None;
    }
    let stats = |v: &[f64]| {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var, n)
    };
    let (mc, vc, nc) = stats(&c);
    let (mr, vr, nr) = stats(&r);
    let d = mc - mr;
    let (ac, ar) = (vc / nc, vr / nr);
    let se = (ac + ar).sqrt();
    let df = if se > 0.0 {
        (ac + ar).powi(2) / (ac * ac / (nc - 1.0) + ar * ar / (nr - 1.0))
    } else {
        f64::INFINITY
    };
    let (h95, h90) = (t_quantile(0.975, df) * se, t_quantile(0.95, df) * se);
    let margin = tolerance.max(0.0).ln_1p();
    let (low, high) = (d - h95, d + h95);
    let verdict = if low > margin || high < -margin {
        if (low > margin) == higher_is_better {
            ComparisonVerdict::Faster
        } else {
            ComparisonVerdict::Slower
        }
    } else if d - h90 >= -margin && d + h90 <= margin {
        ComparisonVerdict::Equivalent
    } else {
        ComparisonVerdict::Inconclusive
    };
    Some(RatioEstimate {
        ratio: d.exp(),
        low: low.exp(),
        high: high.exp(),
        verdict,
    })
}

/// Student's t quantile `p` (0.95 or 0.975) at `df` degrees of freedom: the exact table for
/// whole df 1..=30 interpolated linearly in 1/df, the normal quantile beyond.
fn t_quantile(p: f64, df: f64) -> f64 {
    const T975: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    const T95: [f64; 30] = [
        6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771,
        1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706,
        1.703, 1.701, 1.699, 1.697,
    ];
    let (table, z) = if p >= 0.975 {
        (&T975, 1.960)
    } else {
        (&T95, 1.645)
    };
    if !df.is_finite() || df > 30.0 {
        // Between 30 and infinity, interpolate in 1/df towards the normal quantile.
        let at30 = table[29];
        return if df.is_finite() {
            z + (at30 - z) * 30.0 / df
        } else {
            z
        };
    }
    let df = df.max(1.0);
    let lo = df.floor() as usize; // 1..=30
    let a = table[lo - 1];
    if lo == 30 || df == lo as f64 {
        return a;
    }
    let b = table[lo];
    // Linear in 1/df between the two whole degrees of freedom.
    let (x0, x1, x) = (1.0 / lo as f64, 1.0 / (lo + 1) as f64, 1.0 / df);
    a + (b - a) * (x0 - x) / (x0 - x1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_difference_is_faster_and_its_interval_holds_the_ratio() {
        let e = compare_repeats(&[200.0, 210.0, 205.0], &[100.0, 102.0, 98.0], 0.05, true).unwrap();
        assert_eq!(e.verdict, ComparisonVerdict::Faster);
        assert!(
            e.low < e.ratio && e.ratio < e.high && (e.ratio - 2.05).abs() < 0.05,
            "{e:?}"
        );
        let lat =
            compare_repeats(&[200.0, 210.0, 205.0], &[100.0, 102.0, 98.0], 0.05, false).unwrap();
        assert_eq!(
            lat.verdict,
            ComparisonVerdict::Slower,
            "higher latency is worse"
        );
    }

    #[test]
    fn close_tight_values_are_equivalent_and_noisy_ones_inconclusive() {
        let eq =
            compare_repeats(&[100.0, 101.0, 100.5], &[100.2, 100.8, 100.4], 0.05, true).unwrap();
        assert_eq!(eq.verdict, ComparisonVerdict::Equivalent);
        let noisy =
            compare_repeats(&[100.0, 160.0, 70.0], &[100.0, 90.0, 130.0], 0.05, true).unwrap();
        assert_eq!(noisy.verdict, ComparisonVerdict::Inconclusive);
    }

    #[test]
    fn fewer_than_two_values_a_side_give_nothing() {
        assert_eq!(compare_repeats(&[1.0], &[1.0, 2.0], 0.05, true), None);
        assert_eq!(compare_repeats(&[1.0, 0.0], &[1.0, 2.0], 0.05, true), None);
    }

    #[test]
    fn the_t_quantiles_match_the_table_and_approach_the_normal() {
        assert!((t_quantile(0.975, 2.0) - 4.303).abs() < 1e-9);
        assert!((t_quantile(0.975, 4.0) - 2.776).abs() < 1e-9);
        assert!(t_quantile(0.975, 2.5) < 4.303 && t_quantile(0.975, 2.5) > 3.182);
        assert!((t_quantile(0.975, f64::INFINITY) - 1.96).abs() < 1e-9);
        assert!((t_quantile(0.95, 1000.0) - 1.645).abs() < 0.01);
    }
}
