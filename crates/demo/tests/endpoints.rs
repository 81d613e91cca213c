//! Starts the demo target on loopback and checks every endpoint and the request counting.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Server {
    fn start() -> Self {
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
                benchrun_demo::serve(listener, async {
                    let _ = stop_rx.await;
                })
                .await
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
            "paths": {"/hello": 1, "/compute": 3, "/sleep": 2, "/alloc": 1, "other": 1},
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
