//! Statuses for the planner's property tests, and the leaves they are made of: statuses
//! that need not agree with the run (another spec version's, or edited by hand), with indices
//! out of range, results of the wrong length, negative counts, odd phases, stages and times
//! (every phase and stage is a word of its vocabulary: the status cannot hold another).

use benchrun_api::{
    BenchmarkRunStatus, CellResult, Coordinates, CurrentMeasurement, Latency, MetricsPending,
    Outcome, Phase, SloVerdict, Stage, TargetUsage, Warning, WarningCode,
};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use proptest::prelude::*;

use crate::plan::tests::at;

/// An `i32` index or count: mostly small (in range of small runs), sometimes negative or
/// at the edges.
pub fn index32() -> impl Strategy<Value = i32> {
    prop_oneof![6 => 0..8i32, 1 => -3..0i32, 1 => prop::sample::select(vec![i32::MIN, i32::MAX]), 1 => any::<i32>()]
}

/// A `usize` index: mostly small, sometimes far out of range.
pub fn index() -> impl Strategy<Value = usize> {
    prop_oneof![6 => 0..8usize, 1 => prop::sample::select(vec![usize::MAX, i32::MAX as usize + 1])]
}

/// Milliseconds since the epoch: near the fixtures' T0 mostly, else anywhere an `i64` goes.
pub fn millis() -> impl Strategy<Value = i64> {
    prop_oneof![
        6 => (-3_600_000..7_200_000i64).prop_map(|ms| at(ms).as_millisecond()),
        1 => prop::sample::select(vec![i64::MIN, -1, 0, 1, i64::MAX]),
        1 => any::<i64>(),
    ]
}

/// A timestamp: near T0 mostly, else at or near the ends of what `jiff` can hold.
pub fn timestamp() -> impl Strategy<Value = Timestamp> {
    prop_oneof![
        6 => (-3_600_000..7_200_000i64).prop_map(at),
        1 => prop::sample::select(vec![Timestamp::MIN, Timestamp::MAX, Timestamp::UNIX_EPOCH]),
        1 => any::<i64>().prop_map(|ms| Timestamp::from_millisecond(ms).unwrap_or(Timestamp::MAX)),
    ]
}

fn time() -> impl Strategy<Value = Time> {
    timestamp().prop_map(Time)
}

/// A float a figure may hold after a bad parse or a division by zero.
pub fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..1e6f64,
        1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 0.0, f64::MAX, f64::MIN_POSITIVE]),
    ]
}

/// One of `list` mostly, else any short string.
pub fn text(list: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![4 => prop::sample::select(list).prop_map(String::from), 1 => ".{0,12}"]
}

/// Any word of a vocabulary, the first ones more often (they are listed by weight).
fn word<T: Clone + std::fmt::Debug + 'static>(all: &'static [T]) -> impl Strategy<Value = T> {
    prop::sample::select(all)
}

const WARNINGS: &[WarningCode] = &[
    WarningCode::HighVariance,
    WarningCode::MetricsPending,
    WarningCode::MetricsUnavailable,
    WarningCode::NoWarmup,
];

fn warning() -> impl Strategy<Value = Warning> {
    (word(WARNINGS), ".{0,6}").prop_map(|(code, message)| Warning::new(code, message))
}

fn verdict() -> impl Strategy<Value = SloVerdict> {
    prop_oneof![
        Just(SloVerdict::Met),
        Just(SloVerdict::Violated(vec!["p99 1s > 200ms".into()])),
        Just(SloVerdict::Violated(Vec::new())),
    ]
}
const REASONS: &[&str] = &[
    "WaitingForPrometheus",
    "CollectingMetrics",
    "Measuring",
    "Valid",
    "",
];
const TYPES: &[&str] = &[
    "Running",
    "Accepted",
    "Succeeded",
    "Failed",
    "SLOsMet",
    "ChildrenApplied",
];

