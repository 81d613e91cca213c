//! `status.comparisons[]`: cells set side by side over their repeats, with intervals and
//! verdicts ([`benchrun_api::compare`] does the statistics). Pure.
//!
//! Which cells: along the axis `spec.compare.along` names, each value against the first value
//! the spec lists for it at the same other coordinates (`compute` at 500m against 250m); and
//! each target against the first target of `spec.targets` measured at the same other
//! coordinates (every pair would grow as targets², and "each against the first" is how people
//! read a table: the first is the reference). Two scenarios are compared only when
//! `spec.compare.along` is `scenario`. With `spec.baseline`, each cell against the baseline
//! run's cell with the same coordinates ([`baseline_entry`], made when a measurement of the
//! cell finishes, because only then is the baseline run read).

use benchrun_api::along;
use benchrun_api::compare::{self, ComparisonVerdict, RatioEstimate};
use benchrun_api::deployments;
use benchrun_api::status::MAX_COMPARISONS;
use benchrun_api::validate::DEFAULT_BASELINE_TOLERANCE;
use benchrun_api::{
    CellResult, CompareAxis, Comparison, ComparisonKind, Coordinates, ErrorCounts, Outcome,
    ValidatedRun,
};
use benchrun_wire::LoadResult;

use crate::num::round;

/// The tolerance of the comparisons within a run: `spec.tolerance`, else
/// `spec.baseline.tolerance`, else 5 %.
pub fn tolerance(run: &ValidatedRun) -> f64 {
    run.tolerance.unwrap_or_else(|| baseline_tolerance(run))
}

/// The tolerance of the comparisons with the baseline: `spec.baseline.tolerance`, else 5 %.
pub fn baseline_tolerance(run: &ValidatedRun) -> f64 {
    run.baseline
        .as_ref()
        .map_or(DEFAULT_BASELINE_TOLERANCE, |b| b.tolerance)
}

/// The coefficient of variation of the per-second throughput of the measured window (whole
/// seconds from its first responses to its end, [`per_second_throughput`]); `None` with fewer
/// than 2 seconds or none served.
pub fn per_second_cv(load: &LoadResult) -> Option<f64> {
    let xs = per_second_throughput(load);
    if xs.len() < 2 {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean > 0.0).then(|| round(var.sqrt() / mean, 4))
}

/// Every error of a measurement, over its classes.
fn errors_total(e: &ErrorCounts) -> i64 {
    [
        e.connect_refused,
        e.connect_timeout,
        e.timeout,
        e.read,
        e.status4xx,
        e.status5xx,
    ]
    .into_iter()
    .map(|x| x.max(0))
    .fold(0i64, i64::saturating_add)
}

/// The comparison of `candidate` and `reference` that was not made because a side is
/// unhealthy ([`benchrun_api::healthy`]): verdict `NotCompared`, no figures, the reason.
fn not_compared(
    against: ComparisonKind,
    (candidate, reference): (&str, &str),
    coordinates: &Coordinates,
    (cand, refr): (&[&CellResult], &[&CellResult]),
    tolerance: f64,
    why: String,
) -> Comparison {
    let measured =
        |rs: &[&CellResult]| rs.iter().filter(|r| r.outcome == Outcome::Measured).count();
    Comparison {
        against,
        axis: None,
        candidate: candidate.to_string(),
        reference: reference.to_string(),
        coordinates: coordinates.clone(),
        candidate_repeats: measured(cand) as i32,
        reference_repeats: measured(refr) as i32,
        candidate_deployments: None,
        reference_deployments: None,
        tolerance,
        verdict: benchrun_api::ComparisonVerdict::NotCompared,
        ratio: None,
        throughput: None,
        p99: None,
        spread: None,
        errors: None,
        power: None,
        precision: None,
        precision_met: None,
        environment_change: Vec::new(),
        reason: Some(format!("not compared: {why}")),
    }
}

