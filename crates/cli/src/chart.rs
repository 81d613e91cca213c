//! `chart`: ASCII bar charts for a first look. Throughput against connections, one group per
//! target, scenario, CPU limit (and the other coordinates); and one measurement's per-second
//! timeline from its detail ConfigMap.
//!
//! Pure. Repeats are averaged; bars of all groups share one scale so they compare.

use std::io::{self, Write};

use benchrun_api::{CellResult, Coordinates};
use serde::Deserialize;

use crate::num::{self, Figures};

/// Width of the longest bar in characters.
pub const BAR_WIDTH: usize = 40;

/// The JSON schema of the load-generator result stored in a detail ConfigMap.
pub const LOAD_RESULT_SCHEMA: &str = "benchrun.dev/load-result/v1";

pub use benchrun_api::DETAIL_KEY;

fn bar(value: f64, max: f64) -> String {
    let n = if max > 0.0 {
        ((value / max) * BAR_WIDTH as f64).round() as usize
    } else {
        0
    };
    format!(
        "{:<width$}",
        "#".repeat(n.min(BAR_WIDTH)),
        width = BAR_WIDTH
    )
}

/// A group's title: every coordinate but connections.
pub fn group_title(c: &Coordinates) -> String {
    let mut s = format!(
        "{}/{}  cpu={} mem={} replicas={}",
        c.target, c.scenario, c.cpu, c.memory, c.replicas
    );
    s.push_str(&num::keep_alive_suffix(c.keep_alive));
    if let Some(r) = c.rate {
        s.push_str(&format!(" rate={r}/s"));
    }
    s
}

/// One connection count of a [`connection_groups`] group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupPoint {
    /// The connection count.
    pub connections: i32,
    /// Mean figures over the measured repeats (`None`: every repeat failed).
    pub figures: Option<Figures>,
    /// Warning codes of the repeats, sorted, without duplicates.
    pub codes: Vec<String>,
}

/// The results grouped by every coordinate but connections (target, scenario, CPU, memory,
/// replicas, rate), titled with [`group_title`]-style text, in matrix order; each group's
/// points sorted by connections, repeats averaged.
pub fn connection_groups(results: &[CellResult]) -> Vec<(String, Vec<GroupPoint>)> {
    let mut groups: Vec<(String, Vec<GroupPoint>)> = Vec::new();
    for r in results {
        let title = group_title(&r.coordinates);
        let gi = match groups.iter().position(|(t, _)| *t == title) {
            Some(i) => i,
            None => {
                groups.push((title, Vec::new()));
                groups.len() - 1
            }
        };
        let conns = r.coordinates.connections;
        if groups[gi].1.iter().any(|p| p.connections == conns) {
            continue;
        }
        let reps = num::measured_repeats(results, &r.coordinates);
        let mut codes: Vec<String> = reps
            .iter()
            .flat_map(|o| o.warnings.iter().map(|w| w.code.to_string()))
            .collect();
        codes.sort();
        codes.dedup();
        groups[gi].1.push(GroupPoint {
            connections: conns,
            figures: Figures::mean(&reps),
            codes,
        });
    }
    for (_, points) in &mut groups {
        points.sort_by_key(|p| p.connections);
    }
    groups
}

/// Writes throughput against connections, one block per target, scenario, CPU/memory/replicas/
/// rate combination, in matrix order. Suspect measurements are marked with their warning codes.
pub fn write_throughput_chart(w: &mut impl Write, results: &[CellResult]) -> io::Result<()> {
    let groups = connection_groups(results);
    let max = groups
        .iter()
        .flat_map(|(_, ps)| ps.iter().filter_map(|p| p.figures.map(|f| f.throughput)))
        .fold(0.0, f64::max);
    let label_width = groups
        .iter()
        .flat_map(|(_, ps)| ps.iter().map(|p| format!("c={}", p.connections).len()))
        .max()
        .unwrap_or(0);
    for (title, points) in groups {
        writeln!(w, "{title}")?;
        for p in points {
            let label = format!("c={}", p.connections);
            let Some(f) = p.figures else {
                writeln!(w, "  {label:<label_width$}  FAILED")?;
                continue;
            };
            let mut line = format!(
                "  {label:<label_width$}  {} {:>7} req/s  p99 {} ms",
                bar(f.throughput, max),
                num::rps(f.throughput),
                num::ms(f.p99_ms)
            );
            if !p.codes.is_empty() {
                line.push_str(&format!("  ! {}", p.codes.join(",")));
            }
            writeln!(w, "{line}")?;
        }
    }
    Ok(())
}

