//! The server: routing, handlers and the accept loops (HTTP/1.1; h2c and TLS on extra
//! listeners) with graceful shutdown.
//!
//! Besides the fixed-path endpoints it serves a document store (`/docs/{id}`) and, as a
//! client of another demo target, `/upstream/docs/{id}`.

use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body as _, Incoming};
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::http::request::Parts;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};

use crate::compute::count_primes_below;
use crate::query::bounded_u64;
use crate::stats::{Stats, CELL_HEADER};
use crate::store::{check_id, Limits, Put, Store, StoreError};
use crate::upstream::{Upstream, UpstreamClient, UPSTREAM_TIMEOUT};

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

/// The answer to `/upstream/docs/{id}` when no upstream was given.
const NO_UPSTREAM: &str = "no upstream: start with --upstream HOST:PORT (env UPSTREAM)";

type Body = Full<Bytes>;

/// How [`serve`] runs beyond its listener.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The demo target `/upstream/docs/{id}` reads from (`--upstream`); without one those
    /// requests get `503`.
    pub upstream: Option<Upstream>,
    /// How long a fetch from the upstream may take, connect and body included
    /// (default [`UPSTREAM_TIMEOUT`]); then the request gets `504`.
    pub upstream_timeout: Duration,
    /// Bounds of the document store (default: [`Limits::default`]).
    pub store_limits: Limits,
    /// A pause after each accepted connection (`--accept-delay-ms`; default none): a slow
    /// accept loop, which with a small backlog ([`crate::listen::listen`]) makes the kernel drop
    /// SYNs, as an overloaded server does.
    pub accept_delay: Duration,
}

impl Default for ServeOptions {
    /// No upstream, [`UPSTREAM_TIMEOUT`], the default store limits and no accept delay.
    fn default() -> Self {
        ServeOptions {
            upstream: None,
            upstream_timeout: UPSTREAM_TIMEOUT,
            store_limits: Limits::default(),
            accept_delay: Duration::ZERO,
        }
    }
}

