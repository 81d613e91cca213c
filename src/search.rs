//! `spec.search` in the operator: which measurement comes next, the cells the search has
//! added, each measurement's verdict and `status.search`. Pure: the run and its status in,
//! decisions out. The algorithm is [`benchrun_api::bisection`].
//!
//! The configurations (the matrix's cells before the search adds any) are searched one after
//! the other. A measurement's verdict is decided once, when [`sync`] first sees its result,
//! and kept in `status.search[].measurements`: figures that arrive later (CPU and memory from
//! Prometheus) never change a decision already acted on. Everything else is derived from that
//! list, so a restarted operator continues the same search:
//! - a value the search asks for that no cell of its configuration has yet becomes a new cell,
//!   numbered after every existing one ([`extend`]);
//! - the repeats of a cell are the measurements of its value (confirmations and retries).

use std::borrow::Cow;

use benchrun_api::bisection::{self, Measurement, Outcome as SearchOutcome, Step, Verdict};
use benchrun_api::search::{SearchAxis, SearchPlan};
use benchrun_api::status::{SearchMeasurement, SearchResult};
use benchrun_api::{
    BenchmarkRunStatus, Cell, CellResult, Coordinates, Outcome, ValidatedRun, WarningCode,
};

use crate::results::coordinates;

/// `outcome` of a search still measuring.
pub const SEARCHING: &str = "Searching";

/// What a measurement says about the SLOs, as the search counts it: unusable when the
/// measurement failed, a target pod was OOM-killed or the load generator was the bottleneck
/// (its figures say nothing about the target): its CPU (`GeneratorBound`) or its connections,
/// too few to carry the offered rate at the fastest time per request measured for the
/// configuration (`peers`: its other measurements;
/// [`crate::results::wire::connection_bound`]) — then the latency waited for connections and
/// the rate reached is the connections' ceiling; a failure when an SLO was missed or the target
/// did not serve the offered rate; a pass otherwise.
pub fn verdict(r: &CellResult, peers: &[&CellResult]) -> Verdict {
    if r.outcome != Outcome::Measured {
        let why = r.reason.clone().unwrap_or_else(|| "failed".into());
        return Verdict::Unusable(format!("the measurement failed: {why}"));
    }
    if r.oom_kills > 0 {
        return Verdict::Unusable(format!(
            "{} target OOM kill(s) during the window",
            r.oom_kills
        ));
    }
    let warning = |code: WarningCode| r.warnings.iter().find(|w| w.code == code);
    if let Some(w) = warning(WarningCode::GeneratorBound) {
        return Verdict::Unusable(format!("GeneratorBound: {}", w.message));
    }
    let failed = r.slo.as_ref().is_some_and(|s| s.is_violated())
        || warning(WarningCode::RateNotMet).is_some();
    if !failed {
        return Verdict::Pass;
    }
    // A miss of the SLO or the rate is the target's only if the generator had the
    // connections for the rate.
    match crate::results::wire::connection_bound(r, peers) {
        Some(why) => Verdict::Unusable(why),
        None => Verdict::Fail,
    }
}

/// Why a measurement failed or is unusable, for `status.search[].measurements[].reason`.
fn reason(r: &CellResult, v: &Verdict) -> Option<String> {
    match v {
        Verdict::Pass => None,
        Verdict::Unusable(why) => Some(why.clone()),
        Verdict::Fail => match &r.slo {
            Some(benchrun_api::SloVerdict::Violated(broken)) => {
                Some(format!("SLO violated: {}", broken.join(", ")))
            }
            _ => r
                .warnings
                .iter()
                .find(|w| w.code == WarningCode::RateNotMet)
                .map(|w| format!("RateNotMet: {}", w.message)),
        },
    }
}

/// The words of a verdict in status.
fn verdict_word(v: &Verdict) -> &'static str {
    match v {
        Verdict::Pass => "Pass",
        Verdict::Fail => "Fail",
        Verdict::Unusable(_) => "Unusable",
    }
}

