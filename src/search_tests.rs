//! Tests of the search's wiring: cells made as the search asks, verdicts frozen when first
//! seen, the order a restarted operator continues from, and a whole search through the planner's
//! bookkeeping against a synthetic service.

use benchrun_api::status::SearchResult;
use benchrun_api::{BenchmarkRunStatus, CellResult, SloVerdict, ValidatedRun, Warning};

use super::*;

fn run(search: &str, matrix: &str) -> ValidatedRun {
    let yaml = format!(
        r#"
targets: [{{name: web, image: "demo:1"}}]
scenarios: [{{name: s, path: /compute}}]
load: {{connections: 32, duration: 10s}}
slo: {{p99: 50ms}}
search: {search}
{matrix}
"#
    );
    let spec = serde_yaml::from_str(&yaml).unwrap();
    benchrun_api::validate::validate(&spec).unwrap()
}

/// A measured result of `cell` (of the extended run) that passes or fails its SLO.
fn result(run: &ValidatedRun, cell: usize, repeat: usize, pass: bool) -> CellResult {
    let c = &run.cells[cell];
    CellResult {
        cell: cell as i32,
        repeat: repeat as i32,
        coordinates: crate::results::coordinates(run, c),
        outcome: Outcome::Measured,
        throughput: Some(100.0),
        slo: Some(if pass {
            SloVerdict::Met
        } else {
            SloVerdict::Violated(vec!["p99 80ms > 50ms".into()])
        }),
        ..Default::default()
    }
}

/// Runs the search to the end as the planner would (extend, measure the next, record, sync),
/// with `passes(value)` the service; returns the final status and run.
fn drive(
    base: &ValidatedRun,
    mut passes: impl FnMut(&Cell, usize) -> bool,
) -> (BenchmarkRunStatus, ValidatedRun) {
    let mut status = BenchmarkRunStatus::default();
    for _ in 0..500 {
        let run = extend(base, &status).into_owned();
        let next = order(&run, &status).into_iter().find(|&(c, r)| {
            !status
                .results
                .iter()
                .any(|x| x.cell as usize == c && x.repeat as usize == r)
        });
        let Some((cell, repeat)) = next else {
            sync(&run, &mut status.search, &status.results);
            return (status, run);
        };
        assert!(cell < run.cells.len(), "cell {cell} not made");
        let pass = passes(&run.cells[cell], repeat);
        status.results.push(result(&run, cell, repeat, pass));
        status.results.sort_by_key(|r| (r.cell, r.repeat));
        sync(&run, &mut status.search, &status.results);
    }
    panic!("the search did not end");
}

#[test]
fn capacity_search_brackets_a_sharp_boundary_per_configuration() {
    let base = run(
        "{capacity: {rate: {min: 50, max: 2000}}}",
        "matrix: {cpu: [250m, 500m]}",
    );
    // 250m serves up to 400 req/s, 500m up to 800.
    let (status, run) = drive(&base, |c, _| {
        let limit = if c.cpu == "250m" { 400 } else { 800 };
        c.rate.unwrap() <= limit
    });
    assert_eq!(status.search.len(), 2);
    for (e, limit) in status.search.iter().zip([400.0, 800.0]) {
        assert_eq!(e.outcome, "Bracketed", "{}", e.answer);
        let (p, f) = (e.passing.unwrap(), e.failing.unwrap());
        assert!(p <= limit && f > limit, "{p} {f} around {limit}");
        assert!(f / p - 1.0 <= 0.05 + 1e-9, "{p} {f}");
        assert!(e.measurements.len() <= e.worst_case as usize);
        // Every measured rate is a whole number and the cell's own.
        for m in &e.measurements {
            assert_eq!(m.value, m.value.round());
            assert_eq!(run.cells[m.cell as usize].rate, Some(m.value as i64));
        }
        assert!(e.answer.starts_with("capacity "), "{}", e.answer);
    }
    // The deciding values have three agreeing measurements each.
    let e = &status.search[0];
    let count = |v: f64| e.measurements.iter().filter(|m| m.value == v).count();
    assert_eq!(count(e.passing.unwrap()), 3);
    assert_eq!(count(e.failing.unwrap()), 3);
    // Cells are contiguous and each value has one cell.
    for (i, c) in run.cells.iter().enumerate() {
        assert_eq!(c.index, i);
    }
    let mut seen: Vec<(String, i64)> = run
        .cells
        .iter()
        .map(|c| (c.cpu.clone(), c.rate.unwrap()))
        .collect();
    seen.sort();
    let n = seen.len();
    seen.dedup();
    assert_eq!(seen.len(), n);
}

