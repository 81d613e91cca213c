use std::str::FromStr as _;

use benchrun_api::schedule::{BenchmarkSchedule, BenchmarkScheduleStatus};
use benchrun_api::{BenchmarkRun, BenchmarkRunStatus, CellResult, Coordinates, Phase};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::ResourceExt as _;

use super::decide::{self, Facts, Fire};
use super::grow;

fn t(s: &str) -> Timestamp {
    Timestamp::from_str(s).unwrap()
}

fn schedule(extra: serde_json::Value) -> BenchmarkSchedule {
    let mut spec = serde_json::json!({
        "schedule": "* * * * *",
        "runTemplate": {
            "metadata": {"labels": {"team": "web"}},
            "spec": {
                "targets": [{"name": "demo", "image": "benchrun.local/benchrun-demo:dev"}],
                "scenarios": [{"name": "hello", "path": "/"}],
                "load": {"connections": 4, "duration": "5s"}
            }
        },
        "baselineTolerance": "3%"
    });
    for (k, v) in extra.as_object().unwrap() {
        spec[k] = v.clone();
    }
    let mut s: BenchmarkSchedule = serde_json::from_value(serde_json::json!({
        "apiVersion": "benchrun.dev/v1alpha1",
        "kind": "BenchmarkSchedule",
        "metadata": {"name": "nightly", "namespace": "bench", "uid": "u-1",
                     "creationTimestamp": "2026-12-06T10:00:30Z"},
        "spec": spec
    }))
    .unwrap();
    s.status = Some(BenchmarkScheduleStatus::default());
    s
}

fn run(name: &str, created: &str, phase: Phase) -> BenchmarkRun {
    let mut r: BenchmarkRun = serde_json::from_value(serde_json::json!({
        "apiVersion": "benchrun.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "metadata": {"name": name, "namespace": "bench", "creationTimestamp": created},
        "spec": {
            "targets": [{"name": "demo", "image": "benchrun.local/benchrun-demo:dev"}],
            "scenarios": [{"name": "hello", "path": "/"}],
            "load": {"connections": 4, "duration": "5s"}
        }
    }))
    .unwrap();
    r.status = Some(BenchmarkRunStatus {
        phase: Some(phase),
        ..Default::default()
    });
    r
}

fn facts<'a>(s: &'a BenchmarkSchedule, runs: &'a [BenchmarkRun], now: &str) -> Facts<'a> {
    Facts {
        schedule: s,
        runs: runs.iter().collect(),
        now: t(now),
    }
}

#[test]
fn cron_expressions_of_five_fields_and_aliases_parse_and_others_are_refused_by_name() {
    for ok in [
        "* * * * *",
        "*/5 2 * * 1-5",
        "0 2 * * *",
        "@daily",
        "@hourly",
    ] {
        assert!(decide::parse(ok).is_ok(), "{ok}");
    }
    for bad in ["* * * * * *", "61 * * * *", "nightly", ""] {
        let e = decide::parse(bad).unwrap_err();
        assert!(e.contains("is not a cron expression"), "{bad}: {e}");
    }
    let c = decide::parse("0 2 * * *").unwrap();
    assert_eq!(
        decide::next_after(&c, t("2026-12-06T02:00:00Z")),
        Some(t("2026-12-07T02:00:00Z"))
    );
}

#[test]
fn the_first_due_time_creates_a_run_named_after_it_without_a_baseline() {
    let s = schedule(serde_json::json!({}));
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:01:00.2Z"));
    let (fire, run) = d.create.expect("a run");
    assert_eq!(fire, Fire::Scheduled(t("2026-12-06T10:01:00Z")));
    assert_eq!(run.metadata.name.as_deref(), Some("nightly-202612061001"));
    assert_eq!(run.metadata.namespace.as_deref(), Some("bench"));
    let labels = run.metadata.labels.unwrap();
    assert_eq!(labels["benchrun.dev/schedule"], "nightly");
    assert_eq!(labels["team"], "web");
    let owner = &run.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("BenchmarkSchedule", "u-1")
    );
    assert_eq!(run.spec.baseline, None, "no Succeeded run yet: no baseline");
    assert_eq!(d.last_schedule_time, Some(t("2026-12-06T10:01:00Z")));
    assert_eq!(d.next, Some(t("2026-12-06T10:02:00Z")));
}

