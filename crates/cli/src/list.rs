//! `list`: one line per run, like `kubectl get` with the SLO verdict.
//!
//! Pure: the clock is an argument.

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

/// The runs as a table: namespace (with `all_namespaces`), name, phase, progress, best
/// throughput, its p99, SLO verdict and age.
pub fn list_table(runs: &[BenchmarkRun], all_namespaces: bool, now: Timestamp) -> Table {
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
        row.extend([
            run.metadata.name.clone().unwrap_or_default(),
            status.phase.unwrap_or(Phase::Pending).to_string(),
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
    now: Timestamp,
) -> io::Result<()> {
    if runs.is_empty() {
        return if all_namespaces {
            writeln!(w, "No BenchmarkRuns found.")
        } else {
            writeln!(w, "No BenchmarkRuns found in {namespace} namespace.")
        };
    }
    list_table(runs, all_namespaces, now).write_text(w)
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
        write_list(&mut out, &runs, true, "bench", now()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAMESPACE  NAME    PHASE      PROGRESS  BEST REQ/S    P99  SLO           AGE\n\
             bench      demo    Succeeded       4/4        4100  3.1ms  Violated (1)   6m\n\
             bench      demo-2  Running         1/4           -      -  -              6m\n"
        );
    }

    #[test]
    fn empty_namespace_says_so_like_kubectl() {
        let mut out = Vec::new();
        write_list(&mut out, &[], false, "bench", now()).unwrap();
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
