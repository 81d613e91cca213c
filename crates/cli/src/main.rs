//! `kubectl-benchrun`: the report CLI for BenchmarkRuns, a kubectl plugin (`kubectl benchrun`
//! when the binary is on PATH). Parses arguments, reads from the cluster, renders to stdout.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use kube::Client;
use kubectl_benchrun::trend::{self, Output};
use kubectl_benchrun::{chart, client, compare, export, list, num, report, show, watch, Format};

/// Reports on benchrun BenchmarkRuns: list, show, watch, compare, export, chart, report; and on
/// a BenchmarkSchedule's history: trend.
#[derive(Parser, Debug)]
#[command(name = "kubectl-benchrun", bin_name = "kubectl benchrun", version)]
struct Cli {
    /// Namespace of the runs (default: the kubeconfig context's namespace).
    #[arg(short = 'n', long, global = true)]
    namespace: Option<String>,
    /// List runs in every namespace (`list` only).
    #[arg(short = 'A', long, global = true)]
    all_namespaces: bool,
    /// The kubeconfig context to use (default: the current context).
    #[arg(long, global = true)]
    context: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Runs with phase, progress, best throughput, its p99, SLO verdict and age.
    List,
    /// Every measurement of a run, then conditions, warnings spelled out and the summary.
    Show {
        /// The BenchmarkRun.
        run: String,
        /// Output format (csv: the measurement table only; json: the whole status).
        #[arg(short = 'o', long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Refreshes a progress line until the run finishes (or Ctrl-C), then shows it.
    Watch {
        /// The BenchmarkRun.
        run: String,
        /// Seconds between refreshes.
        #[arg(long, default_value_t = 2)]
        interval: u64,
    },
    /// Throughput and p99 of equal cells across runs, with the ratio to the first run.
    Compare {
        /// Two or more BenchmarkRuns; the first is the baseline.
        #[arg(num_args = 2.., required = true)]
        runs: Vec<String>,
        /// Output format (json is not offered: use export).
        #[arg(short = 'o', long, value_enum, default_value = "text")]
        format: Format,
    },
    /// The results for other tools: CSV with raw numbers, JSON (status.results) or Markdown.
    Export {
        /// The BenchmarkRun.
        run: String,
        /// Output format.
        #[arg(short = 'o', long, value_enum, default_value = "csv")]
        format: Format,
    },
    /// ASCII bars of throughput against connections per target and CPU limit, or with
    /// `--cell` the per-second timeline of one measurement.
    Chart {
        /// The BenchmarkRun.
        run: String,
        /// Chart this cell's per-second timeline (from its detail ConfigMap).
        #[arg(long)]
        cell: Option<i32>,
        /// The repeat of `--cell` (0-based).
        #[arg(long, default_value_t = 0, requires = "cell")]
        repeat: i32,
    },
    /// One self-contained HTML file with charts (throughput and p99 against connections, CPU
    /// and memory against their limits, latency spectra, per-second timelines, capacity fits)
    /// and the tables of `show`; no JavaScript, nothing fetched when opened.
    Report {
        /// The BenchmarkRun.
        run: String,
        /// Draw this earlier run's throughput and p99 beside the run's (dashed).
        #[arg(long)]
        baseline: Option<String>,
        /// The file to write (`-` for stdout; default: RUN.html).
        #[arg(short = 'o', long)]
        output: Option<String>,
    },
    /// A BenchmarkSchedule's history: per cell one row per run (medians over the repeats with
    /// their intervals, commit or image, the changes found), then the changes; or, with
    /// `-o FILE.html`, one self-contained HTML page with a chart per cell and figure.
    Trend {
        /// The BenchmarkSchedule.
        schedule: String,
        /// `text`, `markdown`, `csv` (one row per cell and run), `json` (status.series and
        /// status.changes), `html` (the page on stdout) or FILE.html (the page to that file).
        #[arg(short = 'o', long, default_value = "text", value_parser = trend::parse_output)]
        output: Output,
    },
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli).await {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            if io.kind() == io::ErrorKind::BrokenPipe {
                return;
            }
        }
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> Result<()> {
    if cli.all_namespaces && !matches!(cli.command, Command::List) {
        bail!("--all-namespaces applies to `list` only; use -n NAMESPACE");
    }
    let (kube, ns) = client::connect(cli.context, cli.namespace).await?;
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
        Command::List => {
            let scope = (!cli.all_namespaces).then_some(ns.as_str());
            let runs = client::list_runs(&kube, scope).await?;
            // The place in the queue is cluster-wide: read every namespace's runs when allowed,
            // else count this namespace's alone (and say so).
            let places = match scope {
                None => benchrun_api::queue::places(&runs),
                Some(_) if !runs.iter().any(benchrun_api::queue::is_waiting) => Default::default(),
                Some(_) => match client::list_runs(&kube, None).await {
                    Ok(all) => benchrun_api::queue::places(&all),
                    Err(_) => {
                        eprintln!(
                            "note: places in the queue count this namespace's runs only \
                             (no right to list BenchmarkRuns in every namespace)"
                        );
                        benchrun_api::queue::places(&runs)
                    }
                },
            };
            list::write_list(
                &mut out,
                &runs,
                cli.all_namespaces,
                &ns,
                &places,
                jiff::Timestamp::now(),
            )?;
        }
        Command::Show { run, format } => {
            let r = client::get_run(&kube, &ns, &run).await?;
            show::write_show(&mut out, &run, &r.status.unwrap_or_default(), format)?;
        }
        Command::Watch { run, interval } => {
            drop(out);
            return watch_run(&kube, &ns, &run, Duration::from_secs(interval.max(1))).await;
        }
        Command::Compare { runs, format } => {
            let mut results = Vec::new();
            for name in &runs {
                let r = client::get_run(&kube, &ns, name).await?;
                results.push(r.status.unwrap_or_default().results);
            }
            let names: Vec<&str> = runs.iter().map(String::as_str).collect();
            let slices: Vec<&[_]> = results.iter().map(Vec::as_slice).collect();
            let table = compare::compare_table(&names, &slices);
            match format {
                Format::Text => table.write_text(&mut out)?,
                Format::Markdown => table.write_markdown(&mut out)?,
                Format::Csv => table.write_csv(&mut out)?,
                Format::Json => bail!("compare has no json format; use `export -o json` per run"),
            }
        }
        Command::Export { run, format } => {
            let r = client::get_run(&kube, &ns, &run).await?;
            export::write_export(
                &mut out,
                &run,
                &r.status.unwrap_or_default().results,
                format,
            )?;
        }
        Command::Chart { run, cell, repeat } => {
            let r = client::get_run(&kube, &ns, &run).await?;
            let results = r.status.unwrap_or_default().results;
            match cell {
                None => chart::write_throughput_chart(&mut out, &results)?,
                Some(cell) => {
                    let m = results
                        .iter()
                        .find(|m| m.cell == cell && m.repeat == repeat)
                        .with_context(|| format!("run {run} has no finished measurement of cell {cell} repeat {repeat}"))?;
                    let cm = m.detail.as_deref().with_context(|| {
                        format!("cell {cell} repeat {repeat} has no detail ConfigMap")
                    })?;
                    let points = client::get_timeline(&kube, &ns, cm).await?;
                    chart::write_timeline_chart(&mut out, &num::measurement(m), &points)?;
                }
            }
        }
        Command::Report {
            run,
            baseline,
            output,
        } => {
            drop(out);
            return write_report(&kube, &ns, &run, baseline.as_deref(), output).await;
        }
        Command::Trend { schedule, output } => {
            let s = client::get_schedule(&kube, &ns, &schedule).await?;
            match output {
                Output::Format(format) => trend::write_trend(&mut out, &s, format)?,
                Output::Html(path) => {
                    drop(out);
                    return write_trend_page(&s, path);
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// Reads the run, its detail ConfigMaps and the baseline, and writes the HTML report.
async fn write_report(
    kube: &Client,
    ns: &str,
    name: &str,
    baseline: Option<&str>,
    output: Option<String>,
) -> Result<()> {
    let status = client::get_run(kube, ns, name)
        .await?
        .status
        .unwrap_or_default();
    let base = match baseline {
        Some(b) => Some((
            b,
            client::get_run(kube, ns, b)
                .await?
                .status
                .unwrap_or_default(),
        )),
        None => None,
    };
    let (details, problems) = client::get_details(kube, ns, &status.results).await;
    for p in &problems {
        eprintln!("warning: {p}");
    }
    let generated = jiff::Timestamp::now()
        .round(jiff::Unit::Second)?
        .to_string();
    let mut html = Vec::new();
    let charts = report::write_report(
        &mut html,
        &report::Report {
            name,
            namespace: ns,
            status: &status,
            details: &details,
            baseline: base.as_ref().map(|(n, s)| (*n, s)),
            generated: &generated,
            notes: &problems,
        },
    )?;
    let path = output.unwrap_or_else(|| format!("{name}.html"));
    if path == "-" {
        io::stdout().lock().write_all(&html)?;
        return Ok(());
    }
    std::fs::write(&path, &html).with_context(|| format!("failed to write {path}"))?;
    eprintln!(
        "wrote {path}: {charts} charts, {} KiB, {} of {} measurements with their detail ConfigMap",
        html.len().div_ceil(1024),
        details.len(),
        status.results.len()
    );
    Ok(())
}

/// Writes the schedule's HTML page to `path`, or to stdout when `None`.
fn write_trend_page(
    s: &benchrun_api::schedule::BenchmarkSchedule,
    path: Option<String>,
) -> Result<()> {
    let generated = jiff::Timestamp::now()
        .round(jiff::Unit::Second)?
        .to_string();
    let mut html = Vec::new();
    let charts = trend::write_trend_html(&mut html, s, &generated)?;
    let Some(path) = path else {
        io::stdout().lock().write_all(&html)?;
        return Ok(());
    };
    std::fs::write(&path, &html).with_context(|| format!("failed to write {path}"))?;
    let status = s.status.clone().unwrap_or_default();
    eprintln!(
        "wrote {path}: {charts} charts of {} cells, {} KiB",
        status.series.len(),
        html.len().div_ceil(1024)
    );
    Ok(())
}

/// Polls the run every `interval` until it finishes, then prints `show`. Ctrl-C stops early.
async fn watch_run(kube: &Client, ns: &str, name: &str, interval: Duration) -> Result<()> {
    let tty = io::stdout().is_terminal();
    let mut last = String::new();
    let mut failures = 0;
    loop {
        let line = match client::get_run(kube, ns, name).await {
            Ok(r) if watch::finished(&r) => {
                if tty && !last.is_empty() {
                    println!();
                }
                let mut out = BufWriter::new(io::stdout().lock());
                show::write_show(&mut out, name, &r.status.unwrap_or_default(), Format::Text)?;
                out.flush()?;
                return Ok(());
            }
            Ok(r) => {
                failures = 0;
                watch::progress_line(&r, jiff::Timestamp::now())
            }
            Err(e) if e.to_string().contains("not found") || e.to_string().contains("CRD") => {
                return Err(e)
            }
            Err(e) => {
                failures += 1;
                if failures >= 5 {
                    return Err(e.context("giving up after 5 failed reads"));
                }
                format!("{last} (read failed, retrying: {e:#})")
            }
        };
        if tty {
            print!("\r\x1b[2K{line}");
            io::stdout().flush()?;
        } else if watch::without_elapsed(&line) != watch::without_elapsed(&last) {
            println!("{line}");
        }
        last = line;
        tokio::select! {
            _ = tokio::time::sleep(interval) => {}
            _ = tokio::signal::ctrl_c() => {
                if tty {
                    println!();
                }
                eprintln!("stopped watching {ns}/{name} (the run goes on)");
                return Ok(());
            }
        }
    }
}
