//! What the report draws: chart specifications built from a run's status, its measurements'
//! detail ConfigMaps and, optionally, a baseline run. Pure.

use std::collections::BTreeMap;

use benchrun_api::{units, Capacity, CellResult, Coordinates};
use benchrun_wire::{hist, LoadResult};
use hdrhistogram::Histogram;

use super::svg::{BarChart, Chart, LineChart, Overlay, Scale, Series};
use crate::chart::{connection_groups, group_title};
use crate::num::{self, Figures};

/// At most this many per-second timelines (one chart per cell); later cells are listed as
/// left out.
pub const MAX_TIMELINES: usize = 24;

/// Everything a report is drawn from.
#[derive(Clone, Copy, Debug)]
pub struct Inputs<'a> {
    /// The run's measurements (`status.results`).
    pub results: &'a [CellResult],
    /// The run's capacity models (`status.capacity`).
    pub capacity: &'a [Capacity],
    /// Load results from the detail ConfigMaps, by ConfigMap name (`results[].detail`).
    pub details: &'a BTreeMap<String, LoadResult>,
    /// The baseline run's name and measurements, drawn dashed next to the run's.
    pub baseline: Option<(&'a str, &'a [CellResult])>,
}

/// The charts of a report, in page order, and a sentence for each chart that could not be
/// drawn and why.
pub fn charts(inp: &Inputs) -> (Vec<Chart>, Vec<String>) {
    let mut charts = Vec::new();
    let mut missing = Vec::new();
    charts.push(vs_connections(
        inp,
        "chart-throughput",
        "Throughput against connections",
        "requests per second",
        |f| f.throughput,
    ));
    charts.push(vs_connections(
        inp,
        "chart-p99",
        "p99 latency against connections",
        "p99 latency (ms)",
        |f| f.p99_ms,
    ));
    for chart in [cpu_chart(inp.results), memory_chart(inp.results)] {
        match chart {
            Ok(c) => charts.push(c),
            Err(why) => missing.push(why),
        }
    }
    let spectra = spectrum_charts(inp.results, inp.details);
    if spectra.is_empty() {
        missing.push("Latency spectrum: no measurement has latency figures.".into());
    }
    charts.extend(spectra);
    let (timelines, left_out) = timeline_charts(inp.results, inp.details);
    if timelines.is_empty() {
        missing.push(
            "Per-second timeline: no measurement has a readable detail ConfigMap (deleted, or an \
             older operator)."
                .into(),
        );
    }
    charts.extend(timelines);
    missing.extend(left_out);
    for c in inp.capacity {
        match capacity_chart(c, inp.results) {
            Some(chart) => charts.push(chart),
            None => missing.push(format!(
                "Capacity of {}: not fitted ({}).",
                num::configuration(c),
                c.refused.as_deref().unwrap_or("no fit")
            )),
        }
    }
    if inp.capacity.is_empty() {
        missing.push(
            "Capacity: the run has no capacity model (it needs a connections sweep of at least \
             three values)."
                .into(),
        );
    }
    (charts, missing)
}

/// A throughput or latency figure against connections: one line per group of the run and,
/// dashed, per group of the baseline.
fn vs_connections(
    inp: &Inputs,
    id: &str,
    title: &str,
    y_label: &str,
    pick: fn(&Figures) -> f64,
) -> Chart {
    let mut series = Vec::new();
    let line = |results: &[CellResult], prefix: &str, dashed: bool| -> Vec<Series> {
        connection_groups(results)
            .into_iter()
            .map(|(group, points)| Series {
                dashed,
                ..Series::line(
                    format!("{prefix}{group}"),
                    points
                        .iter()
                        .filter_map(|p| Some((f64::from(p.connections), pick(&p.figures?))))
                        .collect(),
                )
            })
            .collect()
    };
    series.extend(line(inp.results, "", false));
    let mut note =
        "The mean over the measured repeats of each cell; a failed cell leaves a gap.".to_string();
    if let Some((name, base)) = inp.baseline {
        series.extend(line(base, &format!("baseline {name}: "), true));
        note.push_str(&format!(" Dashed: the baseline run {name}."));
    }
    Chart::Line(LineChart {
        id: id.into(),
        title: title.into(),
        note,
        x_label: "connections".into(),
        x_scale: Scale::Log2,
        y_label: y_label.into(),
        series,
        overlay: Overlay::default(),
    })
}

