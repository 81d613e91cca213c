//! `spec.repeatOrder`: the order in which the measurements (cells × repeats) are taken.
//!
//! `Sequential` (the default) measures each cell's repeats back to back, in matrix order:
//! each target configuration is deployed once. `Interleaved` measures in rounds: round `r`
//! takes repeat `r` of every cell, its target configurations (blocks of cells that share a
//! deployment, each block's cells in matrix order) in a seeded random order that differs per
//! round. Drift over the run (a warming node, a neighbour that starts halfway) then falls on
//! every target alike instead of on the one measured last, at the cost of a redeploy per
//! block per round. Pure.

use crate::matrix::Cell;

/// Seed of the `Interleaved` shuffle when `spec.repeatSeed` is absent.
pub const DEFAULT_REPEAT_SEED: u64 = 1;

/// The order of the measurements, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RepeatOrder {
    /// Each cell's repeats back to back, cells in matrix order.
    #[default]
    Sequential,
    /// Rounds of one repeat of every cell, the target configurations in a seeded random order
    /// per round.
    Interleaved {
        /// Seed of the shuffle.
        seed: u64,
    },
}

impl RepeatOrder {
    /// `spec.repeatOrder` and `spec.repeatSeed` (admission has checked the words).
    pub fn parse(order: Option<&str>, seed: Option<i64>) -> Self {
        match order {
            Some("Interleaved") => RepeatOrder::Interleaved {
                seed: seed.map_or(DEFAULT_REPEAT_SEED, |s| s.unsigned_abs()),
            },
            _ => RepeatOrder::Sequential,
        }
    }
}

/// Every (cell index, repeat) of the run, in the order they are measured.
pub fn measurement_order(
    cells: &[Cell],
    repeats: usize,
    order: RepeatOrder,
) -> Vec<(usize, usize)> {
    order_with_rounds(cells, repeats, &[], order)
}

/// Every (cell index, repeat) of a run with rounds added by `spec.repeatsUntil`: the first
/// `repeats` of every cell in `order`, then round `k` measuring repeat `repeats + k` of the
/// cells `rounds[k]`. `Interleaved` rounds continue the seeded shuffle of the first ones (the
/// configurations of a round in its shuffled order, so adding a round never reorders what came
/// before); `Sequential` rounds take their cells in matrix order.
pub fn order_with_rounds(
    cells: &[Cell],
    repeats: usize,
    rounds: &[Vec<usize>],
    order: RepeatOrder,
) -> Vec<(usize, usize)> {
    let in_round = |c: usize, r: usize| r < repeats || rounds[r - repeats].contains(&c);
    match order {
        RepeatOrder::Sequential => {
            let first = cells
                .iter()
                .flat_map(|c| (0..repeats).map(move |r| (c.index, r)));
            let more = (repeats..repeats + rounds.len())
                .flat_map(|r| cells.iter().map(move |c| (c.index, r)));
            first.chain(more.filter(|&(c, r)| in_round(c, r))).collect()
        }
        RepeatOrder::Interleaved { seed } => {
            let all_rounds = repeats + rounds.len();
            // Blocks of cells sharing a deployment, in order of first appearance.
            let mut blocks: Vec<Vec<&Cell>> = Vec::new();
            for c in cells {
                match blocks.iter_mut().find(|b| b[0].same_deployment(c)) {
                    Some(b) => b.push(c),
                    None => blocks.push(vec![c]),
                }
            }
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut out = Vec::with_capacity(cells.len() * all_rounds);
            for r in 0..all_rounds {
                rng.shuffle(&mut blocks);
                let round = blocks.iter().flatten().map(|c| (c.index, r));
                out.extend(round.filter(|&(c, r)| in_round(c, r)));
            }
            out
        }
    }
}

