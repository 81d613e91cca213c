//! `spec.repeatsUntil`: as many repeats as the answer needs. Pure.
//!
//! After `spec.repeats` measurements of every cell, round `r` (repeat index `r`) measures once
//! more each cell that takes part in a comparison whose throughput interval is wider than the
//! goal ([`benchrun_api::repeats::within`]), as the comparisons stood over the repeats before
//! `r`. A round is decided only once every measurement before it has a result, and from the
//! results alone, so a restarted operator decides the same rounds again: no state beyond
//! `status.results` is needed. Rules that keep the rounds bounded and the repeat indices of a
//! cell contiguous:
//! - a cell takes part in round `r` only if its repeat `r − 1` was measured (a cell whose last
//!   measurement failed, or that left the rounds, does not come back: once every comparison it
//!   takes part in was precise, only another cell's repeats could change that comparison);
//! - a comparison with a cell whose last measurement failed (or that left the rounds) asks for
//!   no more rounds (more repeats of its other cell would not give it a trustworthy interval);
//! - the width rule may not stop a comparison before its cells have
//!   [`repeats::MIN_REPEATS_TO_STOP`] measured repeats (stopping on a narrow interval after 2
//!   or 3 repeats costs coverage: see `docs/metrics.md`, Adaptive repeats);
//! - no cell gets more than `maxRepeats`;
//! - the rounds stop at the first one that no cell needs.
//!
//! Which cells a comparison rests on: both cells of a comparison within the run (the reference
//! cell too, so a comparison narrows from both sides), only this run's cell of a `Baseline`
//! comparison (the baseline run is not measured again).

use std::collections::HashSet;

use benchrun_api::repeats::{self, RepeatGoal, RepeatRound, RepeatsReached};
use benchrun_api::units::format_percent;
use benchrun_api::{CellResult, Comparison, Coordinates, Outcome, ValidatedRun, Verdict};

use crate::comparisons;

/// One comparison as the decision sees it: the cells of this run it rests on, its 95 %
/// throughput interval (`None` without one: too few measured repeats) and the fewest measured
/// repeats of those cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    /// Cell indices.
    pub cells: Vec<usize>,
    /// `(low, high)` of the throughput ratio.
    pub interval: Option<(f64, f64)>,
    /// The fewest measured repeats among `cells`.
    pub repeats: usize,
}

