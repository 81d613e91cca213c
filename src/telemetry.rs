//! The operator's own observability: `/metrics` in the Prometheus text format, `/healthz`
//! (the process serves) and `/readyz` (a standby has read the leader lease; the leader's
//! controller cache is synced). The body of `/readyz` and the gauge `benchrun_leader` say
//! whether this replica leads. The leader also exports each finished run's per-cell figures
//! ([`crate::gauges`]), so `/metrics` asks for a bearer token allowed to read it
//! ([`crate::metrics_auth`]) unless the operator runs with `--metrics-auth=false`; the probes
//! never do.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::middleware;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use benchrun_api::BenchmarkRun;
use kube::runtime::reflector::Store;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::gauges::collector::RunsCollector;
use crate::metrics_auth::{self, MetricsAuth};

/// This replica's part in the leader election.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Has not read the leader lease yet (or just lost it).
    Starting = 0,
    /// Another replica leads; this one waits to take over.
    Standby = 1,
    /// Holds the lease and runs the controller.
    Leader = 2,
}

impl Role {
    fn from_u8(v: u8) -> Self {
        match v {
            1 => Role::Standby,
            2 => Role::Leader,
            _ => Role::Starting,
        }
    }
}

/// `/readyz` from the role and whether the controller's cache is synced: a standby is ready
/// (it serves `/metrics` and can take over), a leader once its cache is synced.
pub fn readiness(role: Role, synced: bool) -> (StatusCode, &'static str) {
    match (role, synced) {
        (Role::Starting, _) => (StatusCode::SERVICE_UNAVAILABLE, "starting\n"),
        (Role::Standby, _) => (StatusCode::OK, "standby\n"),
        (Role::Leader, false) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "leader, cache not synced\n",
        ),
        (Role::Leader, true) => (StatusCode::OK, "leader\n"),
    }
}

/// Counters and histograms of the reconcile loop.
#[derive(Debug)]
pub struct Metrics {
    registry: Mutex<Registry>,
    reconciles: Counter,
    errors: Family<Vec<(String, String)>, Counter>,
    measurements: Family<Vec<(String, String)>, Counter>,
    duration: Histogram,
    leader: Gauge,
    runs: Arc<RunsCollector>,
    role: AtomicU8,
    ready: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("benchrun");
        let reconciles = Counter::default();
        let errors = Family::<Vec<(String, String)>, Counter>::default();
        let measurements = Family::<Vec<(String, String)>, Counter>::default();
        let duration = Histogram::new([0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]);
        registry.register(
            "reconciles",
            "Reconciles of BenchmarkRuns",
            reconciles.clone(),
        );
        registry.register(
            "reconcile_errors",
            "Failed reconciles, by error",
            errors.clone(),
        );
        registry.register(
            "measurements",
            "Recorded measurements, by outcome",
            measurements.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Duration of a reconcile",
            duration.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader",
            "1 when this replica holds the leader lease and runs the controller, else 0",
            leader.clone(),
        );
        let runs = Arc::new(RunsCollector::default());
        registry.register_collector(Box::new(runs.clone()));
        Self {
            registry: Mutex::new(registry),
            reconciles,
            errors,
            measurements,
            duration,
            leader,
            runs,
            role: AtomicU8::new(Role::Starting as u8),
            ready: AtomicBool::new(false),
        }
    }
}

impl Metrics {
    /// One reconcile ran for `elapsed`.
    pub fn reconciled(&self, elapsed: Duration) {
        self.reconciles.inc();
        self.duration.observe(elapsed.as_secs_f64());
    }

    /// A reconcile failed.
    pub fn failed(&self, error: &str) {
        self.errors
            .get_or_create(&vec![("error".into(), error.into())])
            .inc();
    }

    /// A measurement was recorded with this outcome.
    pub fn measured(&self, outcome: &str) {
        self.measurements
            .get_or_create(&vec![("outcome".into(), outcome.into())])
            .inc();
    }

    /// The controller's cache is synced: a leader's `/readyz` answers 200 from now on.
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Relaxed);
    }

    /// Exports the finished runs of the controller's synced cache as gauges from the next
    /// scrape on ([`crate::gauges`]); only the leader has that cache.
    pub fn export_runs(&self, store: Store<BenchmarkRun>) {
        self.runs.export(store);
    }

    /// Exports the gauges of at most `max` finished runs, the most recently completed of
    /// those that measured something (`--metrics-max-runs`, [`crate::gauges::select`]).
    pub fn set_max_runs(&self, max: usize) {
        self.runs.set_max_runs(max);
    }

    /// This replica's part in the leader election (`/readyz`, `benchrun_leader`).
    pub fn set_role(&self, role: Role) {
        self.role.store(role as u8, Ordering::Relaxed);
        self.leader.set(i64::from(role == Role::Leader));
    }

    /// This replica's part in the leader election.
    pub fn role(&self) -> Role {
        Role::from_u8(self.role.load(Ordering::Relaxed))
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(|e| e.into_inner());
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &registry);
        out
    }
}

async fn metrics_text(State(m): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.render(),
    )
}

async fn readyz(State(m): State<Arc<Metrics>>) -> (StatusCode, &'static str) {
    readiness(m.role(), m.ready.load(Ordering::Relaxed))
}

/// The HTTP routes: `/metrics` (behind `auth` when given), `/healthz`, `/readyz`.
pub fn router(metrics: Arc<Metrics>, auth: Option<Arc<MetricsAuth>>) -> Router {
    let mut scrape = Router::new().route("/metrics", get(metrics_text));
    if let Some(auth) = auth {
        scrape = scrape.route_layer(middleware::from_fn_with_state(auth, metrics_auth::require));
    }
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .merge(scrape)
        .with_state(metrics)
}

/// Serves [`router`] on `addr` until the process ends.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    auth: Option<Arc<MetricsAuth>>,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, router(metrics, auth)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_render_counters_by_label() {
        let m = Metrics::default();
        m.reconciled(Duration::from_millis(20));
        m.failed("apply");
        m.measured("Measured");
        let text = m.render();
        assert!(text.contains("benchrun_reconciles_total 1"), "{text}");
        assert!(
            text.contains("benchrun_reconcile_errors_total{error=\"apply\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("benchrun_measurements_total{outcome=\"Measured\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("benchrun_reconcile_duration_seconds_count 1"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn readyz_turns_ready_once_the_leaders_cache_is_synced() {
        let m = Arc::new(Metrics::default());
        assert_eq!(
            readyz(State(m.clone())).await.0,
            StatusCode::SERVICE_UNAVAILABLE
        );
        m.set_role(Role::Leader);
        assert_eq!(
            readyz(State(m.clone())).await,
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "leader, cache not synced\n"
            )
        );
        m.set_ready();
        assert_eq!(readyz(State(m)).await, (StatusCode::OK, "leader\n"));
    }

    #[test]
    fn a_standby_is_ready_and_says_so_in_readyz_and_the_leader_gauge() {
        assert_eq!(
            readiness(Role::Standby, false),
            (StatusCode::OK, "standby\n")
        );
        let m = Metrics::default();
        assert!(m.render().contains("benchrun_leader 0"), "{}", m.render());
        m.set_role(Role::Leader);
        assert!(m.render().contains("benchrun_leader 1"), "{}", m.render());
        m.set_role(Role::Standby);
        assert!(m.render().contains("benchrun_leader 0"), "{}", m.render());
        assert_eq!(m.role(), Role::Standby);
    }
}
