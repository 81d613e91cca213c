//! `compare`: throughput, p99 and requests per CPU core of cells with equal coordinates across
//! runs, with the ratio to the first run and, from two repeats a side, the 95 % interval of the
//! throughput ratio over the repeats and its verdict at 5 % ([`crate::intervals::across_runs`]).
//!
//! Pure. Repeats of a cell are averaged; failed measurements are left out. A cell that failed
//! every repeat, was OOM-killed, generator-bound or had more than 1 % errors in a repeat is
//! not compared: its ratios are `-` and the interval column says why.

use benchrun_api::{CellResult, Coordinates};

pub use crate::num::Figures;
use crate::num::{self, NONE};
use crate::table::{Align, Table};

/// The coordinates seen in any run (in order of first appearance) and, per run, the figures
/// of each, `None` where that run has no measured repeat of those coordinates.
pub fn align(runs: &[&[CellResult]]) -> Vec<(Coordinates, Vec<Option<Figures>>)> {
    let mut rows: Vec<(Coordinates, Vec<Option<Figures>>)> = Vec::new();
    for r in runs.iter().flat_map(|rs| rs.iter()) {
        if !rows.iter().any(|(c, _)| *c == r.coordinates) {
            rows.push((r.coordinates.clone(), Vec::new()));
        }
    }
    for (coords, figures) in &mut rows {
        for results in runs {
            figures.push(Figures::mean(&num::measured_repeats(results, coords)));
        }
    }
    rows
}

fn ratio(v: f64, base: f64) -> String {
    if base > 0.0 {
        format!("{:.2}x", v / base)
    } else {
        NONE.into()
    }
}

/// The comparison table: coordinates, then per run its req/s, p99 and req/s per core, and
/// from the second run on the ratio of each to the first run's.
pub fn compare_table(names: &[&str], runs: &[&[CellResult]]) -> Table {
    use Align::{Left as L, Right as R};
    let mut heads: Vec<(String, Align)> = ["TARGET", "SCENARIO", "CPU", "MEM"]
        .iter()
        .map(|h| (h.to_string(), L))
        .chain(["REPL", "CONNS", "RATE"].iter().map(|h| (h.to_string(), R)))
        .collect();
    for (i, name) in names.iter().enumerate() {
        heads.push((format!("{name} REQ/S"), R));
        if i > 0 {
            heads.push(("VS 1ST".into(), R));
            heads.push(("95% CI OVER REPEATS".into(), L));
        }
        heads.push((format!("{name} P99 MS"), R));
        if i > 0 {
            heads.push(("VS 1ST".into(), R));
        }
        heads.push((format!("{name} REQ/S/CORE"), R));
        if i > 0 {
            heads.push(("VS 1ST".into(), R));
        }
    }
    let mut t = Table {
        columns: heads,
        rows: Vec::new(),
    };
    for (c, figures) in align(runs) {
        let coords = c.clone();
        let mut row = vec![
            c.target,
            c.scenario,
            c.cpu,
            c.memory,
            c.replicas.to_string(),
            c.connections.to_string(),
            c.rate.map_or_else(|| NONE.into(), |v| v.to_string()),
        ];
        let base = figures.first().copied().flatten();
        let healthy: Vec<bool> = runs
            .iter()
            .map(|rs| num::not_comparable(rs, &coords).is_none())
            .collect();
        for (i, f) in figures.iter().enumerate() {
            // No ratio to or from an unhealthy cell (the interval column says why).
            let compared = healthy[0] && healthy[i];
            let rps = f.map_or_else(|| NONE.into(), |f| num::rps(f.throughput));
            let p99 = f.map_or_else(|| NONE.into(), |f| num::ms(f.p99_ms));
            let per_core = f
                .and_then(|f| f.per_core)
                .map_or_else(|| NONE.into(), num::rps);
            let vs = |pick: fn(&Figures) -> Option<f64>| match (
                f.and_then(|f| pick(&f)),
                base.and_then(|b| pick(&b)),
            ) {
                (Some(v), Some(b)) if compared => ratio(v, b),
                _ => NONE.into(),
            };
            row.push(rps);
            if i > 0 {
                row.push(vs(|f| Some(f.throughput)));
                row.push(crate::intervals::across_runs(runs[0], runs[i], &coords));
            }
            row.push(p99);
            if i > 0 {
                row.push(vs(|f| Some(f.p99_ms)));
            }
            row.push(per_core);
            if i > 0 {
                row.push(vs(|f| f.per_core));
            }
        }
        t.push(row);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn cells_with_equal_coordinates_line_up_with_ratios_to_the_first_run() {
        let before = fixtures::results();
        let mut after = fixtures::results();
        after.truncate(2);
        after[0].throughput = Some(8200.0);
        after[0].latency_ms.as_mut().unwrap().p99 = 1.55;
        after[0].requests_per_core = Some(6474.0);
        let mut again = after[1].clone();
        again.repeat = 1;
        again.throughput = Some(5000.0);
        after.push(again);
        // Cell 1 of the fixtures is generator-bound and cell 3 failed: not compared (issue 52).
        let t = compare_table(&["before", "after"], &[&before, &after]);
        let mut out = Vec::new();
        t.write_text(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\
TARGET   SCENARIO  CPU  MEM  REPL  CONNS  RATE  before REQ/S  before P99 MS  before REQ/S/CORE  after REQ/S  VS 1ST  95% CI OVER REPEATS                                                                                          after P99 MS  VS 1ST  after REQ/S/CORE  VS 1ST
express  hello     1    1Gi     1     10     -          4100           3.10               4316         8200   2.00x  -                                                                                                                    1.55   0.50x              6474   1.50x
express  hello     1    1Gi     1    100     -          5400           41.0               5684         5200       -  not compared: the first run's cell 1 was generator-bound (the load generator, not the target, set the rate)          41.0       -              5684       -
spring   hello     1    1Gi     1     10     -          2950           9.80               4758            -       -  -                                                                                                                       -       -                 -       -
spring   hello     1    1Gi     1    100     -             -              -                  -            -       -  not compared: the first run's cell 3 has no measured repeat                                                             -       -                 -       -
"
        );
    }
}
