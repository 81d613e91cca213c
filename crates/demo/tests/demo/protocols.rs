//! The load generator's TLS and HTTP/2 against the demo target on loopback: HTTP/1.1 over
//! TLS, h2 over TLS and h2c each count as many requests as the target served, with latency
//! percentiles; a certificate the generator does not trust and an ALPN the server does not
//! speak are reported by kind. (Here rather than in crates/load: the demo target is the
//! server, and this crate already builds the generator for its tests.)

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::time::Duration;

use benchrun_demo::{Mode, ServeOptions};
use benchrun_load::{Config, Limit, LoadResult, Protocol, Target, TlsOptions, Warmup};
use tokio::sync::oneshot;

/// A demo target on three loopback ports, stopped on drop.
struct Demo {
    http1: SocketAddr,
    h2c: SocketAddr,
    tls: SocketAddr,
    /// The self-signed certificate, as a CA file.
    ca: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    server: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Demo {
    /// Serves TLS offering the ALPN protocols `alpn`.
    fn start(alpn: &[&str]) -> Demo {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let any = SocketAddr::from(([127, 0, 0, 1], 0));
        let listen = || {
            runtime
                .block_on(async { benchrun_demo::listen::listen(any, 1024) })
                .unwrap()
        };
        let (l1, l2, l3) = (listen(), listen(), listen());
        let identity = benchrun_demo::tls::self_signed(&["localhost".into()]).unwrap();
        let ca = std::env::temp_dir().join(format!(
            "benchrun-demo-ca-{}-{}.pem",
            std::process::id(),
            l3.local_addr().unwrap().port()
        ));
        std::fs::write(&ca, &identity.pem).unwrap();
        let alpn: Vec<String> = alpn.iter().map(|s| s.to_string()).collect();
        let acceptor = benchrun_demo::tls::acceptor(identity, &alpn).unwrap();
        let (http1, h2c, tls) = (
            l1.local_addr().unwrap(),
            l2.local_addr().unwrap(),
            l3.local_addr().unwrap(),
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let listeners = vec![
            (l1, Mode::Http1),
            (l2, Mode::Cleartext),
            (l3, Mode::Tls(acceptor)),
        ];
        let server = std::thread::spawn(move || {
            let shutdown = async move {
                let _ = stopped.await;
            };
            runtime.block_on(benchrun_demo::serve_all(
                listeners,
                shutdown,
                ServeOptions::default(),
            ))
        });
        Demo {
            http1,
            h2c,
            tls,
            ca,
            stop: Some(stop),
            server: Some(server),
        }
    }

    /// Requests to `/hello` the target counted (its `/stats`).
    fn hello_count(&self) -> u64 {
        let mut s = TcpStream::connect(self.http1).unwrap();
        s.write_all(b"GET /stats HTTP/1.1\r\nHost: demo\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let body = text.split("\r\n\r\n").nth(1).unwrap();
        let stats: serde_json::Value = serde_json::from_str(body).unwrap();
        stats["paths"]["/hello"].as_u64().unwrap()
    }
}

impl Demo {
    /// Stores a document of `len` bytes under `id` (over HTTP/1.1).
    fn put_doc(&self, id: &str, len: usize) {
        let mut s = TcpStream::connect(self.http1).unwrap();
        let head = format!(
            "PUT /docs/{id} HTTP/1.1\r\nHost: demo\r\nConnection: close\r\nContent-Length: {len}\r\n\r\n"
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(&vec![b'a'; len]).unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        assert!(text.starts_with("HTTP/1.1 201"), "{text}");
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.stop.take().map(|s| s.send(()));
        let _ = self.server.take().map(|s| s.join());
        let _ = std::fs::remove_file(&self.ca);
    }
}

/// A closed-model config of `n` requests over 2 connections, bounded in time too.
fn config(url: &str, protocol: Protocol, n: u64) -> Config {
    let mut c = Config::new(Target::parse(url).unwrap());
    c.connections = 2;
    c.threads = 1;
    c.protocol = protocol;
    c.warmup = Warmup::None;
    c.limit = Limit::Requests(n);
    c.timeout = Duration::from_secs(5);
    c
}

fn assert_all_answered(r: &LoadResult, n: u64, served: u64) {
    assert_eq!(r.requests, n, "{:?}", r.errors);
    assert_eq!(r.successes, n, "{:?}", r.errors);
    assert_eq!(served, n, "the target's own count");
    assert_eq!(r.latency.count, n);
    assert!(
        r.latency.p50_us > 0 && r.latency.p99_us >= r.latency.p50_us,
        "{:?}",
        r.latency
    );
}

#[test]
fn http1_over_tls_counts_what_the_target_served_and_reports_the_handshakes() {
    let demo = Demo::start(&["h2", "http/1.1"]);
    let mut c = config(
        &format!("https://localhost:{}/hello", demo.tls.port()),
        Protocol::Http1,
        500,
    );
    c.tls.ca_file = Some(demo.ca.clone());
    let r = benchrun_load::run(&c).unwrap();
    assert_all_answered(&r, 500, demo.hello_count());
    let p = r.protocol.expect("a TLS run reports its protocol");
    assert_eq!((p.protocol.as_str(), p.tls), ("http/1.1", true));
    let t = p.tls_stats.unwrap();
    assert_eq!(t.handshakes, 2, "one per connection: {t:?}");
    assert_eq!(t.versions, ["TLSv1_3"]);
    assert_eq!(t.alpn, ["http/1.1"]);
    assert!(t.handshake_mean_us > 0.0 && t.handshake_max_us > 0);
    assert!(p.h2.is_none());
}

#[test]
fn h2_over_tls_multiplexes_streams_and_counts_what_the_target_served() {
    let demo = Demo::start(&["h2", "http/1.1"]);
    let url = format!("https://127.0.0.1:{}/hello", demo.tls.port());
    let mut c = config(&url, Protocol::H2, 2_000);
    c.max_concurrent_streams = 8;
    c.tls.server_name = Some("localhost".into());
    c.tls.ca_file = Some(demo.ca.clone());
    let r = benchrun_load::run(&c).unwrap();
    assert_all_answered(&r, 2_000, demo.hello_count());
    let p = r.protocol.unwrap();
    assert_eq!(p.tls_stats.unwrap().alpn, ["h2"]);
    let h2 = p.h2.unwrap();
    assert_eq!(h2.max_concurrent_streams, 8, "{h2:?}");
    assert_eq!((h2.rst_stream_received, h2.goaway_received), (0, 0));
}

#[test]
fn h2c_with_prior_knowledge_counts_what_the_target_served() {
    let demo = Demo::start(&["h2"]);
    let mut c = config(&format!("http://{}/hello", demo.h2c), Protocol::H2, 1_000);
    c.max_concurrent_streams = 4;
    let r = benchrun_load::run(&c).unwrap();
    assert_all_answered(&r, 1_000, demo.hello_count());
    let p = r.protocol.unwrap();
    assert!(!p.tls && p.tls_stats.is_none());
    assert_eq!(p.h2.unwrap().max_concurrent_streams, 4);
}

#[test]
fn h2c_in_the_open_model_keeps_the_rate_and_reports_the_service_time_apart() {
    let demo = Demo::start(&["h2"]);
    let mut c = config(&format!("http://{}/hello", demo.h2c), Protocol::H2, 1);
    c.max_concurrent_streams = 4;
    c.rate = Some(500.0);
    c.limit = Limit::Duration(Duration::from_secs(1));
    let r = benchrun_load::run(&c).unwrap();
    assert_eq!(r.requests, 500, "{:?}", r.errors);
    assert_eq!(r.successes, demo.hello_count());
    assert!(r.latency_uncorrected.is_some() && r.schedule_lag.is_some());
}

#[test]
fn an_untrusted_certificate_is_reported_as_a_certificate_failure() {
    let demo = Demo::start(&["h2", "http/1.1"]);
    // No CA file: the Mozilla roots, which do not hold the self-signed certificate.
    let c = config(
        &format!("https://localhost:{}/hello", demo.tls.port()),
        Protocol::Http1,
        20,
    );
    let r = benchrun_load::run(&c).unwrap();
    assert_eq!(r.successes, 0);
    assert_eq!(r.errors.tls_certificate, 20, "{:?}", r.errors);
    assert_eq!(r.errors.total, 20);
    assert_eq!(demo.hello_count(), 0);
    // Told to skip the check, the same target answers.
    let mut c = c;
    c.tls = TlsOptions {
        insecure_skip_verify: true,
        ..TlsOptions::default()
    };
    let r = benchrun_load::run(&c).unwrap();
    assert_eq!(r.successes, 20, "{:?}", r.errors);
}

#[test]
fn h2_asked_of_a_server_without_it_is_reported_as_an_alpn_mismatch() {
    let demo = Demo::start(&["http/1.1"]);
    let mut c = config(
        &format!("https://localhost:{}/hello", demo.tls.port()),
        Protocol::H2,
        20,
    );
    c.tls.ca_file = Some(demo.ca.clone());
    let r = benchrun_load::run(&c).unwrap();
    assert_eq!(r.successes, 0);
    assert_eq!(r.errors.alpn_mismatch, 20, "{:?}", r.errors);
    assert_eq!(r.errors.total, 20);
    assert_eq!(demo.hello_count(), 0);
}

#[test]
fn tls_spoken_to_a_cleartext_port_is_a_handshake_failure() {
    let demo = Demo::start(&["h2"]);
    let mut c = config(
        &format!("https://localhost:{}/hello", demo.http1.port()),
        Protocol::Http1,
        10,
    );
    c.tls.insecure_skip_verify = true;
    let r = benchrun_load::run(&c).unwrap();
    assert_eq!(r.errors.tls_handshake, 10, "{:?}", r.errors);
}

#[test]
fn responses_larger_than_a_tls_record_and_an_h2_frame_arrive_whole() {
    let demo = Demo::start(&["h2", "http/1.1"]);
    demo.put_doc("big", 60_000);
    let tls = format!("https://localhost:{}/docs/big", demo.tls.port());
    let h2c = format!("http://{}/docs/big", demo.h2c);
    for (url, protocol) in [
        (&tls, Protocol::Http1),
        (&tls, Protocol::H2),
        (&h2c, Protocol::H2),
    ] {
        let mut c = config(url, protocol, 200);
        c.tls.ca_file = url.starts_with("https").then(|| demo.ca.clone());
        if protocol == Protocol::H2 {
            c.max_concurrent_streams = 8;
        }
        let r = benchrun_load::run(&c).unwrap();
        assert_eq!(r.successes, 200, "{url} {protocol:?}: {:?}", r.errors);
        assert!(
            r.bytes >= 200 * 60_000,
            "{url} {protocol:?}: {} bytes",
            r.bytes
        );
    }
}
