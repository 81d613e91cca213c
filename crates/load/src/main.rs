//! `benchrun-load`: command-line front end of the library (parse → config → run → print).

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use benchrun_load::config::{parse_duration, parse_header, parse_warmups};
use benchrun_load::result::ErrorCounts;
use benchrun_load::{merge, report, run, scenario, template, Config, Limit, LoadResult, Target};
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit status of a run in which requests failed, with `--fail-on-errors`.
const EXIT_REQUESTS_FAILED: u8 = 3;

/// HTTP/1.1 and HTTP/2 load generator, cleartext or TLS: closed model (like wrk/ab) or open model at a fixed rate
/// (like wrk2, with coordinated-omission-corrected latency).
#[derive(Parser, Debug)]
#[command(
    name = "benchrun-load",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    load: LoadArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Merge result JSON files (from several load pods) and print the merged JSON.
    Merge {
        /// Result files written with `--output json`.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
    },
}

#[derive(Args, Debug)]
struct LoadArgs {
    /// Target URL (http[s]://host[:port][/path]).
    url: Option<String>,
    /// Number of concurrent connections.
    #[arg(short = 'c', long, default_value_t = 50)]
    connections: usize,
    /// Total number of requests (exact). Conflicts with --duration.
    #[arg(short = 'n', long, conflicts_with = "duration")]
    requests: Option<u64>,
    /// Duration of the measured window, e.g. 10s, 500ms, 2m (default 10s).
    #[arg(short = 'd', long)]
    duration: Option<String>,
    /// Open model: total request rate per second, spread over the connections. Needs -d.
    #[arg(long)]
    rate: Option<f64>,
    /// Open model: the step of the schedule's grid: connections due within one step of each
    /// other are due together and leave in one burst, each on time (longer: less CPU,
    /// burstier arrivals; 0 = every connection its own offset). At most 10ms.
    #[arg(long, value_name = "D", default_value = "250us", requires = "rate")]
    schedule_quantum: String,
    /// Closed model: non-blocking polls before sleeping while responses are outstanding
    /// (0 = sleep at once; default 50, ~15 µs). Adaptive: the budget doubles after a spin
    /// that found events and halves after one that had to give up.
    #[arg(long, value_name = "N", default_value_t = benchrun_load::config::DEFAULT_SPIN_POLLS)]
    spin: u32,
    /// I/O back end: io-uring (batched syscalls), epoll, or auto (io-uring when the kernel
    /// and seccomp allow it, else epoll). The result's `backend` says which ran.
    #[arg(long, env = "BENCHRUN_LOAD_BACKEND", value_name = "B", default_value = "auto",
          value_parser = ["auto", "epoll", "io-uring"])]
    backend: String,
    /// A blocking wait may sleep through several responses, so a thread wakes once per
    /// batch of them: less CPU per request. Closed model: io_uring waits for the responses
    /// expected within D (from each connection's recent latency; at most half of those in
    /// flight, 5ms safety timeout), epoll until half are in or D has passed; open model:
    /// until the next send is due. Latencies end at each response's kernel receive
    /// timestamp, so the sleep is not in them; a connection waits about D before its next
    /// request. auto (default) = 50us when the kernel timestamps receives (closed model:
    /// and the back end is io_uring), else off; 0 = off; at most 10ms.
    #[arg(long, value_name = "D", default_value = "auto")]
    batch_wait: String,
    /// Warm-up before measuring: a duration (5s) or a request count (1000). With
    /// --warmup-until-steady, the least warm-up (a duration).
    #[arg(long)]
    warmup: Option<String>,
    /// Warm up until the target is steady, for at most this long (e.g. 1m): until the
    /// per-second throughput (open model: mean latency) of the last seconds, as many as the
    /// measured window lasts (10 to 60), no longer trends. The result's `warmup_until_steady`
    /// says how long it took and whether the cap ended it.
    #[arg(long, value_name = "MAX")]
    warmup_until_steady: Option<String>,
    /// Per-request timeout, connect included.
    #[arg(long, default_value = "10s")]
    timeout: String,
    /// Open a new connection for every request and send `Connection: close`.
    #[arg(long)]
    no_keepalive: bool,
    /// Extra request header "Name: value" (repeatable).
    #[arg(short = 'H', long = "header")]
    headers: Vec<String>,
    /// HTTP method.
    #[arg(short = 'm', long, default_value = "GET")]
    method: String,
    /// Request body.
    #[arg(long)]
    body: Option<String>,
    /// Mix several requests: a JSON file (or - for stdin) holding an array of
    /// {"name", "path", "method", "headers", "body", "weight"}. The URL then gives only
    /// http://host:port; -H headers are sent with every scenario.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["method", "body"])]
    scenarios: Option<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Event-loop threads (default: CPUs available to this process).
    #[arg(short = 't', long)]
    threads: Option<usize>,
    /// Name of the node this runs on, recorded in the JSON result's `nodes` (the load Job
    /// sets it from the pod's `spec.nodeName`).
    #[arg(long, env = "BENCHRUN_NODE_NAME", value_name = "NAME")]
    node: Option<String>,
    /// Begin at this Unix time in milliseconds (warm-up first, if any): generators given the
    /// same time start together. A time already past starts at once; at most 5 min ahead.
    #[arg(long, value_name = "UNIX_MS")]
    start_at: Option<u64>,
    /// A value for the `{{NAME}}` placeholders in the URL's path, the headers and the body,
    /// drawn per request (repeatable): NAME=random:MIN..MAX, NAME=sequence:START..END,
    /// NAME=pick:A,B,C, or NAME={"pick": ["a,b", "c"]}. With --scenarios, declare values in
    /// the file instead.
    #[arg(long = "value", value_name = "NAME=SPEC")]
    values: Vec<String>,
    /// Seed of the drawn values: the same seed, connections and instances send each
    /// connection the same values (default: a new seed, printed in the JSON result).
    #[arg(long)]
    seed: Option<u64>,
    /// This generator's number among --instances generators sharing one seed (a
    /// Kubernetes indexed Job sets JOB_COMPLETION_INDEX), so they draw different values.
    #[arg(long, env = "JOB_COMPLETION_INDEX", default_value_t = 0)]
    instance: u64,
    /// How many generators share the seed.
    #[arg(long, default_value_t = 1)]
    instances: u64,
    /// Raise the load linearly over this time before warm-up and measurement: connection i of
    /// N joins at i/N of it (open model: begins its schedule then). Not recorded; its
    /// requests count as warm-up requests.
    #[arg(long, value_name = "D")]
    ramp_up: Option<String>,
    /// Closed model: pause this long after each response before the connection's next request.
    #[arg(long, value_name = "D", conflicts_with = "rate")]
    think_time: Option<String>,
    /// Application protocol: http1 (HTTP/1.1) or h2 (HTTP/2: by ALPN over https://, with
    /// prior knowledge, h2c, over http://).
    #[arg(long, value_name = "P", default_value = "http1", value_parser = ["http1", "h2"])]
    protocol: String,
    /// HTTP/2: requests each connection keeps in flight (streams), lowered to the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS; concurrency = connections x this.
    #[arg(long, value_name = "N", default_value_t = 1)]
    max_concurrent_streams: usize,
    /// TLS: the server name sent (SNI) and checked against the certificate (default: the
    /// URL's host).
    #[arg(long, value_name = "NAME")]
    server_name: Option<String>,
    /// TLS: PEM file of the CA certificates to trust (default: the Mozilla set).
    #[arg(long, value_name = "FILE")]
    ca_file: Option<std::path::PathBuf>,
    /// TLS: accept any server certificate (self-signed targets). The handshake's signatures
    /// are still checked; the server is not authenticated.
    #[arg(long)]
    insecure_skip_verify: bool,
    /// Exit with status 3 (after printing the result) when any measured request failed:
    /// transport error, timeout, 4xx or 5xx. For scripts such as data-seeding Jobs.
    #[arg(long)]
    fail_on_errors: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Some(Command::Merge { files }) => merge_files(&files).map(|()| ExitCode::SUCCESS),
        None => run_load(cli.load),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("benchrun-load: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn config_from(a: LoadArgs) -> anyhow::Result<(Config, Output)> {
    let url = a.url.context("missing URL (see --help)")?;
    let mut c = Config::new(Target::parse(&url)?);
    c.connections = a.connections;
    if let Some(t) = a.threads {
        c.threads = t;
    }
    c.limit = match (a.requests, &a.duration) {
        // clap refuses -n with -d (conflicts_with), so a count here is the only limit.
        (Some(n), _) => Limit::Requests(n),
        (None, Some(d)) => Limit::Duration(parse_duration(d)?),
        (None, None) if a.rate.is_some() => anyhow::bail!("--rate needs a duration (-d)"),
        (None, None) => Limit::Duration(std::time::Duration::from_secs(10)),
    };
    c.rate = a.rate;
    c.spin_polls = a.spin;
    c.backend = benchrun_load::Backend::parse(&a.backend).unwrap_or_default();
    c.batch_wait = match a.batch_wait.trim() {
        "auto" => None,
        text => Some(parse_quantum(text)?),
    };
    c.schedule_quantum = parse_quantum(&a.schedule_quantum)?;
    c.warmup = parse_warmups(a.warmup.as_deref(), a.warmup_until_steady.as_deref())?;
    c.timeout = parse_duration(&a.timeout)?;
    c.keepalive = !a.no_keepalive;
    c.headers = a
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<_, _>>()?;
    c.method = a.method.to_ascii_uppercase();
    c.node = a.node.filter(|n| !n.is_empty());
    c.start_at_ms = a.start_at;
    for v in &a.values {
        let (name, spec) = template::parse_value_arg(v)?;
        if c.values.insert(name.clone(), spec).is_some() {
            anyhow::bail!("--value {name:?} is given twice");
        }
    }
    c.seed = a.seed;
    c.ramp_up = a.ramp_up.as_deref().map(parse_duration).transpose()?;
    c.think_time = a.think_time.as_deref().map(parse_duration).transpose()?;
    c.protocol = if a.protocol == "h2" {
        benchrun_load::Protocol::H2
    } else {
        benchrun_load::Protocol::Http1
    };
    c.max_concurrent_streams = a.max_concurrent_streams;
    c.tls = benchrun_load::TlsOptions {
        server_name: a.server_name,
        ca_file: a.ca_file,
        insecure_skip_verify: a.insecure_skip_verify,
    };
    (c.instance, c.instances) = (a.instance, a.instances);
    c.body = a.body.map(String::into_bytes);
    if let Some(path) = &a.scenarios {
        c.scenarios = scenario::parse_file(&read_input(path)?)
            .with_context(|| format!("in {}", path.display()))?;
    }
    // SAFETY: isatty only inspects the file descriptor.
    c.progress = unsafe { libc::isatty(2) } == 1;
    c.validate()?;
    Ok((c, a.output))
}

