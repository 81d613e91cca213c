//! `export`: the results for other tools. CSV has one flat row per measurement with raw
//! numbers (fractions, bytes, milliseconds); JSON is `status.results` as stored (each with its
//! coordinates); Markdown is the `show` table.
//!
//! Pure.

use std::io::{self, Write};

use benchrun_api::CellResult;

use crate::show::measurements_table;
use crate::table::write_csv_rows;
use crate::Format;

/// Header of the CSV export, in column order.
pub const CSV_COLUMNS: &[&str] = &[
    "run",
    "cell",
    "repeat",
    "target",
    "scenario",
    "cpu",
    "memory",
    "replicas",
    "connections",
    "rate",
    "outcome",
    "reason",
    "requests",
    "warmup_requests",
    "warmup_seconds",
    "warmup_steady",
    "error_rate",
    "errors_connect_refused",
    "errors_connect_timeout",
    "errors_timeout",
    "errors_read",
    "errors_4xx",
    "errors_5xx",
    "bytes",
    "throughput",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "latency_max_ms",
    "connect_ms",
    "cpu_avg_cores",
    "cpu_peak_cores",
    "cpu_avg_of_limit",
    "cpu_peak_of_limit",
    "cpu_throttled",
    "memory_avg_bytes",
    "memory_peak_bytes",
    "load_cpu_cores",
    "load_cpu_of_limit",
    "restarts",
    "oom_kills",
    "slo",
    "warnings",
    "detail",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// One CSV record for a measurement (absent values are empty; warnings joined by ` | `). A
/// failed measurement's load figures are empty, also when an older operator stored zeros.
pub fn csv_record(run: &str, r: &CellResult) -> Vec<String> {
    let measured = crate::num::measured(r);
    let (c, u) = (&r.coordinates, &r.usage);
    let e = r.errors.as_ref().filter(|_| measured);
    let l = r.latency_ms.as_ref().filter(|_| measured);
    let fig = |v: Option<f64>| opt(v.filter(|_| measured));
    let count = |v: Option<i64>| opt(v.filter(|_| measured));
    let class = |pick: fn(&benchrun_api::ErrorCounts) -> i64| opt(e.map(pick));
    let lat = |pick: fn(&benchrun_api::Latency) -> f64| opt(l.map(pick));
    vec![
        run.to_string(),
        r.cell.to_string(),
        r.repeat.to_string(),
        c.target.clone(),
        c.scenario.clone(),
        c.cpu.clone(),
        c.memory.clone(),
        c.replicas.to_string(),
        c.connections.to_string(),
        opt(c.rate),
        r.outcome.to_string(),
        opt(r.reason.clone()),
        count(r.requests),
        count(r.warmup_requests),
        opt(r.warmup_seconds),
        opt(r.warmup_steady),
        fig(r.error_rate),
        class(|e| e.connect_refused),
        class(|e| e.connect_timeout),
        class(|e| e.timeout),
        class(|e| e.read),
        class(|e| e.status4xx),
        class(|e| e.status5xx),
        count(r.bytes),
        fig(r.throughput),
        lat(|l| l.mean),
        lat(|l| l.p50),
        lat(|l| l.p90),
        lat(|l| l.p99),
        lat(|l| l.p999),
        lat(|l| l.max),
        fig(r.connect_ms),
        opt(u.cpu_avg_cores),
        opt(u.cpu_peak_cores),
        opt(u.cpu_avg_of_limit),
        opt(u.cpu_peak_of_limit),
        opt(u.cpu_throttled),
        opt(u.memory_avg_bytes),
        opt(u.memory_peak_bytes),
        opt(u.load_cpu_cores),
        opt(u.load_cpu_of_limit),
        r.restarts.to_string(),
        r.oom_kills.to_string(),
        opt(r.slo.clone()),
        r.warnings
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" | "),
        opt(r.detail.clone()),
    ]
}

