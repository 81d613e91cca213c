//! `show`: the per-measurement table, then conditions, warnings spelled out and the summary.
//!
//! Pure: renders a [`BenchmarkRunStatus`] into any [`Write`].

use std::collections::BTreeMap;
use std::io::{self, Write};

use benchrun_api::{BenchmarkRunStatus, Capacity, CellResult, Phase, SloVerdict};

use crate::intervals;
use crate::num::{self, NONE};
use crate::table::{Align, Table};
use crate::Format;

/// The measurement table: one row per measurement, human units.
pub fn measurements_table(results: &[CellResult]) -> Table {
    use Align::{Left as L, Right as R};
    let repeats = results.iter().any(|r| r.repeat > 0);
    // Request counts and keep-alive get a column only in runs that have them.
    let counted = results.iter().any(|r| r.coordinates.requests.is_some());
    let keep_alive = results.iter().any(|r| !r.coordinates.keeps_alive());
    let mut cols = vec![("#", R)];
    if repeats {
        cols.push(("REP", R));
    }
    cols.extend([
        ("TARGET", L),
        ("SCENARIO", L),
        ("CPU", L),
        ("MEM", L),
        ("REPL", R),
        ("CONNS", R),
    ]);
    if counted {
        cols.push(("REQUESTS", R));
    }
    if keep_alive {
        cols.push(("KEEPALIVE", L));
    }
    cols.extend([
        ("RATE", R),
        ("REQ/S", R),
        ("P50 MS", R),
        ("P90 MS", R),
        ("P99 MS", R),
        ("MAX MS", R),
        ("ERR %", R),
        ("CPU CORES", R),
        ("REQ/S/CORE", R),
        ("MEM PEAK MIB", R),
        ("SLO", L),
        ("WARNINGS", L),
    ]);
    let mut t = Table::new(&cols);
    for r in results {
        let c = &r.coordinates;
        let mut row = vec![r.cell.to_string()];
        if repeats {
            row.push(r.repeat.to_string());
        }
        row.extend([
            c.target.clone(),
            c.scenario.clone(),
            c.cpu.clone(),
            c.memory.clone(),
            c.replicas.to_string(),
            c.connections.to_string(),
        ]);
        if counted {
            row.push(c.requests.map_or_else(|| NONE.into(), |n| n.to_string()));
        }
        if keep_alive {
            row.push(if c.keeps_alive() { "on" } else { "off" }.into());
        }
        row.push(c.rate.map_or_else(|| NONE.into(), |v| v.to_string()));
        if num::measured(r) {
            let l = r.latency_ms.as_ref();
            row.extend([
                num::or_none(r.throughput, num::rps),
                num::or_none(l.map(|l| l.p50), num::ms),
                num::or_none(l.map(|l| l.p90), num::ms),
                num::or_none(l.map(|l| l.p99), num::ms),
                num::or_none(l.map(|l| l.max), num::ms),
                num::or_none(r.error_rate, num::percent2),
                num::cpu(r.usage.cpu_avg_cores, r.usage.cpu_avg_of_limit),
                num::or_none(r.requests_per_core, num::rps),
                num::mib(r.usage.memory_peak_bytes),
            ]);
        } else {
            row.push("FAILED".into());
            row.extend(std::iter::repeat_n(NONE.to_string(), 8));
        }
        row.push(num::slo_verdict(r.slo.as_ref()));
        let codes: Vec<&str> = r.warnings.iter().map(|w| w.code.as_str()).collect();
        row.push(if codes.is_empty() {
            NONE.into()
        } else {
            codes.join(",")
        });
        t.push(row);
    }
    t
}

/// The conditions as a table: type, status, reason, message.
pub fn conditions_table(status: &BenchmarkRunStatus) -> Table {
    use Align::Left as L;
    let mut t = Table::new(&[("TYPE", L), ("STATUS", L), ("REASON", L), ("MESSAGE", L)]);
    for c in &status.conditions {
        t.push(vec![
            c.type_.clone(),
            c.status.clone(),
            c.reason.clone(),
            c.message.clone(),
        ]);
    }
    t
}

