//! `trend`: a BenchmarkSchedule's history. Per cell, one row per run with the medians over its
//! repeats and their intervals, the commit or image, and a mark where a change the operator's
//! detector found starts; then the changes. As text, Markdown, CSV (one row per cell and run),
//! JSON (`status.series` and `status.changes`) or a self-contained HTML page with a chart per
//! cell and figure ([`page`]).
//!
//! Pure: the caller reads the schedule and passes it in.

pub mod export;
pub mod page;

use std::io::{self, Write};

use benchrun_api::schedule::{
    BenchmarkSchedule, BenchmarkScheduleStatus, CellSeries, SeriesChange, SeriesPoint,
};
use clap::ValueEnum;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::num::{self, NONE};
use crate::table::{Align, Table};
use crate::Format;

pub use page::write_trend_html;

/// What `trend -o` writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Text, Markdown, CSV or JSON on stdout.
    Format(Format),
    /// The HTML page: to this file, or to stdout when `None` (`-o html`).
    Html(Option<String>),
}

/// Parses `-o`: a format name (`text`, `markdown`, `csv`, `json`, `html`) or a file name ending
/// in `.html` (or `.htm`) to write the page to.
pub fn parse_output(s: &str) -> Result<Output, String> {
    if s == "html" {
        return Ok(Output::Html(None));
    }
    if let Ok(f) = Format::from_str(s, true) {
        return Ok(Output::Format(f));
    }
    if s.ends_with(".html") || s.ends_with(".htm") {
        return Ok(Output::Html(Some(s.to_string())));
    }
    Err(format!(
        "{s:?} is neither a format (text, markdown, csv, json, html) nor a file name ending in .html"
    ))
}

/// Said where a schedule has no point yet.
pub const NO_POINTS: &str = "No points yet: a cell gets a point in the series each time a run of \
     the schedule finishes with a measurement of it.";

/// The schedule's name.
pub fn name(s: &BenchmarkSchedule) -> &str {
    s.metadata.name.as_deref().unwrap_or_default()
}

/// The distinct runs over every cell's series.
fn run_count(status: &BenchmarkScheduleStatus) -> usize {
    let mut runs: Vec<&str> = status
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.run.as_str()))
        .collect();
    runs.sort_unstable();
    runs.dedup();
    runs.len()
}

/// `nightly: 2 cells over 14 runs, 3 changes (2 for the worse)`, or that it has no points.
pub fn headline(s: &BenchmarkSchedule) -> String {
    let status = s.status.clone().unwrap_or_default();
    if status.series.is_empty() {
        return format!("{}: no points yet", name(s));
    }
    let worse = status.changes.iter().filter(|c| c.worse).count();
    format!(
        "{}: {} cells over {} runs, {} changes ({worse} for the worse)",
        name(s),
        status.series.len(),
        run_count(&status),
        status.changes.len(),
    )
}

/// A time as `2026-12-01 02:07` (UTC), or `-`.
pub fn when(t: Option<&Time>) -> String {
    t.map_or_else(
        || NONE.into(),
        |t| t.0.strftime("%Y-%m-%d %H:%M").to_string(),
    )
}

/// The header: schedule, last run and its verdict, next run, the `Regressed` condition (and
/// `Ready` when it is not `True`), the size of the series; each as a label and a value.
pub fn header(s: &BenchmarkSchedule) -> Vec<(&'static str, String)> {
    let status = s.status.clone().unwrap_or_default();
    let mut schedule = format!("{} (UTC)", s.spec.schedule);
    if s.spec.suspend {
        schedule.push_str(", suspended");
    }
    let last = match (&status.last_run, &status.last_run_verdict) {
        (Some(run), Some(v)) => format!("{run} ({v})"),
        (Some(run), None) => run.clone(),
        (None, _) => "none yet".into(),
    };
    let next = match &status.next_schedule_time {
        _ if s.spec.suspend => "none: suspended (the trigger annotation still starts one)".into(),
        Some(t) => format!("{} UTC", when(Some(t))),
        None => NONE.into(),
    };
    let condition = |type_: &str| {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == type_)
            .map(|c| {
                let mut v = c.status.clone();
                if !c.reason.is_empty() {
                    v.push_str(&format!(" ({})", c.reason));
                }
                if !c.message.is_empty() {
                    v.push_str(&format!(": {}", c.message));
                }
                (c.status.as_str() == "True", v)
            })
    };
    let mut out = vec![
        ("Schedule", schedule),
        ("Last run", last),
        ("Next run", next),
        (
            "Regressed",
            condition("Regressed").map_or_else(|| "- (no condition yet)".into(), |c| c.1),
        ),
    ];
    if let Some((false, ready)) = condition("Ready") {
        out.push(("Ready", ready));
    }
    let series = if status.series.is_empty() {
        "no points yet".into()
    } else {
        let provisional = status.changes.iter().filter(|c| c.provisional).count();
        format!(
            "{} cells over {} runs; {} changes, {} provisional",
            status.series.len(),
            run_count(&status),
            status.changes.len(),
            provisional
        )
    };
    out.push(("Series", series));
    out
}

