//! `spec.load`: how the load generator runs in every cell, parsed into its bounds, durations,
//! load pods and seed.

use std::collections::BTreeMap;
use std::time::Duration;

use super::field::{
    count_in_range, err, parse_duration, split_over_pods, FieldError, MIN_DURATION,
};
use super::resources::{resources, ResourcePlan};
use crate::spec::{Load, MAX_RATE, MAX_REQUESTS};
use crate::units;

/// Bounds of `load.duration`, as the CRD schema's CEL rule states them.
const MIN_LOAD_DURATION: Duration = Duration::from_secs(1);
const MAX_LOAD_DURATION: Duration = Duration::from_secs(3600);

/// Longest `load.rampUp` and `load.thinkTime`.
const MAX_PACING: Duration = Duration::from_secs(3600);

/// How the warm-up is bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Warmup {
    /// No warm-up (flagged as `NoWarmup`).
    None,
    /// Run for a duration.
    Duration(Duration),
    /// Send a number of requests.
    Requests(i64),
    /// `load.warmupUntilSteady`: at least `min` (`load.warmup`, else none), then until the
    /// load generator finds the target steady, at most `max`.
    UntilSteady {
        /// The least warm-up.
        min: Duration,
        /// The most.
        max: Duration,
    },
}

/// `load.warmupUntilSteady.max` when not set.
pub const DEFAULT_STEADY_MAX: Duration = Duration::from_secs(60);
/// Bounds of `load.warmupUntilSteady.max`, as the CRD schema's CEL rule states them: the
/// rule looks back at least 10 s and needs 3 checks, so a cap below 15 s would rarely be
/// anything but reached.
const MIN_STEADY_MAX: Duration = Duration::from_secs(15);
const MAX_STEADY_MAX: Duration = Duration::from_secs(30 * 60);

/// How a measurement is bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A request count over all load pods.
    Requests(i64),
    /// A duration.
    Duration(Duration),
}

/// `spec.load`, parsed (the per-cell values, connections, rate, request count and keep-alive,
/// are in the cells).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LoadPlan {
    /// Measurement bound.
    pub limit: Limit,
    /// Warm-up bound.
    pub warmup: Warmup,
    /// Per-request timeout.
    pub timeout: Duration,
    /// Load pods per measurement, at least one.
    pub pods: i32,
    /// Resources of each load pod.
    pub resources: ResourcePlan,
    /// `load.rampUp`.
    pub ramp_up: Option<Duration>,
    /// `load.thinkTime`.
    pub think_time: Option<Duration>,
    /// `load.seed`.
    pub seed: Option<u64>,
    /// `load.nodeSelector`.
    pub node_selector: BTreeMap<String, String>,
}

/// Parses `spec.load`: its counts within the schema's bounds, exactly one bound, durations
/// the load generator can be given, the closed or open model consistently, and the run-wide
/// rate and request count split evenly over the load pods.
pub(crate) fn parse(load: &Load, e: &mut Vec<FieldError>) -> LoadPlan {
    let resources = resources("spec.load.resources", &load.resources, e);
    counts_in_range(load, e);
    let limit = limit(load, e);
    if load.rate.is_some() && load.duration.is_none() {
        e.push(err("spec.load.rate", "the open model needs load.duration"));
    }
    let warmup = warmup(load, e);
    let ramp_up = pacing("spec.load.rampUp", load.ramp_up.as_deref(), e);
    let think_time = pacing("spec.load.thinkTime", load.think_time.as_deref(), e);
    if load.think_time.is_some() && load.rate.is_some() {
        e.push(err(
            "spec.load.thinkTime",
            "think time is for the closed model: remove it or load.rate (the open model's schedule sets the pace)",
        ));
    }
    let timeout = timeout(&load.timeout, e);
    let pods = load.pods.max(1);
    split_over_load_pods(load, i64::from(pods), e);
    LoadPlan {
        limit,
        warmup,
        timeout,
        pods,
        resources,
        ramp_up,
        think_time,
        // Checked not negative above.
        seed: load.seed.map(|s| s.max(0) as u64),
        node_selector: load.node_selector.clone(),
    }
}

