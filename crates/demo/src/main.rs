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
    /// Also serve HTTP/1.1 and cleartext HTTP/2 (h2c, prior knowledge) on this port.
    #[arg(long, env = "H2C_PORT")]
    h2c_port: Option<u16>,
    /// Also serve TLS on this port: HTTP/1.1 or HTTP/2 as ALPN chooses.
    #[arg(long, env = "TLS_PORT")]
    tls_port: Option<u16>,
    /// ALPN protocols offered on the TLS port, by preference (e.g. `http/1.1` alone for a
    /// server without HTTP/2).
    #[arg(
        long,
        env = "TLS_ALPN",
        value_delimiter = ',',
        default_value = "h2,http/1.1"
    )]
    tls_alpn: Vec<String>,
    /// PEM certificate chain of the TLS port (with --tls-key); default: a self-signed one
    /// for --tls-name, made at start.
    #[arg(long, env = "TLS_CERT", requires = "tls_key")]
    tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, env = "TLS_KEY", requires = "tls_cert")]
    tls_key: Option<std::path::PathBuf>,
    /// Names of the self-signed certificate.
    #[arg(long, value_delimiter = ',', default_value = "localhost,127.0.0.1")]
    tls_name: Vec<String>,
    /// Write the certificate (PEM) here: a client's CA file for the self-signed one.
    #[arg(long)]
    tls_cert_out: Option<std::path::PathBuf>,
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
        let mut listeners = vec![(listener, benchrun_demo::Mode::Http1)];
        if let Some(port) = args.h2c_port {
            let addr = std::net::SocketAddr::new(args.listen, port);
            let l = benchrun_demo::listen::listen(addr, args.backlog)
                .with_context(|| format!("failed to listen on {addr}"))?;
            println!("benchrun-demo: HTTP/1.1 and h2c on http://{}", l.local_addr()?);
            listeners.push((l, benchrun_demo::Mode::Cleartext));
        }
        if let Some(port) = args.tls_port {
            let identity = match (&args.tls_cert, &args.tls_key) {
                (Some(cert), Some(key)) => benchrun_demo::tls::from_files(cert, key)?,
                _ => benchrun_demo::tls::self_signed(&args.tls_name)?,
            };
            if let Some(out) = &args.tls_cert_out {
                std::fs::write(out, &identity.pem)
                    .with_context(|| format!("failed to write {out:?}"))?;
            }
            let acceptor = benchrun_demo::tls::acceptor(identity, &args.tls_alpn)?;
            let addr = std::net::SocketAddr::new(args.listen, port);
            let l = benchrun_demo::listen::listen(addr, args.backlog)
                .with_context(|| format!("failed to listen on {addr}"))?;
            println!(
                "benchrun-demo: TLS ({}) on https://{}",
                args.tls_alpn.join(", "),
                l.local_addr()?
            );
            listeners.push((l, benchrun_demo::Mode::Tls(acceptor)));
        }
        benchrun_demo::serve_all(listeners, shutdown, options)
            .await
            .context("server failed")
    })
}
