//! What the wire saw (issue 34), on the real cluster at a reduced size: an open-model rate the
//! target cannot serve names the target, one the generator cannot send names the generator; a
//! demo target with a one-slot accept queue and a slow accept loop under 200 connections
//! without keep-alive shows SYN retransmits in `tcp` and `SynRetransmits`; a run whose every
//! request answered 404 has no best throughput.

use std::time::Duration;

use benchrun_api::{BenchmarkRunStatus, CellResult, Phase, WarningCode};

use crate::support::{self, Cluster};
use crate::DEMO_IMAGE;

/// The open-model cells' load window: 8 s after 2 s of warm-up (20 s after 3 s in
/// `make e2e-full`). Whether the rate was met, and who was the limit, shows within a second.
fn rate_window() -> &'static str {
    support::size("duration: 8s, warmup: 2s", "duration: 20s, warmup: 3s")
}

/// One cell of the demo target: `scenario` at `path`, the target's `cpu`, extra target keys
/// (e.g. `env`) and the `load` mapping's body.
fn one_cell(name: &str, path: &str, cpu: &str, target_extra: &str, load: &str) -> String {
    format!(
        r#"
apiVersion: benchrun.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {name}}}
spec:
  targets:
    - {{name: demo, image: "{DEMO_IMAGE}", imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz{target_extra}}}
  scenarios:
    - {{name: s, path: "{path}"}}
  resources: {{cpu: {cpu}, memory: 128Mi}}
  load: {{{load}}}
"#
    )
}

/// Applies `yaml`, waits for the run (3 minutes at most) and returns its only result with the
/// whole status, after checking that it Succeeded.
async fn measure(
    cluster: &Cluster,
    ns: &str,
    name: &str,
    yaml: &str,
) -> anyhow::Result<(CellResult, BenchmarkRunStatus)> {
    cluster.apply_run(ns, yaml).await?;
    let run = cluster
        .wait_finished(ns, name, Duration::from_secs(180))
        .await?;
    let status = run.status.clone().unwrap_or_default();
    anyhow::ensure!(
        status.phase == Some(Phase::Succeeded),
        "phase {:?}",
        status.phase
    );
    let r = status
        .results
        .first()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no result"))?;
    println!(
        "{name}: {:.0} req/s (rate {:?}), error rate {:?}, target CPU {:?} of its limit, load pods {:?} of theirs, lag {:?}, connects {:?}, tcp {:?}",
        r.throughput.unwrap_or_default(),
        r.coordinates.rate,
        r.error_rate,
        r.usage.cpu_avg_of_limit,
        r.usage.load_cpu_of_limit,
        r.schedule_lag_ms,
        r.connect_times_ms,
        r.tcp
    );
    for w in &r.warnings {
        println!("  {w}");
    }
    Ok((r, status))
}

fn warning(r: &CellResult, code: WarningCode) -> anyhow::Result<String> {
    r.warnings
        .iter()
        .find(|w| w.code == code)
        .map(|w| w.message.clone())
        .ok_or_else(|| anyhow::anyhow!("no {code} among {:?}", r.warnings))
}