/// The bounds of the load's counts, as the CRD schema declares them.
fn counts_in_range(load: &Load, e: &mut Vec<FieldError>) {
    count_in_range(
        "spec.load.connections",
        load.connections.into(),
        1,
        20_000,
        e,
    );
    if let Some(n) = load.requests {
        count_in_range("spec.load.requests", n, 1, MAX_REQUESTS, e);
    }
    if let Some(n) = load.warmup_requests {
        count_in_range("spec.load.warmupRequests", n, 1, MAX_REQUESTS, e);
    }
    if let Some(seed) = load.seed {
        count_in_range("spec.load.seed", seed, 0, i64::MAX, e);
    }
}

/// Exactly one of `load.requests` and `load.duration`, the duration within its bounds.
fn limit(load: &Load, e: &mut Vec<FieldError>) -> Limit {
    match (load.requests, &load.duration) {
        (Some(n), None) => Limit::Requests(n),
        (None, Some(d)) => {
            let parsed = parse_duration("spec.load.duration", d, e);
            if units::duration(d).is_ok()
                && !(MIN_LOAD_DURATION..=MAX_LOAD_DURATION).contains(&parsed)
            {
                e.push(err(
                    "spec.load.duration",
                    format!(
                        "{d:?} is out of range: use a duration between 1s and 1h, e.g. \"30s\""
                    ),
                ));
            }
            Limit::Duration(parsed)
        }
        _ => {
            e.push(err(
                "spec.load",
                "set exactly one of load.requests (a count) or load.duration (e.g. \"30s\")",
            ));
            Limit::Requests(0)
        }
    }
}

/// At most one of `load.warmup` and `load.warmupRequests`; a duration of 0 is none.
fn warmup(load: &Load, e: &mut Vec<FieldError>) -> Warmup {
    let fixed = fixed_warmup(load, e);
    let Some(steady) = &load.warmup_until_steady else {
        return fixed;
    };
    let field = "spec.load.warmupUntilSteady.max";
    let max = match &steady.max {
        Some(text) => {
            let d = parse_duration(field, text, e);
            if units::duration(text).is_ok() && !(MIN_STEADY_MAX..=MAX_STEADY_MAX).contains(&d) {
                e.push(err(
                    field,
                    format!(
                        "{text:?} is out of range: use a duration between 15s and 30m, e.g. \"1m\""
                    ),
                ));
            }
            d
        }
        None => DEFAULT_STEADY_MAX,
    };
    if load.pods > 1 {
        e.push(err(
            "spec.load.warmupUntilSteady",
            "needs load.pods: 1 (each load pod would end its warm-up on its own and their windows would begin apart): remove load.pods or load.warmupUntilSteady",
        ));
    }
    let min = match fixed {
        Warmup::None => Duration::ZERO,
        Warmup::Duration(d) => d,
        _ => {
            e.push(err(
                "spec.load.warmupUntilSteady",
                "warms up by time: remove load.warmupRequests (load.warmup, a duration, is then the least warm-up)",
            ));
            Duration::ZERO
        }
    };
    if min > max {
        e.push(err(
            "spec.load.warmup",
            format!(
                "{} (with load.warmupUntilSteady, the least warm-up) must not exceed load.warmupUntilSteady.max ({})",
                units::format_duration(min),
                units::format_duration(max)
            ),
        ));
    }
    Warmup::UntilSteady { min, max }
}

