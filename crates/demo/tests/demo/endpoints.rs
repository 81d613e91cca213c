//! Starts the demo target on loopback and checks every endpoint and the request counting.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

use benchrun_demo::store::{Limits, MAX_DOC_BYTES};
use benchrun_demo::ServeOptions;
use tokio::sync::oneshot;

struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

/// A parsed response: status, header block and body.
#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    /// The value of header `name` (any case), if present.
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("JSON body")
    }
}

impl Server {
    fn start() -> Self {
        Self::start_with(ServeOptions::default())
    }

    /// A demo target whose `/upstream/docs/{id}` reads from `upstream`.
    fn start_upstream_of(upstream: SocketAddr, timeout: Duration) -> Self {
        Self::start_with(ServeOptions {
            upstream: Some(upstream.to_string().parse().expect("HOST:PORT")),
            upstream_timeout: timeout,
            ..ServeOptions::default()
        })
    }

    fn start_with(options: ServeOptions) -> Self {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stop_rx) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
                addr_tx.send(listener.local_addr()?).expect("test alive");
                let shutdown = async {
                    let _ = stop_rx.await;
                };
                benchrun_demo::serve(listener, shutdown, options).await
            })
        });
        let addr = addr_rx.recv().expect("server bound");
        Server {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Sends one GET (with an optional cell tag) and returns the status code and the body.
    fn get(&self, target: &str, cell: Option<&str>) -> (u16, String) {
        let mut stream = TcpStream::connect(self.addr).expect("connect");
        let tag = cell.map_or(String::new(), |c| format!("X-Benchrun-Cell: {c}\r\n"));
        write!(
            stream,
            "GET {target} HTTP/1.1\r\nHost: t\r\n{tag}Connection: close\r\n\r\n"
        )
        .expect("write");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("read");
        let (head, body) = response.split_once("\r\n\r\n").expect("complete response");
        let status = head[9..12].parse().expect("status code");
        (status, body.to_owned())
    }

    fn json(&self, target: &str, cell: Option<&str>) -> (u16, serde_json::Value) {
        let (status, body) = self.get(target, cell);
        (status, serde_json::from_str(&body).expect("JSON body"))
    }

    /// Sends `method target` with `body` (and a Content-Length) on a new connection.
    fn send(&self, method: &str, target: &str, body: &[u8]) -> Reply {
        let head = format!(
            "{method} {target} HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            body.len()
        );
        self.exchange(&[head.as_bytes(), body].concat())
    }

    /// Writes a raw request and reads the response until the server closes.
    fn exchange(&self, request: &[u8]) -> Reply {
        let mut stream = TcpStream::connect(self.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        // A server refusing a large body may answer and close before reading all of it.
        let _ = stream.write_all(request);
        let mut raw = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => raw.extend_from_slice(&chunk[..n]),
                // A reset after the response (the unread rest of a refused body).
                Err(_) if !raw.is_empty() => break,
                Err(err) => panic!("read: {err}"),
            }
        }
        let raw = String::from_utf8(raw).expect("UTF-8 response");
        let (head, body) = raw.split_once("\r\n\r\n").expect("complete response");
        Reply {
            status: head[9..12].parse().expect("status code"),
            head: head.to_owned(),
            body: body.to_owned(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn every_endpoint_answers_and_requests_are_counted_per_path_and_cell() {
    let server = Server::start();

    assert_eq!(server.get("/healthz", None), (200, "ok".to_owned()));
    let (status, hello) = server.json("/hello", Some("cell-a"));
    assert_eq!(
        (status, hello),
        (200, serde_json::json!({"message": "hello"}))
    );
    let (status, primes) = server.json("/compute?n=10000", Some("cell-a"));
    assert_eq!(
        (status, primes),
        (200, serde_json::json!({"n": 10000, "primes": 1229}))
    );
    assert_eq!(server.json("/compute?n=abc", Some("cell-b")).0, 400);
    assert_eq!(server.json("/compute?n=10000001", None).0, 400);
    assert_eq!(
        server.json("/sleep?ms=20", Some("cell-b")),
        (200, serde_json::json!({"ms": 20}))
    );
    assert_eq!(server.json("/sleep?ms=60001", None).0, 400);
    let (status, alloc) = server.json("/alloc?mb=1", None);
    assert_eq!((status, &alloc["mb"]), (200, &serde_json::json!(1)));
    assert!(alloc["held_mb"].as_u64().expect("held_mb") >= 1);
    assert_eq!(server.json("/nope", Some("cell-b")).0, 404);

    let (status, stats) = server.json("/stats", None);
    assert_eq!(status, 200);
    assert_eq!(
        stats,
        serde_json::json!({
            "requests": 8,
            "paths": {
                "/hello": 1, "/compute": 3, "/sleep": 2, "/alloc": 1,
                "/docs": 0, "/upstream": 0, "other": 1,
            },
            "tags": {"cell-a": 2, "cell-b": 3},
            // Only the one /compute that answered 200 (n=10000) is summed.
            "computeN": {"sum": 10000, "sumOfSquares": 100000000},
        })
    );
}

#[test]
fn shutdown_returns_once_requested() {
    let mut server = Server::start();
    assert_eq!(server.get("/healthz", None).0, 200);
    let _ = server.stop.take().map(|s| s.send(()));
    let result = server
        .thread
        .take()
        .expect("thread")
        .join()
        .expect("no panic");
    assert!(result.is_ok());
}

#[test]
fn documents_round_trip_and_replacing_one_answers_200() {
    let server = Server::start();
    let doc = br#"{"id":1,"name":"first"}"#;
    let put = server.send("PUT", "/docs/user-1.v2_x", doc);
    assert_eq!(put.status, 201, "{put:?}");
    assert_eq!(
        put.json(),
        serde_json::json!({"id": "user-1.v2_x", "bytes": doc.len()})
    );
    let got = server.send("GET", "/docs/user-1.v2_x", b"");
    assert_eq!((got.status, got.body.as_bytes()), (200, &doc[..]));
    assert_eq!(got.header("content-type"), Some("application/json"));

    let put = server.send("PUT", "/docs/user-1.v2_x", b"[2]");
    assert_eq!(put.status, 200, "{put:?}");
    assert_eq!(put.body, r#"{"id":"user-1.v2_x","bytes":3}"#);
    assert_eq!(
        put.json(),
        serde_json::json!({"id": "user-1.v2_x", "bytes": 3})
    );
    assert_eq!(server.send("GET", "/docs/user-1.v2_x", b"").body, "[2]");
    // An empty document is a document.
    assert_eq!(server.send("PUT", "/docs/empty", b"").status, 201);
    let empty = server.send("GET", "/docs/empty", b"");
    assert_eq!((empty.status, empty.body.as_str()), (200, ""));
}

#[test]
fn missing_documents_bad_ids_and_other_methods_are_refused() {
    let server = Server::start();
    let missing = server.send("GET", "/docs/nothing-here", b"");
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.json(),
        serde_json::json!({"error": "no document nothing-here"})
    );
    let long = format!("/docs/{}", "x".repeat(129));
    for target in [
        "/docs/a%20b",
        "/docs/a/b",
        "/docs/..",
        "/docs/a:b",
        long.as_str(),
    ] {
        for method in ["PUT", "GET"] {
            let reply = server.send(method, target, b"{}");
            assert_eq!(reply.status, 400, "{method} {target}: {reply:?}");
            let error = reply.json()["error"].as_str().expect("error").to_owned();
            assert!(error.starts_with("document id "), "{error}");
        }
    }
    for method in ["POST", "DELETE", "PATCH"] {
        let reply = server.send(method, "/docs/a", b"{}");
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("allow"), Some("GET, HEAD, PUT"));
    }
    // PUT stays refused everywhere else.
    for target in ["/hello", "/upstream/docs/a", "/docs", "/nope"] {
        let reply = server.send("PUT", target, b"{}");
        assert_eq!(reply.status, 405, "{target}");
        assert_eq!(reply.header("allow"), Some("GET, HEAD"));
    }
    assert_eq!(server.send("GET", "/docs", b"").status, 404);
    assert_eq!(server.send("GET", "/docs/", b"").status, 404);
    // Nothing above was stored.
    assert_eq!(server.send("GET", "/docs/a", b"").status, 404);
}

#[test]
fn too_large_documents_get_413_whether_announced_or_chunked() {
    let server = Server::start();
    let largest = vec![b'x'; MAX_DOC_BYTES];
    assert_eq!(server.send("PUT", "/docs/big", &largest).status, 201);
    let too_large = vec![b'y'; MAX_DOC_BYTES + 1];
    let announced = server.send("PUT", "/docs/big", &too_large);
    assert_eq!(announced.status, 413, "{announced:?}");
    assert_eq!(
        announced.json()["error"],
        "the document is 65537 bytes, more than the 65536 bytes a document may hold"
    );
    let mut chunked = format!(
        "PUT /docs/big HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n{:x}\r\n",
        too_large.len()
    )
    .into_bytes();
    chunked.extend_from_slice(&too_large);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let streamed = server.exchange(&chunked);
    assert_eq!(streamed.status, 413, "{streamed:?}");
    // The refused documents replaced nothing.
    assert_eq!(
        server.send("GET", "/docs/big", b"").body.len(),
        MAX_DOC_BYTES
    );
}

#[test]
fn a_full_store_answers_507() {
    let server = Server::start_with(ServeOptions {
        store_limits: Limits {
            doc_bytes: 16,
            total_bytes: 20,
            docs: 2,
        },
        ..ServeOptions::default()
    });
    assert_eq!(server.send("PUT", "/docs/a", b"0123456789").status, 201);
    let bytes = server.send("PUT", "/docs/b", b"0123456789x");
    assert_eq!(bytes.status, 507, "{bytes:?}");
    assert!(bytes.json()["error"]
        .as_str()
        .expect("error")
        .starts_with("the store is full"));
    assert_eq!(server.send("PUT", "/docs/b", b"0123456789").status, 201);
    let count = server.send("PUT", "/docs/c", b"1");
    assert_eq!(count.status, 507, "{count:?}");
    // Replacing within the limits still works.
    assert_eq!(server.send("PUT", "/docs/b", b"1").status, 200);
}

#[test]
fn upstream_documents_pass_the_upstream_status_and_body_through() {
    let store = Server::start();
    let doc = br#"{"id":7}"#;
    assert_eq!(store.send("PUT", "/docs/7", doc).status, 201);
    let front = Server::start_upstream_of(store.addr, Duration::from_secs(10));

    for _ in 0..3 {
        let found = front.send("GET", "/upstream/docs/7", b"");
        assert_eq!((found.status, found.body.as_bytes()), (200, &doc[..]));
        assert_eq!(found.header("content-type"), Some("application/json"));
    }
    let missing = front.send("GET", "/upstream/docs/8", b"");
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.json(),
        serde_json::json!({"error": "no document 8"})
    );
    // A bad id is refused here and never reaches the upstream.
    assert_eq!(front.send("GET", "/upstream/docs/a%2F..", b"").status, 400);

    let (_, store_stats) = store.json("/stats", None);
    assert_eq!(store_stats["paths"]["/docs"], 5, "{store_stats}");
    let (_, front_stats) = front.json("/stats", None);
    assert_eq!(front_stats["paths"]["/upstream"], 5, "{front_stats}");
    assert_eq!(front_stats["paths"]["/docs"], 0, "{front_stats}");
}

#[test]
fn without_an_upstream_upstream_documents_get_503() {
    let server = Server::start();
    let reply = server.send("GET", "/upstream/docs/a", b"");
    assert_eq!(reply.status, 503);
    assert_eq!(
        reply.json(),
        serde_json::json!({
            "error": "no upstream: start with --upstream HOST:PORT (env UPSTREAM)"
        })
    );
}

#[test]
fn an_unreachable_upstream_gets_502_and_a_silent_one_504() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let front = Server::start_upstream_of(closed, Duration::from_secs(10));
    let reply = front.send("GET", "/upstream/docs/a", b"");
    assert_eq!(reply.status, 502, "{reply:?}");
    let error = reply.json()["error"].as_str().expect("error").to_owned();
    assert!(
        error.starts_with(&format!("upstream {closed}: ")),
        "{error}"
    );
    assert!(error.contains("refused"), "{error}");

    // Accepted by the kernel (backlog), never answered.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_addr = silent.local_addr().expect("addr");
    let front = Server::start_upstream_of(silent_addr, Duration::from_millis(300));
    let reply = front.send("GET", "/upstream/docs/a", b"");
    assert_eq!(reply.status, 504, "{reply:?}");
    assert_eq!(
        reply.json()["error"],
        format!("upstream {silent_addr}: no complete response within 300ms")
    );
}

#[test]
fn stats_count_documents_and_upstream_requests_whatever_the_outcome() {
    let server = Server::start();
    server.send("PUT", "/docs/a", b"{}");
    server.send("GET", "/docs/a", b"");
    server.send("GET", "/docs/missing", b"");
    server.send("GET", "/docs/bad%20id", b"");
    server.send("DELETE", "/docs/a", b"");
    server.send("GET", "/upstream/docs/a", b"");
    server.send("GET", "/docs/", b"");
    server.send("GET", "/docs", b"");
    server.send("GET", "/upstream/docs/", b"");
    let (status, stats) = server.json("/stats", None);
    assert_eq!(status, 200);
    assert_eq!(stats["requests"], 9, "{stats}");
    assert_eq!(
        stats["paths"],
        serde_json::json!({
            "/hello": 0, "/compute": 0, "/sleep": 0, "/alloc": 0,
            "/docs": 5, "/upstream": 1, "other": 3,
        })
    );
}