#[test]
fn a_time_before_the_schedule_existed_or_already_acted_on_creates_nothing() {
    let s = schedule(serde_json::json!({}));
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:00:50Z"));
    assert!(
        d.create.is_none(),
        "10:00 is before the schedule was created"
    );
    let mut s = schedule(serde_json::json!({}));
    s.status.as_mut().unwrap().last_schedule_time = Some(Time(t("2026-12-06T10:01:00Z")));
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:01:40Z"));
    assert!(d.create.is_none());
    assert_eq!(d.next, Some(t("2026-12-06T10:02:00Z")));
}

#[test]
fn the_next_run_compares_with_the_newest_succeeded_run_keeping_the_template_tolerance() {
    let s = schedule(serde_json::json!({}));
    let runs = [
        run("nightly-a", "2026-12-06T09:00:00Z", Phase::Succeeded),
        run("nightly-b", "2026-12-06T09:30:00Z", Phase::Succeeded),
        run("nightly-c", "2026-12-06T09:40:00Z", Phase::Failed),
    ];
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:01:01Z"));
    let baseline = d.create.unwrap().1.spec.baseline.unwrap();
    assert_eq!(baseline.run, "nightly-b");
    assert_eq!(baseline.tolerance.as_deref(), Some("3%"));
    // A template that names its baseline keeps it.
    let mut s = schedule(serde_json::json!({}));
    s.spec.run_template.spec.baseline = Some(benchrun_api::BaselineSpec {
        run: "golden".into(),
        tolerance: None,
    });
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:01:01Z"));
    assert_eq!(d.create.unwrap().1.spec.baseline.unwrap().run, "golden");
}

#[test]
fn an_unfinished_run_skips_the_time_under_skip_and_queues_under_queue() {
    let runs = [run("nightly-a", "2026-12-06T10:00:40Z", Phase::Running)];
    let s = schedule(serde_json::json!({}));
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:01:01Z"));
    assert!(d.create.is_none());
    let skip = d.skip.unwrap();
    assert!(skip.contains("nightly-a has not finished"), "{skip}");
    assert_eq!(
        d.last_schedule_time,
        Some(t("2026-12-06T10:01:00Z")),
        "not decided twice"
    );
    let s = schedule(serde_json::json!({"concurrencyPolicy": "Queue"}));
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:01:01Z"));
    assert!(d.create.is_some());
}

#[test]
fn a_time_missed_by_more_than_the_deadline_is_skipped_and_says_so() {
    let s = schedule(serde_json::json!({"schedule": "0 * * * *", "startingDeadlineSeconds": 60}));
    let d = decide::decide(&facts(&s, &[], "2026-12-06T11:05:00Z"));
    assert!(d.create.is_none());
    assert!(d.skip.unwrap().contains("missed by 300s"));
    let d = decide::decide(&facts(&s, &[], "2026-12-06T11:00:30Z"));
    assert!(d.create.is_some());
}

#[test]
fn a_new_trigger_value_creates_one_run_even_when_suspended() {
    let mut s = schedule(serde_json::json!({"suspend": true}));
    s.metadata.annotations = Some([("benchrun.dev/trigger".to_string(), "1".to_string())].into());
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:01:01Z"));
    let (fire, run) = d.create.unwrap();
    assert_eq!(fire, Fire::Manual("1".into()));
    assert!(run.metadata.name.unwrap().starts_with("nightly-t"));
    assert_eq!(d.last_trigger.as_deref(), Some("1"));
    assert_eq!(d.next, None, "suspended: no next time");
    s.status.as_mut().unwrap().last_trigger = Some("1".into());
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:01:01Z"));
    assert!(d.create.is_none(), "the same value is not acted on twice");
}

#[test]
fn an_invalid_expression_creates_nothing_and_says_why() {
    let s = schedule(serde_json::json!({"schedule": "61 * * * *"}));
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:01:01Z"));
    assert!(d.create.is_none() && d.next.is_none());
    assert!(d.invalid.unwrap().contains("61 * * * *"));
}