/// Notes under the table, each a heading and its lines: failures with their reason, SLO
/// violations, and every validity warning's full text grouped by code.
pub fn notes(results: &[CellResult]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let failed: Vec<String> = results
        .iter()
        .filter(|r| !num::measured(r))
        .map(|r| {
            format!(
                "{}: {}",
                num::measurement(r),
                r.reason.as_deref().unwrap_or("no reason recorded")
            )
        })
        .collect();
    if !failed.is_empty() {
        out.push((format!("Failed measurements ({})", failed.len()), failed));
    }
    let violated: Vec<String> = results
        .iter()
        .filter_map(|r| {
            let Some(SloVerdict::Violated(broken)) = &r.slo else {
                return None;
            };
            Some(format!("{}: {}", num::measurement(r), broken.join("; ")))
        })
        .collect();
    if !violated.is_empty() {
        out.push((format!("SLO violations ({})", violated.len()), violated));
    }
    // By the code's word, so they are listed alphabetically.
    let mut by_code: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for r in results {
        for w in &r.warnings {
            by_code.entry(w.code.as_str()).or_default().push(format!(
                "{}: {}",
                num::measurement(r),
                w.message
            ));
        }
    }
    for (code, lines) in by_code {
        out.push((format!("Warning {code} ({})", lines.len()), lines));
    }
    out
}

/// One line per measurement compared with a baseline: its verdict, the throughput and p99
/// ratios, the p-value and the samples, or why it is unmatched. Empty without a baseline.
pub fn baseline_lines(results: &[CellResult]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| Some((r, r.baseline.as_ref()?)))
        .map(|(r, b)| {
            let mut figures = Vec::new();
            match (b.throughput_ratio, b.ratio_low, b.ratio_high) {
                (Some(x), Some(lo), Some(hi)) => {
                    figures.push(format!("{x:.2}x [{lo:.2}–{hi:.2}] the throughput"))
                }
                (Some(x), _, _) => figures.push(format!("{x:.2}x the throughput")),
                _ => {}
            }
            if let Some(x) = b.p99_ratio {
                figures.push(format!("{x:.2}x the p99"));
            }
            match (b.p_value, b.repeats, b.baseline_repeats) {
                (Some(p), Some(n), Some(m)) => {
                    figures.push(format!("p={p} over {n} vs {m} repeats"))
                }
                (Some(p), _, _) => figures.push(format!(
                    "p={p} over {} vs {} per-second samples",
                    b.samples, b.baseline_samples
                )),
                (None, Some(n), Some(m)) => figures.push(format!("{n} vs {m} repeats")),
                _ => {}
            }
            if let Some(why) = &b.reason {
                figures.push(why.clone());
            }
            format!(
                "{}: {} — {}",
                num::measurement(r),
                b.verdict,
                figures.join(", ")
            )
        })
        .collect()
}

/// One line per capacity entry: the configuration, then the fit (peak, coefficients, R²) or the
/// highest rate that met the SLOs, or why there is neither.
pub fn capacity_lines(capacity: &[Capacity]) -> Vec<String> {
    capacity
        .iter()
        .map(|c| {
            let mut head = num::configuration(c);
            if let Some(conns) = c.connections {
                head += &format!(" c={conns}");
            }
            let figures = match (&c.fit, c.max_rate_meeting_slo, &c.refused) {
                (Some(f), _, _) => {
                    let peak = match (f.peak_connections, f.peak_throughput) {
                        (Some(n), Some(x)) => {
                            format!("peak {} req/s at {n} connections", num::rps(x))
                        }
                        _ => "no peak (throughput still rising at the last point)".into(),
                    };
                    format!(
                        "{peak}; contention σ={:.4}, coherency κ={:.6}, λ={} req/s, R²={:.3}",
                        f.contention,
                        f.coherency,
                        num::rps(f.throughput_at_one),
                        f.r_squared
                    )
                }
                (None, Some(rate), _) => format!("highest rate meeting the SLOs: {rate} req/s"),
                (None, None, Some(why)) => format!("no figure: {why}"),
                (None, None, None) => "no figure yet".into(),
            };
            let left_out = c
                .excluded
                .as_ref()
                .map(|e| format!(", left out: {e}"))
                .unwrap_or_default();
            let plural = if c.points == 1 { "" } else { "s" };
            let saturated = c
                .saturation
                .as_ref()
                .map(|s| format!("; saturated: {s}"))
                .unwrap_or_default();
            format!(
                "{head}: {} over {} measurement{plural}{left_out} — {figures}{saturated}",
                c.model, c.points
            )
        })
        .collect()
}

