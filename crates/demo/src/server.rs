//! The HTTP/1.1 server: routing, handlers and the accept loop with graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;

use crate::compute::count_primes_below;
use crate::query::{bounded_u64, ParamError};
use crate::stats::{Stats, CELL_HEADER};

/// Largest `n` accepted by `/compute`: about 10 s of trial division, holding one worker thread.
pub const MAX_COMPUTE_N: u64 = 10_000_000;
/// Largest `ms` accepted by `/sleep`.
pub const MAX_SLEEP_MS: u64 = 60_000;
/// Largest `mb` accepted by one `/alloc` call; calls add up until the process exits.
pub const MAX_ALLOC_MB: u64 = 1024;
/// How long in-flight requests may take to finish after shutdown was requested.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Memory handed out by `/alloc`, held until the process exits (OOM demonstrations).
static HELD: Mutex<Vec<Box<[u8]>>> = Mutex::new(Vec::new());

type Body = Full<Bytes>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Hello,
    Compute,
    Sleep,
    Alloc,
    Healthz,
    Stats,
    NotFound,
}

impl Route {
    fn from_path(path: &str) -> Self {
        match path {
            "/hello" => Route::Hello,
            "/compute" => Route::Compute,
            "/sleep" => Route::Sleep,
            "/alloc" => Route::Alloc,
            "/healthz" => Route::Healthz,
            "/stats" => Route::Stats,
            _ => Route::NotFound,
        }
    }

    /// Index into [`crate::stats::COUNTED_PATHS`]; `None` for the endpoints not counted.
    fn stats_index(self) -> Option<usize> {
        match self {
            Route::Hello => Some(0),
            Route::Compute => Some(1),
            Route::Sleep => Some(2),
            Route::Alloc => Some(3),
            Route::NotFound => Some(4),
            Route::Healthz | Route::Stats => None,
        }
    }
}

/// Serves the demo endpoints on `listener` until `shutdown` completes, then stops accepting
/// and lets open requests finish for up to [`SHUTDOWN_GRACE`].
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let stats = Arc::new(Stats::new());
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(err) => {
                    // EMFILE and friends: back off instead of spinning on the error.
                    eprintln!("benchrun-demo: accept failed: {err}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Responses are small and written at once; Nagle would only add latency.
        let _ = stream.set_nodelay(true);
        let stats = Arc::clone(&stats);
        let service = service_fn(move |req| handle(Arc::clone(&stats), req));
        let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // Clients resetting connections is normal under load; nothing to report.
            let _ = conn.await;
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            eprintln!("benchrun-demo: connections still open after {SHUTDOWN_GRACE:?}, exiting");
        }
    }
    Ok(())
}

async fn handle(stats: Arc<Stats>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let route = Route::from_path(req.uri().path());
    let query = req.uri().query();
    let response = if req.method() != Method::GET && req.method() != Method::HEAD {
        json(
            StatusCode::METHOD_NOT_ALLOWED,
            r#"{"error":"method not allowed"}"#.to_owned(),
        )
    } else {
        match route {
            Route::Hello => json(StatusCode::OK, r#"{"message":"hello"}"#.to_owned()),
            Route::Compute => compute(&stats, query),
            Route::Sleep => sleep(query).await,
            Route::Alloc => alloc(query).await,
            Route::Healthz => text(StatusCode::OK, "ok"),
            Route::Stats => json(StatusCode::OK, stats.to_json().to_string()),
            Route::NotFound => json(StatusCode::NOT_FOUND, r#"{"error":"not found"}"#.to_owned()),
        }
    };
    // Counted once the response exists, so a request abandoned mid-sleep is not "served".
    if let Some(index) = route.stats_index() {
        let tag = req.headers().get(CELL_HEADER).and_then(|v| v.to_str().ok());
        stats.record(index, tag);
    }
    Ok(response)
}

fn compute(stats: &Stats, query: Option<&str>) -> Response<Body> {
    match bounded_u64(query, "n", 10_000, MAX_COMPUTE_N) {
        // Runs on the worker thread, as the CPU-bound handlers of the images it stands in for.
        Ok(n) => {
            stats.record_compute_n(n);
            json(
                StatusCode::OK,
                format!(r#"{{"n":{n},"primes":{}}}"#, count_primes_below(n)),
            )
        }
        Err(err) => bad_request(&err),
    }
}

async fn sleep(query: Option<&str>) -> Response<Body> {
    match bounded_u64(query, "ms", 50, MAX_SLEEP_MS) {
        Ok(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            json(StatusCode::OK, format!(r#"{{"ms":{ms}}}"#))
        }
        Err(err) => bad_request(&err),
    }
}

async fn alloc(query: Option<&str>) -> Response<Body> {
    let mb = match bounded_u64(query, "mb", 64, MAX_ALLOC_MB) {
        Ok(mb) => mb,
        Err(err) => return bad_request(&err),
    };
    let held = tokio::task::spawn_blocking(move || {
        // Non-zero bytes: every page is written, so the memory is resident, not just mapped.
        let block = vec![1u8; (mb as usize) << 20].into_boxed_slice();
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.push(block);
        held.iter().map(|b| b.len() as u64 >> 20).sum::<u64>()
    })
    .await;
    match held {
        Ok(held_mb) => json(
            StatusCode::OK,
            format!(r#"{{"mb":{mb},"held_mb":{held_mb}}}"#),
        ),
        Err(err) => json(
            StatusCode::INTERNAL_SERVER_ERROR,
            serde_json::json!({ "error": format!("allocation failed: {err}") }).to_string(),
        ),
    }
}

fn bad_request(err: &ParamError) -> Response<Body> {
    let body = serde_json::json!({ "error": err.to_string() }).to_string();
    json(StatusCode::BAD_REQUEST, body)
}

fn json(status: StatusCode, body: String) -> Response<Body> {
    with_type(status, Bytes::from(body), "application/json")
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    with_type(
        status,
        Bytes::from_static(body.as_bytes()),
        "text/plain; charset=utf-8",
    )
}

fn with_type(status: StatusCode, body: Bytes, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_only_exact_paths() {
        assert_eq!(Route::from_path("/hello"), Route::Hello);
        assert_eq!(Route::from_path("/hello/"), Route::NotFound);
        assert_eq!(Route::from_path("/"), Route::NotFound);
    }

    #[test]
    fn health_and_stats_are_not_counted() {
        assert_eq!(Route::Healthz.stats_index(), None);
        assert_eq!(Route::Stats.stats_index(), None);
        assert_eq!(Route::NotFound.stats_index(), Some(4));
    }
}