/// The point of `series` where `change` starts: by run name (an index may predate a trim of
/// the oldest points), else by index.
pub fn change_point(series: &CellSeries, change: &SeriesChange) -> Option<usize> {
    series
        .points
        .iter()
        .position(|p| p.run == change.run)
        .or_else(|| usize::try_from(change.index).ok())
        .filter(|&i| i < series.points.len())
}

/// The changes of one cell with the point each starts at, in point order.
pub fn changes_of<'a>(
    series: &CellSeries,
    changes: &'a [SeriesChange],
) -> Vec<(usize, &'a SeriesChange)> {
    let mut out: Vec<(usize, &SeriesChange)> = changes
        .iter()
        .filter(|c| c.cell == series.cell)
        .filter_map(|c| Some((change_point(series, c)?, c)))
        .collect();
    out.sort_by_key(|c| c.0);
    out
}

/// A relative step as a signed percentage with a true minus: `−23 %`, `+4.5 %`.
pub fn percent(step: f64) -> String {
    let p = step * 100.0;
    let digits = if p.abs() >= 10.0 { 0 } else { 1 };
    let sign = if p < 0.0 { "−" } else { "+" };
    format!("{sign}{:.digits$} %", p.abs())
}

/// The step with an arrow for its direction: `▼ −23 %`.
pub fn step_label(c: &SeriesChange) -> String {
    let arrow = if c.step < 0.0 { '▼' } else { '▲' };
    format!("{arrow} {}", percent(c.step))
}

/// `worse` or `better`, with `, provisional` when a later run may still move the change.
fn judgement(c: &SeriesChange) -> String {
    let mut s = if c.worse { "worse" } else { "better" }.to_string();
    if c.provisional {
        s.push_str(", provisional");
    }
    s
}

/// The mark on a row where a change starts: `▼ −23 % throughput (worse)`.
pub fn change_mark(c: &SeriesChange) -> String {
    format!("{} {} ({})", step_label(c), c.figure, judgement(c))
}

/// A figure's value with its unit: `4100 req/s`, `12.1 ms`.
pub fn value(figure: &str, v: f64) -> String {
    match figure {
        "throughput" => format!("{} req/s", num::rps(v)),
        "p99" => format!("{} ms", num::ms(v)),
        _ => num::rps(v),
    }
}

/// One line per change, in the status' order: where, the step, from which run, the levels
/// before and after, and whether it is for the worse and provisional.
pub fn change_lines(status: &BenchmarkScheduleStatus) -> Vec<String> {
    status
        .changes
        .iter()
        .map(|c| {
            let at = status
                .series
                .iter()
                .find(|s| s.cell == c.cell)
                .and_then(|s| change_point(s, c))
                .map_or_else(String::new, |i| format!(" (#{})", i + 1));
            format!(
                "{}: {} {} from {}{at}: {} → {} ({})",
                c.cell,
                c.figure,
                step_label(c),
                c.run,
                value(&c.figure, c.before),
                value(&c.figure, c.after),
                judgement(c)
            )
        })
        .collect()
}

/// `[4050–4180]`, or `-` without an interval.
fn interval(i: Option<[f64; 2]>, fmt: fn(f64) -> String) -> String {
    i.map_or_else(
        || NONE.into(),
        |[lo, hi]| format!("[{}–{}]", fmt(lo), fmt(hi)),
    )
}

/// The commit (hashes cut to 12 characters) or, without one, the cell's target image.
pub fn commit_or_image(series: &CellSeries, p: &SeriesPoint) -> String {
    if let Some(c) = &p.commit {
        let hex = c.len() > 12 && c.chars().all(|ch| ch.is_ascii_hexdigit());
        return if hex { c[..12].to_string() } else { c.clone() };
    }
    p.images
        .get(&series.target)
        .cloned()
        .unwrap_or_else(|| NONE.into())
}

