//! Which cells may be compared at all. A cell that failed, whose target was OOM-killed, whose
//! load generator set the rate (`GeneratorBound`) or whose requests failed beyond a threshold
//! did not measure the target working: a 404 costs the server nothing, so a reference of
//! failures "serves" fast and any healthy candidate reads as slower. Such a cell is left out
//! of every comparison (within a run, against a baseline, `kubectl benchrun compare`), of the
//! headline and of `Regressed`; the comparison entry says why instead of giving a ratio.
//!
//! **The error threshold** is the run's `spec.slo.errorRate` when it has one (what the user
//! declared acceptable), else [`DEFAULT_MAX_ERROR_RATE`], the 1 % of the `HighErrorRate`
//! warning: above it throughput and latency are as much the failures' as the target's. Pure.

use crate::status::{CellResult, ErrorCounts};
use crate::units::format_percent;
use crate::vocab::{Outcome, WarningCode};

/// Error rate above which a measurement is not compared when the run has no
/// `spec.slo.errorRate`: the threshold of the `HighErrorRate` warning.
pub const DEFAULT_MAX_ERROR_RATE: f64 = 0.01;

/// The error threshold of a run's comparisons: `spec.slo.errorRate` when set, else
/// [`DEFAULT_MAX_ERROR_RATE`].
pub fn max_error_rate(slo_error_rate: Option<f64>) -> f64 {
    slo_error_rate.unwrap_or(DEFAULT_MAX_ERROR_RATE)
}

/// The largest error class of a measurement, e.g. `4xx`.
fn main_error_class(e: &ErrorCounts) -> Option<&'static str> {
    [
        ("connection refused", e.connect_refused),
        ("connect timeouts", e.connect_timeout),
        ("timeouts", e.timeout),
        ("read errors", e.read),
        ("4xx", e.status4xx),
        ("5xx", e.status5xx),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .max_by_key(|(_, n)| *n)
    .map(|(name, _)| name)
}

/// Why one measurement may not be compared, e.g. `had 100% errors (4xx), above the 1% a
/// comparison allows`; `None` when it may. `max_error_rate` is [`max_error_rate`]'s.
pub fn unhealthy(r: &CellResult, max_error_rate: f64) -> Option<String> {
    if r.outcome != Outcome::Measured || r.throughput.is_none() {
        return Some("failed".into());
    }
    if r.warnings.iter().any(|w| w.code == WarningCode::OomKilled) {
        return Some("was OOM-killed".into());
    }
    if r.warnings
        .iter()
        .any(|w| w.code == WarningCode::GeneratorBound)
    {
        return Some(
            "was generator-bound (the load generator, not the target, set the rate)".into(),
        );
    }
    match r.error_rate {
        Some(rate) if rate > max_error_rate => {
            let class = r
                .errors
                .as_ref()
                .and_then(main_error_class)
                .map_or(String::new(), |c| format!(" ({c})"));
            Some(format!(
                "had {} errors{class}, above the {} a comparison allows",
                format_percent(rate),
                format_percent(max_error_rate)
            ))
        }
        _ => None,
    }
}

/// Why the measured repeats `repeats` of one side may not be compared: the first unhealthy
/// repeat's reason prefixed with its cell and repeat (`cell 3 r1 had 100% errors (4xx), …`),
/// or that none was measured. `None` when every repeat is healthy. A side is judged as a
/// whole: keeping only its healthy repeats would pick the lucky windows.
pub fn side_unhealthy(repeats: &[&CellResult], max_error_rate: f64) -> Option<String> {
    let measured: Vec<&&CellResult> = repeats
        .iter()
        .filter(|r| r.outcome == Outcome::Measured)
        .collect();
    if measured.is_empty() {
        return Some(match repeats.first() {
            Some(r) => format!("cell {} has no measured repeat", r.cell),
            None => "has no measured repeat".into(),
        });
    }
    measured.iter().find_map(|r| {
        let why = unhealthy(r, max_error_rate)?;
        Some(if r.repeat > 0 {
            format!("cell {} r{} {why}", r.cell, r.repeat)
        } else {
            format!("cell {} {why}", r.cell)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Warning;

    fn cell(error_rate: f64) -> CellResult {
        CellResult {
            cell: 3,
            throughput: Some(5000.0),
            error_rate: Some(error_rate),
            errors: Some(ErrorCounts {
                status4xx: 100,
                ..ErrorCounts::default()
            }),
            ..CellResult::default()
        }
    }

    #[test]
    fn errors_above_the_threshold_failures_oom_kills_and_a_bound_generator_are_not_compared() {
        assert_eq!(unhealthy(&cell(0.0), 0.01), None);
        assert_eq!(unhealthy(&cell(0.01), 0.01), None);
        assert_eq!(
            unhealthy(&cell(1.0), 0.01).as_deref(),
            Some("had 100% errors (4xx), above the 1% a comparison allows")
        );
        assert_eq!(unhealthy(&cell(0.03), max_error_rate(Some(0.05))), None);
        let mut oom = cell(0.0);
        oom.warnings.push(Warning::new(WarningCode::OomKilled, "x"));
        assert_eq!(unhealthy(&oom, 0.01).as_deref(), Some("was OOM-killed"));
        let mut bound = cell(0.0);
        bound
            .warnings
            .push(Warning::new(WarningCode::GeneratorBound, "x"));
        assert!(unhealthy(&bound, 0.01).unwrap().contains("generator-bound"));
        let failed = CellResult {
            outcome: Outcome::Failed,
            ..cell(0.0)
        };
        assert_eq!(unhealthy(&failed, 0.01).as_deref(), Some("failed"));
        assert_eq!(
            side_unhealthy(&[&failed], 0.01).as_deref(),
            Some("cell 3 has no measured repeat")
        );
        let mut second = cell(1.0);
        second.repeat = 1;
        assert_eq!(
            side_unhealthy(&[&cell(0.0), &second], 0.01).as_deref(),
            Some("cell 3 r1 had 100% errors (4xx), above the 1% a comparison allows")
        );
        assert_eq!(side_unhealthy(&[&cell(0.0), &failed], 0.01), None);
    }
}
