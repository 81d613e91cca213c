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
    drive_results(base, |run, cell, repeat| {
        let pass = passes(&run.cells[cell], repeat);
        result(run, cell, repeat, pass)
    })
}

/// [`drive`] with `measure(run, cell, repeat)` giving each measurement's whole result.
fn drive_results(
    base: &ValidatedRun,
    mut measure: impl FnMut(&ValidatedRun, usize, usize) -> CellResult,
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
        status.results.push(measure(&run, cell, repeat));
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
    assert!(matches!(verdict(&oom, &[]), Verdict::Unusable(_)));
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

/// A target in the open model over 10 s windows: it answers in `service_ms` while it has CPU
/// to spare and serves at most `capacity` req/s; past that its requests queue until every
/// connection waits on it (each then takes connections ÷ capacity). Each connection carries
/// one request at a time, so the generator sends at most connections ÷ time per request; what
/// it cannot send waits in it (the schedule lag, growing through the window). The p99 SLO is
/// 300 ms; the RateNotMet warning is the operator's own.
fn open_window(
    run: &ValidatedRun,
    cell: usize,
    repeat: usize,
    service_ms: f64,
    capacity: f64,
) -> CellResult {
    let c = crate::results::coordinates(run, &run.cells[cell]);
    let (rate, n) = (c.rate.unwrap() as f64, f64::from(c.connections));
    let queued = rate > capacity.min(n * 1000.0 / service_ms);
    let service = if rate > capacity {
        service_ms.max(n * 1000.0 / capacity)
    } else {
        service_ms
    };
    let achieved = rate.min(n * 1000.0 / service);
    let secs = 10.0;
    let behind = if queued {
        secs * (1.0 - achieved / rate)
    } else {
        0.0
    };
    let p99 = service + behind * 1000.0;
    let at = |s: f64| {
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            jiff::Timestamp::from_millisecond(1_800_000_000_000 + (s * 1000.0) as i64).unwrap(),
        )
    };
    let mut r = CellResult {
        cell: cell as i32,
        repeat: repeat as i32,
        coordinates: c,
        outcome: Outcome::Measured,
        requests: Some((achieved * secs) as i64),
        throughput: Some(achieved),
        latency_ms: Some(benchrun_api::Latency {
            mean: service + behind * 500.0,
            p99,
            ..Default::default()
        }),
        schedule_lag_ms: Some(benchrun_api::ScheduleLagMs {
            mean: behind * 500.0,
            max: behind * 1000.0,
        }),
        drain: Some(benchrun_api::Drain {
            in_flight: n as i64,
            ms: service,
            response_lag_ms: Some(service),
            late: Some(0),
        }),
        window_start: Some(at(0.0)),
        window_end: Some(at(secs)),
        slo: Some(if p99 <= 300.0 {
            SloVerdict::Met
        } else {
            SloVerdict::Violated(vec![format!("p99 {p99:.0}ms > 300ms")])
        }),
        ..Default::default()
    };
    r.warnings
        .extend(crate::results::wire::rate_not_met(&r, None));
    r
}

fn open_run(connections: u32, max: u32) -> ValidatedRun {
    let yaml = format!(
        r#"
targets: [{{name: web, image: "demo:1"}}]
scenarios: [{{name: s, path: /sleep}}]
load: {{connections: {connections}, duration: 10s}}
slo: {{p99: 300ms}}
search: {{capacity: {{rate: {{min: 10, max: {max}}}}}}}
"#
    );
    benchrun_api::validate::validate(&serde_yaml::from_str(&yaml).unwrap()).unwrap()
}

/// Issue 52: four connections to a target that answers in 100 ms carry 40 req/s, whatever the
/// target could do. Each rate above that missed its SLO (the latency waited for connections)
/// or its rate, and was the connections' ceiling: the search says so and gives no capacity,
/// where it used to bracket 40 req/s as the target's.
#[test]
fn a_capacity_search_with_too_few_connections_says_so_instead_of_reporting_their_ceiling() {
    let base = open_run(4, 200);
    let (status, _) = drive_results(&base, |run, cell, repeat| {
        open_window(run, cell, repeat, 100.0, 10_000.0)
    });
    let e = &status.search[0];
    for m in &e.measurements {
        println!("{} {} {:?}", m.value, m.verdict, m.reason);
    }
    println!("{}", e.answer);
    assert_eq!(e.outcome, "Unusable", "{}", e.answer);
    assert!(
        e.failing.is_none(),
        "no rate failed the target: {}",
        e.answer
    );
    assert!(
        e.answer
            .contains("could not be measured: the generator's 4 connections could not carry"),
        "{}",
        e.answer
    );
    assert!(
        e.answer.contains("4 connections carry at most 40.0 req/s"),
        "{}",
        e.answer
    );
    assert!(e.measurements.iter().all(|m| m.verdict != "Fail"));
    // Every rate above the ceiling was unusable, every one below passed.
    for m in &e.measurements {
        assert_eq!(
            m.verdict == "Pass",
            m.value <= 40.0,
            "{} {}",
            m.value,
            m.verdict
        );
    }
    assert!(e.passing.unwrap() <= 40.0);
    assert!(headline(&status.search)
        .unwrap()
        .starts_with("capacity not found"));
}

/// The same search with 64 connections against a target that serves 300 req/s: above that its
/// responses slow as its queue fills the connections, and the lighter measurements show it
/// answering in 5 ms, so the connections would have carried the rate: the target failed, and
/// the search brackets its capacity.
#[test]
fn a_target_that_slows_at_its_capacity_fails_rather_than_blaming_the_connections() {
    let base = open_run(64, 2000);
    let (status, _) = drive_results(&base, |run, cell, repeat| {
        open_window(run, cell, repeat, 5.0, 300.0)
    });
    let e = &status.search[0];
    println!("{}", e.answer);
    assert_eq!(e.outcome, "Bracketed", "{}", e.answer);
    let (p, f) = (e.passing.unwrap(), e.failing.unwrap());
    assert!(p <= 300.0 && f > 300.0, "{p} {f}");
    assert!(
        e.measurements.iter().all(|m| m.verdict != "Unusable"),
        "{:?}",
        e.measurements
    );
    // The failing value's own figures would blame the connections (64 at 213 ms carry 300):
    // its lighter peers clear them.
    let failing = status
        .results
        .iter()
        .find(|r| r.coordinates.rate == Some(f as i64))
        .unwrap();
    assert!(crate::results::wire::connection_bound(failing, &[]).is_some());
}