/// `/compute?n=10000` at 250m serves about 900 req/s on this cluster (README): asking 20× that
/// leaves the target at its CPU limit, and the warning says the target was the limit.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn an_open_model_rate_twenty_times_the_targets_capacity_names_the_target() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-rate-target").await;
    let yaml = one_cell(
        "rate-target",
        "/compute?n=10000",
        "250m",
        "",
        &format!(
            "connections: 64, rate: 18000, {window}, resources: {{cpu: 500m, memory: 64Mi}}",
            window = rate_window()
        ),
    );
    let outcome = async {
        let (r, _) = measure(&cluster, &ns, "rate-target", &yaml).await?;
        let w = warning(&r, WarningCode::RateNotMet)?;
        anyhow::ensure!(w.contains("the target was the limit"), "{w}");
        anyhow::ensure!(r.schedule_lag_ms.is_some(), "open model: a schedule lag");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// The same kind of cell with the load generator held to 100m CPU against a 500m target that
/// serves `/hello` far faster than 100m of generator can ask: the generator was the limit.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn an_open_model_rate_a_100m_generator_cannot_send_names_the_generator() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-rate-generator").await;
    let yaml = one_cell(
        "rate-generator",
        "/hello",
        "500m",
        "",
        &format!(
            "connections: 32, rate: 20000, {window}, resources: {{cpu: 100m, memory: 64Mi}}",
            window = rate_window()
        ),
    );
    let outcome = async {
        let (r, _) = measure(&cluster, &ns, "rate-generator", &yaml).await?;
        let w = warning(&r, WarningCode::RateNotMet)?;
        anyhow::ensure!(w.contains("the generator was the limit"), "{w}");
        anyhow::ensure!(
            !w.contains("the target was the limit"),
            "the 500m target was not at its limit: {w}"
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Issue 52: a target answering in a steady 800 ms, offered 100 req/s over 200 connections
/// (80 in flight), keeps up: the window of sends reads the offered rate and raises no
/// `RateNotMet`. Counting the drain's 0.8 s read 6 / 6.8 of it (88 req/s here) and the
/// warning. 6 s windows after 2 s of warm-up, bounded to 3 minutes.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn an_800_ms_target_at_100_req_s_meets_its_rate_without_the_drain() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-drain").await;
    let yaml = one_cell(
        "drain",
        "/sleep?ms=800",
        "250m",
        "",
        "connections: 200, rate: 100, duration: 6s, warmup: 2s, resources: {cpu: 500m, memory: 64Mi}",
    );
    let outcome = async {
        let (r, _) = measure(&cluster, &ns, "drain", &yaml).await?;
        anyhow::ensure!(
            !r.warnings.iter().any(|w| w.code == WarningCode::RateNotMet),
            "{:?}",
            r.warnings
        );
        let tp = r.throughput.unwrap_or_default();
        anyhow::ensure!((97.0..=103.0).contains(&tp), "{tp} req/s, 100 offered");
        let drain = r.drain.clone().ok_or_else(|| anyhow::anyhow!("no drain"))?;
        println!("drain {drain:?}, per-second CV {:?}", r.per_second_cv);
        anyhow::ensure!((60..=100).contains(&drain.in_flight), "{drain:?}");
        anyhow::ensure!((700.0..=2000.0).contains(&drain.ms), "{drain:?}");
        anyhow::ensure!(drain.late == Some(0), "{drain:?}");
        let lag = r.schedule_lag_ms.clone().unwrap_or_default();
        anyhow::ensure!(lag.mean < 50.0, "sent on schedule: {lag:?}");
        // The seconds of the window after its first responses are steady.
        anyhow::ensure!(
            r.per_second_cv.is_some_and(|cv| cv < 0.1),
            "{:?}",
            r.per_second_cv
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Backlog 1 and a 5 ms pause after each accept (200 accepts a second) under 200 connections
/// that each open a new connection per request: the accept queue overflows, the target's
/// kernel drops SYNs, and the load pod's kernel retransmits them after 1 s (then 3 s).
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_one_slot_accept_queue_shows_syn_retransmits_and_the_warning() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-backlog").await;
    let yaml = one_cell(
        "backlog",
        "/hello",
        "500m",
        r#", env: [{name: BACKLOG, value: "1"}, {name: ACCEPT_DELAY_MS, value: "5"}]"#,
        // Short: the target's readiness probe waits in the same accept queue, and three failed
        // probes in a row (6 s) would take it out of the Service mid-window.
        "connections: 200, keepAlive: false, duration: 6s, warmup: 1s, timeout: 5s, resources: {cpu: 500m, memory: 64Mi}",
    );
    let outcome = async {
        let (r, _) = measure(&cluster, &ns, "backlog", &yaml).await?;
        let tcp = r.tcp.clone().ok_or_else(|| anyhow::anyhow!("no tcp"))?;
        anyhow::ensure!(tcp.syn_retransmits > 0, "no SYN retransmit: {tcp:?}");
        let w = warning(&r, WarningCode::SynRetransmits)?;
        anyhow::ensure!(
            w.contains(&format!("retransmitted {} SYNs", tcp.syn_retransmits)),
            "{w}"
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Every request of the run answers 404 (a path the demo target does not serve): thousands of
/// "requests per second" of failures, which must not become the run's best throughput.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_run_of_only_404s_has_no_best_throughput() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-all-4xx").await;
    let yaml = one_cell(
        "all-4xx",
        "/no-such-path",
        "250m",
        "",
        "connections: 4, duration: 5s, warmup: 1s, resources: {cpu: 500m, memory: 64Mi}",
    );
    let outcome = async {
        let (r, status) = measure(&cluster, &ns, "all-4xx", &yaml).await?;
        let errors = r.errors.clone().unwrap_or_default();
        anyhow::ensure!(
            r.error_rate == Some(1.0) && errors.status4xx > 0,
            "not all 404: {:?} {errors:?}",
            r.error_rate
        );
        let summary = status.summary.clone().unwrap_or_default();
        anyhow::ensure!(
            summary.best_throughput.is_none() && summary.best_cell.is_none(),
            "a best from 404s: {summary:?}"
        );
        let note = summary.best_left_out.clone().unwrap_or_default();
        anyhow::ensure!(note.contains("1 with more than 50% errors"), "{summary:?}");
        let table = cluster.kubectl(&["get", "benchmarkruns", "-n", &ns]);
        println!("{table}");
        let rps = format!("{:.0}", r.throughput.unwrap_or_default());
        let row = table
            .lines()
            .find(|l| l.starts_with("all-4xx"))
            .unwrap_or_default();
        anyhow::ensure!(!row.contains(&rps), "BEST RPS shows {rps}:\n{table}");
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}