/// What every request handler shares.
#[derive(Debug)]
struct App {
    stats: Stats,
    store: Store,
    upstream: Option<UpstreamClient>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route<'a> {
    Hello,
    Compute,
    Sleep,
    Alloc,
    Healthz,
    Stats,
    /// `/docs/{id}`, with the (unchecked) id.
    Doc(&'a str),
    /// `/upstream/docs/{id}`, with the (unchecked) id.
    UpstreamDoc(&'a str),
    NotFound,
}

impl<'a> Route<'a> {
    fn from_path(path: &'a str) -> Self {
        match path {
            "/hello" => Route::Hello,
            "/compute" => Route::Compute,
            "/sleep" => Route::Sleep,
            "/alloc" => Route::Alloc,
            "/healthz" => Route::Healthz,
            "/stats" => Route::Stats,
            _ => Self::from_prefix(path),
        }
    }

    /// The routes that take the rest of the path as an id; an empty id is not found.
    fn from_prefix(path: &'a str) -> Self {
        let id = |prefix| path.strip_prefix(prefix).filter(|id: &&str| !id.is_empty());
        if let Some(id) = id("/docs/") {
            Route::Doc(id)
        } else if let Some(id) = id("/upstream/docs/") {
            Route::UpstreamDoc(id)
        } else {
            Route::NotFound
        }
    }

    /// Index into [`crate::stats::COUNTED_PATHS`]; `None` for the endpoints not counted.
    fn stats_index(self) -> Option<usize> {
        match self {
            Route::Hello => Some(0),
            Route::Compute => Some(1),
            Route::Sleep => Some(2),
            Route::Alloc => Some(3),
            Route::Doc(_) => Some(4),
            Route::UpstreamDoc(_) => Some(5),
            Route::NotFound => Some(6),
            Route::Healthz | Route::Stats => None,
        }
    }

    /// The methods served, as the `Allow` header lists them.
    fn allowed_methods(self) -> &'static str {
        match self {
            Route::Doc(_) => "GET, HEAD, PUT",
            _ => "GET, HEAD",
        }
    }

    fn allows(self, method: &Method) -> bool {
        *method == Method::GET
            || *method == Method::HEAD
            || (*method == Method::PUT && matches!(self, Route::Doc(_)))
    }
}

/// How a listener's connections are served.
#[derive(Clone)]
pub enum Mode {
    /// HTTP/1.1 only (the main port).
    Http1,
    /// HTTP/1.1 and HTTP/2 with prior knowledge (h2c), told apart by the connection preface.
    Cleartext,
    /// TLS, then HTTP/1.1 or HTTP/2 as ALPN chose (see [`crate::tls`]).
    Tls(tokio_rustls::TlsAcceptor),
}

/// Serves the demo endpoints on `listener` (HTTP/1.1) until `shutdown` completes, then stops
/// accepting and lets open requests finish for up to [`SHUTDOWN_GRACE`].
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> std::io::Result<()> {
    serve_all(vec![(listener, Mode::Http1)], shutdown, options).await
}

/// [`serve`] on several listeners, each in its [`Mode`], with one set of endpoints (one
/// `/stats`, one store).
pub async fn serve_all(
    listeners: Vec<(TcpListener, Mode)>,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> std::io::Result<()> {
    let app = Arc::new(App {
        stats: Stats::new(),
        store: Store::with_limits(options.store_limits),
        upstream: options
            .upstream
            .map(|upstream| UpstreamClient::new(upstream, options.upstream_timeout)),
    });
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    // Each listener accepts on its own task; this loop serves what they accepted, in order.
    let (tx, mut accepted) = tokio::sync::mpsc::channel(64);
    let acceptors: Vec<_> = listeners
        .into_iter()
        .map(|(listener, mode)| tokio::spawn(accept(listener, mode, tx.clone())))
        .collect();
    drop(tx);
    loop {
        let (stream, mode): (TcpStream, Mode) = tokio::select! {
            next = accepted.recv() => match next {
                Some(next) => next,
                None => break,
            },
            () = &mut shutdown => break,
        };
        // Responses are small and written at once; Nagle would only add latency.
        let _ = stream.set_nodelay(true);
        let app = Arc::clone(&app);
        let service = service_fn(move |req| handle(Arc::clone(&app), req));
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            // Clients resetting connections and failed handshakes are normal under load;
            // nothing to report.
            match mode {
                Mode::Http1 => {
                    let conn =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                    let _ = watcher.watch(conn).await;
                }
                Mode::Cleartext => {
                    let builder = auto::Builder::new(TokioExecutor::new());
                    let conn = builder.serve_connection(TokioIo::new(stream), service);
                    let _ = watcher.watch(conn).await;
                }
                Mode::Tls(acceptor) => {
                    let Ok(tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    let builder = auto::Builder::new(TokioExecutor::new());
                    let conn = builder.serve_connection(TokioIo::new(tls), service);
                    let _ = watcher.watch(conn).await;
                }
            }
        });
        if !options.accept_delay.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(options.accept_delay) => {}
                () = &mut shutdown => break,
            }
        }
    }
    for a in acceptors {
        a.abort(); // closes the listeners
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            eprintln!("benchrun-demo: connections still open after {SHUTDOWN_GRACE:?}, exiting");
        }
    }
    Ok(())
}

