//! A demo target with a one-slot accept queue and a slow accept loop, driven on loopback by
//! 200 connections without keep-alive: the kernel drops SYNs and the load generator's TCP
//! counters show the retransmits (the mechanism behind a connect-time tail of 1 s, 3 s, ...).

use std::net::SocketAddr;
use std::time::Duration;

use benchrun_demo::ServeOptions;
use benchrun_load::{Config, Limit, Target, Warmup};
use tokio::sync::oneshot;

#[test]
fn a_full_accept_queue_shows_as_syn_retransmits_in_the_load_result() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(async { benchrun_demo::listen::listen(SocketAddr::from(([127, 0, 0, 1], 0)), 1) })
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let options = ServeOptions {
        accept_delay: Duration::from_millis(5),
        ..ServeOptions::default()
    };
    let server = std::thread::spawn(move || {
        let shutdown = async move {
            let _ = stopped.await;
        };
        runtime.block_on(benchrun_demo::serve(listener, shutdown, options))
    });

    let mut config = Config::new(Target::parse(&format!("http://{addr}/hello")).unwrap());
    config.connections = 200;
    config.threads = 2;
    config.keepalive = false;
    config.warmup = Warmup::None;
    config.limit = Limit::Duration(Duration::from_secs(2));
    config.timeout = Duration::from_secs(3);
    let result = benchrun_load::run(&config).unwrap();
    let _ = stop.send(());
    server.join().unwrap().unwrap();

    let tcp = result.tcp.expect("Linux: the counters are read from /proc");
    // Loopback is the host's namespace: other traffic may add to the counters, never remove.
    assert!(
        tcp.syn_retrans > 0,
        "no SYN retransmit with a one-slot accept queue: {tcp:?}"
    );
    assert!(tcp.listen_overflows > 0, "{tcp:?}");
    assert!(
        result.connect.max_us >= 1_000_000,
        "a retransmitted SYN's connect takes the 1 s timeout: {:?}",
        result.connect
    );
    assert!(result.requests > 0);
}