/// One second of a load-generator timeline.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct TimelinePoint {
    /// Unix epoch second.
    pub second: u64,
    /// Requests completed in that second.
    pub requests: u64,
    /// Errors among them.
    #[serde(default)]
    pub errors: u64,
    /// p99 latency of that second in microseconds.
    #[serde(default)]
    pub p99_us: u64,
}

#[derive(Deserialize)]
struct Detail {
    schema: String,
    #[serde(default)]
    timeline: Vec<TimelinePoint>,
}

/// Reads the timeline out of a detail ConfigMap's `result.json`, checking its schema.
pub fn parse_timeline(result_json: &str) -> Result<Vec<TimelinePoint>, String> {
    let d: Detail = serde_json::from_str(result_json)
        .map_err(|e| format!("failed to parse {DETAIL_KEY}: {e}"))?;
    if d.schema != LOAD_RESULT_SCHEMA {
        return Err(format!(
            "{DETAIL_KEY} has schema {:?}, expected {LOAD_RESULT_SCHEMA:?}",
            d.schema
        ));
    }
    Ok(d.timeline)
}

/// Writes one measurement's requests per second, second by second (offsets from the first).
pub fn write_timeline_chart(
    w: &mut impl Write,
    title: &str,
    points: &[TimelinePoint],
) -> io::Result<()> {
    writeln!(w, "{title}")?;
    let Some(first) = points.first() else {
        return writeln!(w, "  (empty timeline)");
    };
    let max = points.iter().map(|p| p.requests as f64).fold(0.0, f64::max);
    for p in points {
        let mut line = format!(
            "  +{:<3} {} {:>7} req/s  p99 {} ms",
            p.second - first.second,
            bar(p.requests as f64, max),
            p.requests,
            num::ms(p.p99_us as f64 / 1000.0)
        );
        if p.errors > 0 {
            line.push_str(&format!("  {} errors", p.errors));
        }
        writeln!(w, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn throughput_chart_groups_by_target_and_cpu_with_one_bar_per_connection_count() {
        let mut out = Vec::new();
        write_throughput_chart(&mut out, &fixtures::results()).unwrap();
        let got = String::from_utf8(out).unwrap();
        fixtures::assert_golden("chart.txt", &got);
    }

    #[test]
    fn timeline_parses_the_load_result_and_charts_each_second() {
        let json = r#"{"schema":"benchrun.dev/load-result/v1","url":"http://x","timeline":[
            {"second":1800000000,"requests":5000,"errors":0,"p50_us":8000,"p99_us":40000,"histogram":""},
            {"second":1800000001,"requests":2500,"errors":3,"p50_us":9000,"p99_us":120000,"histogram":""}]}"#;
        let points = parse_timeline(json).unwrap();
        let mut out = Vec::new();
        write_timeline_chart(&mut out, "#1 express/hello", &points).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "#1 express/hello\n  +0   {}    5000 req/s  p99 40.0 ms\n  +1   {}{}    2500 req/s  p99 120 ms  3 errors\n",
                "#".repeat(40),
                "#".repeat(20),
                " ".repeat(20)
            )
        );
    }

    #[test]
    fn timeline_with_another_schema_is_refused() {
        let err = parse_timeline(r#"{"schema":"other/v9"}"#).unwrap_err();
        assert!(
            err.contains("expected \"benchrun.dev/load-result/v1\""),
            "{err}"
        );
    }
}
