//! `list`: one line per run, like `kubectl get` with the SLO verdict and, for a run waiting
//! for a measuring slot, its place in the cluster-wide queue (`Queued #2`): computed here from
//! the runs read ([`benchrun_api::queue::places`]), as the operator orders the queue, because
//! the operator does not write it into every waiting run's status at every hand-over.
//!
//! Pure: the clock and the places are arguments.

use std::collections::BTreeMap;
use std::io::{self, Write};

use benchrun_api::{BenchmarkRun, Phase};
use jiff::Timestamp;

use crate::num::NONE;
use crate::table::{Align, Table};

/// A kubectl-style age: `45s`, `6m`, `3h12m`, `2d4h`.
pub fn age(created: Option<Timestamp>, now: Timestamp) -> String {
    let Some(created) = created else {
        return NONE.into();
    };
    let s = (now.as_second() - created.as_second()).max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 if s % 3600 >= 60 && s < 10 * 3600 => {
            format!("{}h{}m", s / 3600, s % 3600 / 60)
        }
        3600..86400 => format!("{}h", s / 3600),
        _ if s % 86400 >= 3600 && s < 10 * 86400 => format!("{}d{}h", s / 86400, s % 86400 / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// Each waiting run's place in the queue, by (namespace, name) (see
/// [`benchrun_api::queue::places`]).
pub type Places = BTreeMap<(String, String), usize>;

/// The runs as a table: namespace (with `all_namespaces`), name, phase (with the place in the
/// queue of a waiting run, from `places`), progress, best throughput, its p99, SLO verdict and
/// age.
pub fn list_table(
    runs: &[BenchmarkRun],
    all_namespaces: bool,
    places: &Places,
    now: Timestamp,
) -> Table {
    use Align::{Left as L, Right as R};
    let mut cols = Vec::new();
    if all_namespaces {
        cols.push(("NAMESPACE", L));
    }
    cols.extend([
        ("NAME", L),
        ("PHASE", L),
        ("PROGRESS", R),
        ("BEST REQ/S", R),
        ("P99", R),
        ("SLO", L),
        ("AGE", R),
    ]);
    let mut t = Table::new(&cols);
    for run in runs {
        let status = run.status.clone().unwrap_or_default();
        let summary = status.summary.unwrap_or_default();
        let mut row = Vec::new();
        if all_namespaces {
            row.push(run.metadata.namespace.clone().unwrap_or_default());
        }
        let or_none = |v: Option<String>| v.unwrap_or_else(|| NONE.into());
        let name = run.metadata.name.clone().unwrap_or_default();
        let key = (
            run.metadata.namespace.clone().unwrap_or_default(),
            name.clone(),
        );
        let phase = status.phase.unwrap_or(Phase::Pending).to_string();
        let phase = match places.get(&key) {
            Some(place) => format!("{phase} #{place}"),
            None => phase,
        };
        row.extend([
            name,
            phase,
            or_none(status.progress),
            or_none(summary.best_throughput.map(|v| v.to_string())),
            or_none(summary.best_p99),
            or_none(summary.slo.map(|s| s.to_string())),
            age(run.metadata.creation_timestamp.as_ref().map(|t| t.0), now),
        ]);
        t.push(row);
    }
    t
}

/// Writes the `list` table, or a kubectl-like notice when there are no runs.
pub fn write_list(
    w: &mut impl Write,
    runs: &[BenchmarkRun],
    all_namespaces: bool,
    namespace: &str,
    places: &Places,
    now: Timestamp,
) -> io::Result<()> {
    if runs.is_empty() {
        return if all_namespaces {
            writeln!(w, "No BenchmarkRuns found.")
        } else {
            writeln!(w, "No BenchmarkRuns found in {namespace} namespace.")
        };
    }
    list_table(runs, all_namespaces, places, now).write_text(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use benchrun_api::BenchmarkRunSpec;

    fn run(ns: &str, name: &str, status: benchrun_api::BenchmarkRunStatus) -> BenchmarkRun {
        let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
            "targets": [{"name": "express", "image": "express:1", "port": 3000}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": {"connections": 10, "duration": "30s"}
        }))
        .unwrap();
        let mut r = BenchmarkRun::new(name, spec);
        r.metadata.namespace = Some(ns.into());
        r.metadata.creation_timestamp = Some(fixtures::time("2026-11-30T10:00:00Z"));
        r.status = Some(status);
        r
    }

    fn now() -> Timestamp {
        "2026-11-30T10:06:30Z".parse().unwrap()
    }

    #[test]
    fn list_shows_phase_progress_best_throughput_slo_and_age() {
        let runs = [
            run("bench", "demo", fixtures::status()),
            run("bench", "demo-2", fixtures::running_status()),
        ];
        let mut out = Vec::new();
        write_list(&mut out, &runs, true, "bench", &Places::new(), now()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAMESPACE  NAME    PHASE      PROGRESS  BEST REQ/S    P99  SLO           AGE\n\
             bench      demo    Succeeded       4/4        4100  3.1ms  Violated (1)   6m\n\
             bench      demo-2  Running         1/4           -      -  -              6m\n"
        );
    }

    #[test]
    fn a_waiting_run_shows_its_place_in_the_queue() {
        let queued = |ns: &str, name: &str| {
            let s = benchrun_api::BenchmarkRunStatus {
                phase: Some(Phase::Queued),
                ..Default::default()
            };
            run(ns, name, s)
        };
        let mut b = queued("team-b", "late");
        b.metadata.creation_timestamp = Some(fixtures::time("2026-11-30T10:05:00Z"));
        let mut measuring = fixtures::running_status();
        measuring.start_time = Some(fixtures::time("2026-11-30T10:01:00Z"));
        let runs = [
            run("team-a", "measuring", measuring),
            queued("team-a", "nightly-1"),
            b,
        ];
        // team-a is measuring (served), team-b never was: b's run goes first.
        let places = benchrun_api::queue::places(&runs);
        let mut out = Vec::new();
        write_list(&mut out, &runs, true, "", &places, now()).unwrap();
        let out = String::from_utf8(out).unwrap();
        let line = |name: &str| out.lines().find(|l| l.contains(name)).unwrap().to_string();
        assert!(line("late").contains("Queued #1"), "{out}");
        assert!(line("nightly-1").contains("Queued #2"), "{out}");
        assert!(line("measuring").contains("Running "), "{out}");
    }

    #[test]
    fn empty_namespace_says_so_like_kubectl() {
        let mut out = Vec::new();
        write_list(&mut out, &[], false, "bench", &Places::new(), now()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "No BenchmarkRuns found in bench namespace.\n"
        );
    }

    #[test]
    fn age_is_compact_like_kubectl() {
        let t = |s: &str| Some(s.parse::<Timestamp>().unwrap());
        assert_eq!(age(t("2026-11-30T10:06:00Z"), now()), "30s");
        assert_eq!(age(t("2026-11-30T07:00:00Z"), now()), "3h6m");
        assert_eq!(age(t("2026-11-27T09:00:00Z"), now()), "3d1h");
        assert_eq!(age(None, now()), "-");
    }
}