/// Writes the export of one run's results in `format` (`Text` is treated as CSV).
pub fn write_export(
    w: &mut impl Write,
    run: &str,
    results: &[CellResult],
    format: Format,
) -> io::Result<()> {
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, results)?;
            writeln!(w)
        }
        Format::Markdown => measurements_table(results).write_markdown(w),
        Format::Csv | Format::Text => {
            let head: Vec<String> = CSV_COLUMNS.iter().map(|s| s.to_string()).collect();
            let records: Vec<Vec<String>> = results.iter().map(|r| csv_record(run, r)).collect();
            write_csv_rows(
                w,
                std::iter::once(head.as_slice()).chain(records.iter().map(Vec::as_slice)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use benchrun_api::WarningCode;

    fn render(format: Format) -> String {
        let mut out = Vec::new();
        write_export(&mut out, "demo", &fixtures::results(), format).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn csv_has_a_header_and_one_raw_record_per_measurement() {
        let got = render(Format::Csv);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0].split(',').count(), CSV_COLUMNS.len());
        assert!(lines[0].starts_with(
            "run,cell,repeat,target,scenario,cpu,memory,replicas,connections,rate,outcome"
        ));
        assert_eq!(
            lines[1],
            "demo,0,0,express,hello,1,1Gi,1,10,,Measured,,123000,41000,,,0,0,0,0,0,0,0,14760000,4100,0.775,0.62,1.55,3.1,4.65,9.3,,0.95,0.95,0.95,0.95,0,134217728,134217728,0.3,0.3,0,0,Met,,demo-detail-c0-r0"
        );
        // The verdict and the warnings as the operator writes them, by code then message.
        let slow = &fixtures::results()[1];
        let codes: Vec<WarningCode> = slow.warnings.iter().map(|w| w.code).collect();
        assert_eq!(
            codes,
            [WarningCode::GeneratorBound, WarningCode::HighErrorRate]
        );
        let warnings: Vec<String> = slow
            .warnings
            .iter()
            .map(|w| format!("{}: {}", w.code, w.message))
            .collect();
        assert!(
            lines[2].contains(&format!(
                ",Violated: error rate 2.0% > 1%,\"{}\",",
                warnings.join(" | ")
            )),
            "{}",
            lines[2]
        );
        assert!(
            warnings[1]
                .starts_with("HighErrorRate: 2.0% of requests failed (3240 of 162000: 5xx 3240)"),
            "{}",
            warnings[1]
        );
        assert_eq!(
            lines[4],
            r#"demo,3,0,spring,hello,1,1Gi,1,100,,Failed,"target not ready after 3m: ImagePullBackOff: Back-off pulling image ""spring:3.2""",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,0,0,,,"#,
            "a failed measurement has no figures, not zeros (and its reason is quoted)"
        );
        for r in fixtures::results() {
            assert_eq!(
                csv_record("demo", &r).len(),
                CSV_COLUMNS.len(),
                "record of cell {} repeat {} has a field per column",
                r.cell,
                r.repeat
            );
        }
    }

    #[test]
    fn a_failed_cell_stored_with_zeros_by_an_older_operator_exports_no_figures() {
        let old = r#"{"cell": 3, "repeat": 0, "outcome": "Failed", "reason": "x",
            "coordinates": {"target": "spring", "scenario": "hello", "cpu": "1",
                            "memory": "1Gi", "replicas": 1, "connections": 100},
            "requests": 0, "warmupRequests": 0, "errorRate": 0.0, "bytes": 0,
            "throughput": 0.0, "errors": {}, "usage": {},
            "latencyMs": {"mean": 0, "p50": 0, "p90": 0, "p99": 0, "p999": 0, "max": 0}}"#;
        let r: CellResult = serde_json::from_str(old).unwrap();
        let mut new = fixtures::results()[3].clone();
        new.reason = Some("x".into());
        assert_eq!(csv_record("demo", &r), csv_record("demo", &new));
    }

    #[test]
    fn json_is_the_results_array_with_coordinates() {
        let got = render(Format::Json);
        let v: serde_json::Value = serde_json::from_str(&got).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 4);
        assert_eq!(v[1]["coordinates"]["connections"], 100);
        assert_eq!(v[1]["latencyMs"]["p99"], 41.0);
        let back: Vec<CellResult> = serde_json::from_value(v).unwrap();
        assert_eq!(back, fixtures::results());
    }

    #[test]
    fn markdown_is_the_show_table() {
        let got = render(Format::Markdown);
        assert!(got.starts_with("| # | TARGET | SCENARIO |"));
        assert_eq!(got.lines().count(), 6);
    }
}