/// With `spec.search`: per configuration, its answer line, then each measurement with its
/// verdict (`250 req/s Pass`, `410 req/s Fail: SLO violated: …`) in the order taken.
pub fn search_lines(search: &[benchrun_api::SearchResult]) -> Vec<String> {
    let mut out = Vec::new();
    for s in search {
        let c = &s.configuration;
        let searched = |axis: &str, text: String| if s.axis == axis { None } else { Some(text) };
        let parts: Vec<String> = [
            Some(format!("{}/{}", c.target, c.scenario)),
            searched("cpu", format!("cpu={}", c.cpu)),
            Some(format!("mem={}", c.memory)),
            searched("replicas", format!("replicas={}", c.replicas)),
            searched(
                "rate",
                c.rate.map(|r| format!("rate={r}")).unwrap_or_default(),
            ),
        ]
        .into_iter()
        .flatten()
        .filter(|p| !p.is_empty())
        .collect();
        out.push(format!("{}: {}", parts.join(" "), s.answer));
        let axis = benchrun_api::search::SearchAxis::from_name(&s.axis);
        for m in &s.measurements {
            let why = m
                .reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            let value = axis.map_or(m.value.to_string(), |a| a.show(m.value));
            out.push(format!(
                "  cell {} repeat {}: {value} {}{why}",
                m.cell, m.repeat, m.verdict
            ));
        }
    }
    out
}

/// Every section under the tables, each a heading and its lines: the [`notes`], then the
/// verdicts against the baseline and the capacity entries when the run has them.
pub fn sections(status: &BenchmarkRunStatus) -> Vec<(String, Vec<String>)> {
    let mut out = notes(&status.results);
    let extra = [
        (
            "Comparisons without an interval",
            intervals::reason_lines(&status.comparisons),
        ),
        ("Against the baseline", baseline_lines(&status.results)),
        ("Capacity", capacity_lines(&status.capacity)),
        ("Search", search_lines(&status.search)),
        ("Adaptive repeats", repeats_lines(status)),
    ];
    for (heading, lines) in extra {
        if !lines.is_empty() {
            out.push((heading.to_string(), lines));
        }
    }
    out
}

/// With `spec.repeatsUntil`: what the rounds reached and which cells each measured again.
fn repeats_lines(status: &BenchmarkRunStatus) -> Vec<String> {
    let Some(r) = &status.repeats_until else {
        return Vec::new();
    };
    let mut lines = vec![r.message.clone()];
    for round in &r.rounds {
        let cells: Vec<String> = round.cells.iter().map(ToString::to_string).collect();
        lines.push(format!(
            "repeat {}: cells {}",
            round.repeat + 1,
            cells.join(", ")
        ));
    }
    lines
}

/// Summary lines: best measurement, failures, suspects, SLO verdict.
pub fn summary_lines(status: &BenchmarkRunStatus) -> Vec<String> {
    let Some(s) = &status.summary else {
        return vec!["no summary yet".into()];
    };
    let measured = status.results.len();
    let mut lines = Vec::new();
    if let Some(best) = s.best_throughput {
        lines.push(format!(
            "best throughput: {best} req/s (p99 {}) at {}",
            s.best_p99.as_deref().unwrap_or(NONE),
            s.best_cell.as_deref().unwrap_or(NONE)
        ));
    }
    if let Some(note) = &s.best_left_out {
        lines.push(format!("left out: {note}"));
    }
    if let Some(h) = &s.headline {
        lines.push(format!("compared: {h}"));
    }
    lines.push(format!("failed: {} of {measured} measurements", s.failed));
    lines.push(format!("suspect (with validity warnings): {}", s.suspect));
    lines.push(format!(
        "SLO: {}",
        s.slo
            .map_or_else(|| "none declared".into(), |v| v.to_string())
    ));
    lines
}

/// The run's headline: `name: Phase, progress n/total`.
pub fn headline(name: &str, status: &BenchmarkRunStatus) -> String {
    format!(
        "{name}: {}, {} measurements",
        status.phase.unwrap_or(Phase::Pending),
        status.progress.as_deref().unwrap_or("0/?")
    )
}