/// `load.warmup` or `load.warmupRequests`, at most one; a duration of 0 is none.
fn fixed_warmup(load: &Load, e: &mut Vec<FieldError>) -> Warmup {
    match (&load.warmup, load.warmup_requests) {
        (Some(_), Some(_)) => {
            e.push(err(
                "spec.load",
                "set at most one of warmup and warmupRequests",
            ));
            Warmup::None
        }
        (Some(text), None) => match parse_duration("spec.load.warmup", text, e) {
            Duration::ZERO => Warmup::None,
            d if d < MIN_DURATION => {
                e.push(err(
                    "spec.load.warmup",
                    format!("{text:?} is below 1ms and would reach the load generator as 0s: use 0s for no warm-up or at least \"1ms\", e.g. \"10s\""),
                ));
                Warmup::None
            }
            d => Warmup::Duration(d),
        },
        (None, Some(n)) => Warmup::Requests(n),
        (None, None) => Warmup::None,
    }
}

/// `load.rampUp` or `load.thinkTime` (at `field`): between 1ms and 1h when set.
fn pacing(field: &str, text: Option<&str>, e: &mut Vec<FieldError>) -> Option<Duration> {
    let text = text?;
    let d = parse_duration(field, text, e);
    if !(MIN_DURATION..=MAX_PACING).contains(&d) {
        e.push(err(
            field,
            format!("{text:?} must be between 1ms and 1h, e.g. \"10s\""),
        ));
    }
    Some(d)
}

/// `load.timeout`: at least a millisecond, so that it does not reach the generator as `0s`.
fn timeout(text: &str, e: &mut Vec<FieldError>) -> Duration {
    match units::duration(text) {
        Ok(d) if d < MIN_DURATION => {
            e.push(err(
                "spec.load.timeout",
                format!(
                    "{text:?} is below 1ms and would reach the load generator as 0s: use at least \"1ms\", e.g. \"10s\""
                ),
            ));
            d
        }
        Ok(d) => d,
        Err(x) => {
            e.push(err("spec.load.timeout", x));
            Duration::ZERO
        }
    }
}