#[test]
fn demand_search_finds_the_smallest_cpu() {
    let base = run("{demand: {rate: 400, cpu: {min: 100m, max: \"1\"}}}", "");
    let (status, run) = drive(&base, |c, _| {
        benchrun_api::units::cpu_millis(&c.cpu).unwrap() >= 250
    });
    let e = &status.search[0];
    assert_eq!(e.outcome, "Bracketed", "{}", e.answer);
    let (p, f) = (e.passing.unwrap(), e.failing.unwrap());
    assert!(
        p >= 250.0 && f < 250.0 && p / f - 1.0 <= 0.05 + 1e-9,
        "{p} {f}"
    );
    assert!(run.cells.iter().all(|c| c.rate == Some(400)));
    assert_eq!(run.cells[0].cpu, "1000m");
}

#[test]
fn a_verdict_is_kept_once_recorded() {
    let base = run("{capacity: {rate: {min: 50, max: 2000}}}", "");
    let mut status = BenchmarkRunStatus::default();
    status.results.push(result(&base, 0, 0, true));
    sync(&base, &mut status.search, &status.results);
    assert_eq!(status.search[0].measurements[0].verdict, "Pass");
    // Later figures add GeneratorBound: the recorded verdict stands.
    status.results[0].warnings.push(Warning::new(
        WarningCode::GeneratorBound,
        "load pods used 97% of their CPU",
    ));
    sync(&base, &mut status.search, &status.results);
    assert_eq!(status.search[0].measurements[0].verdict, "Pass");
    // A fresh status (another spec's entries) decides again from the figures.
    let mut other = vec![SearchResult::default()];
    sync(&base, &mut other, &status.results);
    assert_eq!(other[0].measurements[0].verdict, "Unusable");
}

#[test]
fn unusable_measurements_are_retried_and_count_neither_way() {
    let base = run("{capacity: {rate: {min: 50, max: 2000}}}", "");
    let mut status = BenchmarkRunStatus::default();
    let mut failed = result(&base, 0, 0, true);
    failed.outcome = Outcome::Failed;
    failed.reason = Some("target not ready".into());
    status.results.push(failed);
    sync(&base, &mut status.search, &status.results);
    assert_eq!(status.search[0].measurements[0].verdict, "Unusable");
    // The same value again: cell 0, repeat 1.
    assert_eq!(order(&base, &status).last(), Some(&(0, 1)));
    let mut oom = result(&base, 0, 1, true);
    oom.oom_kills = 1;
    assert!(matches!(verdict(&oom), Verdict::Unusable(_)));
}

#[test]
fn a_restarted_operator_continues_with_the_same_cells() {
    let base = run("{capacity: {rate: {min: 50, max: 2000}}}", "");
    let (status, run) = drive(&base, |c, _| c.rate.unwrap() <= 300);
    // From the results alone (status.search lost) the same cells, measurements and answer
    // come back; only the order of the list is the results' (cell, repeat) order.
    let mut bare = status.clone();
    bare.search.clear();
    let again = extend(&base, &bare);
    assert_eq!(again.cells, run.cells);
    let mut a = order(&run, &bare);
    let mut b = order(&run, &status);
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
    sync(&run, &mut bare.search, &bare.results);
    assert_eq!(bare.search[0].answer, status.search[0].answer);
}

#[test]
fn without_a_search_nothing_changes() {
    let yaml = r#"
targets: [{name: web, image: "demo:1"}]
scenarios: [{name: s, path: /}]
load: {connections: 4, requests: 100}
"#;
    let spec = serde_yaml::from_str(yaml).unwrap();
    let base = benchrun_api::validate::validate(&spec).unwrap();
    assert!(matches!(
        extend(&base, &BenchmarkRunStatus::default()),
        Cow::Borrowed(_)
    ));
    assert!(order(&base, &BenchmarkRunStatus::default()).is_empty());
    let mut entries = vec![SearchResult::default()];
    sync(&base, &mut entries, &[]);
    assert!(entries.is_empty());
}

#[test]
fn the_headline_gives_each_configurations_answer() {
    let base = run(
        "{capacity: {rate: {min: 50, max: 2000}}}",
        "matrix: {cpu: [250m, 500m]}",
    );
    let mut status = BenchmarkRunStatus::default();
    sync(&base, &mut status.search, &status.results);
    assert_eq!(
        headline(&status.search).unwrap(),
        "capacity searching (0 measured) (cpu=250m); capacity searching (0 measured) (cpu=500m)"
    );
    let (done, _) = drive(&base, |c, _| c.rate.unwrap() <= 300);
    let h = headline(&done.search).unwrap();
    assert!(h.starts_with("capacity 29"), "{h}");
    assert!(h.contains("(cpu=250m); capacity 29"), "{h}");
    assert_eq!(headline(&[]), None);
}
