//! A schedule's history: each finished run's per-cell figures as points of a series, and the
//! steps the changepoint detector finds in those series.
//!
//! Pure: the operator's schedule controller calls it with the runs it reads and writes what it
//! returns into `status.series` and `status.changes`; `kubectl benchrun trend` reads the same.

use std::collections::BTreeMap;

use statrs::distribution::{Binomial, DiscreteCDF};

use crate::changepoint::{self, Options};
use crate::schedule::{
    CellSeries, ChangepointSpec, SeriesChange, SeriesPoint, COMMIT_ANNOTATION, MAX_POINTS,
    MAX_SERIES,
};
use crate::status::{CellResult, Coordinates};
use crate::vocab::{ConditionType, Outcome, Phase, SloSummary, Verdict};
use crate::BenchmarkRun;

/// Default `changepoints.minSegment`.
pub const DEFAULT_MIN_SEGMENT: usize = 4;

/// Default `changepoints.minStep`, as a fraction.
pub const DEFAULT_MIN_STEP: f64 = 0.02;

/// The coverage the median's interval aims for.
const COVERAGE: f64 = 0.95;

/// A cell's key in the series: its full coordinates, so that a cell is the same cell across
/// runs whatever the rest of the matrix, e.g. `demo/compute cpu=500m mem=256Mi c=16`.
pub fn cell_key(c: &Coordinates) -> String {
    let mut s = format!("{}/{} cpu={} mem={}", c.target, c.scenario, c.cpu, c.memory);
    if c.replicas != 1 {
        s += &format!(" replicas={}", c.replicas);
    }
    s += &format!(" c={}", c.connections);
    if let Some(n) = c.requests {
        s += &format!(" n={n}");
    }
    if !c.keeps_alive() {
        s += " keepalive=off";
    }
    if let Some(rate) = c.rate {
        s += &format!(" rate={rate}");
    }
    s
}

/// The median of `values` and its distribution-free interval: the order statistics
/// `x(k)` and `x(n+1−k)` with the largest `k` whose coverage `1 − 2·P(Bin(n, ½) < k)` is at
/// least 95 %, or the whole range when even `k = 1` covers less (fewer than 6 values). Returns
/// the median, the interval and its coverage (`None` for a single value). `None` when empty.
pub fn median_interval(values: &[f64]) -> Option<(f64, [f64; 2], Option<f64>)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    if n == 1 {
        return Some((median, [v[0], v[0]], None));
    }
    let bin = Binomial::new(0.5, n as u64).ok()?;
    // coverage(k) = 1 − 2·P(X ≤ k − 1), decreasing in k.
    let coverage = |k: usize| 1.0 - 2.0 * bin.cdf(k as u64 - 1);
    let mut k = 1;
    while k < n / 2 && coverage(k + 1) >= COVERAGE {
        k += 1;
    }
    Some((median, [v[k - 1], v[n - k]], Some(coverage(k))))
}

/// One point per cell of a finished run: the medians over the cell's measured repeats (those
/// that ran and have a throughput), with their intervals, the run's images and commit. Cells
/// without a measured repeat give no point. Ordered by cell index.
pub fn points(run: &BenchmarkRun) -> Vec<(String, Coordinates, SeriesPoint)> {
    let name = run.metadata.name.clone().unwrap_or_default();
    let status = run.status.clone().unwrap_or_default();
    let images: BTreeMap<String, String> = run
        .spec
        .targets
        .iter()
        .map(|t| {
            let mut digests: Vec<&str> = status
                .results
                .iter()
                .filter(|r| r.coordinates.target == t.name)
                .filter_map(|r| r.environment.as_ref())
                .flat_map(|e| e.target_images.iter().map(String::as_str))
                .collect();
            digests.sort();
            digests.dedup();
            let image = if digests.is_empty() {
                t.image.clone()
            } else {
                digests.join(", ")
            };
            (t.name.clone(), image)
        })
        .collect();
    let commit = run
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(COMMIT_ANNOTATION))
        .cloned();
    let mut by_cell: BTreeMap<i32, Vec<&CellResult>> = BTreeMap::new();
    for r in &status.results {
        if r.outcome == Outcome::Measured && r.throughput.is_some() {
            by_cell.entry(r.cell).or_default().push(r);
        }
    }
    by_cell
        .into_values()
        .filter_map(|rs| {
            let throughputs: Vec<f64> = rs.iter().filter_map(|r| r.throughput).collect();
            let p99s: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.latency_ms.as_ref().map(|l| l.p99))
                .collect();
            let (throughput, t_int, coverage) = median_interval(&throughputs)?;
            let p99 = median_interval(&p99s);
            let coordinates = rs[0].coordinates.clone();
            let point = SeriesPoint {
                run: name.clone(),
                time: status.completion_time.clone(),
                repeats: throughputs.len() as i32,
                throughput,
                throughput_interval: coverage.map(|_| t_int),
                p99_ms: p99.map(|p| p.0),
                p99_interval: p99.and_then(|p| p.2.map(|_| p.1)),
                coverage,
                images: images.clone(),
                environment: rs.iter().find_map(|r| r.environment.clone()).map(|e| {
                    crate::environment::Environment {
                        target_images: Vec::new(),
                        ..e
                    }
                }),
                commit: commit.clone(),
            };
            Some((cell_key(&coordinates), coordinates, point))
        })
        .collect()
}

