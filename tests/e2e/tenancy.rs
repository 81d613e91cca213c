//! Tenants on a shared cluster (issue 48, items 3 and 4): the measuring queue is fair between
//! namespaces, and a schedule never breaks silently.
//!
//! - A schedule in namespace A with `concurrencyPolicy: Queue` piles up runs (made one after
//!   another with the trigger annotation, so the test does not wait for cron minutes); a run
//!   applied later in namespace B starts after at most one of A's runs. Each run is one cell of
//!   a 2 s window with one connection, and the test ends as soon as B's run has started.
//! - A schedule whose name is longer than a label value (63) is refused at admission, naming the
//!   limit; one of 63 is accepted.
//! - A schedule whose run the apiserver refuses (a template label value that is not a valid label
//!   value: the schedule's schema cannot see it, the run's metadata validation does) turns
//!   `Ready=False`, reason `RunCreateFailed`, with the apiserver's words, and records a Warning
//!   event.

use std::time::{Duration, Instant};

use benchrun_api::schedule::{BenchmarkSchedule, SCHEDULE_LABEL, TRIGGER_ANNOTATION};
use benchrun_api::{BenchmarkRun, Phase};
use k8s_openapi::api::events::v1::Event;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::Api;

use super::support::Cluster;
use super::DEMO_IMAGE;

/// The smallest measurement: one cell, one connection, a 2 s window.
fn tiny_spec(indent: &str) -> String {
    let spec = format!(
        r#"targets:
  - {{name: demo, image: "{DEMO_IMAGE}", imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz}}
scenarios:
  - {{name: hello, path: /hello}}
resources: {{cpu: 250m, memory: 64Mi}}
load: {{connections: 1, duration: 2s, warmup: 0s, resources: {{cpu: 100m, memory: 64Mi}}}}
cleanup: {{policy: Delete}}"#
    );
    spec.lines()
        .map(|l| format!("{indent}{l}\n"))
        .collect::<String>()
}

fn schedule_yaml(name: &str, labels: &str) -> String {
    format!(
        r#"
apiVersion: benchrun.dev/v1alpha1
kind: BenchmarkSchedule
metadata: {{name: {name}}}
spec:
  schedule: "0 3 * * *"
  suspend: true
  concurrencyPolicy: Queue
  maxQueued: 5
  runTemplate:
    metadata: {{labels: {labels}}}
    spec:
{}"#,
        tiny_spec("      ")
    )
}

fn started(r: &BenchmarkRun) -> Option<jiff::Timestamp> {
    r.status.as_ref()?.start_time.as_ref().map(|t| t.0)
}

async fn trigger(api: &Api<BenchmarkSchedule>, name: &str, value: &str) -> anyhow::Result<()> {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(
            serde_json::json!({"metadata": {"annotations": {TRIGGER_ANNOTATION: value}}}),
        ),
    )
    .await?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_run_of_another_namespace_starts_after_at_most_one_of_a_piled_up_schedules_runs() {
    let cluster = Cluster::connect().await;
    let a = cluster.namespace("e2e-fair-a").await;
    let b = cluster.namespace("e2e-fair-b").await;
    let outcome = fair(&cluster, &a, &b).await;
    cluster.finish(&b, Ok(())).await;
    cluster.finish(&a, outcome).await;
}

