//! Out of the box (issue 35): pods that cannot fit fail in seconds without holding the
//! measuring slot, a spec that sets no resources runs on the local cluster, GitOps tools read a
//! run's status through kstatus, and env names the operator reserves are refused at admission.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use benchrun_api::{BenchmarkRun, Outcome, Phase};
use k8s_openapi::api::core::v1::Node;
use kube::api::ListParams;
use kube::{Api, ResourceExt};

use crate::support::Cluster;

const DEMO_IMAGE: &str = "benchrun.local/benchrun-demo:0.1.0";

/// A one-cell demo run named `name`: `resources` and `load_resources` are spliced in as YAML
/// (empty: the defaults).
fn run(name: &str, resources: &str, load_resources: &str, extra: &str) -> String {
    format!(
        r#"
apiVersion: benchrun.dev/v1alpha1
kind: BenchmarkRun
metadata: {{name: {name}}}
spec:
  targets:
    - {{name: demo, image: "{DEMO_IMAGE}", imagePullPolicy: IfNotPresent, readinessPath: /healthz}}
  scenarios:
    - {{name: hello, path: /hello}}
  {resources}
  load: {{connections: 4, duration: 5s {load_resources}}}
  timeouts: {{ready: 60s}}
{extra}
"#
    )
}

/// The nodes labelled `benchrun.dev/role=ROLE`.
async fn nodes_of(cluster: &Cluster, role: &str) -> anyhow::Result<Vec<String>> {
    let nodes = Api::<Node>::all(cluster.client.clone())
        .list(&ListParams::default().labels(&format!("benchrun.dev/role={role}")))
        .await?;
    Ok(nodes.items.iter().map(|n| n.name_any()).collect())
}