#[test]
fn history_limit_deletes_the_oldest_finished_runs_but_never_an_unfinished_one_or_the_baseline() {
    let at = |i: i64| (t("2026-12-06T10:00:00Z") + SignedDuration::from_mins(i)).to_string();
    let mut runs: Vec<BenchmarkRun> = (0..7)
        .map(|i| run(&format!("r{i}"), &at(i), Phase::Succeeded))
        .collect();
    runs.push(run("r7", &at(7), Phase::Running));
    let refs: Vec<&BenchmarkRun> = runs.iter().collect();
    assert_eq!(decide::prune(&refs, Some(5)), ["r0", "r1"]);
    // The newest Succeeded run is kept even when it is among the oldest finished ones.
    let mut runs: Vec<BenchmarkRun> = vec![run("ok", &at(0), Phase::Succeeded)];
    runs.extend((1..4).map(|i| run(&format!("f{i}"), &at(i), Phase::Failed)));
    let refs: Vec<&BenchmarkRun> = runs.iter().collect();
    assert_eq!(decide::prune(&refs, Some(1)), ["f1", "f2"]);
}

fn measured(name: &str, finished: &str, throughput: f64) -> BenchmarkRun {
    let mut r = run(name, finished, Phase::Succeeded);
    let st = r.status.as_mut().unwrap();
    st.completion_time = Some(Time(t(finished)));
    st.results = vec![CellResult {
        coordinates: Coordinates {
            target: "demo".into(),
            scenario: "hello".into(),
            cpu: "1".into(),
            memory: "1Gi".into(),
            replicas: 1,
            connections: 4,
            ..Default::default()
        },
        throughput: Some(throughput),
        ..Default::default()
    }];
    r
}

#[test]
fn the_series_grows_by_completion_time_once_per_run_and_skips_unfinished_and_failed_runs() {
    let b = measured("b", "2026-12-06T10:02:00Z", 200.0);
    let a = measured("a", "2026-12-06T10:01:00Z", 100.0);
    let running = run("c", "2026-12-06T10:03:00Z", Phase::Running);
    let mut failed = measured("d", "2026-12-06T10:04:00Z", 50.0);
    failed.status.as_mut().unwrap().phase = Some(Phase::Failed);
    let series = grow(Vec::new(), &[&b, &a, &running, &failed]);
    let runs: Vec<&str> = series[0].points.iter().map(|p| p.run.as_str()).collect();
    assert_eq!(runs, ["a", "b"]);
    let again = grow(series.clone(), &[&b, &a]);
    assert_eq!(again, series);
    // A run that finished before the newest kept point (its own points dropped for age) is
    // not added back at the end.
    let mut trimmed = series.clone();
    trimmed[0].points.remove(0);
    assert_eq!(grow(trimmed.clone(), &[&a, &b]), trimmed);
}

#[test]
fn a_template_the_operator_would_refuse_creates_no_run_and_names_the_field() {
    let mut s = schedule(serde_json::json!({}));
    s.spec.run_template.spec.load.duration = None;
    s.spec.run_template.spec.load.requests = None;
    s.metadata.annotations = Some([("benchrun.dev/trigger".to_string(), "1".to_string())].into());
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:01:01Z"));
    assert!(d.create.is_none());
    let why = d.invalid.unwrap();
    assert!(
        why.starts_with("runTemplate: runTemplate.spec.load"),
        "{why}"
    );
}

#[test]
fn a_time_or_trigger_whose_run_exists_is_neither_created_again_nor_skipped() {
    // The schedule's cached status may lag the run it just created.
    let s = schedule(serde_json::json!({}));
    let runs = [run(
        "nightly-202612061001",
        "2026-12-06T10:01:00Z",
        Phase::Running,
    )];
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:01:02Z"));
    assert!(d.create.is_none());
    assert_eq!(d.skip, None, "not skipped on account of its own run");
    assert_eq!(d.last_schedule_time, Some(t("2026-12-06T10:01:00Z")));
    let mut s = schedule(serde_json::json!({}));
    s.metadata.annotations = Some([("benchrun.dev/trigger".to_string(), "7".to_string())].into());
    let name = decide::run_name("nightly", &Fire::Manual("7".into()));
    let runs = [run(&name, "2026-12-06T10:00:50Z", Phase::Running)];
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:00:55Z"));
    assert!(d.create.is_none());
    assert_eq!(d.last_trigger.as_deref(), Some("7"));
}