/// Runs the load and prints the result; the exit status says whether requests failed when
/// `--fail-on-errors` asks for it.
fn run_load(args: LoadArgs) -> anyhow::Result<ExitCode> {
    let fail_on_errors = args.fail_on_errors;
    let (config, output) = config_from(args)?;
    benchrun_load::signal::install_handlers();
    let result = run(&config)?;
    print(&result, output)?;
    match failure_summary(result.requests, &result.errors) {
        Some(summary) if fail_on_errors => {
            eprintln!(
                "benchrun-load: {summary}: exiting with status {EXIT_REQUESTS_FAILED} \
                 (--fail-on-errors)"
            );
            Ok(ExitCode::from(EXIT_REQUESTS_FAILED))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// `"12 of 1000 requests failed (4xx 12)"` when any of `requests` failed, naming each
/// class that has failures; `None` when none did.
fn failure_summary(requests: u64, e: &ErrorCounts) -> Option<String> {
    if e.total == 0 {
        return None;
    }
    let classes = [
        ("connect refused", e.connect_refused),
        ("connect timeout", e.connect_timeout),
        ("connect other", e.connect_other),
        ("timeout", e.timeout),
        ("read", e.read),
        ("body mismatch", e.body_mismatch),
        ("protocol", e.protocol),
        ("4xx", e.status_4xx),
        ("5xx", e.status_5xx),
    ];
    let detail: Vec<String> = classes
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    Some(format!(
        "{} of {requests} requests failed ({})",
        e.total,
        detail.join(", ")
    ))
}

fn print(result: &LoadResult, output: Output) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match output {
        Output::Json => {
            serde_json::to_writer_pretty(&mut out, result)?;
            writeln!(out)?;
        }
        Output::Text => report::write_text(result, &mut out)?,
    }
    Ok(())
}

/// Parses `--schedule-quantum` or `--batch-wait`: a duration, or `0` for none.
fn parse_quantum(text: &str) -> anyhow::Result<std::time::Duration> {
    if text.trim() == "0" {
        return Ok(std::time::Duration::ZERO);
    }
    Ok(parse_duration(text)?)
}

/// Reads a file, or standard input for `-`.
fn read_input(path: &std::path::Path) -> anyhow::Result<String> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        return Ok(text);
    }
    std::fs::read_to_string(path).with_context(|| format!("failed to read {}", path.display()))
}