/// Accepts connections on `listener` and hands them to the serving loop until it is gone.
async fn accept(
    listener: TcpListener,
    mode: Mode,
    tx: tokio::sync::mpsc::Sender<(TcpStream, Mode)>,
) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                if tx.send((stream, mode.clone())).await.is_err() {
                    return;
                }
            }
            Err(err) => {
                // EMFILE and friends: back off instead of spinning on the error.
                eprintln!("benchrun-demo: accept failed: {err}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

async fn handle(app: Arc<App>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let (parts, body) = req.into_parts();
    let route = Route::from_path(parts.uri.path());
    let response = if route.allows(&parts.method) {
        respond(&app, route, &parts, body).await
    } else {
        method_not_allowed(route)
    };
    // Counted once the response exists, so a request abandoned mid-sleep is not "served".
    if let Some(index) = route.stats_index() {
        let tag = parts.headers.get(CELL_HEADER).and_then(|v| v.to_str().ok());
        app.stats.record(index, tag);
    }
    Ok(response)
}

/// The response to a request whose method `route` allows.
async fn respond(app: &App, route: Route<'_>, parts: &Parts, body: Incoming) -> Response<Body> {
    let query = parts.uri.query();
    match route {
        Route::Hello => json(StatusCode::OK, r#"{"message":"hello"}"#.to_owned()),
        Route::Compute => compute(&app.stats, query),
        Route::Sleep => sleep(query).await,
        Route::Alloc => alloc(query).await,
        Route::Healthz => text(StatusCode::OK, "ok"),
        Route::Stats => json(StatusCode::OK, app.stats.to_json().to_string()),
        Route::Doc(id) if parts.method == Method::PUT => put_doc(&app.store, id, body).await,
        Route::Doc(id) => get_doc(&app.store, id),
        Route::UpstreamDoc(id) => upstream_doc(app.upstream.as_ref(), id).await,
        Route::NotFound => error(StatusCode::NOT_FOUND, "not found"),
    }
}

fn method_not_allowed(route: Route<'_>) -> Response<Body> {
    let mut response = error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    let allow = HeaderValue::from_static(route.allowed_methods());
    response.headers_mut().insert(ALLOW, allow);
    response
}

/// `PUT /docs/{id}`: 201 for a new id, 200 for a replaced document.
async fn put_doc(store: &Store, id: &str, body: Incoming) -> Response<Body> {
    if let Err(err) = check_id(id) {
        return error(StatusCode::BAD_REQUEST, err);
    }
    let doc = match read_body(body, store.limits().doc_bytes).await {
        Ok(doc) => doc,
        Err(response) => return response,
    };
    let bytes = doc.len();
    let status = match store.put(id, doc) {
        Ok(Put::Created) => StatusCode::CREATED,
        Ok(Put::Replaced) => StatusCode::OK,
        Err(err @ StoreError::TooLarge { .. }) => return error(StatusCode::PAYLOAD_TOO_LARGE, err),
        Err(err @ StoreError::Full(_)) => return error(StatusCode::INSUFFICIENT_STORAGE, err),
    };
    // check_id allows no character that JSON would escape.
    json(status, format!(r#"{{"id":"{id}","bytes":{bytes}}}"#))
}

/// Reads a request body of at most `max` bytes; a larger one gets 413, a broken one 400.
async fn read_body(body: Incoming, max: usize) -> Result<Bytes, Response<Body>> {
    let announced = body.size_hint().lower();
    if announced > max as u64 {
        let err = StoreError::TooLarge {
            size: usize::try_from(announced).unwrap_or(usize::MAX),
            max,
        };
        return Err(error(StatusCode::PAYLOAD_TOO_LARGE, err));
    }
    match Limited::new(body, max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<LengthLimitError>() => Err(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the document is more than the {max} bytes a document may hold"),
        )),
        Err(err) => Err(error(
            StatusCode::BAD_REQUEST,
            format!("failed to read the request body: {err}"),
        )),
    }
}

/// `GET /docs/{id}`: the stored bytes, or 404.
fn get_doc(store: &Store, id: &str) -> Response<Body> {
    if let Err(err) = check_id(id) {
        return error(StatusCode::BAD_REQUEST, err);
    }
    match store.get(id) {
        Some(doc) => with_type(StatusCode::OK, doc, "application/json"),
        None => error(StatusCode::NOT_FOUND, format!("no document {id}")),
    }
}

/// `GET /upstream/docs/{id}`: the upstream's answer to `GET /docs/{id}`, status included.
async fn upstream_doc(upstream: Option<&UpstreamClient>, id: &str) -> Response<Body> {
    if let Err(err) = check_id(id) {
        return error(StatusCode::BAD_REQUEST, err);
    }
    let Some(upstream) = upstream else {
        return error(StatusCode::SERVICE_UNAVAILABLE, NO_UPSTREAM);
    };
    match upstream.get_doc(id).await {
        Ok((status, body)) => with_type(status, body, "application/json"),
        Err(err) => error(err.status(), err),
    }
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
        Err(err) => error(StatusCode::BAD_REQUEST, err),
    }
}

async fn sleep(query: Option<&str>) -> Response<Body> {
    match bounded_u64(query, "ms", 50, MAX_SLEEP_MS) {
        Ok(ms) => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            json(StatusCode::OK, format!(r#"{{"ms":{ms}}}"#))
        }
        Err(err) => error(StatusCode::BAD_REQUEST, err),
    }
}

async fn alloc(query: Option<&str>) -> Response<Body> {
    let mb = match bounded_u64(query, "mb", 64, MAX_ALLOC_MB) {
        Ok(mb) => mb,
        Err(err) => return error(StatusCode::BAD_REQUEST, err),
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
        Err(err) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("allocation failed: {err}"),
        ),
    }
}

/// `{"error": "<message>"}` with `status`.
fn error(status: StatusCode, message: impl std::fmt::Display) -> Response<Body> {
    let body = serde_json::json!({ "error": message.to_string() }).to_string();
    json(status, body)
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

    use crate::stats::COUNTED_PATHS;

    #[test]
    fn routes_only_exact_paths() {
        assert_eq!(Route::from_path("/hello"), Route::Hello);
        assert_eq!(Route::from_path("/hello/"), Route::NotFound);
        assert_eq!(Route::from_path("/"), Route::NotFound);
    }

    #[test]
    fn routes_documents_by_prefix_and_needs_an_id() {
        assert_eq!(Route::from_path("/docs/a.1"), Route::Doc("a.1"));
        assert_eq!(Route::from_path("/docs/a/b"), Route::Doc("a/b"));
        assert_eq!(
            Route::from_path("/upstream/docs/x"),
            Route::UpstreamDoc("x")
        );
        for path in [
            "/docs",
            "/docs/",
            "/upstream",
            "/upstream/docs/",
            "/upstream/x",
        ] {
            assert_eq!(Route::from_path(path), Route::NotFound, "{path}");
        }
    }

    #[test]
    fn every_counted_route_counts_under_its_name() {
        let counted = [
            (Route::Hello, "/hello"),
            (Route::Compute, "/compute"),
            (Route::Sleep, "/sleep"),
            (Route::Alloc, "/alloc"),
            (Route::Doc("a"), "/docs"),
            (Route::UpstreamDoc("a"), "/upstream"),
            (Route::NotFound, "other"),
        ];
        for (route, name) in counted {
            assert_eq!(route.stats_index().map(|i| COUNTED_PATHS[i]), Some(name));
        }
    }

    #[test]
    fn health_and_stats_are_not_counted() {
        assert_eq!(Route::Healthz.stats_index(), None);
        assert_eq!(Route::Stats.stats_index(), None);
    }

    #[test]
    fn only_documents_take_put_and_nothing_takes_other_methods() {
        assert!(Route::Doc("a").allows(&Method::PUT));
        assert!(Route::Doc("a").allows(&Method::HEAD));
        assert!(!Route::UpstreamDoc("a").allows(&Method::PUT));
        assert!(!Route::Hello.allows(&Method::PUT));
        for method in [Method::POST, Method::DELETE, Method::PATCH] {
            assert!(!Route::Doc("a").allows(&method), "{method}");
        }
        assert_eq!(Route::Doc("a").allowed_methods(), "GET, HEAD, PUT");
        assert_eq!(Route::Hello.allowed_methods(), "GET, HEAD");
    }
}
