use super::*;
use crate::builders::fixtures::run as validated;
use crate::results;
use benchrun_api::BaselineComparison;

const GOAL: RepeatGoal = RepeatGoal {
    max_repeats: 5,
    ratio_within: 0.05,
};

/// Three targets, one cell each (a, b, c), 2 repeats, then rounds up to `max` repeats until
/// every comparison is within ±5 %.
fn run(max: usize, order: &str) -> ValidatedRun {
    validated(&format!(
        r#"
targets: [{{name: a, image: img:1}}, {{name: b, image: img:1}}, {{name: c, image: img:1}}]
scenarios: [{{name: hello, path: /hello}}]
load: {{connections: 4, duration: 20s}}
repeats: 2
repeatOrder: {order}
repeatsUntil: {{maxRepeats: {max}, ratioWithin: "5%"}}
"#
    ))
}

/// A measured result of `cell`'s repeat `repeat` at `throughput` req/s.
fn measured(run: &ValidatedRun, cell: usize, repeat: usize, throughput: f64) -> CellResult {
    CellResult {
        outcome: Outcome::Measured,
        reason: None,
        throughput: Some(throughput),
        ..results::failed_result(run, &run.cells[cell], repeat, String::new())
    }
}

/// Per repeat, the throughputs of cells a, b and c: b against a moves by ±20 %, c against a
/// by well under 1 %.
fn noisy_b(run: &ValidatedRun, repeats: usize, cells: &[usize]) -> Vec<CellResult> {
    let a = [1000.0, 1002.0, 1001.0, 999.0, 1000.5, 1001.5];
    let b = [900.0, 1300.0, 1000.0, 1250.0, 950.0, 1200.0];
    let c = [1100.0, 1102.0, 1101.0, 1099.0, 1100.5, 1101.5];
    (0..repeats)
        .flat_map(|r| {
            cells.iter().map(move |&i| {
                let tp = [a, b, c][i][r];
                (i, r, tp)
            })
        })
        .map(|(i, r, tp)| measured(run, i, r, tp))
        .collect()
}

#[test]
fn a_comparison_within_the_goal_needs_no_more_repeats() {
    let narrow = Compared {
        cells: vec![0, 1],
        interval: Some((1.0 / 1.04, 1.04)),
        repeats: 6,
    };
    let long = RepeatGoal {
        max_repeats: 10,
        ..GOAL
    };
    assert!(cells_needing_repeat(long, 6, &[narrow], &[0, 1]).is_empty());
}

/// Issue 52: an interval narrow after 2 repeats is often narrow by luck (the spread
/// underestimated); the width rule waits for `MIN_REPEATS_TO_STOP` repeats.
#[test]
fn a_narrow_interval_from_too_few_repeats_does_not_stop_the_rounds() {
    let early = Compared {
        cells: vec![0, 1],
        interval: Some((1.0 / 1.04, 1.04)),
        repeats: 2,
    };
    assert_eq!(cells_needing_repeat(GOAL, 2, &[early], &[0, 1]), [0, 1]);
}

#[test]
fn a_wide_or_missing_interval_gets_both_its_cells_another_repeat_until_max_repeats() {
    let wide = Compared {
        cells: vec![2, 0],
        interval: Some((0.9, 1.2)),
        repeats: 2,
    };
    let missing = Compared {
        cells: vec![3],
        interval: None,
        repeats: 1,
    };
    let all = [wide, missing];
    assert_eq!(
        cells_needing_repeat(GOAL, 2, &all, &[0, 1, 2, 3]),
        [0, 2, 3]
    );
    // Only cells measured in the round before may go on.
    assert_eq!(cells_needing_repeat(GOAL, 2, &all, &[0, 3]), [0, 3]);
    // maxRepeats 5: repeat index 4 is the last one.
    assert_eq!(cells_needing_repeat(GOAL, 4, &all, &[0, 1, 2, 3]).len(), 3);
    assert!(cells_needing_repeat(GOAL, 5, &all, &[0, 1, 2, 3]).is_empty());
}

#[test]
fn only_the_wide_comparisons_cells_get_a_round() {
    let run = run(7, "Sequential");
    let results = noisy_b(&run, 2, &[0, 1, 2]);
    let c = compared(&run, &results);
    assert_eq!(c.len(), 2, "b/a and c/a: {c:?}");
    // Up to 6 repeats every comparison goes on, however narrow (MIN_REPEATS_TO_STOP).
    assert_eq!(rounds(&run, &results), [vec![0, 1, 2]]);
    let results = noisy_b(&run, 6, &[0, 1, 2]);
    // From 6 on, b/a is wide, c/a within ±5 %: a and b are measured again, c is not.
    let all = vec![0, 1, 2];
    assert_eq!(
        rounds(&run, &results),
        [all.clone(), all.clone(), all.clone(), all, vec![0, 1]]
    );
    assert_eq!(total(&run, &results), 20);
    let order = order(&run, &results);
    assert_eq!(order[18..], [(0, 6), (1, 6)]);
}

