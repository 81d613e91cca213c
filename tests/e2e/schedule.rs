//! Scheduled runs on the cluster (issue 38): a `BenchmarkSchedule` of a one-cell demo run whose
//! template is switched, after 4 runs, to 1.3× the work per request. The schedule must end with
//! `Regressed=True` naming the first slower run, raise no changepoint over the first 4 runs,
//! give each run the previous Succeeded run as its baseline, keep `historyLimit` runs while
//! its series keeps them all, and the runs' figures must reach the local Prometheus as gauges.
//!
//! Full size (`make e2e-schedule`, in `make e2e-full`): the issue's criterion, a schedule that
//! fires every minute (`* * * * *`) with `historyLimit: 5`, about 8 minutes. Reduced (in
//! `make e2e`): the first run by the cron expression, the rest one after another by the trigger
//! annotation as soon as the previous one finished, `historyLimit: 3`.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use benchrun_api::schedule::{BenchmarkSchedule, SCHEDULE_LABEL, TRIGGER_ANNOTATION};
use benchrun_api::{BenchmarkRun, Phase};
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::Api;

use super::support::{self, Cluster};
use super::DEMO_IMAGE;

/// The work per request before the switch: primes below this by trial division (as in the
/// search test, the compute dominates the request at 250m).
const N: u32 = 20_000;
/// After the switch: 1.3× the work, counted in the demo's trial-division steps (the test
/// checks the ratio with [`work`] before it starts).
const N_SLOWER: u32 = 24_288;
/// Runs before the switch.
const BEFORE: usize = 4;
/// `changepoints.minSegment`: runs after the switch before the step can be reported.
const MIN_SEGMENT: usize = 2;

/// The demo's `/compute?n=` work: trial divisions done counting the primes below `n`
/// (crates/demo/src/compute.rs), one more per number for the loop's exit.
fn work(n: u32) -> u64 {
    (2..u64::from(n))
        .map(|i| {
            let mut steps = 1;
            let mut d = 2;
            while d * d <= i {
                steps += 1;
                if i % d == 0 {
                    break;
                }
                d += 1;
            }
            steps
        })
        .sum()
}

fn schedule(name: &str, history_limit: usize, n: u32) -> String {
    format!(
        r#"
apiVersion: benchrun.dev/v1alpha1
kind: BenchmarkSchedule
metadata: {{name: {name}}}
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Skip
  historyLimit: {history_limit}
  baselineTolerance: "5%"
  changepoints: {{minSegment: {MIN_SEGMENT}}}
  runTemplate:
    metadata: {{annotations: {{benchrun.dev/commit: "e2e"}}}}
    spec:
      targets:
        - {{name: demo, image: "{DEMO_IMAGE}", imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz}}
      scenarios:
        - {{name: compute, path: "/compute?n={n}"}}
      resources: {{cpu: 250m, memory: 128Mi}}
      load: {{connections: 8, duration: 8s, warmup: 2s, resources: {{cpu: 500m, memory: 64Mi}}}}
"#
    )
}

/// The schedule's runs, oldest first.
async fn runs(cluster: &Cluster, ns: &str, name: &str) -> anyhow::Result<Vec<BenchmarkRun>> {
    let api: Api<BenchmarkRun> = Api::namespaced(cluster.client.clone(), ns);
    let mut list = api
        .list(&ListParams::default().labels(&format!("{SCHEDULE_LABEL}={name}")))
        .await?
        .items;
    list.sort_by_key(|r| {
        (
            r.metadata.creation_timestamp.clone().map(|t| t.0),
            r.metadata.name.clone(),
        )
    });
    Ok(list)
}

fn phase(r: &BenchmarkRun) -> Option<Phase> {
    r.status.as_ref().and_then(|s| s.phase)
}

fn path_of(r: &BenchmarkRun) -> &str {
    &r.spec.scenarios[0].path
}