async fn fair(cluster: &Cluster, a: &str, b: &str) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let schedules: Api<BenchmarkSchedule> = Api::namespaced(cluster.client.clone(), a);
    let s: BenchmarkSchedule = serde_yaml::from_str(&schedule_yaml("pile", "{team: a}"))?;
    schedules.create(&PostParams::default(), &s).await?;
    let a_runs: Api<BenchmarkRun> = Api::namespaced(cluster.client.clone(), a);
    let of_pile = ListParams::default().labels(&format!("{SCHEDULE_LABEL}=pile"));
    // Three runs, one trigger value at a time (each seen before the next).
    for i in 1..=3 {
        trigger(&schedules, "pile", &format!("t{i}")).await?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while a_runs.list(&of_pile).await?.items.len() < i {
            anyhow::ensure!(Instant::now() < deadline, "the trigger t{i} made no run");
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
    println!(
        "[{:>3}s] namespace {a}: 3 runs from the schedule",
        t0.elapsed().as_secs()
    );
    let yaml = format!(
        "apiVersion: benchrun.dev/v1alpha1\nkind: BenchmarkRun\nmetadata: {{name: late}}\nspec:\n{}",
        tiny_spec("  ")
    );
    cluster.apply_run(b, &yaml).await?;
    println!(
        "[{:>3}s] namespace {b}: run late applied",
        t0.elapsed().as_secs()
    );
    let late = cluster
        .wait_until(b, "late", Duration::from_secs(150), |r| {
            started(r).is_some()
        })
        .await?;
    let late_start = started(&late).unwrap();
    let before: Vec<String> = a_runs
        .list(&of_pile)
        .await?
        .items
        .iter()
        .filter(|r| started(r).is_some_and(|t| t < late_start))
        .map(|r| r.metadata.name.clone().unwrap_or_default())
        .collect();
    println!(
        "[{:>3}s] late started at {late_start}; runs of {a} started before it: {before:?}",
        t0.elapsed().as_secs()
    );
    anyhow::ensure!(
        before.len() <= 1,
        "{} runs of namespace {a} started before namespace {b}'s run: {before:?}",
        before.len()
    );
    // What the CLI shows while the rest of A's runs wait: the place of each.
    let list = cluster.kubectl_benchrun(&["list", "-A"]);
    println!("$ kubectl benchrun list -A\n{list}");
    let waiting = a_runs
        .list(&of_pile)
        .await?
        .items
        .iter()
        .filter(|r| r.status.as_ref().and_then(|s| s.phase) == Some(Phase::Queued))
        .count();
    if waiting > 0 {
        anyhow::ensure!(
            list.contains("Queued #1"),
            "{waiting} runs of {a} wait, but the list shows no place in the queue:\n{list}"
        );
    }
    Ok(())
}

#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_schedule_name_longer_than_a_label_value_is_refused_at_admission() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-sched-name").await;
    let outcome = async {
        let api: Api<BenchmarkSchedule> = Api::namespaced(cluster.client.clone(), &ns);
        let long = "n".repeat(64);
        let s: BenchmarkSchedule = serde_yaml::from_str(&schedule_yaml(&long, "{}"))?;
        let err = api
            .create(&PostParams::default(), &s)
            .await
            .err()
            .ok_or_else(|| anyhow::anyhow!("a 64-character schedule name was accepted"))?;
        let message = err.to_string();
        println!("refused: {message}");
        anyhow::ensure!(
            message.contains("metadata.name must be at most 63 characters"),
            "the refusal does not name the limit: {message}"
        );
        let fits = "n".repeat(63);
        let s: BenchmarkSchedule = serde_yaml::from_str(&schedule_yaml(&fits, "{}"))?;
        api.create(&PostParams::default(), &s).await?;
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_schedule_whose_run_the_apiserver_refuses_is_not_ready_in_its_words() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-sched-refused").await;
    let outcome = async {
        let api: Api<BenchmarkSchedule> = Api::namespaced(cluster.client.clone(), &ns);
        // A label value with a space: any string to the schedule's schema, refused in a run's
        // metadata.
        let s: BenchmarkSchedule =
            serde_yaml::from_str(&schedule_yaml("refused", r#"{team: "not ok"}"#))?;
        api.create(&PostParams::default(), &s).await?;
        trigger(&api, "refused", "now").await?;
        let deadline = Instant::now() + Duration::from_secs(30);
        let ready = loop {
            let s = api.get("refused").await?;
            let ready = s
                .status
                .as_ref()
                .and_then(|st| st.conditions.iter().find(|c| c.type_ == "Ready"))
                .cloned();
            if let Some(c) = ready.filter(|c| c.status == "False") {
                break c;
            }
            anyhow::ensure!(
                Instant::now() < deadline,
                "still not Ready=False: {:?}",
                s.status
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        };
        println!("Ready={} {}: {}", ready.status, ready.reason, ready.message);
        anyhow::ensure!(ready.reason == "RunCreateFailed", "reason {}", ready.reason);
        anyhow::ensure!(
            ready.message.contains("metadata.labels") && ready.message.contains("not ok"),
            "not the apiserver's words: {}",
            ready.message
        );
        let events: Api<Event> = Api::namespaced(cluster.client.clone(), &ns);
        let warned = events
            .list(&ListParams::default())
            .await?
            .items
            .into_iter()
            .any(|e| {
                e.type_.as_deref() == Some("Warning")
                    && e.reason.as_deref() == Some("RunCreateFailed")
            });
        anyhow::ensure!(warned, "no Warning event RunCreateFailed");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}