/// A verdict from status words.
fn verdict_of(m: &SearchMeasurement) -> Verdict {
    match m.verdict.as_str() {
        "Pass" => Verdict::Pass,
        "Fail" => Verdict::Fail,
        _ => Verdict::Unusable(m.reason.clone().unwrap_or_default()),
    }
}

/// The coordinates' value on the searched axis.
fn searched_value(axis: SearchAxis, c: &Coordinates) -> f64 {
    match axis {
        SearchAxis::Rate => c.rate.unwrap_or_default() as f64,
        SearchAxis::Cpu => benchrun_api::units::cpu_millis(&c.cpu).unwrap_or_default() as f64,
        SearchAxis::Replicas => f64::from(c.replicas),
    }
}

/// Coordinates with the searched one blanked: what identifies a configuration.
fn configuration(axis: SearchAxis, c: &Coordinates) -> Coordinates {
    let mut c = c.clone();
    match axis {
        SearchAxis::Rate => c.rate = None,
        SearchAxis::Cpu => c.cpu = String::new(),
        SearchAxis::Replicas => c.replicas = 0,
    }
    c
}

/// The configuration (index) a result belongs to.
fn configuration_of(run: &ValidatedRun, plan: &SearchPlan, c: &Coordinates) -> Option<usize> {
    let key = configuration(plan.axis, c);
    run.cells
        .iter()
        .take(plan.configurations)
        .position(|cell| configuration(plan.axis, &coordinates(run, cell)) == key)
}

/// A fresh entry for configuration `g`.
fn entry(run: &ValidatedRun, plan: &SearchPlan, g: usize) -> SearchResult {
    SearchResult {
        kind: plan.kind().into(),
        axis: plan.axis.name().into(),
        configuration: coordinates(run, &run.cells[g]),
        outcome: SEARCHING.into(),
        passing: None,
        failing: None,
        answer: format!("searching: {} first", plan.axis.show(plan.first_value())),
        worst_case: plan.worst_case() as i32,
        measurements: Vec::new(),
    }
}

/// The history of an entry as the algorithm takes it.
fn history(e: &SearchResult) -> Vec<Measurement> {
    e.measurements
        .iter()
        .map(|m| Measurement {
            value: m.value,
            verdict: verdict_of(m),
        })
        .collect()
}

/// Brings `status.search` up to date with the results: one entry per configuration, every
/// result of the run's cells appended once (in cell and repeat order) with its verdict decided
/// now, and each entry's answer. Entries of another spec are replaced. Nothing without a
/// search.
pub fn sync(run: &ValidatedRun, entries: &mut Vec<SearchResult>, results: &[CellResult]) {
    let Some(plan) = &run.search else {
        entries.clear();
        return;
    };
    let fresh: Vec<SearchResult> = (0..plan.configurations)
        .map(|g| entry(run, plan, g))
        .collect();
    let same_spec = entries.len() == fresh.len()
        && entries
            .iter()
            .zip(&fresh)
            .all(|(a, b)| a.configuration == b.configuration && a.kind == b.kind);
    if !same_spec {
        *entries = fresh;
    }
    for r in results {
        let known = entries.iter().any(|e| {
            e.measurements
                .iter()
                .any(|m| m.cell == r.cell && m.repeat == r.repeat)
        });
        if known {
            continue;
        }
        let Some(g) = configuration_of(run, plan, &r.coordinates) else {
            continue;
        };
        let peers: Vec<&CellResult> = results
            .iter()
            .filter(|p| !(p.cell == r.cell && p.repeat == r.repeat))
            .filter(|p| configuration_of(run, plan, &p.coordinates) == Some(g))
            .collect();
        let v = verdict(r, &peers);
        entries[g].measurements.push(SearchMeasurement {
            value: searched_value(plan.axis, &r.coordinates),
            cell: r.cell,
            repeat: r.repeat,
            verdict: verdict_word(&v).into(),
            reason: reason(r, &v),
        });
    }
    for e in entries.iter_mut() {
        answer(plan, e);
    }
}

