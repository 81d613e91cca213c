//! Which measurements a headline figure may come from: the run's best throughput
//! (`summary.best*`, the `BEST RPS` column) and the capacity fit. (Comparisons between cells
//! use the stricter [`benchrun_api::healthy`].)
//!
//! Pure: a function of one result and the run's SLOs. A cell whose requests mostly failed
//! answers fast and cheaply (a 404 costs the server almost nothing), so its "throughput" is a
//! rate of failures; it must never stand for what a target can serve.

use std::collections::BTreeMap;
use std::fmt;

use benchrun_api::validate::SloPlan;
use benchrun_api::{CellResult, Outcome};

use crate::num::{format_bound, format_rate};

/// Error rates above this fraction keep a measurement out of every headline, SLOs or not.
pub const MAX_HEADLINE_ERROR_RATE: f64 = 0.5;

/// Why a measurement may not headline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ineligible {
    /// It failed or has no throughput: there is no figure.
    NoFigures,
    /// More than [`MAX_HEADLINE_ERROR_RATE`] of its requests failed.
    MostlyErrors {
        /// The measurement's error rate (fraction).
        error_rate: f64,
    },
    /// Its error rate is above the SLO's `errorRate` (which is below 50 %).
    AboveSloErrorRate {
        /// The measurement's error rate (fraction).
        error_rate: f64,
        /// `spec.slo.errorRate` (fraction).
        bound: f64,
    },
}

impl Ineligible {
    /// The reason as a short phrase that counts read well after, e.g. `3 with more than 50 %
    /// errors`.
    pub fn label(&self) -> String {
        match self {
            Ineligible::NoFigures => "failed".into(),
            Ineligible::MostlyErrors { .. } => "with more than 50% errors".into(),
            Ineligible::AboveSloErrorRate { bound, .. } => {
                format!("above the SLO's error rate of {}", format_bound(*bound))
            }
        }
    }
}

impl fmt::Display for Ineligible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ineligible::NoFigures => f.write_str("the measurement failed or has no throughput"),
            Ineligible::MostlyErrors { error_rate } => write!(
                f,
                "{} of its requests failed (more than 50%)",
                format_rate(*error_rate)
            ),
            Ineligible::AboveSloErrorRate { error_rate, bound } => write!(
                f,
                "{} of its requests failed, above the SLO's error rate of {}",
                format_rate(*error_rate),
                format_bound(*bound)
            ),
        }
    }
}

/// Whether a measurement may headline: it was measured, has a throughput, and its error rate
/// is neither above the SLO's `errorRate` (when the run has one) nor above
/// [`MAX_HEADLINE_ERROR_RATE`]. Comparisons between cells use the stricter
/// [`benchrun_api::healthy`].
pub fn headline_eligible(r: &CellResult, slo: Option<&SloPlan>) -> Result<(), Ineligible> {
    if r.outcome != Outcome::Measured || r.throughput.is_none() {
        return Err(Ineligible::NoFigures);
    }
    let Some(error_rate) = r.error_rate else {
        return Ok(());
    };
    if let Some(bound) = slo.and_then(|s| s.error_rate) {
        if error_rate > bound && bound < MAX_HEADLINE_ERROR_RATE {
            return Err(Ineligible::AboveSloErrorRate { error_rate, bound });
        }
    }
    if error_rate > MAX_HEADLINE_ERROR_RATE {
        return Err(Ineligible::MostlyErrors { error_rate });
    }
    Ok(())
}

/// A note of the measurements left out, counted by reason, e.g. `2 with more than 50% errors,
/// 1 failed`; `None` when none was.
pub fn left_out_note<'a>(reasons: impl IntoIterator<Item = &'a Ineligible>) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for why in reasons {
        *counts.entry(why.label()).or_default() += 1;
    }
    (!counts.is_empty()).then(|| {
        let parts: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
        parts.join(", ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_errors(error_rate: f64) -> CellResult {
        CellResult {
            throughput: Some(8144.0),
            error_rate: Some(error_rate),
            ..CellResult::default()
        }
    }

    fn slo(error_rate: f64) -> SloPlan {
        SloPlan {
            error_rate: Some(error_rate),
            ..SloPlan::default()
        }
    }

    #[test]
    fn a_clean_measurement_may_headline() {
        assert_eq!(headline_eligible(&with_errors(0.0), None), Ok(()));
        assert_eq!(
            headline_eligible(&with_errors(0.01), Some(&slo(0.01))),
            Ok(())
        );
    }

    #[test]
    fn a_measurement_of_mostly_errors_never_headlines_even_without_slos() {
        let why = headline_eligible(&with_errors(1.0), None).unwrap_err();
        assert_eq!(why, Ineligible::MostlyErrors { error_rate: 1.0 });
        assert_eq!(
            why.to_string(),
            "100.0% of its requests failed (more than 50%)"
        );
        assert_eq!(headline_eligible(&with_errors(0.5), None), Ok(()));
    }

    #[test]
    fn a_measurement_above_the_slo_error_rate_never_headlines() {
        let why = headline_eligible(&with_errors(0.02), Some(&slo(0.01))).unwrap_err();
        assert_eq!(
            why.to_string(),
            "2.0% of its requests failed, above the SLO's error rate of 1%"
        );
        assert_eq!(why.label(), "above the SLO's error rate of 1%");
    }

    #[test]
    fn a_lax_slo_error_rate_does_not_lift_the_fifty_percent_bound() {
        let why = headline_eligible(&with_errors(0.7), Some(&slo(0.8))).unwrap_err();
        assert_eq!(why, Ineligible::MostlyErrors { error_rate: 0.7 });
    }

    #[test]
    fn a_failed_measurement_has_no_figures_to_headline() {
        let failed = CellResult {
            outcome: Outcome::Failed,
            ..CellResult::default()
        };
        assert_eq!(headline_eligible(&failed, None), Err(Ineligible::NoFigures));
    }

    #[test]
    fn the_note_counts_each_reason() {
        let reasons = [
            Ineligible::MostlyErrors { error_rate: 1.0 },
            Ineligible::NoFigures,
            Ineligible::MostlyErrors { error_rate: 0.9 },
        ];
        assert_eq!(
            left_out_note(&reasons).as_deref(),
            Some("1 failed, 2 with more than 50% errors")
        );
        assert_eq!(left_out_note(&[]), None);
    }
}