#[test]
fn under_queue_a_fire_with_max_queued_runs_waiting_is_skipped_and_says_why() {
    let waiting = |name: &str, phase: Phase| run(name, "2026-12-06T10:00:40Z", phase);
    let runs = [
        waiting("nightly-a", Phase::Running),
        waiting("nightly-b", Phase::Queued),
        waiting("nightly-c", Phase::Queued),
        waiting("nightly-d", Phase::Pending),
    ];
    // Three wait (the measuring one does not count): the default maxQueued, 3, is reached.
    let s = schedule(serde_json::json!({"concurrencyPolicy": "Queue"}));
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:01:01Z"));
    assert!(d.create.is_none());
    let skip = d.skip.unwrap();
    assert!(
        skip.contains("3 runs of this schedule wait for the measuring slot already")
            && skip.contains("nightly-b, nightly-c, nightly-d")
            && skip.contains("maxQueued is 3"),
        "{skip}"
    );
    assert_eq!(d.last_schedule_time, Some(t("2026-12-06T10:01:00Z")));
    // A larger maxQueued leaves room; fewer waiting runs too.
    let s = schedule(serde_json::json!({"concurrencyPolicy": "Queue", "maxQueued": 4}));
    assert!(decide::decide(&facts(&s, &runs, "2026-12-06T10:01:01Z"))
        .create
        .is_some());
    let s = schedule(serde_json::json!({"concurrencyPolicy": "Queue"}));
    assert!(
        decide::decide(&facts(&s, &runs[..3], "2026-12-06T10:01:01Z"))
            .create
            .is_some()
    );
    // The trigger annotation is not limited by it.
    let mut s = schedule(serde_json::json!({"concurrencyPolicy": "Queue", "maxQueued": 1}));
    s.metadata.annotations = Some([("benchrun.dev/trigger".to_string(), "1".to_string())].into());
    let d = decide::decide(&facts(&s, &runs, "2026-12-06T10:01:01Z"));
    assert!(matches!(d.create, Some((Fire::Manual(_), _))));
}

/// A schedule that fired a minute ago (`* * * * *`, created 90 s ago), stored in `fake`, with
/// the context of its reconcile (an empty, synced cache of runs).
fn stored_schedule(
    fake: &crate::fake_api::FakeApi,
) -> (BenchmarkSchedule, std::sync::Arc<super::Ctx>) {
    use kube::runtime::events::{Recorder, Reporter};
    use kube::runtime::{reflector, watcher};
    let mut s = schedule(serde_json::json!({}));
    s.metadata.creation_timestamp = Some(Time(Timestamp::now() - SignedDuration::from_secs(90)));
    s.metadata.generation = Some(1);
    s.status = None;
    fake.put(&s);
    let (runs, mut w) = reflector::store();
    w.apply_watcher_event(&watcher::Event::Init);
    w.apply_watcher_event(&watcher::Event::InitDone);
    let reporter = Reporter {
        controller: crate::names::MANAGER.into(),
        instance: None,
    };
    let ctx = super::Ctx {
        client: fake.client(),
        runs,
        recorder: Recorder::new(fake.client(), reporter),
    };
    (s, std::sync::Arc::new(ctx))
}

fn ready(s: &BenchmarkSchedule) -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
    s.status
        .as_ref()
        .and_then(|st| st.conditions.iter().find(|c| c.type_ == "Ready"))
        .cloned()
        .expect("a Ready condition")
}

