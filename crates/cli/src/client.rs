//! The I/O edge: reading BenchmarkRuns, BenchmarkSchedules and detail ConfigMaps, with errors a
//! user can act on.

use std::collections::BTreeMap;

use anyhow::{anyhow, bail, Context, Result};
use benchrun_api::schedule::BenchmarkSchedule;
use benchrun_api::{BenchmarkRun, CellResult};
use benchrun_wire::LoadResult;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ListParams;
use kube::config::KubeConfigOptions;
use kube::{Api, Client, Config};

use crate::chart::{parse_timeline, TimelinePoint, DETAIL_KEY};

/// What to tell a user whose cluster has no BenchmarkRun CRD.
pub const CRD_MISSING: &str = "the BenchmarkRun CRD (benchmarkruns.benchrun.dev) is not installed in this cluster: \
     install it with `kubectl apply -f crds/benchmarkrun.yaml` (or deploy benchrun with `kubectl apply --server-side -k deploy/base`)";

/// What to tell a user whose cluster has no BenchmarkSchedule CRD.
pub const SCHEDULE_CRD_MISSING: &str = "the BenchmarkSchedule CRD (benchmarkschedules.benchrun.dev) is not installed in this cluster: \
     install it with `kubectl apply --server-side -f crds/benchmarkschedule.yaml` (or deploy benchrun with `kubectl apply --server-side -k deploy/base`)";

/// A client from the kubeconfig (`KUBECONFIG`, `~/.kube/config`, or in-cluster), optionally
/// for another context, and the namespace to use: `namespace` if given, else the context's.
pub async fn connect(
    context: Option<String>,
    namespace: Option<String>,
) -> Result<(Client, String)> {
    let options = KubeConfigOptions {
        context,
        ..Default::default()
    };
    let config = match Config::from_kubeconfig(&options).await {
        Ok(c) => c,
        Err(kubeconfig_err) if options.context.is_none() => Config::incluster()
            .map_err(|_| anyhow!(kubeconfig_err))
            .context("failed to load a kubeconfig (set KUBECONFIG or create ~/.kube/config)")?,
        Err(e) => return Err(e).context("failed to load the kubeconfig context"),
    };
    let ns = namespace.unwrap_or_else(|| config.default_namespace.clone());
    let client = Client::try_from(config).context("failed to create a Kubernetes client")?;
    Ok((client, ns))
}

fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.is_not_found())
}

/// Lists runs in `namespace`, or in every namespace when it is `None`.
pub async fn list_runs(client: &Client, namespace: Option<&str>) -> Result<Vec<BenchmarkRun>> {
    let api: Api<BenchmarkRun> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    match api.list(&ListParams::default()).await {
        Ok(list) => {
            let mut runs = list.items;
            runs.sort_by(|a, b| {
                (&a.metadata.namespace, &a.metadata.name)
                    .cmp(&(&b.metadata.namespace, &b.metadata.name))
            });
            Ok(runs)
        }
        Err(e) if is_not_found(&e) => bail!(CRD_MISSING),
        Err(e) => Err(e).context("failed to list BenchmarkRuns"),
    }
}

/// Reads one run; a 404 is told apart as a missing CRD or a missing run.
pub async fn get_run(client: &Client, namespace: &str, name: &str) -> Result<BenchmarkRun> {
    let api: Api<BenchmarkRun> = Api::namespaced(client.clone(), namespace);
    match api.get(name).await {
        Ok(run) => Ok(run),
        Err(e) if is_not_found(&e) => match api.list(&ListParams::default().limit(1)).await {
            Err(e) if is_not_found(&e) => bail!(CRD_MISSING),
            _ => bail!(
                "BenchmarkRun {name:?} not found in namespace {namespace:?} \
                 (see `kubectl benchrun list -n {namespace}` or `kubectl benchrun list -A`)"
            ),
        },
        Err(e) => Err(e).with_context(|| format!("failed to read BenchmarkRun {namespace}/{name}")),
    }
}

/// Reads one schedule; a 404 is told apart as a missing CRD or a missing schedule.
pub async fn get_schedule(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<BenchmarkSchedule> {
    let api: Api<BenchmarkSchedule> = Api::namespaced(client.clone(), namespace);
    match api.get(name).await {
        Ok(s) => Ok(s),
        Err(e) if is_not_found(&e) => match api.list(&ListParams::default().limit(1)).await {
            Err(e) if is_not_found(&e) => bail!(SCHEDULE_CRD_MISSING),
            _ => bail!(
                "BenchmarkSchedule {name:?} not found in namespace {namespace:?} \
                 (see `kubectl get benchmarkschedules -n {namespace}`)"
            ),
        },
        Err(e) => {
            Err(e).with_context(|| format!("failed to read BenchmarkSchedule {namespace}/{name}"))
        }
    }
}

/// The `result.json` text of the detail ConfigMap `name`.
async fn get_detail(client: &Client, namespace: &str, name: &str) -> Result<String> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let cm = match api.get(name).await {
        Ok(cm) => cm,
        Err(e) if is_not_found(&e) => {
            bail!("detail ConfigMap {namespace}/{name} not found (deleted, or the run was deleted)")
        }
        Err(e) => {
            return Err(e).with_context(|| format!("failed to read ConfigMap {namespace}/{name}"))
        }
    };
    let json = cm
        .data
        .as_ref()
        .and_then(|d| d.get(DETAIL_KEY))
        .ok_or_else(|| anyhow!("ConfigMap {namespace}/{name} has no key {DETAIL_KEY}"))?;
    Ok(json.clone())
}

/// Reads the per-second timeline from the detail ConfigMap `name` (key `result.json`).
pub async fn get_timeline(
    client: &Client,
    namespace: &str,
    name: &str,
) -> Result<Vec<TimelinePoint>> {
    let json = get_detail(client, namespace, name).await?;
    parse_timeline(&json).map_err(|e| anyhow!("ConfigMap {namespace}/{name}: {e}"))
}

/// Reads the load result of every measurement that names a detail ConfigMap, by ConfigMap
/// name. One that cannot be read or parsed is left out and its reason returned beside.
pub async fn get_details(
    client: &Client,
    namespace: &str,
    results: &[CellResult],
) -> (BTreeMap<String, LoadResult>, Vec<String>) {
    let mut details = BTreeMap::new();
    let mut problems = Vec::new();
    for name in results.iter().filter_map(|r| r.detail.as_deref()) {
        if details.contains_key(name) {
            continue;
        }
        let parsed = get_detail(client, namespace, name).await.and_then(|json| {
            let lr: LoadResult = serde_json::from_str(&json).with_context(|| {
                format!("ConfigMap {namespace}/{name}: {DETAIL_KEY} is not a load result")
            })?;
            anyhow::ensure!(
                lr.schema == benchrun_wire::SCHEMA,
                "ConfigMap {namespace}/{name}: schema {:?}, expected {:?}",
                lr.schema,
                benchrun_wire::SCHEMA
            );
            Ok(lr)
        });
        match parsed {
            Ok(lr) => {
                details.insert(name.to_string(), lr);
            }
            Err(e) => problems.push(format!("{e:#}")),
        }
    }
    (details, problems)
}