/// The cells in matrix order with their measured repeats.
fn cells(results: &[CellResult]) -> Vec<(i32, &Coordinates, Vec<&CellResult>)> {
    let mut out: Vec<(i32, &Coordinates, Vec<&CellResult>)> = Vec::new();
    for r in results {
        if !out.iter().any(|c| c.0 == r.cell) {
            out.push((
                r.cell,
                &r.coordinates,
                num::measured_repeats(results, &r.coordinates),
            ));
        }
    }
    out.sort_by_key(|c| c.0);
    out
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values
        .filter(|v| v.is_finite())
        .fold((0.0, 0), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

fn usage_chart(
    results: &[CellResult],
    id: &str,
    title: &str,
    note: &str,
    avg: impl Fn(&CellResult) -> Option<f64>,
    peak: impl Fn(&CellResult) -> Option<f64>,
) -> Result<Chart, String> {
    let cells = cells(results);
    let avgs: Vec<Option<f64>> = cells
        .iter()
        .map(|(_, _, reps)| mean(reps.iter().filter_map(|r| avg(r))))
        .collect();
    let peaks: Vec<Option<f64>> = cells
        .iter()
        .map(|(_, _, reps)| mean(reps.iter().filter_map(|r| peak(r))))
        .collect();
    if avgs.iter().chain(&peaks).all(Option::is_none) {
        return Err(format!(
            "{title}: no measurement has these figures (Prometheus unreachable, or the window \
             too short for a sample)."
        ));
    }
    Ok(Chart::Bar(BarChart {
        id: id.into(),
        title: title.into(),
        note: note.into(),
        y_label: "% of the limit".into(),
        categories: cells.iter().map(|c| format!("#{}", c.0)).collect(),
        groups: vec![("average".into(), avgs), ("peak".into(), peaks)],
        reference: Some(100.0),
    }))
}

/// The target's CPU over the window as a share of its limit, per cell.
fn cpu_chart(results: &[CellResult]) -> Result<Chart, String> {
    usage_chart(
        results,
        "chart-cpu",
        "Target CPU against its limit",
        "Average and peak CPU of the target pods per cell (mean over repeats) as a percentage \
         of the cell's CPU limit; the red line is the limit.",
        |r| r.usage.cpu_avg_of_limit.map(|f| f * 100.0),
        |r| r.usage.cpu_peak_of_limit.map(|f| f * 100.0),
    )
}

/// The target's memory over the window as a share of its limit, per cell.
fn memory_chart(results: &[CellResult]) -> Result<Chart, String> {
    let of_limit = |bytes: Option<i64>, r: &CellResult| {
        let limit = units::memory_bytes(&r.coordinates.memory).ok()?;
        let bytes = bytes?;
        (limit > 0).then(|| bytes as f64 / limit as f64 * 100.0)
    };
    usage_chart(
        results,
        "chart-memory",
        "Target memory against its limit",
        "Average and peak working set of the target pods per cell (mean over repeats) as a \
         percentage of the cell's memory limit; the red line is the limit.",
        |r| of_limit(r.usage.memory_avg_bytes, r),
        |r| of_limit(r.usage.memory_peak_bytes, r),
    )
}

/// The latency histogram of every repeat of a cell merged, when all of them have one.
fn merged_histogram(
    reps: &[&CellResult],
    details: &BTreeMap<String, LoadResult>,
) -> Option<Histogram<u64>> {
    let mut acc: Option<Histogram<u64>> = None;
    for r in reps {
        let h = hist::decode(&details.get(r.detail.as_deref()?)?.histograms.latency).ok()?;
        match acc.as_mut() {
            None => acc = Some(h),
            Some(a) => hist::add(a, &h).ok()?,
        }
    }
    acc.filter(|h| !h.is_empty())
}

/// `(quantile, milliseconds)` from 0 % to the highest quantile the histogram's count resolves
/// (at most 99.999 %), twenty points per decade.
pub fn spectrum(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let top = (h.len() as f64).log10().min(5.0);
    (0..=100)
        .map(|k| f64::from(k) / 20.0)
        .take_while(|p| *p <= top + 1e-9)
        .map(|p| {
            let q = 1.0 - 10f64.powf(-p);
            (q, h.value_at_quantile(q) as f64 / 1000.0)
        })
        .collect()
}

/// One latency spectrum chart per group (every coordinate but connections), a line per
/// connection count: from the merged HDR histograms of the cell's repeats, or, without detail
/// ConfigMaps, from the percentiles in status.
fn spectrum_charts(results: &[CellResult], details: &BTreeMap<String, LoadResult>) -> Vec<Chart> {
    let mut charts: Vec<(String, LineChart)> = Vec::new();
    for (_, coords, reps) in cells(results) {
        let points = match merged_histogram(&reps, details) {
            Some(h) => spectrum(&h),
            None => {
                let Some(l) = reps.first().and_then(|r| r.latency_ms.as_ref()) else {
                    continue;
                };
                vec![(0.5, l.p50), (0.9, l.p90), (0.99, l.p99), (0.999, l.p999)]
            }
        };
        let group = group_title(coords);
        let line = Series {
            markers: false,
            ..Series::line(format!("c={}", coords.connections), points)
        };
        match charts.iter_mut().find(|c| c.0 == group) {
            Some((_, c)) => c.series.push(line),
            None => {
                let chart = LineChart {
                    id: format!("chart-spectrum-{}", charts.len()),
                    title: format!("Latency spectrum: {}", group.replace("  ", " ")),
                    note: "Latency at each percentile, one line per connection count (the \
                           repeats' histograms merged; the percentiles in status where no detail \
                           ConfigMap was read)."
                        .into(),
                    x_label: "percentile".into(),
                    x_scale: Scale::Percentile,
                    y_label: "latency (ms)".into(),
                    series: vec![line],
                    overlay: Overlay::default(),
                };
                charts.push((group, chart));
            }
        }
    }
    charts.into_iter().map(|c| Chart::Line(c.1)).collect()
}

/// Requests per second, second by second from the window's start, one chart per cell with a
/// line per repeat; at most [`MAX_TIMELINES`] charts, and a sentence naming the cells left out.
fn timeline_charts(
    results: &[CellResult],
    details: &BTreeMap<String, LoadResult>,
) -> (Vec<Chart>, Vec<String>) {
    let mut charts = Vec::new();
    let mut left_out = Vec::new();
    for (cell, coords, reps) in cells(results) {
        let series: Vec<Series> = reps
            .iter()
            .filter_map(|r| {
                let lr = details.get(r.detail.as_deref()?)?;
                let first = lr.timeline.first()?.second;
                Some(Series {
                    markers: false,
                    ..Series::line(
                        format!("repeat {}", r.repeat),
                        lr.timeline
                            .iter()
                            .map(|t| ((t.second - first) as f64, t.requests as f64))
                            .collect(),
                    )
                })
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        if charts.len() == MAX_TIMELINES {
            left_out.push(cell);
            continue;
        }
        charts.push(Chart::Line(LineChart {
            id: format!("chart-timeline-{cell}"),
            title: format!("Timeline of #{cell}: {}", num::coordinates(coords)),
            note: "Requests completed in each second of the measured window (warm-up excluded), \
                   one line per repeat; the first and last seconds are usually partial."
                .into(),
            x_label: "seconds into the window".into(),
            x_scale: Scale::Linear,
            y_label: "requests per second".into(),
            series,
            overlay: Overlay::default(),
        }));
    }
    let note = (!left_out.is_empty()).then(|| {
        let list: Vec<String> = left_out.iter().map(|c| format!("#{c}")).collect();
        format!(
            "Per-second timeline: {} more cells not drawn ({}); `kubectl benchrun chart RUN --cell N` shows one.",
            left_out.len(),
            list.join(", ")
        )
    });
    (charts, note.into_iter().collect())
}

/// The measured points of a capacity model and its fitted curve (with the peak marked), or
/// `None` when it has no fit.
fn capacity_chart(c: &Capacity, results: &[CellResult]) -> Option<Chart> {
    let fit = c.fit.as_ref()?;
    let points: Vec<(f64, f64)> = results
        .iter()
        .filter(|r| {
            let k = &r.coordinates;
            num::measured(r)
                && (&k.target, &k.scenario, &k.cpu, &k.memory, k.replicas)
                    == (&c.target, &c.scenario, &c.cpu, &c.memory, c.replicas)
                && c.connections.is_none_or(|n| n == k.connections)
                && k.keep_alive == c.keep_alive
        })
        .filter_map(|r| Some((f64::from(r.coordinates.connections), r.throughput?)))
        .collect();
    let highest = points
        .iter()
        .map(|p| p.0)
        .chain(fit.peak_connections.map(|n| n as f64))
        .fold(1.0, f64::max)
        * 1.5;
    let steps = 80;
    let curve: Vec<(f64, f64)> = (0..=steps)
        .map(|i| highest.powf(f64::from(i) / f64::from(steps)))
        .map(|n| (n, fit.throughput(n)))
        .collect();
    let mut series = vec![
        Series {
            markers_only: true,
            ..Series::line("measured (each repeat)", points)
        },
        Series {
            markers: false,
            ..Series::line(
                format!(
                    "USL fit: σ={:.4} κ={:.6} λ={:.1} req/s, R²={:.3}",
                    fit.contention, fit.coherency, fit.throughput_at_one, fit.r_squared
                ),
                curve,
            )
        },
    ];
    if let (Some(n), Some(x)) = (fit.peak_connections, fit.peak_throughput) {
        series.push(Series {
            markers_only: true,
            ..Series::line(
                format!("peak: {x:.0} req/s at {n} connections"),
                vec![(n as f64, x)],
            )
        });
    }
    Some(Chart::Line(LineChart {
        id: format!("chart-capacity-{}", slug(&num::configuration(c))),
        title: format!("Capacity: {}", num::configuration(c)),
        note: "The Universal Scalability Law fitted to the measured throughputs: X(N) = λN / (1 + \
               σ(N−1) + κN(N−1))."
            .into(),
        x_label: "connections".into(),
        x_scale: Scale::Log2,
        y_label: "requests per second".into(),
        series,
        overlay: Overlay::default(),
    }))
}

/// Letters and digits kept, every other run of characters one `-`: an anchor id.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}
