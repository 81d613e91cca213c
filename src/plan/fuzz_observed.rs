//! Observations for the planner's property tests: any slot, target, load Job, detail and
//! Prometheus answer, unrelated to the status (children changed behind the operator's back).

use std::collections::BTreeMap;
use std::time::Duration;

use benchrun_wire::LoadResult;
use proptest::prelude::*;

use super::status_inputs::{float, index, index32, millis, text, timestamp, usage};
use crate::kills::ContainerFacts;
use crate::observed::{Collection, JobObserved, Observed, PendingObserved, TargetObserved};
use crate::results;
use crate::slots::{RunView, SlotFacts};

/// A load result of the fixtures' shape with odd windows and counts; its histograms decode
/// (so several merge) unless `broken`.
pub fn load_result() -> impl Strategy<Value = LoadResult> {
    let window = prop_oneof![
        4 => millis().prop_map(|ms| ms as u64),
        1 => prop::sample::select(vec![0, u64::MAX, i64::MAX as u64 + 1]),
    ];
    let count = || prop::sample::select(vec![0u64, 1, 10_000, u64::MAX / 4]);
    (
        window,
        0..60_000u64,
        count(),
        count(),
        float(),
        count(),
        any::<bool>(),
    )
        .prop_map(
            |(start, len, requests, errors, throughput, threads, broken)| {
                let mut h = benchrun_wire::hist::new_latency();
                h.saturating_record(len.max(1));
                let mut r = results::tests::load();
                r.window_start_ms = start;
                r.window_end_ms = start.saturating_add(len);
                r.requests = requests;
                r.errors.total = errors;
                r.errors.timeout = errors;
                r.throughput = throughput;
                r.threads = threads;
                r.latency.p99_us = len;
                r.histograms.latency = if broken {
                    "%".into()
                } else {
                    benchrun_wire::hist::encode(&h)
                };
                r.histograms.connect = r.histograms.latency.clone();
                r
            },
        )
}

fn collection() -> impl Strategy<Value = Collection> {
    let extra = prop::collection::btree_map(".{0,6}", float(), 0..2);
    prop_oneof![
        (usage(), extra).prop_map(|u| Collection::Answered(Ok(u))),
        ".{0,8}".prop_map(|e| Collection::Answered(Err(e))),
        ".{0,8}".prop_map(Collection::Unreachable),
    ]
}

fn container() -> impl Strategy<Value = ContainerFacts> {
    let reason = prop::option::of(text(&["OOMKilled", "Error"]));
    (
        text(&["web-0", "web-1"]),
        index32(),
        any::<bool>(),
        reason,
        prop::option::of(millis()),
    )
        .prop_map(
            |(pod, restart_count, newest_dead, last_reason, last_finished_ms)| ContainerFacts {
                pod,
                restart_count,
                newest_dead,
                last_reason,
                last_finished_ms,
            },
        )
}

fn target() -> impl Strategy<Value = TargetObserved> {
    let nodes = prop::collection::vec(text(&["node-a", "node-b"]), 0..3);
    let flags = (any::<bool>(), any::<bool>(), prop::option::of(".{0,8}"));
    (
        flags,
        prop::option::of(millis()),
        index32(),
        prop::collection::vec(container(), 0..3),
        nodes,
    )
        .prop_map(
            |((ready, fatal, problem), ready_since_ms, restarts, containers, nodes)| {
                TargetObserved {
                    ready,
                    ready_since_ms,
                    restarts,
                    containers,
                    nodes,
                    problem,
                    fatal,
                    ..TargetObserved::default()
                }
            },
        )
}

fn job() -> impl Strategy<Value = JobObserved> {
    let pod = prop_oneof![4 => load_result().prop_map(Ok), 1 => ".{0,8}".prop_map(Err)];
    prop_oneof![
        Just(JobObserved::Absent),
        Just(JobObserved::Running),
        ".{0,8}".prop_map(JobObserved::Failed),
        prop::collection::vec(pod, 0..4).prop_map(JobObserved::Succeeded),
    ]
}

fn pending_observed() -> impl Strategy<Value = PendingObserved> {
    let collected = prop_oneof![
        4 => (load_result(), collection()).prop_map(Ok),
        1 => ".{0,8}".prop_map(Err),
    ];
    (index(), index(), collected).prop_map(|(cell, repeat, collected)| PendingObserved {
        cell,
        repeat,
        collected,
    })
}

/// Any slot facts: a few runs, this one among them or not, in any phase, and any grants.
fn slot_facts() -> impl Strategy<Value = SlotFacts> {
    let key = || text(&["team/demo", "team/other", "x/y"]);
    let view = (
        key(),
        prop::option::of(prop::sample::select(benchrun_api::Phase::ALL)),
        prop::option::of(timestamp()),
        prop::option::of(timestamp()),
        any::<bool>(),
    )
        .prop_map(|(key, phase, created, started, deleting)| RunView {
            key,
            phase,
            created,
            started,
            deleting,
        });
    (
        0..3usize,
        prop::option::of(prop::collection::vec(view, 0..4)),
        prop::collection::btree_set(key(), 0..3),
        0..3usize,
    )
        .prop_map(|(max, runs, granted, max_queued_per_namespace)| SlotFacts {
            max,
            me: "team/demo".into(),
            runs,
            granted,
            max_queued_per_namespace,
        })
}

/// What a reconcile observed, unrelated to the status: any slot, target, Job, detail and
/// Prometheus answer. [`super`] names some children after the focus measurement so
/// that the steps past deploying are reached.
pub fn observed() -> impl Strategy<Value = Observed> {
    let slot = prop_oneof![
        3 => Just(crate::plan::tests::holding()),
        2 => slot_facts(),
    ];
    let baseline = (
        prop::option::of(index32()),
        prop::option::of(prop::collection::btree_map(
            text(&["web-0"]),
            index32(),
            0..2,
        )),
    );
    let retry_for = prop::sample::select(vec![
        Duration::ZERO,
        Duration::from_secs(600),
        Duration::MAX,
    ]);
    let facts = (
        prop::option::of(target()),
        prop::option::of(text(&["10.96.0.7"])),
        job(),
        prop::option::of(load_result()),
    );
    let rest = (
        slot,
        baseline,
        any::<bool>(),
        prop::collection::vec(pending_observed(), 0..3),
        retry_for,
        prop::option::of(any::<i64>()),
    );
    (facts, rest).prop_map(
        |(
            (target, service_ip, job, detail),
            (slot, base, retrying, pending, retry, generation),
        )| {
            Observed {
                run_name: "demo".into(),
                generation,
                slot,
                target,
                service_ip,
                job,
                restarts_baseline: base.0,
                restarts_baseline_pods: base.1,
                detail,
                retrying,
                pending,
                metrics_retry_for: retry,
                load_nodes: vec!["node-b".into()],
                ..Observed::default()
            }
        },
    )
}

/// Extra figures of a measurement, as Prometheus may give them.
pub fn extra() -> impl Strategy<Value = BTreeMap<String, f64>> {
    prop::collection::btree_map(".{0,6}", float(), 0..2)
}