/// Renders the whole `show` report. CSV holds the measurement table only; JSON is the status.
pub fn write_show(
    w: &mut impl Write,
    name: &str,
    status: &BenchmarkRunStatus,
    format: Format,
) -> io::Result<()> {
    let table = measurements_table(&status.results);
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, status)?;
            writeln!(w)
        }
        Format::Csv => table.write_csv(w),
        Format::Text => {
            writeln!(w, "{}\n", headline(name, status))?;
            let answers = intervals::answer_lines(&status.comparisons, &status.results, 8);
            if !answers.is_empty() {
                writeln!(w, "Compared (throughput, 95% intervals over the repeats):")?;
                for l in answers {
                    writeln!(w, "  {l}")?;
                }
                writeln!(w)?;
            }
            if status.results.is_empty() {
                writeln!(w, "no measurements yet")?;
            } else {
                table.write_text(w)?;
            }
            if !status.conditions.is_empty() {
                writeln!(w, "\nConditions:")?;
                conditions_table(status).write_text(w)?;
            }
            if !status.comparisons.is_empty() {
                writeln!(w, "\nComparisons (95% intervals over the repeats):")?;
                intervals::comparisons_table(&status.comparisons).write_text(w)?;
            }
            for (heading, lines) in sections(status) {
                writeln!(w, "\n{heading}:")?;
                for l in lines {
                    writeln!(w, "  {l}")?;
                }
            }
            writeln!(w, "\nSummary:")?;
            for l in summary_lines(status) {
                writeln!(w, "  {l}")?;
            }
            Ok(())
        }
        Format::Markdown => {
            writeln!(w, "# {}\n", headline(name, status))?;
            let answers = intervals::answer_lines(&status.comparisons, &status.results, 8);
            for l in &answers {
                writeln!(w, "- {}", l.replace('|', "\\|"))?;
            }
            if !answers.is_empty() {
                writeln!(w)?;
            }
            writeln!(w, "## Measurements\n")?;
            table.write_markdown(w)?;
            if !status.conditions.is_empty() {
                writeln!(w, "\n## Conditions\n")?;
                conditions_table(status).write_markdown(w)?;
            }
            if !status.comparisons.is_empty() {
                writeln!(w, "\n## Comparisons\n")?;
                intervals::comparisons_table(&status.comparisons).write_markdown(w)?;
            }
            for (heading, lines) in sections(status) {
                writeln!(w, "\n### {heading}\n")?;
                for l in lines {
                    writeln!(w, "- {}", l.replace('|', "\\|"))?;
                }
            }
            writeln!(w, "\n## Summary\n")?;
            for l in summary_lines(status) {
                writeln!(w, "- {l}")?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use benchrun_api::Verdict;

    fn render(format: Format) -> String {
        let mut out = Vec::new();
        write_show(&mut out, "demo", &fixtures::status(), format).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_report_has_aligned_table_conditions_warnings_and_summary() {
        let got = render(Format::Text);
        fixtures::assert_golden("show.txt", &got);
    }

    #[test]
    fn markdown_report_uses_headings_and_tables() {
        let got = render(Format::Markdown);
        fixtures::assert_golden("show.md", &got);
    }

    #[test]
    fn request_counts_and_keep_alive_get_columns_only_when_present() {
        let mut results = fixtures::status().results;
        let csv = |results: &[CellResult]| {
            let mut out = Vec::new();
            measurements_table(results).write_csv(&mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let plain = csv(&results);
        assert!(!plain.contains("REQUESTS") && !plain.contains("KEEPALIVE"));
        results[0].coordinates.requests = Some(1000);
        results[0].coordinates.keep_alive = Some(false);
        let text = csv(&results);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("#,TARGET,SCENARIO,CPU,MEM,REPL,CONNS,REQUESTS,KEEPALIVE,RATE,"),
            "{}",
            lines[0]
        );
        assert!(lines[1].contains(",1000,off,"), "{}", lines[1]);
        assert!(lines[2].contains(",-,on,"), "{}", lines[2]);
        assert_eq!(
            num::coordinates(&results[0].coordinates),
            "express/hello cpu=1 mem=1Gi replicas=1 c=10 n=1000 keepalive=off"
        );
    }

    #[test]
    fn a_search_section_gives_the_answer_then_every_measurement() {
        use benchrun_api::{SearchMeasurement, SearchResult};
        let mut status = fixtures::status();
        let m = |value: f64, cell: i32, repeat: i32, verdict: &str, reason: Option<&str>| {
            SearchMeasurement {
                value,
                cell,
                repeat,
                verdict: verdict.into(),
                reason: reason.map(Into::into),
            }
        };
        status.search = vec![SearchResult {
            kind: "capacity".into(),
            axis: "rate".into(),
            configuration: status.results[0].coordinates.clone(),
            outcome: "Searching".into(),
            answer: "searching: 245 req/s next (2 measured so far, at most 40)".into(),
            worst_case: 40,
            measurements: vec![
                m(20.0, 0, 0, "Pass", None),
                m(
                    3000.0,
                    1,
                    0,
                    "Fail",
                    Some("SLO violated: p99 5279.7ms > 200ms"),
                ),
            ],
            ..Default::default()
        }];
        let (_, lines) = sections(&status)
            .into_iter()
            .find(|(h, _)| h == "Search")
            .expect("a Search section");
        assert_eq!(
            lines,
            [
                "express/hello cpu=1 mem=1Gi replicas=1: searching: 245 req/s next (2 measured so far, at most 40)",
                "  cell 0 repeat 0: 20 req/s Pass",
                "  cell 1 repeat 0: 3000 req/s Fail: SLO violated: p99 5279.7ms > 200ms",
            ]
        );
    }

    #[test]
    fn csv_holds_only_the_measurement_table() {
        let got = render(Format::Csv);
        let lines: Vec<&str> = got.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[0],
            "#,TARGET,SCENARIO,CPU,MEM,REPL,CONNS,RATE,REQ/S,P50 MS,P90 MS,P99 MS,MAX MS,ERR %,CPU CORES,REQ/S/CORE,MEM PEAK MIB,SLO,WARNINGS"
        );
        assert_eq!(
            lines[2],
            "1,express,hello,1,1Gi,1,100,-,5400,8.20,20.5,41.0,123,2.00,0.95 (95%),5684,128,Violated,\"GeneratorBound,HighErrorRate\""
        );
        assert_eq!(
            lines[4],
            "3,spring,hello,1,1Gi,1,100,-,FAILED,-,-,-,-,-,-,-,-,-,-"
        );
    }

    #[test]
    fn json_is_the_status_and_parses_back() {
        let got = render(Format::Json);
        let back: BenchmarkRunStatus = serde_json::from_str(&got).unwrap();
        assert_eq!(back, fixtures::status());
    }

    #[test]
    fn adaptive_repeats_show_what_was_reached_and_each_round() {
        let mut status = fixtures::status();
        assert!(!sections(&status)
            .iter()
            .any(|(h, _)| h == "Adaptive repeats"));
        status.repeats_until = Some(benchrun_api::repeats::RepeatsReached {
            repeats: 4,
            rounds: vec![benchrun_api::repeats::RepeatRound {
                repeat: 3,
                cells: vec![0, 2],
            }],
            goal_met: true,
            widest: Some(0.041),
            message: "every comparison within ±5% after 4 repeats: widest ±4.1% (spring/express)"
                .into(),
        });
        let (_, lines) = sections(&status)
            .into_iter()
            .find(|(h, _)| h == "Adaptive repeats")
            .expect("an Adaptive repeats section");
        assert_eq!(
            lines,
            [
                "every comparison within ±5% after 4 repeats: widest ±4.1% (spring/express)",
                "repeat 4: cells 0, 2"
            ]
        );
    }

    #[test]
    fn baseline_lines_give_the_verdict_and_its_evidence() {
        let mut results = fixtures::results();
        assert!(baseline_lines(&results).is_empty());
        results[1].baseline = Some(benchrun_api::BaselineComparison {
            verdict: Verdict::Worse,
            throughput_ratio: Some(0.6),
            p99_ratio: Some(1.5),
            p_value: Some(0.00012),
            baseline_samples: 60,
            samples: 30,
            reason: None,
            ..Default::default()
        });
        results[2].baseline = Some(benchrun_api::BaselineComparison {
            verdict: Verdict::Unmatched,
            reason: Some("BenchmarkRun old has no measured cell with these coordinates".into()),
            ..Default::default()
        });
        assert_eq!(
            baseline_lines(&results),
            vec![
                "#1 express/hello cpu=1 mem=1Gi replicas=1 c=100: Worse — 0.60x the throughput, 1.50x the p99, p=0.00012 over 30 vs 60 per-second samples",
                "#2 spring/hello cpu=1 mem=1Gi replicas=1 c=10: Unmatched — BenchmarkRun old has no measured cell with these coordinates",
            ]
        );
    }

    #[test]
    fn repeat_column_appears_only_when_a_run_repeats() {
        let mut results = fixtures::results();
        assert_eq!(measurements_table(&results).columns[1].0, "TARGET");
        results[1].repeat = 1;
        assert_eq!(measurements_table(&results).columns[1].0, "REP");
    }
}