/// Usage figures as Prometheus may give them: absent, NaN, infinite, negative.
pub fn usage() -> impl Strategy<Value = TargetUsage> {
    let f = || prop::option::of(float());
    let bytes = || prop::option::of(prop::sample::select(vec![0, 100 << 20, i64::MAX, -1]));
    let samples = || prop::option::of(prop::sample::select(vec![0, 1, 2, 40, i32::MIN, i32::MAX]));
    let figures = (f(), f(), f(), f(), bytes(), f());
    let counts = (samples(), samples(), f(), f());
    (figures, counts).prop_map(
        |((avg, peak, of_limit, load, mem, load_of), (cpu_n, mem_n, interval, prom))| TargetUsage {
            cpu_avg_cores: avg,
            cpu_peak_cores: peak,
            cpu_avg_of_limit: of_limit,
            cpu_peak_of_limit: of_limit,
            cpu_throttled: peak,
            memory_avg_bytes: mem,
            memory_peak_bytes: mem,
            load_cpu_cores: load,
            load_cpu_of_limit: load_of,
            cpu_samples: cpu_n,
            memory_samples: mem_n,
            sample_interval_seconds: interval,
            load_cpu_cores_prometheus: prom,
            services: avg
                .map(|a| {
                    vec![benchrun_api::ServiceUsage {
                        name: "db".into(),
                        cpu_avg_cores: Some(a),
                        cpu_avg_of_limit: of_limit,
                        memory_peak_bytes: mem,
                        ..Default::default()
                    }]
                })
                .unwrap_or_default(),
            memory_rss_peak_bytes: mem,
            memory_before_load_bytes: mem,
            pods: mem
                .map(|m| {
                    let pod = |n: &str| benchrun_api::PodUsage {
                        pod: n.into(),
                        cpu_avg_cores: avg,
                        cpu_avg_of_limit: of_limit,
                        memory_peak_bytes: Some(m),
                        memory_rss_peak_bytes: Some(m),
                    };
                    vec![pod("web-5d9f8c7b6c-x2x4z"), pod("web-5d9f8c7b6c-q8r7s")]
                })
                .unwrap_or_default(),
        },
    )
}

fn pending() -> impl Strategy<Value = MetricsPending> {
    (index32(), time(), time(), time(), ".{0,8}").prop_map(|(attempts, first, next, give_up, e)| {
        MetricsPending {
            attempts,
            first_failure: first,
            next_attempt: next,
            give_up_at: give_up,
            last_error: e,
        }
    })
}

fn cell_result() -> impl Strategy<Value = CellResult> {
    let figures = (
        prop::option::of(prop::sample::select(vec![0, 1, 10_000, i64::MAX, -1])),
        prop::option::of(float()),
        prop::option::of(float()),
        prop::option::of((float(), float()).prop_map(|(mean, p99)| Latency {
            mean,
            p50: mean,
            p90: p99,
            p99,
            p999: p99,
            max: p99,
            table: Vec::new(),
        })),
        usage(),
    );
    let record = (
        prop::collection::vec(warning(), 0..3),
        prop::option::of(verdict()),
        prop::option::of(pending()),
        index32(),
        prop::option::of(prop::sample::select(vec![1000, i64::MAX])),
    );
    (index32(), index32(), word(Outcome::ALL), figures, record).prop_map(
        |(cell, repeat, outcome, (requests, throughput, error_rate, latency_ms, usage), rec)| {
            let (warnings, slo, metrics_pending, restarts, rate) = rec;
            CellResult {
                cell,
                repeat,
                coordinates: Coordinates {
                    rate,
                    ..Coordinates::default()
                },
                outcome,
                requests,
                throughput,
                error_rate,
                latency_ms,
                usage,
                restarts,
                oom_kills: restarts,
                warnings,
                slo,
                metrics_pending,
                ..CellResult::default()
            }
        },
    )
}

fn condition() -> impl Strategy<Value = Condition> {
    (text(TYPES), text(&["True", "False"]), text(REASONS), time()).prop_map(|(t, s, r, at)| {
        Condition {
            type_: t,
            status: s,
            reason: r,
            message: String::new(),
            last_transition_time: at,
            observed_generation: None,
        }
    })
}

/// A status that may belong to another spec version, or to none: indices out of range,
/// results of the wrong length, negative counts, odd phases and stages.
pub fn status() -> impl Strategy<Value = BenchmarkRunStatus> {
    let current = (
        index32(),
        index32(),
        word(Stage::ALL),
        time(),
        prop::option::of(".{0,8}"),
    )
        .prop_map(|(cell, repeat, stage, since, job)| CurrentMeasurement {
            cell,
            repeat,
            stage,
            since,
            job,
        });
    (
        prop::option::of(word(Phase::ALL)),
        prop::collection::vec(condition(), 0..4),
        prop::option::of(index32()),
        prop::option::of(time()),
        prop::option::of(time()),
        prop::option::of(current),
        prop::collection::vec(cell_result(), 0..12),
    )
        .prop_map(
            |(phase, conditions, total, start, completion, current, results)| BenchmarkRunStatus {
                phase,
                conditions,
                total,
                start_time: start,
                completion_time: completion,
                current,
                results,
                ..BenchmarkRunStatus::default()
            },
        )
}