/// One row per point of a cell: ordinal, run, finish time, repeats, throughput and p99
/// medians with their intervals, commit or image, and the changes starting there.
pub fn points_table(series: &CellSeries, changes: &[SeriesChange]) -> Table {
    use Align::{Left as L, Right as R};
    let mut t = Table::new(&[
        ("#", R),
        ("RUN", L),
        ("FINISHED", L),
        ("REPEATS", R),
        ("REQ/S", R),
        ("INTERVAL", L),
        ("P99 MS", R),
        ("INTERVAL", L),
        ("COMMIT / IMAGE", L),
        ("CHANGE", L),
    ]);
    let changes = changes_of(series, changes);
    for (i, p) in series.points.iter().enumerate() {
        let marks: Vec<String> = changes
            .iter()
            .filter(|c| c.0 == i)
            .map(|c| change_mark(c.1))
            .collect();
        t.push(vec![
            (i + 1).to_string(),
            p.run.clone(),
            when(p.time.as_ref()),
            p.repeats.to_string(),
            num::rps(p.throughput),
            interval(p.throughput_interval, num::rps),
            num::or_none(p.p99_ms, num::ms),
            interval(p.p99_interval, num::ms),
            commit_or_image(series, p),
            marks.join("; "),
        ]);
    }
    t
}

/// What the intervals of a cell cover: `the median's interval over each run's repeats covers
/// 75 % with 3 repeats`, one clause per repeat count in the series.
pub fn coverage_note(series: &CellSeries) -> String {
    let mut seen: Vec<(i32, Option<f64>)> = Vec::new();
    for p in &series.points {
        if !seen.iter().any(|s| s.0 == p.repeats) {
            seen.push((p.repeats, p.coverage));
        }
    }
    seen.sort_by_key(|s| s.0);
    let clauses: Vec<String> = seen
        .iter()
        .map(|(n, c)| match c {
            Some(c) => {
                let pct = format!("{:.1}", c * 100.0);
                format!("{} % with {n} repeats", pct.trim_end_matches(".0"))
            }
            None => format!("no interval with {n} repeat"),
        })
        .collect();
    format!(
        "Intervals: distribution-free intervals of the median over each run's repeats; their \
         coverage: {}.",
        clauses.join(", ")
    )
}

/// Renders `trend` in `format`: the header, a table per cell and the changes (text, Markdown);
/// one record per cell and run (CSV); the series and changes (JSON).
pub fn write_trend(w: &mut impl Write, s: &BenchmarkSchedule, format: Format) -> io::Result<()> {
    let status = s.status.clone().unwrap_or_default();
    match format {
        Format::Json => export::write_json(w, &status),
        Format::Csv => export::csv_table(&status).write_csv(w),
        Format::Text => {
            writeln!(w, "{}\n", headline(s))?;
            let lines = header(s);
            let width = lines.iter().map(|h| h.0.len()).max().unwrap_or(0) + 1;
            for (label, v) in &lines {
                writeln!(w, "{:width$}  {v}", format!("{label}:"))?;
            }
            if status.series.is_empty() {
                return writeln!(w, "\n{NO_POINTS}");
            }
            for series in &status.series {
                writeln!(w, "\n{}:", series.cell)?;
                points_table(series, &status.changes).write_text(w)?;
                writeln!(w, "{}", coverage_note(series))?;
            }
            write_changes(w, &status, false)
        }
        Format::Markdown => {
            writeln!(w, "# {}\n", headline(s))?;
            for (label, v) in header(s) {
                writeln!(w, "- {label}: {}", v.replace('|', "\\|"))?;
            }
            if status.series.is_empty() {
                return writeln!(w, "\n{NO_POINTS}");
            }
            for series in &status.series {
                writeln!(w, "\n## {}\n", series.cell)?;
                points_table(series, &status.changes).write_markdown(w)?;
                writeln!(w, "\n{}", coverage_note(series))?;
            }
            write_changes(w, &status, true)
        }
    }
}

/// The changes under a heading (`Changes (3):` and indented lines, or a Markdown section).
fn write_changes(
    w: &mut impl Write,
    status: &BenchmarkScheduleStatus,
    markdown: bool,
) -> io::Result<()> {
    let lines = change_lines(status);
    let title = if lines.is_empty() {
        "Changes: none found in the series".to_string()
    } else {
        format!("Changes ({})", lines.len())
    };
    if markdown {
        writeln!(w, "\n## {title}\n")?;
    } else {
        writeln!(w, "\n{title}{}", if lines.is_empty() { "." } else { ":" })?;
    }
    for l in lines {
        if markdown {
            writeln!(w, "- {}", l.replace('|', "\\|"))?;
        } else {
            writeln!(w, "  {l}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