/// Why a side's measured repeats measured the generator's connections rather than the target:
/// the first repeat whose `RateNotMet` was the connections' ([`crate::rate_limit::rate_limit`]:
/// the rate not met while neither the generator's CPU nor the target set it), e.g. `cell 2 r1
/// was connection-bound (its 4 connections, not the target, set the rate)`. Such a window
/// shows the connections' ceiling, which is no figure of the target's to compare. Call it
/// after [`benchrun_api::healthy::side_unhealthy`], which excludes a generator-bound repeat.
fn connection_bound(rs: &[&CellResult]) -> Option<String> {
    rs.iter()
        .filter(|r| r.outcome == Outcome::Measured)
        .find(|r| {
            matches!(
                crate::rate_limit::rate_limit(r, None),
                Some(crate::rate_limit::RateLimit::Connections)
            )
        })
        .map(|r| {
            format!(
                "cell {} r{} was connection-bound (its {} connections, not the target, set the rate)",
                r.cell, r.repeat, r.coordinates.connections
            )
        })
}

/// Candidate against reference over their measured repeats (`Measured` results only), when
/// both sides are healthy ([`benchrun_api::healthy::side_unhealthy`] at `max_error_rate`);
/// else a `NotCompared` entry naming the side and why.
pub fn compare_cells(
    against: ComparisonKind,
    (candidate, reference): (&str, &str),
    coordinates: &Coordinates,
    cand: &[&CellResult],
    refr: &[&CellResult],
    tolerance: f64,
    max_error_rate: f64,
) -> Comparison {
    let unhealthy = |side: &str, rs: &[&CellResult]| {
        benchrun_api::healthy::side_unhealthy(rs, max_error_rate)
            .or_else(|| connection_bound(rs))
            .map(|why| format!("the {side} ({why})"))
    };
    let why: Vec<String> = [unhealthy("candidate", cand), unhealthy("reference", refr)]
        .into_iter()
        .flatten()
        .collect();
    if !why.is_empty() {
        return not_compared(
            against,
            (candidate, reference),
            coordinates,
            (cand, refr),
            tolerance,
            why.join("; "),
        );
    }
    let measured = |rs: &[&CellResult]| -> Vec<CellResult> {
        rs.iter()
            .filter(|r| r.outcome == Outcome::Measured)
            .map(|r| (*r).clone())
            .collect()
    };
    let (c, r) = (measured(cand), measured(refr));
    let values = |rs: &[CellResult], f: &dyn Fn(&CellResult) -> Option<f64>| -> Vec<f64> {
        rs.iter().filter_map(f).collect()
    };
    let tp = |x: &CellResult| x.throughput;
    let p99 = |x: &CellResult| x.latency_ms.as_ref().map(|l| l.p99);
    let cv = |x: &CellResult| x.per_second_cv;
    let (tp_c, tp_r) = (values(&c, &tp), values(&r, &tp));
    let ratio = match (geometric_mean(&tp_c), geometric_mean(&tp_r)) {
        (Some(a), Some(b)) => Some(round(a / b, 4)),
        _ => None,
    };
    let throughput = compare::compare_repeats(&tp_c, &tp_r, tolerance, true);
    let p99 = compare::compare_repeats(&values(&c, &p99), &values(&r, &p99), tolerance, false);
    let spread = compare::compare_spread(&values(&c, &cv), &values(&r, &cv));
    let count = |rs: &[CellResult]| -> (u64, u64) {
        rs.iter().fold((0, 0), |(e, n), x| {
            let errs = x.errors.as_ref().map_or(0, errors_total);
            (
                e + errs.max(0) as u64,
                n + x.requests.unwrap_or(0).max(0) as u64,
            )
        })
    };
    let ((ec, nc), (er, nr)) = (count(&c), count(&r));
    let errors = compare::compare_error_rates(ec.min(nc), nc, er.min(nr), nr);
    let mut power = compare::power(&tp_c, &tp_r, tolerance);
    let mut verdict = compare::overall_verdict(
        throughput.as_ref(),
        p99.as_ref(),
        spread.as_ref(),
        errors.as_ref(),
    );
    let mut reason = throughput.is_none().then(|| {
        format!(
            "{} measured repeats of {candidate} and {} of {reference} with a throughput: an interval needs at least 2 a side (set spec.repeats to 3 or more)",
            tp_c.len(),
            tp_r.len()
        )
    });
    // The deployments each side's repeats ran on, from the pods they recorded: repeats that
    // shared one deployment measured its window-to-window noise only, and no verdict rests on
    // that (docs/metrics.md, Repeats and deployments).
    let (cr, rr): (Vec<&CellResult>, Vec<&CellResult>) = (c.iter().collect(), r.iter().collect());
    let deployments = (deployments::distinct(&cr), deployments::distinct(&rr));
    let (mut throughput, mut p99, mut spread, mut errors) = (throughput, p99, spread, errors);
    let shared = deployments::shared_reason(
        deployments,
        (deployments::unrecorded(&cr), deployments::unrecorded(&rr)),
    );
    if let (Some(why), true) = (shared, c.len().min(r.len()) >= 2) {
        for r in [throughput.as_mut(), p99.as_mut()].into_iter().flatten() {
            no_verdict(r);
        }
        if let Some(s) = spread.as_mut() {
            no_verdict(&mut s.ratio);
            s.increased = false;
        }
        if let Some(e) = errors.as_mut() {
            if e.verdict != ComparisonVerdict::Equivalent {
                e.verdict = ComparisonVerdict::Inconclusive;
            }
        }
        // More repeats on the same pods would not tell: the power is of another design.
        power = None;
        verdict = ComparisonVerdict::Inconclusive;
        reason = Some(why);
    }
    let environment_change = environment_differences(&c, &r);
    let reason = join_reasons([reason, environment_sentence(&environment_change)]);
    let throughput = throughput.map(rounded);
    // From the rounded bounds, so that it can be checked against the status it is shown in.
    let precision = throughput
        .as_ref()
        .and_then(|t| benchrun_api::repeats::precision(t.low, t.high))
        .map(|p| round(p, 4));
    Comparison {
        against,
        axis: None,
        candidate: candidate.to_string(),
        reference: reference.to_string(),
        coordinates: coordinates.clone(),
        candidate_repeats: c.len() as i32,
        reference_repeats: r.len() as i32,
        candidate_deployments: Some(deployments.0 as i32),
        reference_deployments: Some(deployments.1 as i32),
        tolerance,
        verdict,
        ratio,
        throughput,
        p99: p99.map(rounded),
        spread: spread.map(|mut s| {
            s.candidate_cv = round(s.candidate_cv, 4);
            s.reference_cv = round(s.reference_cv, 4);
            s.ratio = rounded(s.ratio);
            s
        }),
        errors: errors.map(|mut e| {
            e.candidate_rate = round(e.candidate_rate, 6);
            e.reference_rate = round(e.reference_rate, 6);
            e.p_value = round_significant(e.p_value, 3);
            e
        }),
        power: power.map(|mut p| {
            p.power = round(p.power, 3);
            p
        }),
        precision,
        precision_met: None,
        environment_change,
        reason,
    }
}

