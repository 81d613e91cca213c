//! `spec.repeatOrder`: the order in which the measurements (cells × repeats) are taken, and
//! which deployment of its target configuration each one runs on.
//!
//! `Interleaved` measures in rounds: round `r` takes repeat `r` of every cell, its target
//! configurations (blocks of cells that share a deployment) in a seeded random order that
//! differs per round, and the cells of each block in a seeded random order per round too.
//! Every round deploys each configuration afresh (new pods): a repeat is then one deployment,
//! so pod-to-pod and placement variance (which node, which CPU, JIT and allocator luck at
//! start) enters the spread of the repeats, and drift over the run (a warming node, a
//! neighbour that starts halfway) falls on every target alike. It is the default of a run that
//! compares something ([`RepeatOrder::parse`]). `Sequential` measures each cell's repeats back
//! to back, in matrix order, each target configuration deployed once: its repeats share one
//! deployment, and a comparison of them says so (docs/metrics.md). Pure.

use crate::matrix::Cell;

/// Seed of the `Interleaved` shuffle when `spec.repeatSeed` is absent.
pub const DEFAULT_REPEAT_SEED: u64 = 1;

/// The order of the measurements, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RepeatOrder {
    /// Each cell's repeats back to back, cells in matrix order, each target configuration
    /// deployed once.
    #[default]
    Sequential,
    /// Rounds of one repeat of every cell, the target configurations and the cells of each in
    /// a seeded random order per round, each configuration deployed afresh every round.
    Interleaved {
        /// Seed of the shuffle.
        seed: u64,
    },
}

impl RepeatOrder {
    /// `spec.repeatOrder` and `spec.repeatSeed` (admission has checked the words). Without
    /// `spec.repeatOrder`, `Interleaved` when the run `compares` something (two targets, two
    /// scenarios, a baseline) with 2 or more `repeats` ([`default_is_interleaved`]), else
    /// `Sequential`.
    pub fn parse(order: Option<&str>, seed: Option<i64>, compares: bool, repeats: usize) -> Self {
        let interleaved = RepeatOrder::Interleaved {
            seed: seed.map_or(DEFAULT_REPEAT_SEED, |s| s.unsigned_abs()),
        };
        match order {
            Some("Interleaved") => interleaved,
            Some(_) => RepeatOrder::Sequential,
            None if default_is_interleaved(compares, repeats) => interleaved,
            None => RepeatOrder::Sequential,
        }
    }

    /// The round whose deployment measurement `repeat` runs on: its own round's under
    /// `Interleaved` (every round deploys afresh), `None` under `Sequential` (one deployment
    /// of each configuration for the whole run).
    pub fn deployment_round(self, repeat: usize) -> Option<usize> {
        match self {
            RepeatOrder::Sequential => None,
            RepeatOrder::Interleaved { .. } => Some(repeat),
        }
    }
}

/// Whether a run without `spec.repeatOrder` measures `Interleaved`: when it compares
/// something and has 2 or more repeats, so that each side's repeats are as many deployments
/// and the intervals hold the deployment-to-deployment variance the next run will differ by.
pub fn default_is_interleaved(compares: bool, repeats: usize) -> bool {
    compares && repeats >= 2
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
/// configurations of a round and their cells in its shuffled order, so adding a round never
/// reorders what came before); `Sequential` rounds take their cells in matrix order.
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
            let mut blocks = blocks(cells);
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut out = Vec::with_capacity(cells.len() * all_rounds);
            for r in 0..all_rounds {
                // The same draws whichever cells the round takes: a round added later never
                // changes the order of the ones before.
                rng.shuffle(&mut blocks);
                for b in &mut blocks {
                    rng.shuffle(b);
                }
                let round = blocks.iter().flatten().map(|c| (c.index, r));
                out.extend(round.filter(|&(c, r)| in_round(c, r)));
            }
            out
        }
    }
}

/// Blocks of cells sharing a target configuration, in order of first appearance, each in
/// matrix order.
fn blocks(cells: &[Cell]) -> Vec<Vec<&Cell>> {
    let mut blocks: Vec<Vec<&Cell>> = Vec::new();
    for c in cells {
        match blocks.iter_mut().find(|b| b[0].same_deployment(c)) {
            Some(b) => b.push(c),
            None => blocks.push(vec![c]),
        }
    }
    blocks
}