/// The decision: the cells among `eligible` that get repeat `repeat` — those of every
/// comparison whose interval is missing or wider than `goal.ratio_within`, or that has fewer
/// than [`repeats::MIN_REPEATS_TO_STOP`] repeats (the width rule may not stop before: an
/// interval that happens to be narrow after 2 or 3 repeats is narrow because its spread was
/// underestimated, and stopping on it would cost coverage) — in matrix order; none once
/// `repeat` would exceed `goal.max_repeats`.
pub fn cells_needing_repeat(
    goal: RepeatGoal,
    repeat: usize,
    compared: &[Compared],
    eligible: &[usize],
) -> Vec<usize> {
    if repeat >= goal.max_repeats {
        return Vec::new();
    }
    let mut out: Vec<usize> = compared
        .iter()
        .filter(|c| {
            c.repeats < repeats::MIN_REPEATS_TO_STOP
                || !c
                    .interval
                    .is_some_and(|(low, high)| repeats::within(low, high, goal.ratio_within))
        })
        .flat_map(|c| c.cells.iter().copied())
        .filter(|c| eligible.contains(c))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The cell of `results` measured at exactly `coordinates`.
fn cell_at(results: &[CellResult], coordinates: &Coordinates) -> Option<usize> {
    results
        .iter()
        .find(|r| r.coordinates == *coordinates)
        .map(|r| r.cell.max(0) as usize)
}

/// The comparisons over `results` as the decision sees them: those within the run computed
/// afresh, and each cell's `Baseline` comparison as its latest measurement recorded it.
pub fn compared(run: &ValidatedRun, results: &[CellResult]) -> Vec<Compared> {
    let interval = |c: &Comparison| c.throughput.as_ref().map(|t| (t.low, t.high));
    let mut out: Vec<Compared> = comparisons::within_run(run, results)
        .iter()
        // A comparison of an unhealthy cell is not made; more repeats would not make it.
        .filter(|c| c.verdict != benchrun_api::ComparisonVerdict::NotCompared)
        .map(|c| {
            let reference = c.reference_coordinates();
            let cells = [Some(&c.coordinates), reference.as_ref()]
                .into_iter()
                .flatten()
                .filter_map(|k| cell_at(results, k))
                .collect();
            Compared {
                cells,
                interval: interval(c),
                repeats: c.candidate_repeats.min(c.reference_repeats).max(0) as usize,
            }
        })
        .collect();
    let mut cells: Vec<i32> = results.iter().map(|r| r.cell).collect();
    cells.sort_unstable();
    cells.dedup();
    for cell in cells {
        let latest = results
            .iter()
            .filter(|r| r.cell == cell && r.outcome == Outcome::Measured)
            .max_by_key(|r| r.repeat);
        let Some(b) = latest.and_then(|r| r.baseline.as_ref()) else {
            continue;
        };
        if b.verdict == Verdict::Unmatched {
            continue;
        }
        out.push(Compared {
            cells: vec![cell.max(0) as usize],
            interval: b.ratio_low.zip(b.ratio_high),
            repeats: b.repeats.unwrap_or(0).max(0) as usize,
        });
    }
    out
}

/// The rounds `repeatsUntil` has added so far: round `k` measures repeat `repeats + k` of the
/// cells `rounds[k]`. Empty without `repeatsUntil`.
pub fn rounds(run: &ValidatedRun, results: &[CellResult]) -> Vec<Vec<usize>> {
    let Some(goal) = run.until else {
        return Vec::new();
    };
    let done: HashSet<(usize, usize)> = results
        .iter()
        .map(|r| (r.cell.max(0) as usize, r.repeat.max(0) as usize))
        .collect();
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    loop {
        let repeat = run.repeats + rounds.len();
        if repeat >= goal.max_repeats
            || !run
                .order_with_rounds(&rounds)
                .iter()
                .all(|m| done.contains(m))
        {
            return rounds;
        }
        let before: Vec<CellResult> = results
            .iter()
            .filter(|r| (r.repeat.max(0) as usize) < repeat)
            .cloned()
            .collect();
        let last = |outcome: Outcome| -> Vec<usize> {
            before
                .iter()
                .filter(|r| r.repeat as usize + 1 == repeat && r.outcome == outcome)
                .map(|r| r.cell.max(0) as usize)
                .collect()
        };
        let eligible = last(Outcome::Measured);
        // A comparison with a cell that just failed, or that left the rounds, asks for no
        // more: its other cell's repeats could not give it an interval, nor trust one.
        let asking: Vec<Compared> = compared(run, &before)
            .into_iter()
            .filter(|c| c.cells.iter().all(|x| eligible.contains(x)))
            .collect();
        let next = cells_needing_repeat(goal, repeat, &asking, &eligible);
        if next.is_empty() {
            return rounds;
        }
        rounds.push(next);
    }
}

/// Every (cell, repeat) of the run in the order measured: `spec.repeats` of every cell, then
/// the rounds decided so far from `results`.
pub fn order(run: &ValidatedRun, results: &[CellResult]) -> Vec<(usize, usize)> {
    run.order_with_rounds(&rounds(run, results))
}

/// The measurements the run takes as far as decided: `spec.repeats` of every cell plus the
/// rounds added so far.
pub fn total(run: &ValidatedRun, results: &[CellResult]) -> usize {
    run.total() + rounds(run, results).iter().map(Vec::len).sum::<usize>()
}

/// Sets `precisionMet` of every comparison with `repeatsUntil` (the goal met by its
/// throughput interval); clears it without.
pub fn mark(run: &ValidatedRun, comparisons: &mut [Comparison]) {
    for c in comparisons {
        c.precision_met = run.until.map(|g| {
            c.throughput
                .as_ref()
                .is_some_and(|t| repeats::within(t.low, t.high, g.ratio_within))
        });
    }
}

/// `status.repeatsUntil`: the rounds added, whether every comparison (marked by [`mark`]) met
/// the goal, the widest precision and a line saying so. `None` without `repeatsUntil`.
pub fn reached(
    run: &ValidatedRun,
    results: &[CellResult],
    comparisons: &[Comparison],
) -> Option<RepeatsReached> {
    let goal = run.until?;
    let rounds = rounds(run, results);
    let repeats = run.repeats + rounds.len();
    let goal_met =
        !comparisons.is_empty() && comparisons.iter().all(|c| c.precision_met == Some(true));
    let widest_entry = comparisons
        .iter()
        .max_by(|a, b| width(a).total_cmp(&width(b)));
    let widest = widest_entry.and_then(|c| c.precision);
    let at = match widest_entry {
        Some(c) => match c.precision {
            Some(p) => format!("±{} ({}/{})", format_percent(p), c.candidate, c.reference),
            None => format!("no interval yet ({}/{})", c.candidate, c.reference),
        },
        None => "no comparison yet".into(),
    };
    let decided = run.order_with_rounds(&rounds).iter().all(|&(c, r)| {
        results
            .iter()
            .any(|x| x.cell as usize == c && x.repeat as usize == r)
    });
    let w = format_percent(goal.ratio_within);
    let message = if goal_met {
        format!("every comparison within ±{w} after {repeats} repeats: widest {at}")
    } else if !decided {
        format!("measuring up to {repeats} repeats: widest {at} so far, goal ±{w}")
    } else if comparisons.is_empty() {
        format!("no comparison to make precise after {repeats} repeats: the cells to compare were not measured")
    } else if repeats >= goal.max_repeats {
        format!("maxRepeats {} reached at {at}, goal ±{w}", goal.max_repeats)
    } else {
        format!("stopped at {repeats} repeats at {at}, goal ±{w}: the cells of the wider comparisons failed their last measurement")
    };
    Some(RepeatsReached {
        repeats: repeats as i32,
        rounds: rounds
            .iter()
            .enumerate()
            .map(|(k, cells)| RepeatRound {
                repeat: (run.repeats + k) as i32,
                cells: cells.iter().map(|&c| c as i32).collect(),
            })
            .collect(),
        goal_met,
        widest: comparisons
            .iter()
            .all(|c| c.precision.is_some())
            .then_some(widest)
            .flatten(),
        message,
    })
}

/// How wide a comparison is, for finding the widest: its precision, infinite without one.
fn width(c: &Comparison) -> f64 {
    c.precision.unwrap_or(f64::INFINITY)
}

#[cfg(test)]
#[path = "adaptive_tests.rs"]
mod tests;