/// What differs between where the two sides ran ([`benchrun_api::environment::differences`]):
/// `target kernel 6.1 vs 6.2`, one entry per difference; empty when nothing does.
pub fn environment_differences(cand: &[CellResult], refr: &[CellResult]) -> Vec<String> {
    fn envs(rs: &[CellResult]) -> Vec<&benchrun_api::environment::Environment> {
        rs.iter().filter_map(|r| r.environment.as_ref()).collect()
    }
    benchrun_api::environment::differences(&envs(cand), &envs(refr))
}

/// The differences as a reason: `environments differ: target kernel 6.1 vs 6.2 (the
/// difference may be the environment's, not the code's)`; `None` when there are none.
pub fn environment_sentence(diff: &[String]) -> Option<String> {
    (!diff.is_empty()).then(|| {
        format!(
            "environments differ: {} (the difference may be the environment's, not the code's)",
            diff.join("; ")
        )
    })
}

/// [`environment_differences`] as a reason ([`environment_sentence`]).
pub fn environment_note(cand: &[CellResult], refr: &[CellResult]) -> Option<String> {
    environment_sentence(&environment_differences(cand, refr))
}

/// The reasons that are present, joined with `; `; `None` when none is.
fn join_reasons<const N: usize>(reasons: [Option<String>; N]) -> Option<String> {
    let all: Vec<String> = reasons.into_iter().flatten().collect();
    (!all.is_empty()).then(|| all.join("; "))
}