/// How many times a target configuration is deployed when measuring `order` in `kind`: under
/// `Interleaved` once per configuration and round it measures; under `Sequential` one more
/// each time the next measurement needs another configuration than the last.
pub fn deployments(cells: &[Cell], order: &[(usize, usize)], kind: RepeatOrder) -> usize {
    let cell = |i: usize| cells.iter().find(|c| c.index == i);
    let mut n = 0;
    let mut last: Option<(&Cell, Option<usize>)> = None;
    for &(i, r) in order {
        let Some(c) = cell(i) else { continue };
        let round = kind.deployment_round(r);
        if !last.is_some_and(|(l, lr)| l.same_deployment(c) && lr == round) {
            n += 1;
        }
        last = Some((c, round));
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
        assert_eq!(deployments(&c, &o, RepeatOrder::Sequential), 2);
        assert_eq!(RepeatOrder::Sequential.deployment_round(1), None);
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
            // A block's cells stay together (they share the round's deployment).
            for pair in round.chunks(2) {
                assert!(c[pair[0].0].same_deployment(&c[pair[1].0]), "{round:?}");
            }
        }
        // Seeded: the same order every time, another with another seed.
        assert_eq!(measurement_order(&c, 5, order), o);
        assert_ne!(
            measurement_order(&c, 5, RepeatOrder::Interleaved { seed: 8 }),
            o
        );
        // 4 configurations × 5 rounds, each its own deployment: also a block measured last in
        // one round and first in the next.
        assert_eq!(deployments(&c, &o, order), 20);
        assert_eq!(order.deployment_round(3), Some(3));
    }

    #[test]
    fn interleaved_rounds_shuffle_the_cells_of_a_configuration_too() {
        // One target configuration, four scenarios' worth of cells (connections here): every
        // round is one deployment, its cells in a seeded order of their own.
        let mut s = spec(r#"{"connections": 4, "duration": "20s"}"#);
        s.matrix = Some(serde_json::from_str(r#"{"connections": [1, 2, 3, 4]}"#).unwrap());
        let c = crate::validate(&s).unwrap().cells;
        let order = RepeatOrder::Interleaved { seed: 1 };
        let o = measurement_order(&c, 6, order);
        let rounds: Vec<Vec<usize>> = o
            .chunks(4)
            .map(|r| r.iter().map(|m| m.0).collect())
            .collect();
        let mut distinct = rounds.clone();
        distinct.sort();
        distinct.dedup();
        assert!(
            distinct.len() >= 4,
            "the cells' order varies by round: {rounds:?}"
        );
        assert!(rounds.iter().any(|r| r[0] != 0), "{rounds:?}");
        // Each round a fresh deployment, although the one configuration is measured last in
        // one round and first in the next.
        assert_eq!(deployments(&c, &o, order), 6);
        assert_eq!(deployments(&c, &o, RepeatOrder::Sequential), 1);
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
        let interleaved = |seed| RepeatOrder::Interleaved { seed };
        assert_eq!(
            RepeatOrder::parse(Some("Sequential"), Some(3), true, 5),
            RepeatOrder::Sequential
        );
        assert_eq!(
            RepeatOrder::parse(Some("Interleaved"), None, false, 1),
            interleaved(DEFAULT_REPEAT_SEED)
        );
        assert_eq!(
            RepeatOrder::parse(Some("Interleaved"), Some(42), false, 1),
            interleaved(42)
        );
    }

    #[test]
    fn the_default_is_interleaved_only_for_a_run_that_compares_with_repeats() {
        let interleaved = |seed| RepeatOrder::Interleaved { seed };
        assert_eq!(RepeatOrder::parse(None, None, true, 2), interleaved(1));
        assert_eq!(RepeatOrder::parse(None, Some(9), true, 5), interleaved(9));
        // Nothing to compare, or a single repeat: nothing for independent repeats to do.
        assert_eq!(
            RepeatOrder::parse(None, None, false, 5),
            RepeatOrder::Sequential
        );
        assert_eq!(
            RepeatOrder::parse(None, None, true, 1),
            RepeatOrder::Sequential
        );
    }
}
