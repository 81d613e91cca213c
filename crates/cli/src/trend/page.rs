//! `trend -o FILE.html`: the schedule's history as one self-contained HTML page, styled and
//! drawn like a run's report (inline SVG by `plotters`, no script, nothing fetched). Per cell a
//! chart of throughput and one of p99 over the runs (the median as a line with points, its
//! interval as a band, the mean between changes dashed, each change a vertical line with its
//! step), then the cell's table; the changes at the end.
//!
//! Pure: the caller reads the schedule and passes it in.

use std::io::{self, Write};

use benchrun_api::schedule::{BenchmarkSchedule, CellSeries, SeriesChange, SeriesPoint};

use super::{
    change_lines, changes_of, commit_or_image, coverage_note, header, headline, name, points_table,
    step_label, value, when, NO_POINTS,
};
use crate::num;
use crate::report::figures::slug;
use crate::report::svg::{Band, Chart, Level, LineChart, Marker, Overlay, Scale, Series};
use crate::report::{write_chart, STYLE};
use crate::table::html_escape;

/// One figure of a point: what it is called and where it is read from.
struct Figure {
    /// `figure` of the status' changes.
    key: &'static str,
    /// Chart heading before the cell.
    title: &'static str,
    /// The y axis' description.
    y_label: &'static str,
    /// The point's median of the figure.
    median: fn(&SeriesPoint) -> Option<f64>,
    /// Its interval.
    interval: fn(&SeriesPoint) -> Option<[f64; 2]>,
    /// A value without its unit, as the tables show it.
    fmt: fn(f64) -> String,
}

const FIGURES: [Figure; 2] = [
    Figure {
        key: "throughput",
        title: "Throughput",
        y_label: "requests per second (median)",
        median: |p| Some(p.throughput),
        interval: |p| p.throughput_interval,
        fmt: num::rps,
    },
    Figure {
        key: "p99",
        title: "p99 latency",
        y_label: "p99 latency (ms, median)",
        median: |p| p.p99_ms,
        interval: |p| p.p99_interval,
        fmt: num::ms,
    },
];

const NOTE: &str = "The median over each run's repeats, runs oldest first and numbered as in the \
    table below (a point's tooltip names its run); the band is the median's interval, the dashed \
    grey line the mean between the changes found, a vertical line a change with its step \
    (dashed while provisional). The y axis does not start at 0.";

/// The x position of point `i`: its ordinal, 1 for the oldest.
fn x(i: usize) -> f64 {
    (i + 1) as f64
}

/// The tooltip of a point: `#3 nightly-3 (2026-12-03 02:07): 4100 req/s [4050–4180], 3 repeats, 3f9c2e1a0b4d`.
fn tip(series: &CellSeries, i: usize, p: &SeriesPoint, f: &Figure, v: f64) -> String {
    let interval = (f.interval)(p).map_or_else(String::new, |[lo, hi]| {
        format!(" [{}–{}]", (f.fmt)(lo), (f.fmt)(hi))
    });
    format!(
        "#{} {} ({}): {}{interval}, {} repeats, {}",
        i + 1,
        p.run,
        when(p.time.as_ref()),
        value(f.key, v),
        p.repeats,
        commit_or_image(series, p)
    )
}

/// Consecutive points with an interval, as band pieces: a point without one ends a piece, and
/// so does a change (`starts`: the points where the figure's changes start), so that the band
/// does not bridge a step.
fn band_pieces(series: &CellSeries, f: &Figure, starts: &[usize]) -> Vec<Vec<(f64, f64, f64)>> {
    let mut pieces = vec![Vec::new()];
    for (i, p) in series.points.iter().enumerate() {
        if starts.contains(&i) {
            pieces.push(Vec::new());
        }
        match (f.median)(p).and((f.interval)(p)) {
            Some([lo, hi]) => pieces.last_mut().unwrap().push((x(i), lo, hi)),
            None => pieces.push(Vec::new()),
        }
    }
    pieces.retain(|p| !p.is_empty());
    pieces
}

/// The mean of each segment between `changes` (each with the point it starts at), from the
/// first point of the segment to its last.
fn levels(changes: &[(usize, &SeriesChange)], points: usize) -> Vec<Level> {
    let Some(first) = changes.first() else {
        return Vec::new();
    };
    let mut out = vec![(0, first.0, first.1.before)];
    for (k, (start, c)) in changes.iter().enumerate() {
        let end = changes.get(k + 1).map_or(points, |n| n.0);
        out.push((*start, end, c.after));
    }
    out.into_iter()
        .filter(|(start, end, _)| end > start)
        .map(|(start, end, y)| Level {
            from: x(start) - 0.3,
            to: x(end - 1) + 0.3,
            y,
        })
        .collect()
}