/// A ratio whose repeats shared one deployment a side: the interval stays (it describes those
/// pods), the verdict is `Inconclusive` and it has no p-value of "worse" for a summary to count.
fn no_verdict(r: &mut RatioEstimate) {
    r.verdict = ComparisonVerdict::Inconclusive;
    r.p_worse = None;
}

/// The geometric mean of the positive, finite values among `xs` (the point estimate of a
/// ratio's interval, see [`benchrun_api::compare`]); `None` without any.
pub fn geometric_mean(xs: &[f64]) -> Option<f64> {
    let logs: Vec<f64> = xs
        .iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .map(|x| x.ln())
        .collect();
    (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

fn rounded(r: RatioEstimate) -> RatioEstimate {
    RatioEstimate {
        ratio: round(r.ratio, 4),
        low: round(r.low, 4),
        high: round(r.high, 4),
        verdict: r.verdict,
        p_worse: r.p_worse.map(|p| round_significant(p, 3)),
    }
}

/// `x` to `digits` significant digits (p-values span many orders of magnitude).
pub fn round_significant(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// The axes the run's own comparisons run along: the axis `spec.compare.along` names first
/// (the question the run was asked), then the targets when it measured two or more. Never the
/// scenarios unless named: two different requests are not alternatives to each other.
fn axes(run: &ValidatedRun, measured: &[&CellResult]) -> Vec<CompareAxis> {
    let mut targets: Vec<&str> = measured
        .iter()
        .map(|r| r.coordinates.target.as_str())
        .collect();
    targets.sort_unstable();
    targets.dedup();
    let mut out: Vec<CompareAxis> = run.compare_along.into_iter().collect();
    if targets.len() >= 2 && !out.contains(&CompareAxis::Target) {
        out.push(CompareAxis::Target);
    }
    out
}

/// The comparisons between this run's own cells, along each of its [`axes`]: each cell
/// against the cell at the same other coordinates whose value on the axis comes first in the
/// spec's list ([`benchrun_api::along::pairs`]), in matrix order of the candidate cells.
pub fn within_run(run: &ValidatedRun, results: &[CellResult]) -> Vec<Comparison> {
    let measured: Vec<&CellResult> = results
        .iter()
        .filter(|r| r.outcome == Outcome::Measured)
        .collect();
    // Cells in matrix order, each with all its repeats (failed ones too: a cell that failed
    // every repeat gets a `NotCompared` entry rather than none).
    let mut cells: Vec<(i32, Vec<&CellResult>)> = Vec::new();
    for r in results {
        match cells.iter_mut().find(|(c, _)| *c == r.cell) {
            Some((_, rs)) => rs.push(r),
            None => cells.push((r.cell, vec![r])),
        }
    }
    cells.sort_by_key(|(c, _)| *c);
    let coordinates: Vec<&Coordinates> = cells.iter().map(|(_, rs)| &rs[0].coordinates).collect();
    let tol = tolerance(run);
    let max_errors = max_error_rate(run);
    let mut out = Vec::new();
    for axis in axes(run, &measured) {
        let order = run.compare_order(axis);
        for (i, j) in along::pairs(&coordinates, axis, &order) {
            let (cand, refr) = (&cells[i].1, &cells[j].1);
            let mut c = compare_cells(
                axis.kind(),
                (&axis.value(coordinates[i]), &axis.value(coordinates[j])),
                coordinates[i],
                cand,
                refr,
                tol,
                max_errors,
            );
            c.axis = (axis.kind() == ComparisonKind::Axis).then_some(axis);
            out.push(c);
        }
    }
    out
}

/// The error rate above which a cell is not compared: `spec.slo.errorRate`, else 1 %
/// ([`benchrun_api::healthy::max_error_rate`]).
pub fn max_error_rate(run: &ValidatedRun) -> f64 {
    benchrun_api::healthy::max_error_rate(run.slo.as_ref().and_then(|s| s.error_rate))
}

/// The `Baseline` comparison of one cell: its measured repeats `cell` against the baseline
/// run's measured repeats of the same coordinates.
pub fn baseline_entry(
    run: &ValidatedRun,
    baseline_run: &str,
    cell: &[&CellResult],
    baseline: &[CellResult],
) -> Option<Comparison> {
    let first = cell.first()?;
    let refr: Vec<&CellResult> = baseline.iter().collect();
    Some(compare_cells(
        ComparisonKind::Baseline,
        (first.coordinates.target.as_str(), baseline_run),
        &first.coordinates,
        cell,
        &refr,
        baseline_tolerance(run),
        max_error_rate(run),
    ))
}

/// `comparisons` with `entry` in place of the `Baseline` entry of the same coordinates.
pub fn upsert_baseline(comparisons: &mut Vec<Comparison>, entry: Comparison) {
    let same = |c: &Comparison| {
        c.against == ComparisonKind::Baseline && c.coordinates == entry.coordinates
    };
    match comparisons.iter_mut().find(|c| same(c)) {
        Some(c) => *c = entry,
        None => comparisons.push(entry),
    }
}

/// The run's comparisons afresh: those within the run from `results`, then the `Baseline`
/// entries kept from `previous` (they are made as measurements finish), at most
/// [`MAX_COMPARISONS`] in all.
pub fn refresh(
    run: &ValidatedRun,
    results: &[CellResult],
    previous: &[Comparison],
) -> Vec<Comparison> {
    let mut out = within_run(run, results);
    out.extend(
        previous
            .iter()
            .filter(|c| c.against == ComparisonKind::Baseline)
            .cloned(),
    );
    out.truncate(MAX_COMPARISONS);
    out
}

/// The headline of `status.summary`: the first comparison within the run that has a
/// throughput figure (along `spec.compare.along` first: `compute 500m/250m 2.02× [1.95–2.10]
/// Faster`), else the `Baseline` comparison with the lowest throughput ratio (the
/// ratio of geometric means), e.g. `spring/express 1.21× [1.12–1.30] Faster`. The interval is
/// the comparison's own (per-comparison 95 %); when the comparison was picked as the lowest of
/// several, the headline says of how many (`… Slower, lowest of 20`), since the lowest of
/// many ratios is low by selection. `NotCompared` entries have no figure and never headline.
pub fn headline(comparisons: &[Comparison]) -> Option<String> {
    let within = comparisons
        .iter()
        .find(|c| c.against != ComparisonKind::Baseline && c.ratio.is_some());
    let candidates: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.against == ComparisonKind::Baseline && c.ratio.is_some())
        .collect();
    let base = candidates
        .iter()
        .copied()
        .min_by(|a, b| a.ratio.unwrap_or(1.0).total_cmp(&b.ratio.unwrap_or(1.0)));
    let c = within.or(base)?;
    let figure = match &c.throughput {
        Some(t) => compare::format_ratio(t),
        None => format!("{:.2}× (no interval)", c.ratio?),
    };
    let family = match (within, candidates.len()) {
        (None, n) if n > 1 => format!(", lowest of {n}"),
        _ => String::new(),
    };
    // Along an axis the values alone do not say what was measured: the scenario does.
    let subject = match c.against {
        ComparisonKind::Axis => format!("{} ", c.coordinates.scenario),
        _ => String::new(),
    };
    Some(format!(
        "{subject}{}/{} {figure} {}{family}",
        c.candidate, c.reference, c.verdict
    ))
}

/// The requests that ended in each whole second of the measured window from its first
/// responses (the response lag after its start) to its end: the seconds cut by those edges,
/// the seconds before the first responses and the drain after the end would read low and are
/// left out.
pub fn per_second_throughput(load: &LoadResult) -> Vec<f64> {
    // The window began with nothing in flight: its first responses came a response lag after
    // its start. The drain after its end is not its time either.
    let first = load.window_start_ms + load.response_lag_ms().round() as u64;
    load.timeline
        .iter()
        .filter(|e| {
            let start = e.second.saturating_mul(1000);
            start >= first && start.saturating_add(1000) <= load.window_end_ms
        })
        .map(|e| e.requests as f64)
        .collect()
}

#[cfg(test)]
#[path = "comparisons_tests.rs"]
mod tests;