/// Adds a finished run's points to the series (once: a run already in a cell's series is not
/// added again), keeping at most [`MAX_POINTS`] per cell (the oldest go) and [`MAX_SERIES`]
/// cells. A cell of this run not yet tracked while [`MAX_SERIES`] are takes the place of the
/// series this run does not measure whose newest point is the oldest ([`evictable`]): after a
/// template change the cells it measures now are tracked, and those it no longer measures go
/// first. Only when this run itself measures more than [`MAX_SERIES`] cells is one not
/// tracked. Returns whether anything was added.
pub fn add_run(series: &mut Vec<CellSeries>, run: &BenchmarkRun) -> bool {
    let points = points(run);
    let measured: Vec<&str> = points.iter().map(|(key, _, _)| key.as_str()).collect();
    let mut added = false;
    for (key, coordinates, point) in points.iter().cloned() {
        let at = match series.iter().position(|s| s.cell == key) {
            Some(i) => i,
            None => {
                if series.len() >= MAX_SERIES {
                    let Some(old) = evictable(series, &measured) else {
                        continue;
                    };
                    series.remove(old);
                }
                series.push(CellSeries {
                    cell: key,
                    target: coordinates.target,
                    scenario: coordinates.scenario,
                    points: Vec::new(),
                });
                series.len() - 1
            }
        };
        let s = &mut series[at];
        if s.points.iter().any(|p| p.run == point.run) {
            continue;
        }
        s.points.push(point);
        if s.points.len() > MAX_POINTS {
            let extra = s.points.len() - MAX_POINTS;
            s.points.drain(..extra);
        }
        added = true;
    }
    added
}

/// The series to give up for a new one: among those whose cell is not in `measured` (the
/// cells of the run being added), the one whose newest point is the oldest (a series without
/// a dated point first, then the earliest in the list). `None` when every series is measured.
pub fn evictable(series: &[CellSeries], measured: &[&str]) -> Option<usize> {
    series
        .iter()
        .enumerate()
        .filter(|(_, s)| !measured.contains(&s.cell.as_str()))
        .min_by_key(|(i, s)| {
            let newest = s
                .points
                .iter()
                .filter_map(|p| p.time.as_ref())
                .map(|t| t.0)
                .max();
            (newest, *i)
        })
        .map(|(i, _)| i)
}

/// Whether a run is in any cell's series.
pub fn has_run(series: &[CellSeries], run: &str) -> bool {
    series.iter().any(|s| s.points.iter().any(|p| p.run == run))
}

/// The detector's options from `spec.changepoints` (defaults where unset).
pub fn options(spec: Option<&ChangepointSpec>) -> Options {
    let min_segment = spec
        .and_then(|c| c.min_segment)
        .map_or(DEFAULT_MIN_SEGMENT, |m| m.max(2) as usize);
    let min_step = spec
        .and_then(|c| c.min_step.as_deref())
        .and_then(|s| s.trim_end_matches('%').parse::<f64>().ok())
        .map_or(DEFAULT_MIN_STEP, |p| p / 100.0);
    Options {
        min_segment,
        min_step,
        ..Options::default()
    }
}