/// `load.rate` within its bounds, and it and `load.requests` split evenly over the `pods`
/// load pods (the swept values are checked with the matrix).
fn split_over_load_pods(load: &Load, pods: i64, e: &mut Vec<FieldError>) {
    if let Some(r) = load.rate {
        if !(1..=MAX_RATE).contains(&r) {
            e.push(err(
                "spec.load.rate",
                format!("{r} req/s is out of range: use a rate between 1 and {MAX_RATE}"),
            ));
        }
        let what = format!("a rate of {r} req/s");
        split_over_pods("spec.load.rate", &what, r, pods, false, e);
    }
    if let Some(n) = load.requests {
        split_over_pods(
            "spec.load.requests",
            &format!("{n} requests"),
            n,
            pods,
            false,
            e,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::spec;
    use super::super::{describe, validate};
    use super::*;

    #[test]
    fn connections_not_divisible_by_load_pods_are_rejected_naming_the_field() {
        let errs = validate(&spec(
            r#"{"connections": 10, "pods": 3, "duration": "10s"}"#,
        ))
        .unwrap_err();
        assert_eq!(errs[0].field, "spec.load.connections");
        assert!(
            errs[0].message.contains("multiple of load.pods"),
            "{}",
            errs[0]
        );
    }

    #[test]
    fn rate_not_divisible_by_load_pods_is_rejected() {
        let errs = validate(&spec(
            r#"{"connections": 4, "pods": 2, "duration": "10s", "rate": 1001}"#,
        ))
        .unwrap_err();
        assert_eq!(errs[0].field, "spec.load.rate");
    }

    #[test]
    fn zero_load_pods_are_treated_as_one_without_panicking() {
        let run = validate(&spec(r#"{"connections": 4, "pods": 0, "duration": "10s"}"#)).unwrap();
        assert_eq!(run.load_pods, 1);
    }

    #[test]
    fn timeout_and_warmup_below_a_millisecond_are_rejected() {
        // format_duration has millisecond resolution: these would reach the load generator as 0s.
        let errs = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "timeout": "500us", "warmup": "999us"}"#,
        ))
        .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.load.warmup", "spec.load.timeout"],
            "{}",
            describe(&errs)
        );
        assert!(errs[1].message.contains("at least \"1ms\""), "{}", errs[1]);
        let errs = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "timeout": "0s"}"#,
        ))
        .unwrap_err();
        assert_eq!(errs[0].field, "spec.load.timeout");
        let run = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "timeout": "1ms", "warmup": "0s"}"#,
        ))
        .unwrap();
        assert_eq!((run.timeout, run.warmup), (MIN_DURATION, Warmup::None));
        assert_eq!(units::format_duration(run.timeout), "1ms");
    }

    #[test]
    fn a_warmup_until_steady_has_a_cap_and_takes_load_warmup_as_its_least() {
        let s = Duration::from_secs;
        let run = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "warmupUntilSteady": {}}"#,
        ))
        .unwrap();
        assert_eq!(
            run.warmup,
            Warmup::UntilSteady {
                min: Duration::ZERO,
                max: DEFAULT_STEADY_MAX
            }
        );
        let run = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "warmup": "5s", "warmupUntilSteady": {"max": "2m"}}"#,
        ))
        .unwrap();
        assert_eq!(
            run.warmup,
            Warmup::UntilSteady {
                min: s(5),
                max: s(120)
            }
        );
        let errs = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "warmupRequests": 100, "pods": 2, "warmupUntilSteady": {"max": "10s"}}"#,
        ))
        .unwrap_err();
        let text = describe(&errs);
        assert!(
            text.contains("spec.load.warmupUntilSteady.max: \"10s\" is out of range"),
            "{text}"
        );
        assert!(text.contains("needs load.pods: 1"), "{text}");
        assert!(text.contains("remove load.warmupRequests"), "{text}");
        let errs = validate(&spec(
            r#"{"connections": 4, "duration": "10s", "warmup": "90s", "warmupUntilSteady": {}}"#,
        ))
        .unwrap_err();
        assert_eq!(errs[0].field, "spec.load.warmup", "{}", describe(&errs));
        assert!(
            errs[0]
                .message
                .contains("must not exceed load.warmupUntilSteady.max (1m)"),
            "{}",
            errs[0]
        );
    }

    #[test]
    fn a_duration_below_two_sample_intervals_is_accepted_with_a_warning() {
        let ten = Duration::from_secs(10);
        let run = validate(&spec(r#"{"connections": 4, "duration": "15s"}"#)).unwrap();
        let w = run.short_window_warning(ten).unwrap();
        assert!(
            w.starts_with("spec.load.duration 15s is shorter than 20s: this cluster samples container CPU about every 10s"),
            "{w}"
        );
        // A cluster sampling every 3 s (the local one) needs 6 s.
        let three = Duration::from_secs(3);
        assert_eq!(run.short_window_warning(three), None);
        let run = validate(&spec(r#"{"connections": 4, "duration": "5s"}"#)).unwrap();
        let w = run.short_window_warning(three).unwrap();
        assert!(
            w.starts_with("spec.load.duration 5s is shorter than 6s"),
            "{w}"
        );
        let run = validate(&spec(r#"{"connections": 4, "duration": "20s"}"#)).unwrap();
        assert_eq!(run.short_window_warning(ten), None);
        let run = validate(&spec(r#"{"connections": 4, "requests": 100}"#)).unwrap();
        assert_eq!(run.short_window_warning(ten), None);
    }

    #[test]
    fn pacing_and_the_seed_are_parsed_into_the_plan() {
        let run = validate(&spec(
            r#"{"connections": 4, "duration": "20s", "rampUp": "10s", "thinkTime": "250ms", "seed": 7}"#,
        ))
        .unwrap();
        assert_eq!(run.ramp_up, Some(Duration::from_secs(10)));
        assert_eq!(run.think_time, Some(Duration::from_millis(250)));
        assert_eq!(run.seed, Some(7));
        let errs = validate(&spec(
            r#"{"connections": 4, "duration": "20s", "rampUp": "2h", "thinkTime": "soon"}"#,
        ))
        .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.load.rampUp",
                "spec.load.thinkTime",
                "spec.load.thinkTime"
            ],
            "{}",
            describe(&errs)
        );
    }
}
