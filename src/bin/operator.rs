//! The benchrun operator: reconciles BenchmarkRuns and serves `/metrics`, `/healthz` and
//! `/readyz`. Runs in-cluster (service account) or from a kubeconfig for development. Replicas
//! elect a leader on a Lease; only the leader reconciles, and a leader that loses its lease
//! exits (its Deployment restarts it as a standby).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use benchrun::builders::LoadSettings;
use benchrun::controller::{self, Config};
use benchrun::leader::{self, Elector, LeaseArgs};
use benchrun::logging::{self, LogFormat};
use benchrun::metrics_auth::MetricsAuth;
use benchrun::placement_policy::PlacementPolicy;
use benchrun::policy::Policy;
use benchrun::telemetry::{self, Metrics};
use clap::Parser;

/// Kubernetes operator for BenchmarkRun (benchrun.dev/v1alpha1).
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Default Prometheus base URL; a run's spec.prometheus.url overrides it.
    #[arg(
        long,
        env = "PROMETHEUS_URL",
        default_value = "http://prometheus.monitoring.svc:9090"
    )]
    prometheus_url: String,
    /// Image of the load generator.
    #[arg(
        long,
        env = "BENCHRUN_LOAD_IMAGE",
        default_value = "benchrun.local/benchrun-load:0.1.0"
    )]
    load_image: String,
    /// Pull policy of the load image and of target images without their own.
    #[arg(long, env = "BENCHRUN_IMAGE_PULL_POLICY", default_value = "IfNotPresent", value_parser = ["Always", "IfNotPresent", "Never"])]
    image_pull_policy: String,
    /// Runs measuring at the same time; the others wait in phase Queued.
    #[arg(long, env = "BENCHRUN_MAX_MEASURING_RUNS", default_value_t = 1)]
    max_measuring_runs: usize,
    /// Most runs one namespace may have waiting for a measuring slot (0: no limit). A run that
    /// would go beyond it is not queued: it fails with reason QueueFull, naming this flag.
    /// Namespaces take turns in the queue whatever this limit; it bounds what one namespace
    /// can pile up (the operator's cache and reconciles of waiting runs).
    #[arg(long, env = "BENCHRUN_MAX_QUEUED_PER_NAMESPACE", default_value_t = 50)]
    max_queued_per_namespace: usize,
    /// Address of /metrics, /healthz and /readyz.
    #[arg(long, env = "BENCHRUN_METRICS_ADDR", default_value = "0.0.0.0:8080")]
    metrics_addr: SocketAddr,
    /// Serve /metrics only to a bearer token whose user may `get` the non-resource URL
    /// /metrics (TokenReview and SubjectAccessReview, as Kubernetes components do; the
    /// ClusterRole benchrun-metrics-reader grants it). `--metrics-auth=false` serves it to
    /// anyone who reaches the port: only for a single-tenant install, as the gauges name every
    /// namespace's runs and figures.
    #[arg(long, env = "BENCHRUN_METRICS_AUTH", default_value_t = true, action = clap::ArgAction::Set)]
    metrics_auth: bool,
    /// The most finished runs whose per-cell gauges /metrics exports: the most recently
    /// completed of those that measured something; `benchrun_metrics_runs_dropped` counts the
    /// others.
    #[arg(long, env = "BENCHRUN_METRICS_MAX_RUNS", default_value_t = benchrun::gauges::DEFAULT_MAX_RUNS)]
    metrics_max_runs: usize,
    /// How long after a measured window ends the operator keeps asking an unreachable
    /// Prometheus (down, restarting, 5xx) for the window's CPU and memory, with backoff,
    /// before recording them as unavailable; the run does not finish before (e.g. 10m, 30m).
    #[arg(long, env = "BENCHRUN_METRICS_RETRY_FOR", default_value = "10m", value_parser = parse_duration)]
    metrics_retry_for: Duration,
    /// The longest gap between two stored CPU samples of a container in Prometheus: the
    /// kubelet's housekeeping interval, twice it (cAdvisor adds up to one interval at
    /// random), plus Prometheus' scrape interval of the kubelets' cAdvisor. Fresh target pods
    /// are left this long before the load starts, and a window's CPU and memory are read this
    /// long after it ends. The default, 10s, is the wait of earlier releases; with kubelet
    /// defaults (10 s housekeeping, so samples 10–20 s apart) set 20s plus the scrape interval.
    /// The local cluster (1 s and 1 s) sets 3s.
    #[arg(long, env = "BENCHRUN_SAMPLE_INTERVAL", default_value = "10s", value_parser = parse_duration)]
    sample_interval: Duration,
    /// Watch this namespace only (default: all namespaces).
    #[arg(long, env = "BENCHRUN_NAMESPACE")]
    namespace: Option<String>,
    /// Log format: `auto` writes JSON lines when stdout is not a terminal (in a container)
    /// and coloured text on a terminal.
    #[arg(long, env = "BENCHRUN_LOG_FORMAT", value_enum, default_value_t = LogFormat::Auto)]
    log_format: LogFormat,
    /// Further Prometheus base URLs runs may name in spec.prometheus.url (comma-separated;
    /// `*` allows any). The operator's own --prometheus-url is always allowed; a run naming
    /// another URL is refused (Accepted=False, NotAllowed) and no request is sent to it.
    #[arg(long, env = "BENCHRUN_ALLOWED_PROMETHEUS_URLS", value_delimiter = ',')]
    allowed_prometheus_urls: Vec<String>,
    /// Prefixes target images must start with, e.g. `registry.example.com/bench/`
    /// (comma-separated; empty: any image). A run naming another image is refused.
    #[arg(long, env = "BENCHRUN_ALLOWED_IMAGE_PREFIXES", value_delimiter = ',')]
    allowed_image_prefixes: Vec<String>,
    /// Run `spec.prometheus.extraQueries` as written, over every namespace (a single-tenant
    /// install). Without it each selector is confined to the run's namespace and a query the
    /// PromQL parser cannot read is refused.
    #[arg(long, env = "BENCHRUN_ALLOW_CLUSTER_WIDE_QUERIES")]
    allow_cluster_wide_queries: bool,
    /// Node labels runs may select in targets[].nodeSelector and load.nodeSelector beyond
    /// their own role (comma-separated: `key` allows any value, `key=value` that pair, `*`
    /// any label). Without it a target may select only benchrun.dev/role=target and the load
    /// only benchrun.dev/role=load; a run selecting anything else (another role,
    /// kubernetes.io/hostname, a control-plane label) is refused (Accepted=False, NotAllowed).
    #[arg(
        long,
        env = "BENCHRUN_ALLOWED_NODE_SELECTOR_KEYS",
        value_delimiter = ','
    )]
    allowed_node_selector_keys: Vec<String>,
    /// Taint keys target pods may tolerate in targets[].tolerations (comma-separated; `*`
    /// allows any toleration, also one without a key). Without it a run with a toleration is
    /// refused.
    #[arg(long, env = "BENCHRUN_ALLOWED_TOLERATION_KEYS", value_delimiter = ',')]
    allowed_toleration_keys: Vec<String>,
    #[command(flatten)]
    lease: LeaseArgs,
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    benchrun_api::units::duration(s)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    logging::init(args.log_format);
    let client = kube::Client::try_default()
        .await
        .context("failed to create a Kubernetes client (in-cluster or KUBECONFIG)")?;
    let election = args.lease.settings(&client).map_err(anyhow::Error::msg)?;
    let metrics = Arc::new(Metrics::default());
    metrics.set_max_runs(args.metrics_max_runs);
    let auth = args
        .metrics_auth
        .then(|| Arc::new(MetricsAuth::new(client.clone())));
    let server = tokio::spawn(telemetry::serve(args.metrics_addr, metrics.clone(), auth));
    tracing::info!(prometheus = %args.prometheus_url, load_image = %args.load_image, addr = %args.metrics_addr, metrics_auth = args.metrics_auth, metrics_max_runs = args.metrics_max_runs, "starting");
    let policy = Policy::new(
        &args.prometheus_url,
        &args.allowed_prometheus_urls,
        &args.allowed_image_prefixes,
    )
    .with_cluster_wide_queries(args.allow_cluster_wide_queries)
    .with_placement(PlacementPolicy::new(
        &args.allowed_node_selector_keys,
        &args.allowed_toleration_keys,
    ));
    tracing::info!(prometheus_urls = ?args.allowed_prometheus_urls, image_prefixes = ?args.allowed_image_prefixes, node_selector_keys = ?args.allowed_node_selector_keys, toleration_keys = ?args.allowed_toleration_keys, "allow-lists (beyond the operator's own Prometheus and each pod's own node role)");
    let config = Config {
        policy,
        prometheus_url: args.prometheus_url,
        load: LoadSettings {
            image: args.load_image,
            pull_policy: args.image_pull_policy.clone(),
        },
        image_pull_policy: args.image_pull_policy,
        max_measuring_runs: args.max_measuring_runs,
        max_queued_per_namespace: args.max_queued_per_namespace,
        namespace: args.namespace,
        metrics_retry_for: args.metrics_retry_for,
        sample_interval: args.sample_interval,
    };
    let elector = Elector::new(client.clone(), election);
    let work = || controller::run(client, config, metrics.clone());
    tokio::select! {
        res = leader::lead(elector, metrics.clone(), shutdown_signal(), work) => {
            res?;
            tracing::info!("controller stopped");
        }
        res = server => {
            res.context("metrics server task")?.context("failed to serve metrics")?;
        }
    }
    Ok(())
}

/// SIGTERM or Ctrl-C. While leading, the controller listens for them itself and drains first.
async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
