//! `report`: one self-contained HTML file per run — the charts drawn as inline SVG by
//! `plotters`, the tables and notes of `show` — readable in any browser without JavaScript,
//! network access or files beside it.
//!
//! Pure: the caller reads the run, its detail ConfigMaps and the baseline run, and passes
//! them in. A link to a chart (`run.html#chart-p99`) shows that chart alone, for sharing or
//! printing one figure.

pub mod figures;
pub mod overlay;
pub mod svg;

use std::collections::BTreeMap;
use std::io::{self, Write};

use benchrun_api::{BenchmarkRunStatus, CellResult};
use benchrun_wire::LoadResult;

use crate::num;
use crate::show;
use crate::table::{html_escape, Align, Table};

pub use figures::Inputs;
pub use svg::Chart;

/// Everything one report shows.
#[derive(Clone, Copy, Debug)]
pub struct Report<'a> {
    /// The run's name.
    pub name: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its status.
    pub status: &'a BenchmarkRunStatus,
    /// Load results from its detail ConfigMaps, by ConfigMap name.
    pub details: &'a BTreeMap<String, LoadResult>,
    /// The baseline run's name and status, when one is compared.
    pub baseline: Option<(&'a str, &'a BenchmarkRunStatus)>,
    /// When the report was written (shown in the header; passed in to keep this pure).
    pub generated: &'a str,
    /// What could not be read (detail ConfigMaps), listed under "Not drawn".
    pub notes: &'a [String],
}

/// The page styles, shared with the trend page (`trend -o FILE.html`).
pub(crate) const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; margin: 24px auto;
       max-width: 1180px; padding: 0 16px; color: #222; background: #fff; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 1.8em; }
