//! `benchrun-demo`: the demo target binary. See the library docs for the endpoints.

use std::net::IpAddr;

use anyhow::Context;
use benchrun_demo::upstream::Upstream;
use benchrun_demo::ServeOptions;
use clap::Parser;
use tokio::signal::unix::{signal, SignalKind};

/// A small HTTP/1.1 server that stands in for the systems under test in benchrun's examples.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    /// TCP port to listen on.
    #[arg(long, env = "PORT", default_value_t = 8080)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0")]
    listen: IpAddr,
    /// Another demo target that `/upstream/docs/{id}` reads its documents from.
    #[arg(long, env = "UPSTREAM", value_name = "HOST:PORT")]
    upstream: Option<Upstream>,
    /// Listen backlog: connections the kernel queues until they are accepted (capped by
    /// net.core.somaxconn). A small one with --accept-delay-ms makes the kernel drop SYNs.
    #[arg(long, env = "BACKLOG", default_value_t = benchrun_demo::listen::DEFAULT_BACKLOG)]
    backlog: u32,
    /// Pause after accepting each connection, in milliseconds: a slow accept loop.
    #[arg(long, env = "ACCEPT_DELAY_MS", default_value_t = 0)]
    accept_delay_ms: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // available_parallelism honours cgroup CPU quotas, so a pod limited to 2 CPUs gets 2
    // workers, as a Node cluster or a JVM sized from the container would.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .context("failed to start the tokio runtime")?;
    runtime.block_on(async {
        let addr = std::net::SocketAddr::new(args.listen, args.port);
        let listener = benchrun_demo::listen::listen(addr, args.backlog)
            .with_context(|| format!("failed to listen on {addr}"))?;
        let mut term = signal(SignalKind::terminate()).context("failed to handle SIGTERM")?;
        let shutdown = async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            eprintln!("benchrun-demo: shutting down");
        };
        let upstream = args
            .upstream
            .as_ref()
            .map_or(String::new(), |u| format!(", upstream http://{u}"));
        println!(
            "benchrun-demo {} listening on http://{} (backlog {}, accept delay {} ms) with {workers} worker threads{upstream}",
            env!("CARGO_PKG_VERSION"),
            listener.local_addr()?,
            args.backlog,
            args.accept_delay_ms
        );
        let options = ServeOptions {
            upstream: args.upstream,
            accept_delay: std::time::Duration::from_millis(args.accept_delay_ms),
            ..ServeOptions::default()
        };
        benchrun_demo::serve(listener, shutdown, options)
            .await
            .context("server failed")
    })
}