/// One figure of one cell over the runs; `None` when no run has the figure.
fn figure_chart(
    series: &CellSeries,
    changes: &[SeriesChange],
    f: &Figure,
    id: String,
) -> Option<Chart> {
    let values: Vec<(usize, &SeriesPoint, f64)> = series
        .points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p, (f.median)(p)?)))
        .collect();
    if values.is_empty() {
        return None;
    }
    let changes: Vec<(usize, &SeriesChange)> = changes_of(series, changes)
        .into_iter()
        .filter(|c| c.1.figure == f.key)
        .collect();
    let starts: Vec<usize> = changes.iter().map(|c| c.0).collect();
    let markers = changes
        .iter()
        .map(|(i, c)| Marker {
            x: x(*i) - 0.5,
            label: if c.provisional {
                format!("{} (provisional)", step_label(c))
            } else {
                step_label(c)
            },
            worse: c.worse,
            provisional: c.provisional,
        })
        .collect();
    Some(Chart::Line(LineChart {
        id,
        title: format!("{}: {}", f.title, series.cell),
        note: NOTE.into(),
        x_label: "run (oldest first)".into(),
        x_scale: Scale::Ordinal,
        y_label: f.y_label.into(),
        series: vec![Series {
            tips: values
                .iter()
                .map(|(i, p, v)| tip(series, *i, p, f, *v))
                .collect(),
            ..Series::line(
                "median",
                values.iter().map(|(i, _, v)| (x(*i), *v)).collect(),
            )
        }],
        overlay: Overlay {
            bands: vec![Band {
                name: "interval of the median".into(),
                series: 0,
                pieces: band_pieces(series, f, &starts),
            }],
            levels: levels(&changes, series.points.len()),
            markers,
            zoom_y: true,
        },
    }))
}

/// The charts of every cell (throughput, then p99), each with the index of its cell, and a
/// sentence for each chart that could not be drawn.
pub fn charts(
    series: &[CellSeries],
    changes: &[SeriesChange],
) -> (Vec<(usize, Chart)>, Vec<String>) {
    let mut charts = Vec::new();
    let mut missing = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for (cell, s) in series.iter().enumerate() {
        for f in &FIGURES {
            let mut id = format!("chart-{}-{}", slug(&s.cell), f.key);
            if ids.contains(&id) {
                id = format!("{id}-{cell}");
            }
            ids.push(id.clone());
            match figure_chart(s, changes, f, id) {
                Some(c) => charts.push((cell, c)),
                None => missing.push(format!(
                    "{} of {}: no run has this figure.",
                    f.title, s.cell
                )),
            }
        }
    }
    (charts, missing)
}

/// Writes the page as one HTML document; returns how many charts it holds.
pub fn write_trend_html(
    w: &mut impl Write,
    s: &BenchmarkSchedule,
    generated: &str,
) -> io::Result<usize> {
    let status = s.status.clone().unwrap_or_default();
    let (charts, missing) = charts(&status.series, &status.changes);
    let title = format!("benchrun trend: {}", name(s));
    writeln!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"kubectl-benchrun {}\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>",
        env!("CARGO_PKG_VERSION"),
        html_escape(&title)
    )?;
    let meta = format!(
        "{} · namespace {} · written {generated}",
        headline(s),
        s.metadata.namespace.as_deref().unwrap_or("-")
    );
    writeln!(
        w,
        "<header>\n<h1>{}</h1>\n<p class=\"meta\">{}</p>\n</header>",
        html_escape(&title),
        html_escape(&meta)
    )?;
    writeln!(w, "<section id=\"summary\">\n<h2>Summary</h2>\n<ul>")?;
    for (label, v) in header(s) {
        writeln!(w, "<li>{}: {}</li>", label, html_escape(&v))?;
    }
    writeln!(w, "</ul>\n</section>")?;
    if status.series.is_empty() {
        writeln!(w, "<p>{}</p>\n</body>\n</html>", html_escape(NO_POINTS))?;
        return Ok(0);
    }
    writeln!(
        w,
        "<nav>\n<h2>Charts</h2>\n<p class=\"meta\">A link shows its chart alone (Back returns here).</p>\n<ol>"
    )?;
    for (_, c) in &charts {
        let (id, title) = (c.id(), html_escape(c.title()));
        writeln!(w, "<li><a href=\"#{id}\">{title}</a></li>")?;
    }
    writeln!(w, "</ol>\n</nav>")?;
    for (i, series) in status.series.iter().enumerate() {
        writeln!(
            w,
            "<section id=\"cell-{i}\">\n<h2>{}</h2>",
            html_escape(&series.cell)
        )?;
        for (_, c) in charts.iter().filter(|c| c.0 == i) {
            write_chart(w, c)?;
        }
        writeln!(w, "<div class=\"scroll\">")?;
        points_table(series, &status.changes).write_html(w)?;
        writeln!(
            w,
            "</div>\n<p class=\"meta\">{}</p>\n</section>",
            html_escape(&coverage_note(series))
        )?;
    }
    writeln!(w, "<section id=\"changes\">\n<h2>Changes</h2>")?;
    let lines = change_lines(&status);
    if lines.is_empty() {
        writeln!(w, "<p>None found in the series.</p>")?;
    } else {
        writeln!(w, "<ul>")?;
        for l in lines {
            writeln!(w, "<li>{}</li>", html_escape(&l))?;
        }
        writeln!(w, "</ul>")?;
    }
    if !missing.is_empty() {
        writeln!(w, "<h3>Not drawn</h3>\n<ul class=\"missing\">")?;
        for m in &missing {
            writeln!(w, "<li>{}</li>", html_escape(m))?;
        }
        writeln!(w, "</ul>")?;
    }
    writeln!(w, "</section>\n</body>\n</html>")?;
    Ok(charts.len())
}
