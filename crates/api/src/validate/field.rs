//! Field errors and the small checks every section parser shares: durations, counts in range,
//! counts split over the load pods, unique names and DNS labels.

use std::fmt;
use std::time::Duration;

use k8s_openapi::api::core::v1::EnvVar;

use crate::units;

/// Shortest non-zero duration handed to the load generator: [`units::format_duration`] has
/// millisecond resolution, so anything shorter would reach it as `0s`.
pub(crate) const MIN_DURATION: Duration = Duration::from_millis(1);

/// Prefix of the environment variables the operator injects into target, service and seeding
/// containers (service addresses, the container's own limits, ...). A spec's own `env` may
/// refer to them with `$(...)` but not name one: two entries of one name make every
/// server-side apply of the pod template fail.
pub const RESERVED_ENV_PREFIX: &str = "BENCHRUN_";

/// A problem with one field of the spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// Path of the field, e.g. `spec.load.duration`.
    pub field: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Joins field errors into one condition message.
pub fn describe(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The error `message` about `field`.
pub(crate) fn err(field: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.into(),
        message: message.into(),
    }
}

/// `s` as a duration; [`Duration::ZERO`] and an error about `field` when it is none.
pub(crate) fn parse_duration(field: &str, s: &str, errors: &mut Vec<FieldError>) -> Duration {
    units::duration(s).unwrap_or_else(|e| {
        errors.push(err(field, e));
        Duration::ZERO
    })
}

/// A count outside the bounds the CRD schema declares for it. The apiserver refuses these at
/// admission; an object that skipped admission (an older CRD, a direct write) is refused here
/// too, so no Deployment with 0 replicas or load Job with 0 connections is ever built.
pub(crate) fn count_in_range(
    field: &str,
    value: i64,
    min: i64,
    max: i64,
    errors: &mut Vec<FieldError>,
) {
    if !(min..=max).contains(&value) {
        errors.push(err(
            field,
            format!("{value} is out of range: use a value between {min} and {max}"),
        ));
    }
}

/// `what` (e.g. "100 requests") must split evenly over `pods` load pods: `n` a multiple of
/// `pods` and, with `at_least_one`, at least one per pod.
pub(crate) fn split_over_pods(
    field: impl Into<String>,
    what: &str,
    n: i64,
    pods: i64,
    at_least_one: bool,
    errors: &mut Vec<FieldError>,
) {
    if n % pods != 0 || (at_least_one && n < pods) {
        errors.push(err(
            field,
            format!(
                "{what} cannot be split evenly over {pods} load pods; use a multiple of load.pods"
            ),
        ));
    }
}

/// Each of `names` once only: a name seen before is an error about `field`.
pub(crate) fn unique<'a>(
    field: &str,
    names: impl Iterator<Item = &'a str>,
    errors: &mut Vec<FieldError>,
) {
    let mut seen = std::collections::BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            errors.push(err(
                field,
                format!("{n:?} appears twice; names must be unique"),
            ));
        }
    }
}

/// A lowercase DNS label starting with a letter (the length is checked by the caller).
pub(crate) fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[b.len() - 1] != b'-'
}

/// A name used in child object names: a lowercase DNS label of at most 20 characters.
pub(crate) fn check_name(field: String, name: &str, errors: &mut Vec<FieldError>) {
    if !is_dns_label(name) || name.len() > 20 {
        errors.push(err(
            field,
            "must be a lowercase DNS label of at most 20 characters",
        ));
    }
}

/// An image reference that is not blank.
pub(crate) fn check_image(field: String, image: &str, errors: &mut Vec<FieldError>) {
    if image.trim().is_empty() {
        errors.push(err(field, "must not be empty"));
    }
}

/// No variable of the `env` list at `field` may have a name starting with
/// [`RESERVED_ENV_PREFIX`].
pub(crate) fn check_env(field: &str, env: &[EnvVar], errors: &mut Vec<FieldError>) {
    for (i, v) in env.iter().enumerate() {
        if v.name.starts_with(RESERVED_ENV_PREFIX) {
            errors.push(err(
                format!("{field}[{i}].name"),
                format!(
                    "{:?} starts with {RESERVED_ENV_PREFIX}, which is reserved for the variables the operator injects: rename the variable (its value may still refer to them, e.g. $(BENCHRUN_SERVICE_DB_ADDR))",
                    v.name
                ),
            ));
        }
    }
}
