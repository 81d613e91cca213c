//! The operator's own observability: `/metrics` in the Prometheus text format, `/healthz`
//! (the process serves) and `/readyz` (the controller's cache is synced).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Counters and histograms of the reconcile loop.
#[derive(Debug)]
pub struct Metrics {
    registry: Mutex<Registry>,
    reconciles: Counter,
    errors: Family<Vec<(String, String)>, Counter>,
    measurements: Family<Vec<(String, String)>, Counter>,
    duration: Histogram,
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
        Self {
            registry: Mutex::new(registry),
            reconciles,
            errors,
            measurements,
            duration,
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

    /// The controller's cache is synced: `/readyz` answers 200 from now on.
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Relaxed);
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

async fn readyz(State(m): State<Arc<Metrics>>) -> StatusCode {
    if m.ready.load(Ordering::Relaxed) {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

/// The HTTP routes: `/metrics`, `/healthz`, `/readyz`.
pub fn router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .with_state(metrics)
}

/// Serves [`router`] on `addr` until the process ends.
pub async fn serve(addr: SocketAddr, metrics: Arc<Metrics>) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    axum::serve(listener, router(metrics)).await
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
    async fn readyz_turns_ready_once_the_cache_is_synced() {
        let m = Arc::new(Metrics::default());
        assert_eq!(
            readyz(State(m.clone())).await,
            StatusCode::SERVICE_UNAVAILABLE
        );
        m.set_ready();
        assert_eq!(readyz(State(m)).await, StatusCode::OK);
    }
}