fn seconds(t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> i64 {
    t.map_or(i64::MAX, |t| t.0.as_second())
}

/// A run whose target asks 100 CPUs and one whose load pod asks 100 CPUs each fail within 10 s
/// of reaching the front of the queue, naming the resource and the node that came closest;
/// the run queued after them, which sets no resources at all, starts and Succeeds.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn cells_that_cannot_fit_fail_in_seconds_and_the_next_run_starts() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-fit").await;
    let outcome = async {
        let target_nodes = nodes_of(&cluster, "target").await?;
        let load_nodes = nodes_of(&cluster, "load").await?;
        // Queue order is creation time, then name: the names keep it when two share a second.
        cluster
            .apply_run(
                &ns,
                &run(
                    "a-big-target",
                    "resources: {cpu: \"100\", memory: 128Mi}",
                    "",
                    "",
                ),
            )
            .await?;
        cluster
            .apply_run(
                &ns,
                &run(
                    "b-big-load",
                    "",
                    ", resources: {cpu: \"100\", memory: 64Mi}",
                    "",
                ),
            )
            .await?;
        cluster
            .apply_run(&ns, &run("c-defaults", "", "", ""))
            .await?;
        let a = cluster
            .wait_finished(&ns, "a-big-target", Duration::from_secs(120))
            .await?;
        let b = cluster
            .wait_finished(&ns, "b-big-load", Duration::from_secs(120))
            .await?;
        let c = cluster
            .wait_finished(&ns, "c-defaults", Duration::from_secs(300))
            .await?;
        let (sa, sb, sc) = (
            a.status.clone().unwrap_or_default(),
            b.status.clone().unwrap_or_default(),
            c.status.clone().unwrap_or_default(),
        );
        for (run, s, nodes, field) in [
            (&a, &sa, &target_nodes, "spec.resources"),
            (&b, &sb, &load_nodes, "spec.load.resources"),
        ] {
            let name = run.name_any();
            anyhow::ensure!(s.phase == Some(Phase::Failed), "{name}: {:?}", s.phase);
            anyhow::ensure!(s.start_time.is_none(), "{name} took the measuring slot");
            let r = s.results.first().context("a failed result")?;
            anyhow::ensure!(r.outcome == Outcome::Failed, "{name}: {r:?}");
            let reason = r.reason.clone().unwrap_or_default();
            anyhow::ensure!(
                reason.contains("Insufficient cpu") && reason.contains(field),
                "{name}: {reason}"
            );
            anyhow::ensure!(
                nodes.is_empty() || nodes.iter().any(|n| reason.contains(n.as_str())),
                "{name} does not name a node of {nodes:?}: {reason}"
            );
        }
        // Within 10 s of reaching the front: a at once, b once a had failed, c once b had.
        let created = |r: &BenchmarkRun| seconds(r.metadata.creation_timestamp.as_ref());
        let done_a = seconds(sa.completion_time.as_ref());
        let done_b = seconds(sb.completion_time.as_ref());
        anyhow::ensure!(
            done_a - created(&a) <= 10,
            "a failed {}s after its creation",
            done_a - created(&a)
        );
        let front_b = created(&b).max(done_a);
        anyhow::ensure!(
            done_b - front_b <= 10,
            "b failed {}s after reaching the front",
            done_b - front_b
        );
        let start_c = seconds(sc.start_time.as_ref());
        anyhow::ensure!(
            start_c - done_b <= 10,
            "c started {}s after b failed",
            start_c - done_b
        );
        // A spec that sets no resources fits the local cluster and runs.
        anyhow::ensure!(
            sc.phase == Some(Phase::Succeeded),
            "c-defaults: {:?} {:?}",
            sc.phase,
            sc.results.first().and_then(|r| r.reason.clone())
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Builds `tests/kstatus` (a Go program on sigs.k8s.io/cli-utils' kstatus) into a temporary
/// directory; the module cache and build cache live outside the repository.
fn build_kstatus() -> anyhow::Result<PathBuf> {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/kstatus");
    let out = std::env::temp_dir().join(format!("benchrun-kstatus-{}", std::process::id()));
    std::fs::create_dir_all(&out)?;
    let bin = out.join("kstatus");
    let cache = std::env::var("BENCHRUN_GO_CACHE").unwrap_or("/var/cache/benchrun/go".into());
    let status = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .env("GOFLAGS", "-mod=mod")
        .env("GOPATH", &cache)
        .env("GOCACHE", format!("{cache}/cache"))
        .status()
        .context("go on PATH")?;
    anyhow::ensure!(status.success(), "go build of tests/kstatus failed");
    Ok(bin)
}

/// What kstatus says of `run`, given as the JSON `kubectl get -o json` prints.
fn kstatus(bin: &PathBuf, run: &BenchmarkRun) -> anyhow::Result<String> {
    use std::io::Write as _;
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(&serde_json::to_vec(run)?)?;
    let out = child.wait_with_output()?;
    anyhow::ensure!(out.status.success(), "kstatus failed");
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text.lines().next().unwrap_or_default().to_string())
}

/// kstatus (sigs.k8s.io/cli-utils, what Flux's `wait`, kpt and Config Sync use) reports a
/// queued and a running run as InProgress, a succeeded one as Current and a failed one as
/// Failed.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn gitops_tools_follow_a_run_to_its_end() {
    let bin = build_kstatus().expect("build tests/kstatus");
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-kstatus").await;
    let outcome = async {
        let api: Api<BenchmarkRun> = Api::namespaced(cluster.client.clone(), &ns);
        cluster.apply_run(&ns, &run("a-first", "", "", "")).await?;
        cluster.apply_run(&ns, &run("b-second", "", "", "")).await?;
        // A run that cannot be carried out: its target never becomes ready.
        let broken = run("c-broken", "", "", "")
            .replace(DEMO_IMAGE, "benchrun.local/does-not-exist:0")
            .replace("ready: 60s", "ready: 5s");
        cluster.apply_run(&ns, &broken).await?;
        let first = cluster
            .wait_until(&ns, "a-first", Duration::from_secs(120), |r| {
                r.status.as_ref().and_then(|s| s.phase) == Some(Phase::Running)
            })
            .await?;
        let second = api.get("b-second").await?;
        anyhow::ensure!(
            second.status.as_ref().and_then(|s| s.phase) == Some(Phase::Queued),
            "b-second is not queued behind a-first"
        );
        anyhow::ensure!(
            kstatus(&bin, &first)? == "InProgress",
            "running: {}",
            kstatus(&bin, &first)?
        );
        anyhow::ensure!(
            kstatus(&bin, &second)? == "InProgress",
            "queued: {}",
            kstatus(&bin, &second)?
        );
        // Its queued state is what this test is about: measuring it too would only cost time.
        api.delete("b-second", &Default::default()).await?;
        let done = cluster
            .wait_finished(&ns, "a-first", Duration::from_secs(180))
            .await?;
        anyhow::ensure!(done.status.as_ref().and_then(|s| s.phase) == Some(Phase::Succeeded));
        anyhow::ensure!(
            kstatus(&bin, &done)? == "Current",
            "succeeded: {}",
            kstatus(&bin, &done)?
        );
        let failed = cluster
            .wait_finished(&ns, "c-broken", Duration::from_secs(300))
            .await?;
        anyhow::ensure!(failed.status.as_ref().and_then(|s| s.phase) == Some(Phase::Failed));
        anyhow::ensure!(
            kstatus(&bin, &failed)? == "Failed",
            "failed: {}",
            kstatus(&bin, &failed)?
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// A target env variable named like one the operator injects is refused by the apiserver,
/// naming the field.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn a_reserved_env_name_is_refused_at_admission() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-env").await;
    let outcome = async {
        let yaml = run("reserved", "", "", "").replace(
            "readinessPath: /healthz}",
            "readinessPath: /healthz, env: [{name: BENCHRUN_SERVICE_DB_ADDR, value: x}]}",
        );
        let err = match cluster.apply_run(&ns, &yaml).await {
            Ok(_) => {
                anyhow::bail!("the apiserver accepted a target env named BENCHRUN_SERVICE_DB_ADDR")
            }
            Err(e) => format!("{e:#}"),
        };
        anyhow::ensure!(
            err.contains("spec.targets[0].env") && err.contains("reserved"),
            "{err}"
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}

/// Extra queries read only the run's namespace: `sum(container_cpu_usage_seconds_total)` over
/// "the cluster" equals the same sum over the run's namespace, evaluated at the same instant,
/// and a query naming another namespace returns nothing; a query the parser cannot read is
/// refused naming the field.
#[tokio::test]
#[ignore = "needs the local cluster: make e2e"]
async fn extra_queries_are_confined_to_the_runs_namespace() {
    let cluster = Cluster::connect().await;
    let ns = cluster.namespace("e2e-queries").await;
    let outcome = async {
        let extra = r#"  prometheus:
    extraQueries:
      - {name: all, query: "sum(container_cpu_usage_seconds_total)"}
      - {name: mine, query: "sum(container_cpu_usage_seconds_total{namespace=\"$namespace\"})"}
      - {name: system, query: "sum(container_cpu_usage_seconds_total{namespace=\"kube-system\"})"}"#;
        let yaml = run("confined", "", "", extra).replace("duration: 5s", "duration: 20s");
        cluster.apply_run(&ns, &yaml).await?;
        let done = cluster
            .wait_finished(&ns, "confined", Duration::from_secs(300))
            .await?;
        let s = done.status.clone().unwrap_or_default();
        anyhow::ensure!(s.phase == Some(Phase::Succeeded), "{:?}", s.phase);
        let r = s.results.first().context("a result")?;
        let all = *r.extra.get("all").context("no value for `all`")?;
        let mine = *r.extra.get("mine").context("no value for `mine`")?;
        anyhow::ensure!(mine > 0.0, "the run's namespace used no CPU: {mine}");
        anyhow::ensure!(all == mine, "all {all} != the run's namespace {mine}: not confined");
        anyhow::ensure!(
            !r.extra.contains_key("system"),
            "kube-system's series were read: {:?}",
            r.extra
        );
        let bad = run("unparsable", "", "", r#"  prometheus:
    extraQueries:
      - {name: x, query: "sum(rate(x[1m])"}"#);
        cluster.apply_run(&ns, &bad).await?;
        let refused = cluster
            .wait_finished(&ns, "unparsable", Duration::from_secs(60))
            .await?;
        let accepted = refused
            .status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Accepted").cloned())
            .context("an Accepted condition")?;
        anyhow::ensure!(
            accepted.status == "False"
                && accepted.message.contains("spec.prometheus.extraQueries[0].query"),
            "{accepted:?}"
        );
        Ok(())
    }
    .await;
    cluster.finish(&ns, outcome).await;
}