/// The steps in every cell's throughput and p99 series, cell by cell, oldest first. A change
/// within the newest `minSegment` runs' reach (`index == len − minSegment`) is `provisional`.
pub fn changes(series: &[CellSeries], opts: &Options) -> Vec<SeriesChange> {
    let mut out = Vec::new();
    for s in series {
        let figures: [(&str, Vec<Option<f64>>, bool); 2] = [
            (
                "throughput",
                s.points.iter().map(|p| Some(p.throughput)).collect(),
                false,
            ),
            ("p99", s.points.iter().map(|p| p.p99_ms).collect(), true),
        ];
        for (figure, values, higher_is_worse) in figures {
            // A figure missing from some run (no latency) is left out of that figure's series.
            let kept: Vec<(usize, f64)> = values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i, v)))
                .collect();
            let xs: Vec<f64> = kept.iter().map(|(_, v)| *v).collect();
            for c in changepoint::changepoints(&xs, opts) {
                let point = kept[c.index].0;
                let environment_change = point.checked_sub(1).and_then(|before| {
                    let (a, b) = (
                        s.points[before].environment.as_ref()?,
                        s.points[point].environment.as_ref()?,
                    );
                    let diff = crate::environment::differences(&[a], &[b]);
                    (!diff.is_empty()).then(|| diff.join("; "))
                });
                out.push(SeriesChange {
                    cell: s.cell.clone(),
                    figure: figure.to_string(),
                    run: s.points[point].run.clone(),
                    index: point as i32,
                    before: c.before,
                    after: c.after,
                    step: c.step,
                    worse: if higher_is_worse {
                        c.step > 0.0
                    } else {
                        c.step < 0.0
                    },
                    provisional: c.index + opts.min_segment.max(1) >= xs.len(),
                    environment_change,
                });
            }
        }
    }
    out
}

/// The run's verdict for the schedule's status: its phase while unfinished; once finished
/// `Failed`, `Regressed` (its `Regressed` condition is `True`: slower than its baseline),
/// `SLO violated`, `Faster` (every compared cell better than its baseline) or `Succeeded`.
pub fn verdict(run: &BenchmarkRun) -> String {
    let Some(status) = run.status.as_ref() else {
        return Phase::Pending.to_string();
    };
    let phase = status.phase.unwrap_or(Phase::Pending);
    if !phase.is_final() {
        return phase.to_string();
    }
    if phase == Phase::Failed {
        return Phase::Failed.to_string();
    }
    let regressed = status
        .conditions
        .iter()
        .any(|c| c.type_ == ConditionType::Regressed.as_str() && c.status == "True");
    if regressed {
        return "Regressed".into();
    }
    if matches!(
        status.summary.as_ref().and_then(|s| s.slo),
        Some(SloSummary::Violated(_))
    ) {
        return "SLO violated".into();
    }
    let verdicts: Vec<Verdict> = status
        .results
        .iter()
        .filter_map(|r| r.baseline.as_ref().map(|b| b.verdict))
        .collect();
    if !verdicts.is_empty() && verdicts.iter().all(|v| *v == Verdict::Better) {
        return "Faster".into();
    }
    Phase::Succeeded.to_string()
}

/// The `Regressed` condition from the changes: `True` when the newest change of some cell's
/// figure is for the worse (naming its first run and the step), reason `StepFound`, or
/// `EnvironmentChanged` when every such step coincides with a change of environment (named in
/// the message); else `False`.
pub fn regressed(changes: &[SeriesChange]) -> (bool, String, String) {
    let mut newest: BTreeMap<(&str, &str), &SeriesChange> = BTreeMap::new();
    for c in changes {
        let e = newest
            .entry((c.cell.as_str(), c.figure.as_str()))
            .or_insert(c);
        if c.index > e.index {
            *e = c;
        }
    }
    let worse: Vec<String> = newest
        .values()
        .filter(|c| c.worse)
        .map(|c| {
            format!(
                "{} of {} {} by {:.1}% from run {} (mean {} → {}{})",
                c.figure,
                c.cell,
                if c.step < 0.0 { "fell" } else { "rose" },
                c.step.abs() * 100.0,
                c.run,
                round(c.before),
                round(c.after),
                if c.provisional { ", provisional" } else { "" }
            ) + &c.environment_change.as_ref().map_or(String::new(), |e| {
                format!(", with a change of environment: {e}")
            })
        })
        .collect();
    if worse.is_empty() {
        let reason = if changes.is_empty() {
            "NoChange"
        } else {
            "NoneWorse"
        };
        (
            false,
            reason.into(),
            "no step for the worse in the series".into(),
        )
    } else {
        let newest_worse: Vec<&&SeriesChange> = newest.values().filter(|c| c.worse).collect();
        let reason = if newest_worse.iter().all(|c| c.environment_change.is_some()) {
            "EnvironmentChanged"
        } else {
            "StepFound"
        };
        (true, reason.into(), worse.join("; "))
    }
}

/// Three significant digits, for messages.
fn round(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