#[test]
fn a_round_is_decided_only_once_the_one_before_is_complete() {
    let run = run(5, "Sequential");
    let mut results = noisy_b(&run, 2, &[0, 1, 2]);
    results.pop();
    assert!(rounds(&run, &results).is_empty());
    assert_eq!(total(&run, &results), 6);
}

#[test]
fn rounds_stop_at_max_repeats_and_say_so() {
    let run = run(4, "Interleaved");
    let mut results = noisy_b(&run, 4, &[0, 1, 2]);
    // Decided from the results alone: the same rounds whatever the order of the results
    // (every cell goes on: maxRepeats 4 is below MIN_REPEATS_TO_STOP).
    assert_eq!(rounds(&run, &results), [vec![0, 1, 2], vec![0, 1, 2]]);
    results.reverse();
    assert_eq!(rounds(&run, &results), [vec![0, 1, 2], vec![0, 1, 2]]);
    let mut comparisons = crate::comparisons::within_run(&run, &results);
    mark(&run, &mut comparisons);
    let r = reached(&run, &results, &comparisons).unwrap();
    assert_eq!(r.repeats, 4);
    assert!(!r.goal_met);
    assert!(
        r.message.starts_with("maxRepeats 4 reached at ±") && r.message.contains("(b/a)"),
        "{}",
        r.message
    );
    assert_eq!(r.rounds[1].repeat, 3);
    // The widest is b/a's precision, shown as it is stored.
    let ba = comparisons.iter().find(|c| c.candidate == "b").unwrap();
    assert_eq!(r.widest, ba.precision);
    assert_eq!(ba.precision_met, Some(false));
    assert_eq!(ba.candidate_repeats, 4);
}

#[test]
fn a_cell_whose_last_measurement_failed_gets_no_further_round() {
    let run = run(5, "Sequential");
    let mut results = noisy_b(&run, 2, &[0, 1, 2]);
    let i = results
        .iter()
        .position(|r| r.cell == 1 && r.repeat == 1)
        .unwrap();
    results[i].outcome = Outcome::Failed;
    results[i].throughput = None;
    // b/a asks for no more (b just failed); c/a is within the goal but on 2 repeats: a and
    // c go on, b does not.
    assert_eq!(rounds(&run, &results), [vec![0, 2]]);
    results.extend(
        noisy_b(&run, 5, &[0, 2])
            .into_iter()
            .filter(|r| r.repeat >= 2),
    );
    // b, out of the rounds, never comes back, and b/a does not hold a or c.
    assert_eq!(rounds(&run, &results), [vec![0, 2], vec![0, 2], vec![0, 2]]);
}

#[test]
fn a_baseline_comparison_gets_only_this_runs_cell_another_repeat() {
    let run = validated(
        r#"
targets: [{name: a, image: img:1}]
scenarios: [{name: hello, path: /hello}]
load: {connections: 4, duration: 20s}
repeats: 6
repeatsUntil: {maxRepeats: 7, ratioWithin: "5%"}
baseline: {run: last-week}
"#,
    );
    let judged = |low: f64, high: f64| BaselineComparison {
        verdict: benchrun_api::Verdict::Inconclusive,
        ratio_low: Some(low),
        ratio_high: Some(high),
        repeats: Some(6),
        ..BaselineComparison::default()
    };
    let mut results: Vec<CellResult> = (0..6).map(|r| measured(&run, 0, r, 1000.0)).collect();
    results[5].baseline = Some(judged(0.8, 1.3));
    assert_eq!(rounds(&run, &results), [vec![0]]);
    results[5].baseline = Some(judged(0.99, 1.05));
    assert!(rounds(&run, &results).is_empty());
}

#[test]
fn without_repeats_until_there_are_no_rounds_and_no_mark() {
    let run = validated(
        r#"
targets: [{name: a, image: img:1}, {name: b, image: img:1}]
scenarios: [{name: hello, path: /hello}]
load: {connections: 4, duration: 20s}
repeats: 2
"#,
    );
    let results: Vec<CellResult> = (0..2)
        .flat_map(|r| [(0, r, 1000.0), (1, r, 700.0 + 400.0 * r as f64)])
        .map(|(c, r, t)| measured(&run, c, r, t))
        .collect();
    assert!(rounds(&run, &results).is_empty());
    let mut comparisons = crate::comparisons::within_run(&run, &results);
    mark(&run, &mut comparisons);
    assert_eq!(comparisons[0].precision_met, None);
    assert!(comparisons[0].precision.is_some());
    assert_eq!(reached(&run, &results, &comparisons), None);
}