fn merge_files(files: &[std::path::PathBuf]) -> anyhow::Result<()> {
    let mut results = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .with_context(|| format!("failed to read {}", f.display()))?;
        let r: LoadResult = serde_json::from_str(&text)
            .with_context(|| format!("failed to parse {}", f.display()))?;
        results.push(r);
    }
    print(&merge(&results)?, Output::Json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_failure_gives_no_summary() {
        assert_eq!(failure_summary(1000, &ErrorCounts::default()), None);
        assert_eq!(failure_summary(0, &ErrorCounts::default()), None);
    }

    #[test]
    fn the_summary_names_every_class_with_failures() {
        let errors = ErrorCounts {
            total: 12,
            status_4xx: 12,
            ..ErrorCounts::default()
        };
        assert_eq!(
            failure_summary(1000, &errors).as_deref(),
            Some("12 of 1000 requests failed (4xx 12)")
        );
        let errors = ErrorCounts {
            total: 6,
            connect_refused: 1,
            timeout: 2,
            status_5xx: 3,
            ..ErrorCounts::default()
        };
        assert_eq!(
            failure_summary(10, &errors).as_deref(),
            Some("6 of 10 requests failed (connect refused 1, timeout 2, 5xx 3)")
        );
    }

    #[test]
    fn the_flag_parses_and_is_off_by_default() {
        let cli = Cli::try_parse_from(["benchrun-load", "http://h:1/"]).unwrap();
        assert!(!cli.load.fail_on_errors);
        let cli =
            Cli::try_parse_from(["benchrun-load", "--fail-on-errors", "http://h:1/"]).unwrap();
        assert!(cli.load.fail_on_errors);
    }
}