h3 { font-size: 1.05em; margin: 0 0 4px 0; }
.meta { color: #666; margin-top: 0; }
figure.chart { margin: 18px 0 28px 0; padding: 12px; border: 1px solid #e4e4e4; border-radius: 6px;
               page-break-inside: avoid; background: #fff; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figure.chart p { margin: 0 0 8px 0; color: #555; font-size: 0.92em; }
ul.legend { list-style: none; padding: 0; margin: 8px 0 0 0; font-size: 0.9em; }
ul.legend li { display: inline-block; margin: 2px 18px 2px 0; }
.swatch { display: inline-block; width: 22px; height: 0; border-top: 3px solid; vertical-align: middle;
          margin-right: 6px; }
.swatch.dashed { border-top-style: dashed; }
table { border-collapse: collapse; font-size: 0.86em; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: left; white-space: nowrap; }
th { background: #f5f5f5; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
nav ol { columns: 2; font-size: 0.92em; }
.missing { color: #8a5300; }
body:has(figure.chart:target) > :not(:has(figure.chart:target)) { display: none; }
body:has(figure.chart:target) section > :not(figure.chart:target) { display: none; }
";

/// Writes the report as one HTML document; returns how many charts it holds.
pub fn write_report(w: &mut impl Write, r: &Report) -> io::Result<usize> {
    let inputs = Inputs {
        results: &r.status.results,
        capacity: &r.status.capacity,
        details: r.details,
        baseline: r
            .baseline
            .map(|(name, status)| (name, status.results.as_slice())),
    };
    let (charts, mut missing) = figures::charts(&inputs);
    missing.extend(r.notes.iter().cloned());
    let title = format!("benchrun report: {}", r.name);
    writeln!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"kubectl-benchrun {}\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>",
        env!("CARGO_PKG_VERSION"),
        html_escape(&title)
    )?;
    writeln!(w, "<header>\n<h1>{}</h1>", html_escape(&title))?;
    let mut meta = format!(
        "{} · namespace {} · written {}",
        show::headline(r.name, r.status),
        r.namespace,
        r.generated
    );
    if let Some((name, _)) = r.baseline {
        meta.push_str(&format!(" · compared with the baseline run {name}"));
    }
    writeln!(w, "<p class=\"meta\">{}</p>\n</header>", html_escape(&meta))?;

    writeln!(w, "<section id=\"summary\">\n<h2>Summary</h2>\n<ul>")?;
    for l in show::summary_lines(r.status) {
        writeln!(w, "<li>{}</li>", html_escape(&l))?;
    }
    writeln!(w, "</ul>\n</section>")?;

    if !charts.is_empty() {
        writeln!(
            w,
            "<nav>\n<h2>Charts</h2>\n<p class=\"meta\">A link shows its chart alone (Back returns here).</p>\n<ol>"
        )?;
        for c in &charts {
            writeln!(
                w,
                "<li><a href=\"#{}\">{}</a></li>",
                c.id(),
                html_escape(c.title())
            )?;
        }
        writeln!(w, "</ol>\n</nav>")?;
    }
    writeln!(w, "<section id=\"charts\">")?;
    for c in &charts {
        write_chart(w, c)?;
    }
    if !missing.is_empty() {
        writeln!(w, "<h3>Not drawn</h3>\n<ul class=\"missing\">")?;
        for m in &missing {
            writeln!(w, "<li>{}</li>", html_escape(m))?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>")?;

    writeln!(w, "<section id=\"measurements\">\n<h2>Measurements</h2>")?;
    if r.status.results.is_empty() {
        writeln!(w, "<p>No measurements yet.</p>")?;
    } else {
        writeln!(w, "<div class=\"scroll\">")?;
        show::measurements_table(&r.status.results).write_html(w)?;
        writeln!(w, "</div>")?;
    }
    writeln!(w, "</section>")?;
    if !r.status.comparisons.is_empty() {
        writeln!(
            w,
            "<section id=\"comparisons\">\n<h2>Comparisons</h2>\n<p class=\"meta\">Ratios candidate/reference with their 95% intervals over the repeats (the repeat, not the second, is the unit of replication) and the verdict against the tolerance; see docs/metrics.md, Comparisons.</p>\n<div class=\"scroll\">"
        )?;
        crate::intervals::comparisons_table(&r.status.comparisons).write_html(w)?;
        writeln!(w, "</div>\n</section>")?;
    }
    if let Some(table) = percentile_table(&r.status.results) {
        writeln!(
            w,
            "<section id=\"percentiles\">\n<h2>Latency percentiles</h2>\n<p class=\"meta\">\
             The share of requests served within each time (ms), as <code>ab</code> prints it, \
             and the TCP connect times.</p>\n<div class=\"scroll\">"
        )?;
        table.write_html(w)?;
        writeln!(w, "</div>\n</section>")?;
    }
    if !r.status.conditions.is_empty() {
        writeln!(
            w,
            "<section id=\"conditions\">\n<h2>Conditions</h2>\n<div class=\"scroll\">"
        )?;
        show::conditions_table(r.status).write_html(w)?;
        writeln!(w, "</div>\n</section>")?;
    }
    for (heading, lines) in show::sections(r.status) {
        writeln!(w, "<section>\n<h2>{}</h2>\n<ul>", html_escape(&heading))?;
        for l in lines {
            writeln!(w, "<li>{}</li>", html_escape(&l))?;
        }
        writeln!(w, "</ul>\n</section>")?;
    }
    writeln!(w, "</body>\n</html>")?;
    Ok(charts.len())
}

/// One row per measurement with a percentile table: the latency at each of its percentages
/// and the connect times; `None` when no measurement has one (statuses of older operators).
pub fn percentile_table(results: &[CellResult]) -> Option<Table> {
    let percents: Vec<f64> = results
        .iter()
        .filter_map(|r| r.latency_ms.as_ref())
        .find(|l| !l.table.is_empty())?
        .table
        .iter()
        .map(|p| p.percent)
        .collect();
    let heads: Vec<String> = percents.iter().map(|p| format!("{p}%")).collect();
    let mut columns: Vec<(&str, Align)> = vec![("MEASUREMENT", Align::Left)];
    columns.extend(heads.iter().map(|h| (h.as_str(), Align::Right)));
    columns.extend([
        ("CONNECT MIN", Align::Right),
        ("MEAN", Align::Right),
        ("MAX", Align::Right),
    ]);
    let mut t = Table::new(&columns);
    for r in results.iter().filter(|r| num::measured(r)) {
        let Some(l) = r.latency_ms.as_ref().filter(|l| !l.table.is_empty()) else {
            continue;
        };
        let mut row = vec![num::measurement(r)];
        row.extend(percents.iter().map(|p| {
            l.table
                .iter()
                .find(|x| x.percent == *p)
                .map_or_else(|| "-".to_string(), |x| num::ms(x.ms))
        }));
        let c = r.connect_times_ms.as_ref();
        row.extend([
            num::or_none(c.map(|c| c.min), num::ms),
            num::or_none(c.map(|c| c.mean), num::ms),
            num::or_none(c.map(|c| c.max), num::ms),
        ]);
        t.push(row);
    }
    Some(t)
}

/// A chart as a `<figure>` with its heading, note, inline SVG and legend; a chart that
/// cannot be drawn says why in its place.
pub(crate) fn write_chart(w: &mut impl Write, c: &Chart) -> io::Result<()> {
    writeln!(
        w,
        "<figure class=\"chart\" id=\"{}\">\n<h3>{}</h3>\n<p>{}</p>",
        c.id(),
        html_escape(c.title()),
        html_escape(c.note())
    )?;
    match c.to_svg() {
        Ok(svg) => writeln!(w, "{svg}")?,
        Err(e) => writeln!(w, "<p class=\"missing\">not drawn: {}</p>", html_escape(&e))?,
    }
    writeln!(w, "<ul class=\"legend\">")?;
    for (name, color, dashed) in c.legend() {
        writeln!(
            w,
            "<li><span class=\"swatch{}\" style=\"border-color:{color}\"></span>{}</li>",
            if dashed { " dashed" } else { "" },
            html_escape(&name)
        )?;
    }
    writeln!(w, "</ul>\n</figure>")
}

#[cfg(test)]
mod tests;
