//! `spec.repeatsUntil`: as many repeats as the answer needs. After `spec.repeats` measurements
//! of every cell the operator adds rounds of one more repeat of the cells whose comparisons are
//! not yet precise enough, until every comparison's throughput interval is within
//! `±ratioWithin` or `maxRepeats` is reached. The spec and status types, the parsed goal and
//! the precision formula live here (pure); the operator decides the rounds
//! (`src/adaptive.rs`).
//!
//! **Precision.** The 95 % interval of a ratio is symmetric on the log scale around the ratio
//! (see [`crate::compare`]): `[ratio / (1 + p), ratio × (1 + p)]` with `1 + p = √(high / low)`.
//! `p` is the precision reached ("±4.1 %"); the goal `ratioWithin: w` is met when `p ≤ w`,
//! that is when `high / low ≤ (1 + w)²`.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most repeats per cell, with or without `repeatsUntil` (the bound of `spec.repeats`).
pub const MAX_REPEATS: i32 = 10;
/// Widest precision goal `ratioWithin` may ask for: beyond ±50 % an interval says little.
pub const MAX_RATIO_WITHIN: f64 = 0.5;

/// Fewest repeats of a comparison's cells before `repeatsUntil`'s width rule may stop adding
/// rounds (when `maxRepeats` allows as many). Stopping as soon as an interval is narrow
/// enough picks the experiments whose spread was underestimated by chance, most of all at 2
/// or 3 repeats (an estimate of a spread on 1 or 2 degrees of freedom is often far too
/// small): simulated, the 95 % interval then covers the true ratio in only 92.5–93.7 % of
/// experiments. From this many repeats on the spread estimate is steady enough that the
/// coverage stays at 94 % or more (at 5 it fell to 94.0 % in one setting) (`adaptive_coverage` in `compare_tests.rs`).
pub const MIN_REPEATS_TO_STOP: usize = 6;

/// The precision goal of the comparisons and the most repeats spent on it.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RepeatsUntil {
    /// Most measurements of one cell (at least `spec.repeats`, at most 10): the operator stops
    /// adding rounds at this many repeats even when the goal is not met.
    #[x_kube(validation = Rule::new("self >= 1 && self <= 10").message("repeatsUntil.maxRepeats must be between 1 and 10 (and at least spec.repeats): lower it to 10 or split the experiment"))]
    pub max_repeats: i32,
    /// The precision goal, a percentage above 0% and at most 50% such as `"5%"`: rounds are
    /// added until the 95 % interval of every comparison's throughput ratio lies within this
    /// much of the ratio, `[ratio / (1 + w), ratio × (1 + w)]` (see `docs/metrics.md`).
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) > 0.0 && double(self.replace('%', '')) <= 50.0").message("repeatsUntil.ratioWithin must be a percentage above 0% and at most 50% such as \"5%\""))]
    pub ratio_within: String,
}

/// `spec.repeatsUntil`, parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RepeatGoal {
    /// Most repeats of one cell.
    pub max_repeats: usize,
    /// The precision goal as a fraction (0.05 = ±5 %).
    pub ratio_within: f64,
}

/// The precision of an interval `[low, high]` of a ratio: `p` with `1 + p = √(high / low)`, so
/// that the interval is `[ratio / (1 + p), ratio × (1 + p)]`. `None` when the bounds are not
/// positive and finite.
pub fn precision(low: f64, high: f64) -> Option<f64> {
    (low > 0.0 && high.is_finite() && high >= low).then(|| (high / low).sqrt() - 1.0)
}

/// Whether an interval `[low, high]` meets the goal `ratio_within`: `high / low ≤ (1 + w)²`.
/// A tiny allowance absorbs the rounding of the stored bounds (4 decimals).
pub fn within(low: f64, high: f64, ratio_within: f64) -> bool {
    precision(low, high).is_some_and(|p| p <= ratio_within + 1e-9)
}

/// What the extra repeats of `spec.repeatsUntil` reached, in `status.repeatsUntil`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepeatsReached {
    /// The most repeats any cell has been given so far (`spec.repeats` until a round is added).
    pub repeats: i32,
    /// The rounds added after `spec.repeats`, in order, each with the cells it measures again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<RepeatRound>,
    /// `true` when every comparison's throughput interval is within `ratioWithin` of its
    /// ratio; `false` while it is not (measuring, or stopped at `maxRepeats`).
    pub goal_met: bool,
    /// The widest precision of any comparison, as a fraction (0.041 = ±4.1 %); absent while
    /// some comparison has no interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widest: Option<f64>,
    /// The same in words, e.g. `every comparison within ±5% after 6 repeats (widest ±4.1%:
    /// spring/express)` or `maxRepeats 10 reached at ±7.9% (spring/express)`.
    pub message: String,
}

/// One round of repeats added by `spec.repeatsUntil`.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RepeatRound {
    /// The repeat index the round measures (0-based: the round after `repeats: 3` is 3).
    pub repeat: i32,
    /// The cells it measures again, in matrix order.
    pub cells: Vec<i32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_is_the_half_width_on_the_log_scale() {
        // 1.21 × (1.05)^±1 gives [1.1524, 1.2705].
        let p = precision(1.21 / 1.05, 1.21 * 1.05).unwrap();
        assert!((p - 0.05).abs() < 1e-12, "{p}");
        assert!(within(1.21 / 1.05, 1.21 * 1.05, 0.05));
        assert!(!within(1.21 / 1.06, 1.21 * 1.06, 0.05));
        assert_eq!(precision(0.0, 1.0), None);
        assert_eq!(precision(1.0, f64::INFINITY), None);
        assert!(!within(0.0, 1.0, 0.5));
    }
}