/// Sets an entry's outcome, bracket and answer line from its measurements.
fn answer(plan: &SearchPlan, e: &mut SearchResult) {
    let n = e.measurements.len();
    match bisection::next(plan.direction, &plan.bounds, &history(e)) {
        Step::Measure(v) => {
            e.outcome = SEARCHING.into();
            e.passing = None;
            e.failing = None;
            e.answer = format!(
                "searching: {} next ({n} measured so far, at most {})",
                plan.axis.show(v),
                e.worst_case
            );
        }
        Step::Done(a) => {
            let show = |x: Option<f64>| x.map_or("none".into(), |x| plan.axis.show(x));
            let head = match a.outcome {
                SearchOutcome::Bracketed => format!(
                    "{} {}: {} meets every SLO, {} does not",
                    plan.kind(),
                    show(a.passing),
                    show(a.passing),
                    show(a.failing)
                ),
                SearchOutcome::AlwaysPasses => format!(
                    "{} beyond the range: every SLO met even at {}",
                    plan.kind(),
                    show(a.passing)
                ),
                SearchOutcome::NeverPasses => format!(
                    "{} outside the range: SLOs missed even at {}",
                    plan.kind(),
                    show(a.failing)
                ),
                SearchOutcome::Unusable => format!("{} not found", plan.kind()),
            };
            e.outcome = format!("{:?}", a.outcome);
            e.passing = a.passing;
            e.failing = a.failing;
            // The bisection's own line repeats the bracket; its notes (mixed values, values
            // that could not be measured, an early stop) are what it adds.
            let notes: Vec<&str> = a
                .line
                .split("; ")
                .filter(|p| {
                    !p.starts_with("highest passing value")
                        && !p.starts_with("lowest passing value")
                        && !p.ends_with(" fails")
                })
                .collect();
            e.answer = match (a.outcome, notes.is_empty()) {
                (SearchOutcome::Bracketed, true) => format!("{head} ({n} measurements)"),
                (SearchOutcome::Bracketed, false) => {
                    format!("{head} ({n} measurements; {})", notes.join("; "))
                }
                _ => format!("{head} ({n} measurements; {})", a.line),
            };
        }
    }
}

/// The entries brought up to date, without touching the status.
fn synced(run: &ValidatedRun, status: &BenchmarkRunStatus) -> Vec<SearchResult> {
    let mut entries = status.search.clone();
    sync(run, &mut entries, &status.results);
    entries
}

/// The configuration searched now and the value it asks for; `None` once every search is done.
fn pending(plan: &SearchPlan, entries: &[SearchResult]) -> Option<(usize, f64)> {
    entries.iter().enumerate().find_map(|(g, e)| {
        match bisection::next(plan.direction, &plan.bounds, &history(e)) {
            Step::Measure(v) => Some((g, v)),
            Step::Done(_) => None,
        }
    })
}

/// Whether two searched values are the same.
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The cell of configuration `g` at `value`, if one was made: the configuration's first cell
/// or a cell an earlier measurement used.
fn cell_at(plan: &SearchPlan, entries: &[SearchResult], g: usize, value: f64) -> Option<usize> {
    if same(value, plan.first_value()) {
        return Some(g);
    }
    entries[g]
        .measurements
        .iter()
        .find(|m| same(m.value, value))
        .map(|m| m.cell as usize)
}