#[tokio::test]
async fn a_run_the_apiserver_refuses_makes_the_schedule_not_ready_in_its_words_until_one_is_made() {
    use crate::fake_api::{FakeApi, Fault};
    use k8s_openapi::api::events::v1::Event as K8sEvent;
    let fake = FakeApi::new();
    let (s, ctx) = stored_schedule(&fake);
    let refusal = "BenchmarkRun.benchrun.dev \"nightly-x\" is invalid: metadata.labels: Invalid value: \"not ok\": a valid label must be an empty string or consist of alphanumeric characters";
    fake.fail(
        http::Method::POST,
        "benchmarkruns",
        Fault::Status(422, "Invalid", refusal.into()),
        2,
    );
    let get = || {
        fake.get::<BenchmarkSchedule>(Some("bench"), "nightly")
            .unwrap()
    };
    let again = super::reconcile(std::sync::Arc::new(s), ctx.clone())
        .await
        .unwrap();
    assert_eq!(
        again,
        kube::runtime::controller::Action::requeue(super::RETRY_CREATE)
    );
    let c = ready(&get());
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "RunCreateFailed")
    );
    assert!(
        c.message.contains(refusal) && c.message.contains("422 Invalid"),
        "{}",
        c.message
    );
    assert!(
        c.message.starts_with("could not create run nightly-"),
        "{}",
        c.message
    );
    assert!(
        get().status.unwrap().last_schedule_time.is_none(),
        "the fire is tried again"
    );
    let events = fake.list::<K8sEvent>(Some("bench"));
    assert!(
        events.iter().any(|e| e.type_.as_deref() == Some("Warning")
            && e.reason.as_deref() == Some("RunCreateFailed")
            && e.note.as_deref().is_some_and(|n| n.contains(refusal))),
        "{events:#?}"
    );
    // Refused again: still not Ready, no run.
    super::reconcile(std::sync::Arc::new(get()), ctx.clone())
        .await
        .unwrap();
    assert_eq!(ready(&get()).reason, "RunCreateFailed");
    assert!(fake.list::<BenchmarkRun>(Some("bench")).is_empty());
    // The apiserver accepts it now: the run is made and the schedule is Ready again.
    super::reconcile(std::sync::Arc::new(get()), ctx.clone())
        .await
        .unwrap();
    assert_eq!(fake.list::<BenchmarkRun>(Some("bench")).len(), 1);
    let c = ready(&get());
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("True", "Scheduled")
    );
}

#[test]
fn a_refusal_stays_until_a_run_is_made_or_the_spec_changes() {
    let mut s = schedule(serde_json::json!({}));
    s.metadata.generation = Some(1);
    let d = decide::decide(&facts(&s, &[], "2026-12-06T10:00:40Z"));
    assert!(d.create.is_none(), "nothing due");
    let now = t("2026-12-06T10:00:40Z");
    let refused = super::status(
        &s,
        &[],
        Vec::new(),
        &d,
        Some("could not create run nightly-x: no"),
        now,
    );
    let c = &refused.conditions[0];
    assert_eq!(
        (c.status.as_str(), c.reason.as_str()),
        ("False", "RunCreateFailed")
    );
    // Nothing due, nothing created: it stays.
    s.status = Some(refused);
    let kept = super::status(&s, &[], Vec::new(), &d, None, now);
    assert_eq!(kept.conditions[0].reason, "RunCreateFailed");
    assert_eq!(
        kept.conditions[0].message,
        "could not create run nightly-x: no"
    );
    // A new generation of the spec: Ready again (its next fire will tell).
    s.metadata.generation = Some(2);
    let fresh = super::status(&s, &[], Vec::new(), &d, None, now);
    assert_eq!(fresh.conditions[0].status, "True");
}

#[test]
fn a_run_that_an_unfinished_run_compares_with_is_not_pruned() {
    let at = |i: i64| (t("2026-12-06T10:00:00Z") + SignedDuration::from_mins(i)).to_string();
    let mut runs: Vec<BenchmarkRun> = (0..4)
        .map(|i| run(&format!("r{i}"), &at(i), Phase::Succeeded))
        .collect();
    // Queued under `Queue` (or made by a trigger) when r1 was the newest Succeeded run.
    let mut queued = run("q", &at(2), Phase::Queued);
    queued.spec.baseline = Some(benchrun_api::BaselineSpec {
        run: "r1".into(),
        tolerance: None,
    });
    runs.push(queued);
    let refs: Vec<&BenchmarkRun> = runs.iter().collect();
    assert_eq!(decide::prune(&refs, Some(1)), ["r0", "r2"]);
}

#[test]
fn a_run_pruned_in_the_reconcile_that_sees_it_finished_is_added_to_the_series_first() {
    let s = schedule(serde_json::json!({"historyLimit": 1}));
    let runs = [
        measured("a", "2026-12-06T10:01:00Z", 100.0),
        measured("b", "2026-12-06T10:02:00Z", 110.0),
    ];
    let f = facts(&s, &runs, "2026-12-06T10:02:30Z");
    let d = decide::decide(&f);
    assert_eq!(d.delete, ["a"]);
    let (series, kept) = super::after_pruning(&s, &f.runs, &d.delete);
    let points: Vec<&str> = series[0].points.iter().map(|p| p.run.as_str()).collect();
    assert_eq!(points, ["a", "b"]);
    let kept: Vec<String> = kept.iter().map(|r| r.name_any()).collect();
    assert_eq!(kept, ["b"]);
}