/// How many times a target configuration is deployed when measuring in `order`: one more
/// each time the next measurement needs another configuration than the last.
pub fn deployments(cells: &[Cell], order: &[(usize, usize)]) -> usize {
    let cell = |i: usize| cells.iter().find(|c| c.index == i);
    let mut n = 0;
    let mut last: Option<&Cell> = None;
    for &(i, _) in order {
        let Some(c) = cell(i) else { continue };
        if !last.is_some_and(|l| l.same_deployment(c)) {
            n += 1;
        }
        last = Some(c);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::fixtures::spec;

    fn cells(matrix: &str) -> Vec<Cell> {
        let mut s = spec(r#"{"connections": 4, "duration": "20s"}"#);
        s.targets.push(crate::Target {
            name: "spring".into(),
            ..s.targets[0].clone()
        });
        s.matrix = Some(serde_json::from_str(matrix).unwrap());
        crate::validate(&s).unwrap().cells
    }

    #[test]
    fn sequential_order_is_each_cells_repeats_back_to_back() {
        let c = cells(r#"{"connections": [1, 2]}"#);
        let o = measurement_order(&c, 2, RepeatOrder::Sequential);
        assert_eq!(
            o,
            [
                (0, 0),
                (0, 1),
                (1, 0),
                (1, 1),
                (2, 0),
                (2, 1),
                (3, 0),
                (3, 1)
            ]
        );
        assert_eq!(deployments(&c, &o), 2);
    }

    #[test]
    fn interleaved_order_takes_every_measurement_once_in_rounds_of_whole_blocks() {
        let c = cells(r#"{"connections": [1, 2], "cpu": ["250m", "500m"]}"#);
        let order = RepeatOrder::Interleaved { seed: 7 };
        let o = measurement_order(&c, 5, order);
        let mut sorted = o.clone();
        sorted.sort();
        let all: Vec<(usize, usize)> = (0..c.len())
            .flat_map(|i| (0..5).map(move |r| (i, r)))
            .collect();
        assert_eq!(sorted, all, "each measurement exactly once");
        for (k, round) in o.chunks(c.len()).enumerate() {
            assert!(round.iter().all(|m| m.1 == k), "round {k}: {round:?}");
            // A block's cells stay together, in matrix order.
            for pair in round.chunks(2) {
                assert!(c[pair[0].0].same_deployment(&c[pair[1].0]), "{round:?}");
                assert!(pair[0].0 < pair[1].0);
            }
        }
        // Seeded: the same order every time, another with another seed.
        assert_eq!(measurement_order(&c, 5, order), o);
        assert_ne!(
            measurement_order(&c, 5, RepeatOrder::Interleaved { seed: 8 }),
            o
        );
        // 4 configurations × 5 rounds, less where a round ends on the block the next begins.
        let d = deployments(&c, &o);
        assert!((16..=20).contains(&d), "{d}");
    }

    #[test]
    fn added_rounds_follow_the_first_ones_without_reordering_them() {
        let c = cells(r#"{"connections": [1, 2]}"#);
        let rounds = vec![vec![0, 2], vec![2]];
        let seq = order_with_rounds(&c, 2, &rounds, RepeatOrder::Sequential);
        let first = measurement_order(&c, 2, RepeatOrder::Sequential);
        assert_eq!(seq[..first.len()], first[..]);
        assert_eq!(seq[first.len()..], [(0, 2), (2, 2), (2, 3)]);
        let order = RepeatOrder::Interleaved { seed: 3 };
        let inter = order_with_rounds(&c, 2, &rounds, order);
        let first = measurement_order(&c, 2, order);
        assert_eq!(inter[..first.len()], first[..]);
        // Round 2 in the shuffled order of all four cells' round 2, kept to cells 0 and 2.
        let full = measurement_order(&c, 4, order);
        let round2: Vec<_> = full
            .iter()
            .copied()
            .filter(|&(i, r)| r == 2 && (i == 0 || i == 2))
            .collect();
        assert_eq!(inter[first.len()..first.len() + 2], round2[..]);
        assert_eq!(inter[first.len() + 2..], [(2, 3)]);
    }

    #[test]
    fn the_order_words_parse_with_a_default_seed() {
        assert_eq!(RepeatOrder::parse(None, Some(3)), RepeatOrder::Sequential);
        assert_eq!(
            RepeatOrder::parse(Some("Interleaved"), None),
            RepeatOrder::Interleaved {
                seed: DEFAULT_REPEAT_SEED
            }
        );
        assert_eq!(
            RepeatOrder::parse(Some("Interleaved"), Some(42)),
            RepeatOrder::Interleaved { seed: 42 }
        );
    }
}
