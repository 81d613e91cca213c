//! `trend -o csv` and `-o json`: the series for other tools, raw numbers. Pure.

use std::io::{self, Write};

use benchrun_api::schedule::{BenchmarkScheduleStatus, CellSeries, SeriesChange};
use serde::Serialize;

use super::changes_of;
use crate::table::{Align, Table};

/// CSV columns of `trend -o csv`: one record per cell and run, raw numbers.
pub const CSV_COLUMNS: [&str; 20] = [
    "cell",
    "target",
    "scenario",
    "index",
    "run",
    "finished",
    "repeats",
    "throughput",
    "throughput_low",
    "throughput_high",
    "p99_ms",
    "p99_low",
    "p99_high",
    "coverage",
    "commit",
    "images",
    "throughput_step",
    "throughput_change",
    "p99_step",
    "p99_change",
];

/// The CSV table: one row per (cell, run); a change starting at the row fills its figure's
/// `_step` (`after / before − 1`) and `_change` (`worse` or `better`, `provisional`).
pub fn csv_table(status: &BenchmarkScheduleStatus) -> Table {
    let columns: Vec<(&str, Align)> = CSV_COLUMNS.iter().map(|c| (*c, Align::Left)).collect();
    let mut t = Table::new(&columns);
    let raw = |v: Option<f64>| v.map_or_else(String::new, |v| v.to_string());
    for s in &status.series {
        let changes = changes_of(s, &status.changes);
        for (i, p) in s.points.iter().enumerate() {
            let change = |figure: &str| {
                changes
                    .iter()
                    .find(|c| c.0 == i && c.1.figure == figure)
                    .map_or_else(
                        || (String::new(), String::new()),
                        |c| {
                            let mut what = if c.1.worse { "worse" } else { "better" }.to_string();
                            if c.1.provisional {
                                what.push_str(" provisional");
                            }
                            (c.1.step.to_string(), what)
                        },
                    )
            };
            let (t_step, t_change) = change("throughput");
            let (p_step, p_change) = change("p99");
            let images: Vec<String> = p.images.iter().map(|(k, v)| format!("{k}={v}")).collect();
            t.push(vec![
                s.cell.clone(),
                s.target.clone(),
                s.scenario.clone(),
                i.to_string(),
                p.run.clone(),
                p.time
                    .as_ref()
                    .map_or_else(String::new, |t| t.0.to_string()),
                p.repeats.to_string(),
                p.throughput.to_string(),
                raw(p.throughput_interval.map(|i| i[0])),
                raw(p.throughput_interval.map(|i| i[1])),
                raw(p.p99_ms),
                raw(p.p99_interval.map(|i| i[0])),
                raw(p.p99_interval.map(|i| i[1])),
                raw(p.coverage),
                p.commit.clone().unwrap_or_default(),
                images.join(" "),
                t_step,
                t_change,
                p_step,
                p_change,
            ]);
        }
    }
    t
}

/// `-o json`: the series and the changes as the status holds them.
#[derive(Serialize)]
struct SeriesJson<'a> {
    series: &'a [CellSeries],
    changes: &'a [SeriesChange],
}

/// Writes `{"series": [...], "changes": [...]}` from the status, pretty-printed.
pub fn write_json(w: &mut impl Write, status: &BenchmarkScheduleStatus) -> io::Result<()> {
    let json = SeriesJson {
        series: &status.series,
        changes: &status.changes,
    };
    serde_json::to_writer_pretty(&mut *w, &json)?;
    writeln!(w)
}