/// The run with every cell its searches have made so far, the one measured next included; the
/// run itself without a search.
pub fn extend<'a>(run: &'a ValidatedRun, status: &BenchmarkRunStatus) -> Cow<'a, ValidatedRun> {
    let Some(plan) = &run.search else {
        return Cow::Borrowed(run);
    };
    let entries = synced(run, status);
    let mut made: Vec<(usize, usize, f64)> = entries
        .iter()
        .enumerate()
        .flat_map(|(g, e)| {
            e.measurements
                .iter()
                .filter(|m| m.cell as usize >= plan.configurations)
                .map(move |m| (m.cell as usize, g, m.value))
        })
        .collect();
    made.sort_by_key(|m| m.0);
    made.dedup_by_key(|m| m.0);
    let mut cells: Vec<Cell> = run.cells[..plan.configurations].to_vec();
    for (index, g, value) in made {
        if index != cells.len() {
            break;
        }
        cells.push(new_cell(plan, &cells[g], index, value));
    }
    if let Some((g, value)) = pending(plan, &entries) {
        if cell_at(plan, &entries, g, value).is_none() {
            let index = cells.len();
            cells.push(new_cell(plan, &cells[g], index, value));
        }
    }
    if cells == run.cells {
        return Cow::Borrowed(run);
    }
    let mut out = run.clone();
    out.cells = cells;
    Cow::Owned(out)
}

fn new_cell(plan: &SearchPlan, base: &Cell, index: usize, value: f64) -> Cell {
    let mut c = base.with_searched(plan.axis, value);
    c.index = index;
    c
}

/// Every measurement of the run in the order taken, then the one the searches ask for next
/// (a new cell gets the next free index). Only decided measurements: the one after the next
/// is not known until the next has a result.
pub fn order(run: &ValidatedRun, status: &BenchmarkRunStatus) -> Vec<(usize, usize)> {
    let Some(plan) = &run.search else {
        return Vec::new();
    };
    let entries = synced(run, status);
    let mut out: Vec<(usize, usize)> = entries
        .iter()
        .flat_map(|e| {
            e.measurements
                .iter()
                .map(|m| (m.cell as usize, m.repeat as usize))
        })
        .collect();
    if let Some((g, value)) = pending(plan, &entries) {
        let next_free = out
            .iter()
            .map(|m| m.0 + 1)
            .chain([plan.configurations])
            .max()
            .unwrap_or_default();
        let cell = cell_at(plan, &entries, g, value).unwrap_or(next_free);
        let repeat = entries[g]
            .measurements
            .iter()
            .filter(|m| m.cell as usize == cell)
            .count();
        out.push((cell, repeat));
    }
    out
}

/// The summary's headline of a search run (`kubectl get` shows it): each configuration's
/// answer, `capacity 412 req/s (web cpu=250m)`, or where it stands; `None` without a search.
pub fn headline(entries: &[SearchResult]) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let several_targets = entries
        .iter()
        .any(|e| e.configuration.target != entries[0].configuration.target);
    let parts: Vec<String> = entries
        .iter()
        .map(|e| {
            let c = &e.configuration;
            let mut at = Vec::new();
            if several_targets {
                at.push(c.target.clone());
            }
            if e.axis != "cpu" {
                at.push(format!("cpu={}", c.cpu));
            }
            if e.axis != "replicas" && c.replicas != 1 {
                at.push(format!("replicas={}", c.replicas));
            }
            let unit = |v: f64| match SearchAxis::from_name(&e.axis) {
                Some(axis) => axis.show(v),
                None => v.to_string(),
            };
            let demand = e.kind == "demand";
            let figure = match (e.outcome.as_str(), e.passing, e.failing) {
                ("Bracketed", Some(p), _) => unit(p),
                ("AlwaysPasses", Some(p), _) => {
                    format!("{} {}", if demand { "<=" } else { ">=" }, unit(p))
                }
                ("NeverPasses", _, Some(f)) => {
                    format!("{} {}", if demand { ">" } else { "<" }, unit(f))
                }
                (SEARCHING, _, _) => format!("searching ({} measured)", e.measurements.len()),
                _ => "not found".into(),
            };
            match at.is_empty() {
                true => format!("{} {figure}", e.kind),
                false => format!("{} {figure} ({})", e.kind, at.join(" ")),
            }
        })
        .collect();
    Some(parts.join("; "))
}

/// The accepted-condition note of a search run.
pub fn note(run: &ValidatedRun) -> Option<String> {
    run.search.as_ref().map(SearchPlan::note)
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