/// Polls the schedule every 2 s, printing what changed, until `done` holds.
async fn wait_schedule(
    cluster: &Cluster,
    ns: &str,
    name: &str,
    timeout: Duration,
    trigger: bool,
    done: impl Fn(&BenchmarkSchedule, &[BenchmarkRun]) -> bool,
) -> anyhow::Result<(BenchmarkSchedule, Vec<BenchmarkRun>)> {
    let api: Api<BenchmarkSchedule> = Api::namespaced(cluster.client.clone(), ns);
    let t0 = Instant::now();
    let mut last = String::new();
    let mut triggered = 0;
    loop {
        let s = api.get(name).await?;
        let rs = runs(cluster, ns, name).await?;
        let st = s.status.clone().unwrap_or_default();
        let line = format!(
            "runs {:?}; points {}; changes {}; last skip {:?}",
            rs.iter()
                .map(|r| format!(
                    "{}={:?}",
                    r.metadata.name.clone().unwrap_or_default(),
                    phase(r)
                ))
                .collect::<Vec<_>>(),
            st.series.first().map_or(0, |c| c.points.len()),
            st.changes.len(),
            st.last_skip,
        );
        if line != last {
            println!("[{:>4}s] {line}", t0.elapsed().as_secs());
            last = line;
        }
        if done(&s, &rs) {
            return Ok((s, rs));
        }
        anyhow::ensure!(
            t0.elapsed() < timeout,
            "{name} not done after {timeout:?}: {last}"
        );
        // Reduced size: as soon as every run finished, trigger the next one.
        if trigger && !rs.is_empty() && rs.iter().all(|r| phase(r).is_some_and(Phase::is_final)) {
            triggered += 1;
            let value = format!("e2e-{}-{triggered}", rs.len());
            api.patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(
                    serde_json::json!({"metadata": {"annotations": {TRIGGER_ANNOTATION: value}}}),
                ),
            )
            .await?;
            // Wait for the run it makes before looking again.
            tokio::time::sleep(Duration::from_secs(3)).await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Points in the schedule's series (its one cell).
fn points(s: &BenchmarkSchedule) -> usize {
    s.status
        .as_ref()
        .and_then(|st| st.series.first())
        .map_or(0, |c| c.points.len())
}

fn regressed(s: &BenchmarkSchedule) -> Option<(String, String)> {
    s.status.as_ref()?.conditions.iter().find_map(|c| {
        (c.type_ == "Regressed" && c.status == "True")
            .then(|| (c.reason.clone(), c.message.clone()))
    })
}

#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_schedule_finds_the_step_when_the_work_per_request_grows_1_3x() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-schedule").await;
    let outcome = step_found(&cluster, &ns).await;
    cluster.finish(&ns, outcome).await;
}

async fn step_found(cluster: &Cluster, ns: &str) -> anyhow::Result<()> {
    let name = "nightly";
    let full = support::full();
    let history_limit = support::size(3, 5);
    let trigger = !full;
    let ratio = work(N_SLOWER) as f64 / work(N) as f64;
    println!("work per request after the switch: {ratio:.4}× (n {N} → {N_SLOWER})");
    anyhow::ensure!(
        (ratio - 1.3).abs() < 0.005,
        "n={N_SLOWER} is {ratio}× the work"
    );
    let t0 = Instant::now();
    let api: Api<BenchmarkSchedule> = Api::namespaced(cluster.client.clone(), ns);
    let s: BenchmarkSchedule = serde_yaml::from_str(&schedule(name, history_limit, N))?;
    api.create(&PostParams::default(), &s)
        .await
        .context("create the schedule")?;

    // The first run comes from the cron expression within a minute.
    let (_, rs) = wait_schedule(
        cluster,
        ns,
        name,
        Duration::from_secs(90),
        false,
        |_, rs| !rs.is_empty(),
    )
    .await?;
    let first = rs[0].metadata.name.clone().unwrap_or_default();
    anyhow::ensure!(
        first.len() == name.len() + 13 && first.starts_with("nightly-2"),
        "the first run is named after its minute: {first}"
    );
    println!("first run {first} after {} s", t0.elapsed().as_secs());

    // Four runs of the original work, no changepoint.
    let (s, rs) = wait_schedule(
        cluster,
        ns,
        name,
        Duration::from_secs(600),
        trigger,
        |s, _| points(s) >= BEFORE,
    )
    .await?;
    let st = s.status.clone().unwrap_or_default();
    anyhow::ensure!(
        st.changes.is_empty(),
        "no change over the first {BEFORE} runs: {:?}",
        st.changes
    );
    anyhow::ensure!(regressed(&s).is_none(), "not Regressed after {BEFORE} runs");
    let series: Vec<f64> = st.series[0].points.iter().map(|p| p.throughput).collect();
    println!("throughput before the switch: {series:?}");
    // Each run after the first was compared with the one before it.
    let succeeded: Vec<&BenchmarkRun> = rs
        .iter()
        .filter(|r| phase(r) == Some(Phase::Succeeded))
        .collect();
    for pair in succeeded.windows(2) {
        let baseline = pair[1].spec.baseline.as_ref().map(|b| b.run.clone());
        anyhow::ensure!(
            baseline == pair[0].metadata.name,
            "{:?} has baseline {baseline:?}, not the run before it",
            pair[1].metadata.name
        );
    }

    // The switch: 1.3× the work per request from the next run on.
    let mut template = s.spec.run_template.clone();
    template.spec.scenarios[0].path = format!("/compute?n={N_SLOWER}");
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"spec": {"runTemplate": template}})),
    )
    .await?;
    let switched_at = Instant::now();
    let (s, rs) = wait_schedule(
        cluster,
        ns,
        name,
        Duration::from_secs(900),
        trigger,
        |s, _| regressed(s).is_some(),
    )
    .await?;
    let st = s.status.clone().unwrap_or_default();
    let (reason, message) = regressed(&s).unwrap_or_default();
    println!(
        "Regressed=True ({reason}) {} s after the switch: {message}",
        switched_at.elapsed().as_secs()
    );
    let kept = &st.series[0].points;
    println!(
        "series: {:?}",
        kept.iter()
            .map(|p| (p.run.as_str(), p.throughput.round()))
            .collect::<Vec<_>>()
    );
    // The first slower run: the first point of a run made from the new template.
    let slower: Vec<String> = rs
        .iter()
        .filter(|r| path_of(r).ends_with(&N_SLOWER.to_string()))
        .filter_map(|r| r.metadata.name.clone())
        .collect();
    let first_slower = kept
        .iter()
        .find(|p| slower.contains(&p.run))
        .map(|p| p.run.clone())
        .context("a run of the new template in the series")?;
    let change = st
        .changes
        .iter()
        .find(|c| c.figure == "throughput")
        .context("a throughput change")?;
    println!("change: {change:?}");
    anyhow::ensure!(
        change.run == first_slower,
        "the change starts at {}, not {first_slower}",
        change.run
    );
    anyhow::ensure!(
        change.worse && (-0.35..-0.12).contains(&change.step),
        "step {}",
        change.step
    );
    anyhow::ensure!(
        message.contains(&first_slower),
        "the condition names {first_slower}: {message}"
    );
    anyhow::ensure!(
        st.changes.iter().all(|c| c.index as usize >= BEFORE),
        "no change among the first {BEFORE} runs: {:?}",
        st.changes
    );
    let verdict = st.last_run_verdict.clone().unwrap_or_default();
    println!("last run verdict: {verdict}");

    // historyLimit: once more runs than the limit finished, exactly the limit is kept, and the
    // series still holds every run.
    let (s, rs) = wait_schedule(
        cluster,
        ns,
        name,
        Duration::from_secs(300),
        trigger,
        |s, rs| {
            points(s) > history_limit
                && rs.len() == history_limit
                && rs.iter().all(|r| phase(r).is_some_and(Phase::is_final))
        },
    )
    .await?;
    println!(
        "kept runs {:?}; points {}",
        rs.iter()
            .filter_map(|r| r.metadata.name.clone())
            .collect::<Vec<_>>(),
        points(&s)
    );

    // The figures as gauges in the local Prometheus (the operator's /metrics, scraped).
    let query = format!("benchrun_cell_throughput_rps{{namespace=\"{ns}\",schedule=\"{name}\"}}");
    let mut found = 0;
    for _ in 0..45 {
        found = support::prometheus_count(&query).await.unwrap_or(0);
        if found > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    println!("{query}: {found} series");
    anyhow::ensure!(found > 0, "no gauge in Prometheus for {query}");

    // kubectl benchrun trend prints the series and names the step.
    let trend = cluster.kubectl_benchrun(&["trend", name, "-n", ns]);
    println!("{trend}");
    anyhow::ensure!(trend.contains(&first_slower), "trend names {first_slower}");
    println!("schedule test took {} s", t0.elapsed().as_secs());
    Ok(())
}
