//! [`run`]: spreads the connections over event-loop threads, runs the warm-up and the
//! measured phase, and folds the threads' measurements into one [`LoadResult`]. A warm-up until
//! steady is watched from the calling thread ([`SteadyWatch`]), which ends it for all threads.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::backend::epoll::EpollIo;
use crate::backend::uring::UringIo;
use crate::backend::{Backend, Io};
use crate::config::{Config, Limit, Warmup};
use crate::error::{Error, Result};
use crate::hist;
use crate::proto::worker::{ProtoRequest, ProtoSettings, ProtoWorker};
use crate::proto::ProtoTally;
use crate::recorder::{Recorder, Tally};
use crate::result::{
    self, CpuStats, Histograms, LatencyStats, LoadResult, Model, ScenarioResult, ScheduleLag,
    SteadyFigure, SteadyWarmup, WindowCounts, SCHEMA,
};
use crate::scenario::{self, Scenario};
use crate::steady;
use crate::tcp::{self, TcpStats};
use crate::worker::{Phase, Request, WarmProgress, Worker, WorkerSettings};

/// A worker that runs phases: the cleartext HTTP/1.1 one or the TLS/HTTP/2 one.
trait RunPhase {
    fn run_phase(&mut self, p: &Phase, rec: &mut Recorder);
}

impl<B: Io> RunPhase for Worker<B> {
    fn run_phase(&mut self, p: &Phase, rec: &mut Recorder) {
        Worker::run_phase(self, p, rec)
    }
}

impl<B: Io> RunPhase for ProtoWorker<B> {
    fn run_phase(&mut self, p: &Phase, rec: &mut Recorder) {
        ProtoWorker::run_phase(self, p, rec)
    }
}

/// The protocol worker's settings of a TLS or HTTP/2 run (`None` for cleartext HTTP/1.1).
fn proto_settings(config: &Config, scenarios: &[Scenario]) -> Result<Option<ProtoSettingsSeed>> {
    if !config.uses_proto_worker() {
        return Ok(None);
    }
    let tls = if config.target.tls {
        let client = crate::proto::tls::client_config(&config.tls, config.protocol.alpn())?;
        let name = crate::proto::tls::server_name(&config.tls, &config.target.host)?;
        Some((client, name))
    } else {
        None
    };
    let requests: Arc<[ProtoRequest]> = scenarios
        .iter()
        .map(|s| ProtoRequest {
            h1: config.request_bytes_for(s).into(),
            head: s.method == "HEAD",
            block: config.h2_block_for(s).into(),
            body: s.body.clone().unwrap_or_default().into(),
        })
        .collect();
    Ok(Some(ProtoSettingsSeed { tls, requests }))
}

/// What every thread's [`ProtoSettings`] is made from.
struct ProtoSettingsSeed {
    tls: Option<(
        Arc<rustls::ClientConfig>,
        rustls::pki_types::ServerName<'static>,
    )>,
    requests: Arc<[ProtoRequest]>,
}

/// What a worker thread hands back: its measured-phase recorder and warm-up send count.
type WorkerOutput = std::io::Result<(Recorder, Warm)>;

/// A worker's warm-up (and ramp-up): requests sent, and those that ended without a response.
#[derive(Clone, Copy, Default)]
struct Warm {
    sent: u64,
    failed: u64,
}

/// Runs the configured load and returns its result. Blocks until the load is over (or a
/// stop was requested with [`crate::signal::request_stop`] / SIGINT in the binary).
pub fn run(config: &Config) -> Result<LoadResult> {
    config.validate()?;
    let start_late_ms = config.start_at_ms.map(wait_until).transpose()?;
    let threads = config.threads.min(config.connections);
    let scenarios = config.effective_scenarios();
    let proto = proto_settings(config, &scenarios)?;
    // The protocol worker runs on epoll: its writes must be done when they return (see
    // crate::proto::worker).
    let backend = if proto.is_some() {
        Backend::Epoll
    } else {
        config.backend.resolve().map_err(|source| Error::Io {
            what: "set up io_uring (use --backend epoll or auto)",
            source,
        })?
    };
    let requests: Arc<[Request]> = scenarios
        .iter()
        .map(|s| {
            let template = config
                .request_template_for(s)
                .map_err(|why| Error::InvalidConfig(format!("{:?}: {why}", s.name)))?;
            Ok(Request {
                bytes: config.request_bytes_for(s).into(),
                head: s.method == "HEAD",
                template,
            })
        })
        .collect::<Result<_>>()?;
    let templated = requests.iter().any(|r| r.template.is_some());
    let seed = config.seed.unwrap_or_else(random_seed);
    let weights: Vec<u32> = scenarios.iter().map(|s| s.weight).collect();
    let cycle: Arc<[u16]> = scenario::weighted_cycle(&weights).into();
    let n_scenarios = scenarios.len();
    let interval = config
        .rate
        .map(|r| Duration::from_secs_f64(config.connections as f64 / r));
    let barrier = Arc::new(Barrier::new(threads + 1));
    let start_cell: Arc<Mutex<Option<(Instant, u64)>>> = Arc::new(Mutex::new(None));
    let warm_start = Instant::now();
    let mut progress = Vec::new();
    let mut warm_progress = Vec::new();
    // Set when a warm-up until steady is over: the threads then send no more warm-up requests.
    let warm_stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    // With a request count, worker t sends the requests numbered [first, first + budget) of
    // the run, so the mix over all workers is exactly the first n entries of the cycle.
    let (mut first_measured, mut first_warm) = (0u64, 0u64);
    for t in 0..threads {
        let conn_ids: Vec<usize> = (t..config.connections).step_by(threads).collect();
        let share = |n: u64| {
            conn_ids
                .iter()
                .map(|&i| split(n, config.connections, i))
                .sum::<u64>()
        };
        let budget = match config.limit {
            Limit::Requests(n) => Some(share(n)),
            Limit::Duration(_) => None,
        };
        let warm_budget = match config.warmup {
            Warmup::Requests(n) => Some(share(n)),
            _ => None,
        };
        // With a duration, workers start at evenly spread places in the cycle.
        let spread = (t * cycle.len() / threads) as u64;
        let first = budget.map_or(spread, |_| first_measured);
        let warm_first = warm_budget.map_or(spread, |_| first_warm);
        first_measured += budget.unwrap_or(0);
        first_warm += warm_budget.unwrap_or(0);
        let counter = Arc::new(AtomicU64::new(0));
        progress.push(counter.clone());
        let warm = Arc::new(WarmProgress::default());
        warm_progress.push(warm.clone());
        let settings = WorkerSettings {
            addr: config.target.addr,
            requests: requests.clone(),
            cycle: cycle.clone(),
            keepalive: config.keepalive,
            timeout: config.timeout,
            interval,
            quantum: config.schedule_quantum,
            spin: if interval.is_some() {
                0
            } else {
                config.spin_polls
            },
            batch_wait: config.batch_wait,
            conn_ids,
            total_conns: config.connections,
            progress: counter,
            warm,
            seed,
            instance: config.instance,
            instances: config.instances,
            think: config.think_time,
        };
        let plan = ThreadPlan {
            proto: proto.as_ref().map(|p| ProtoSettings {
                protocol: config.protocol,
                tls: p.tls.clone(),
                streams: config.max_concurrent_streams,
                requests: p.requests.clone(),
            }),
            settings,
            warm_start,
            ramp: config.ramp_up,
            warmup: config.warmup,
            warm_budget,
            warm_first,
            limit: config.limit,
            budget,
            first,
            open: interval.is_some(),
            n_scenarios,
            barrier: barrier.clone(),
            start_cell: start_cell.clone(),
            warm_stop: warm_stop.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(format!("load-{t}"))
            .spawn(move || match backend {
                Backend::Epoll => plan.run::<EpollIo>(),
                _ => plan.run::<UringIo>(),
            })
            .map_err(|source| Error::Io {
                what: "spawn a load thread",
                source,
            })?;
        handles.push(handle);
    }
    let steady = match config.warmup {
        Warmup::UntilSteady { min, max } => {
            let watch = SteadyWatch {
                start: warm_start + config.ramp_up.unwrap_or_default(),
                min,
                max,
                trailing: steady::steady_seconds(match config.limit {
                    Limit::Duration(d) => Some(d.as_secs_f64()),
                    Limit::Requests(_) => None,
                }),
                figure: if interval.is_some() {
                    SteadyFigure::Latency
                } else {
                    SteadyFigure::Throughput
                },
            };
            let outcome = watch.run(&warm_progress);
            warm_stop.store(true, Ordering::Relaxed);
            Some((watch, outcome))
        }
        _ => None,
    };
    barrier.wait();
    let cpu0 = cpu_time();
    let tcp0 = tcp::snapshot();
    let start = Instant::now();
    let epoch_ms = unix_ms();
    *start_cell.lock().expect("not poisoned") = Some((start, epoch_ms));
    barrier.wait();
    if config.progress {
        show_progress(&handles, &progress, start);
    }
    let mut outputs = Vec::new();
    for h in handles {
        let out = h.join().map_err(|_| Error::ThreadPanicked)?;
        outputs.push(out.map_err(|source| Error::Io {
            what: "create an event loop",
            source,
        })?);
    }
    let cpu1 = cpu_time();
    let tcp1 = tcp::snapshot();
    let cpu = (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1));
    let tally = outputs
        .iter()
        .fold(ProtoTally::default(), |mut t, (rec, _)| {
            t.add(&rec.proto);
            t
        });
    let mut result = build_result(config, &scenarios, threads, outputs, (start, epoch_ms), cpu)?;
    result.warmup_until_steady = steady.map(|(watch, (steady, change))| SteadyWarmup {
        seconds: start.saturating_duration_since(watch.start).as_secs_f64(),
        steady,
        max_seconds: watch.max.as_secs_f64(),
        figure: watch.figure,
        trailing_seconds: watch.trailing as u64,
        change,
    });
    result.protocol = proto.is_some().then(|| {
        tally.stats(
            config.protocol,
            config.target.tls,
            config.max_concurrent_streams,
        )
    });
    result.start_at_ms = config.start_at_ms;
    result.start_late_ms = start_late_ms;
    result.seed = templated.then_some(seed);
    result.backend = Some(backend.name().into());
    result.rx_timestamps = Some(crate::backend::receive_timestamps());
    result.tcp = match (&tcp0, &tcp1) {
        (Some(a), Some(b)) => Some(TcpStats::window(a, b)),
        _ => None,
    };
    Ok(result)
}

/// A warm-up until steady, watched from the main thread: once a second it reads what the
/// threads' warm-ups have seen and feeds the second's figure to the stop rule
/// ([`steady::WarmupRule`]).
struct SteadyWatch {
    /// When the warm-up began (after any ramp-up).
    start: Instant,
    /// The least warm-up and the most.
    min: Duration,
    max: Duration,
    /// The trailing seconds the rule looks at.
    trailing: usize,
    /// What it judges.
    figure: SteadyFigure,
}

impl SteadyWatch {
    /// Watches until the rule finds the figure steady after at least `min`, or `max` has
    /// passed, or a stop was requested; returns whether it was steady and the change over the
    /// trailing seconds at the end.
    fn run(&self, threads: &[Arc<WarmProgress>]) -> (bool, Option<f64>) {
        let read = || {
            threads.iter().fold((0u64, 0u64, 0u64), |(e, a, l), t| {
                (
                    e + t.ended.load(Ordering::Relaxed),
                    a + t.answered.load(Ordering::Relaxed),
                    l + t.latency_us.load(Ordering::Relaxed),
                )
            })
        };
        sleep_until(self.start);
        let mut rule = steady::WarmupRule::new(self.trailing);
        let mut last = read();
        for second in 1u32.. {
            let tick = self.start + Duration::from_secs(1) * second;
            if tick > self.start + self.max {
                break;
            }
            sleep_until(tick);
            if crate::signal::stop_requested() {
                return (false, rule.last().map(|t| t.change()));
            }
            let now = read();
            let (ended, answered, latency) = (
                now.0.saturating_sub(last.0),
                now.1.saturating_sub(last.1),
                now.2.saturating_sub(last.2),
            );
            last = now;
            let figure = match self.figure {
                SteadyFigure::Throughput => Some(ended as f64),
                // A second without a response tells nothing of the latency.
                SteadyFigure::Latency => (answered > 0).then(|| latency as f64 / answered as f64),
            };
            let steady = figure.is_some_and(|f| rule.push(f));
            if steady && Duration::from_secs(second.into()) >= self.min {
                return (true, rule.last().map(|t| t.change()));
            }
        }
        sleep_until(self.start + self.max);
        (false, rule.last().map(|t| t.change()))
    }
}

/// Sleeps until `at` (at once when it has passed).
fn sleep_until(at: Instant) {
    std::thread::sleep(at.saturating_duration_since(Instant::now()));
}

/// What one load thread runs: its worker's settings and its phases.
struct ThreadPlan {
    settings: WorkerSettings,
    /// Set for TLS and HTTP/2 runs: the protocol worker runs them.
    proto: Option<ProtoSettings>,
    warm_start: Instant,
    ramp: Option<Duration>,
    warmup: Warmup,
    warm_budget: Option<u64>,
    warm_first: u64,
    limit: Limit,
    budget: Option<u64>,
    first: u64,
    open: bool,
    n_scenarios: usize,
    barrier: Arc<Barrier>,
    start_cell: Arc<Mutex<Option<(Instant, u64)>>>,
    warm_stop: Arc<AtomicBool>,
}

impl ThreadPlan {
    /// Ramp-up, warm-up and the measured phase, on back end `B`.
    fn run<B: Io>(self) -> WorkerOutput {
        let ThreadPlan {
            settings,
            proto,
            warm_start,
            ramp,
            warmup,
            warm_budget,
            warm_first,
            limit,
            budget,
            first,
            open,
            n_scenarios,
            barrier,
            start_cell,
            warm_stop,
        } = self;
        let conns = settings.conn_ids.len();
        let mut worker: std::io::Result<Box<dyn RunPhase>> = match proto {
            Some(p) => ProtoWorker::<EpollIo>::new(settings, p).map(|w| Box::new(w) as _),
            None => Worker::<B>::new(settings).map(|w| Box::new(w) as _),
        };
        let mut warm = Warm::default();
        // The ramp-up's unrecorded counts, continued by the warm-up's recorder.
        let mut ramped = None;
        // Ramp-up: the connections join one by one until all run; not recorded, its
        // requests count with the warm-up's.
        if let (Ok(w), Some(r)) = (&mut worker, ramp) {
            let phase = Phase {
                start: warm_start,
                budget: None,
                until: Some(warm_start + r),
                first_request: warm_first,
                ramp: Some(r),
                stop: None,
            };
            let mut rec = Recorder::new(false, open, n_scenarios, warm_start, 0);
            w.run_phase(&phase, &mut rec);
            warm.sent += rec.sent;
            warm.failed += rec.unrecorded_failures;
            ramped = Some(rec);
        }
        let warm_start = warm_start + ramp.unwrap_or_default();
        if let (Ok(w), false) = (&mut worker, warmup == Warmup::None) {
            let (until, stop) = match warmup {
                Warmup::Duration(d) => (Some(warm_start + d), None),
                // The main thread ends it (SteadyWatch); the cap is also kept here.
                Warmup::UntilSteady { max, .. } => (Some(warm_start + max), Some(warm_stop)),
                _ => (None, None),
            };
            let phase = Phase {
                start: warm_start,
                budget: warm_budget,
                until,
                first_request: warm_first,
                ramp: None,
                stop,
            };
            let mut rec = Recorder::new(false, open, n_scenarios, warm_start, 0);
            if let Some(earlier) = &ramped {
                rec.continue_from(earlier);
            }
            w.run_phase(&phase, &mut rec);
            warm.sent += rec.sent;
            warm.failed += rec.unrecorded_failures;
        }
        barrier.wait(); // warm-up over everywhere
        barrier.wait(); // the measured window has started
        let (start, epoch_ms) = start_cell.lock().expect("start set").expect("start set");
        let mut worker = worker?;
        let until = match limit {
            Limit::Duration(d) => Some(start + d),
            Limit::Requests(_) => None,
        };
        let mut rec = Recorder::new(true, open, n_scenarios, start, epoch_ms);
        rec.open_window(until, budget, conns);
        worker.run_phase(
            &Phase {
                start,
                budget,
                until,
                first_request: first,
                ramp: None,
                stop: None,
            },
            &mut rec,
        );
        Ok((rec, warm))
    }
}

/// Requests assigned to connection `i` of `conns` out of `n` (the shares sum to `n`).
fn split(n: u64, conns: usize, i: usize) -> u64 {
    let conns = conns as u64;
    n / conns + u64::from((i as u64) < n % conns)
}

fn show_progress(
    handles: &[std::thread::JoinHandle<WorkerOutput>],
    progress: &[Arc<AtomicU64>],
    start: Instant,
) {
    let mut next = start + Duration::from_secs(1);
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
        if Instant::now() >= next {
            let done: u64 = progress
                .iter()
                .map(|p| p.load(std::sync::atomic::Ordering::Relaxed))
                .sum();
            let secs = start.elapsed().as_secs_f64();
            eprint!(
                "\r[{secs:6.1}s] {done} requests, {:.0} req/s   ",
                done as f64 / secs
            );
            let _ = std::io::stderr().flush();
            next += Duration::from_secs(1);
        }
    }
    eprintln!();
}

/// The measured window of the threads' recorders that began at `start`: its end (the last
/// thread's), and how its requests count into the throughput (see `benchrun_wire::result`,
/// "The window and its drain").
fn window_counts(
    outputs: &[(Recorder, Warm)],
    start: Instant,
    open: bool,
) -> (Instant, WindowCounts) {
    let windows = || outputs.iter().map(|(r, _)| &r.window);
    let end = windows().filter_map(|w| w.end).max().unwrap_or(start);
    let (early_us, early_n) = windows().fold((0u64, 0u64), |(us, n), w| {
        (us + w.early_us, n + w.early_count)
    });
    let lag = (early_n > 0).then(|| Duration::from_micros(early_us / early_n));
    let ended_after = windows().flat_map(|w| w.ended_after.iter().copied());
    let after = count_after(ended_after, end, open.then_some(lag));
    let last_end = windows().filter_map(|w| w.last_end).max().unwrap_or(end);
    let inside: u64 = windows().map(|w| w.ended_inside).sum();
    let counts = WindowCounts {
        requests: inside as f64 + after.counted,
        in_flight_at_end: after.in_flight,
        drain_ms: last_end.saturating_duration_since(end).as_millis() as u64,
        late: after.late,
        response_lag_ms: lag.map(|l| l.as_secs_f64() * 1000.0),
    };
    (end, counts)
}

/// How the requests that ended after some thread's window end count.
#[derive(Debug, Default, PartialEq)]
struct After {
    /// Their count (or shares) in the throughput.
    counted: f64,
    /// Those still in flight at the window's `end`.
    in_flight: u64,
    /// Open model: those that ended more than the response lag after `end`.
    late: u64,
}

/// Counts requests given as (sent, ended) that ended after their thread's window end, against
/// the window's `end`: one that ended by `end` counts 1 (its thread stopped sending earlier);
/// one still in flight at `end` counts, in the closed model (`open_lag` `None`), the share of
/// its time before `end`; in the open model (`open_lag` `Some(lag)`), 1 if it ended within
/// `lag` after `end` (any time when the lag is unknown), else 0 and is late.
fn count_after(
    ended_after: impl Iterator<Item = (Instant, Instant)>,
    end: Instant,
    open_lag: Option<Option<Duration>>,
) -> After {
    let mut a = After::default();
    for (sent, ended) in ended_after {
        if ended <= end {
            a.counted += 1.0;
            continue;
        }
        a.in_flight += 1;
        match open_lag {
            None => {
                let inside = end.saturating_duration_since(sent).as_secs_f64();
                let whole = ended.saturating_duration_since(sent).as_secs_f64();
                a.counted += if whole > 0.0 {
                    (inside / whole).min(1.0)
                } else {
                    1.0
                };
            }
            Some(lag) if lag.is_none_or(|l| ended <= end + l) => a.counted += 1.0,
            Some(_) => a.late += 1,
        }
    }
    a
}

fn build_result(
    config: &Config,
    scenarios: &[Scenario],
    threads: usize,
    outputs: Vec<(Recorder, Warm)>,
    (start, epoch_ms): (Instant, u64),
    cpu: (u64, u64),
) -> Result<LoadResult> {
    let open = config.rate.is_some();
    let (end, counts) = window_counts(&outputs, start, open);
    let length = end.saturating_duration_since(start);
    let window = (epoch_ms, epoch_ms + length.as_millis() as u64);
    let mut uncorrected = hist::new_latency();
    let mut connect = hist::new_latency();
    let (mut requests, mut bytes, mut warmup, mut warmup_failed) = (0, 0, 0, 0);
    let (mut lag_sum, mut lag_max, mut sent) = (0u64, 0u64, 0u64);
    let mut total = Tally::new();
    for (rec, warm) in &outputs {
        total.add(&rec.total);
        hist::add(&mut connect, &rec.connect)?;
        if let Some(u) = &rec.uncorrected {
            hist::add(&mut uncorrected, u)?;
        }
        requests += rec.requests;
        bytes += rec.bytes;
        warmup += warm.sent;
        warmup_failed += warm.failed;
        lag_sum += rec.lag_sum_us;
        lag_max = lag_max.max(rec.lag_max_us);
        sent += rec.sent;
    }
    let latency = &total.latency;
    let duration = length.as_secs_f64();
    Ok(LoadResult {
        schema: SCHEMA.into(),
        url: match scenarios {
            [one] if !config.scenarios.is_empty() => {
                format!("http://{}{}", config.target.host, one.path)
            }
            _ => config.target.url.clone(),
        },
        method: joined_methods(scenarios),
        model: if open { Model::Open } else { Model::Closed },
        rate: config.rate,
        connections: config.connections as u64,
        threads: threads as u64,
        keepalive: config.keepalive,
        window_start_ms: window.0,
        window_end_ms: window.1,
        duration,
        requests,
        successes: total.successes,
        errors: total.errors.clone(),
        bytes,
        throughput: if duration > 0.0 {
            counts.requests / duration
        } else {
            0.0
        },
        window_counts: Some(counts),
        warmup_requests: warmup,
        warmup_failed,
        warmup_until_steady: None,
        latency: LatencyStats::from_histogram(latency),
        latency_uncorrected: open.then(|| LatencyStats::from_histogram(&uncorrected)),
        connect: LatencyStats::from_histogram(&connect),
        schedule_lag: open.then(|| ScheduleLag {
            count: sent,
            mean_us: if sent == 0 {
                0.0
            } else {
                lag_sum as f64 / sent as f64
            },
            max_us: lag_max,
        }),
        cpu: CpuStats::new(cpu.0, cpu.1, requests),
        timeline: result::merge_timeline_entries(outputs.iter().flat_map(|(r, _)| &r.timeline))?,
        histograms: Histograms {
            latency: hist::encode(latency),
            latency_uncorrected: open.then(|| hist::encode(&uncorrected)),
            connect: hist::encode(&connect),
        },
        scenarios: scenario_results(scenarios, &outputs)?,
        nodes: config.node.iter().cloned().collect(),
        cpu_models: crate::cpuinfo::models(),
        start_at_ms: None,
        start_late_ms: None,
        window_start_spread_ms: 0,
        seed: None,
        backend: None,
        rx_timestamps: None,
        tcp: None,
        protocol: None,
    })
}

/// The method of a run: `GET`, or the distinct methods of its scenarios, e.g. `GET,POST`.
fn joined_methods(scenarios: &[Scenario]) -> String {
    let mut methods: Vec<&str> = Vec::new();
    for s in scenarios {
        if !methods.contains(&s.method.as_str()) {
            methods.push(&s.method);
        }
    }
    methods.join(",")
}

/// The per-scenario results (none for a single-scenario run): each thread's tallies, merged
/// by scenario like the results of several load pods.
fn scenario_results(
    scenarios: &[Scenario],
    outputs: &[(Recorder, Warm)],
) -> Result<Vec<ScenarioResult>> {
    let per_thread: Vec<ScenarioResult> = outputs
        .iter()
        .flat_map(|(rec, _)| rec.scenarios.iter().zip(scenarios))
        .map(|(tally, s)| ScenarioResult {
            name: s.name.clone(),
            method: s.method.clone(),
            path: s.path.clone(),
            weight: s.weight,
            requests: tally.requests,
            successes: tally.successes,
            errors: tally.errors.clone(),
            latency: LatencyStats::default(),
            histogram: hist::encode(&tally.latency),
        })
        .collect();
    Ok(result::merge_scenarios(per_thread.iter())?)
}

/// Sleeps until the Unix time `at_ms`; returns how late it already was, in milliseconds. A
/// time more than [`crate::config::MAX_START_WAIT`] ahead is refused rather than waited for.
/// A seed for a run not given one: the clock's nanoseconds and the process id, mixed.
fn random_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

fn wait_until(at_ms: u64) -> Result<u64> {
    let now = unix_ms();
    let ahead = Duration::from_millis(at_ms.saturating_sub(now));
    if ahead > crate::config::MAX_START_WAIT {
        return Err(Error::InvalidConfig(format!(
            "--start-at lies {}s ahead, more than the {}s a generator waits; check the clocks",
            ahead.as_secs(),
            crate::config::MAX_START_WAIT.as_secs()
        )));
    }
    std::thread::sleep(ahead);
    Ok(now.saturating_sub(at_ms))
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// (user, system) CPU time of this process in microseconds, from getrusage(RUSAGE_SELF).
pub fn cpu_time() -> (u64, u64) {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return (0, 0);
    }
    let us = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
    (us(ru.ru_utime), us(ru.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_closed_request_in_flight_at_the_end_counts_the_share_of_its_time_inside() {
        let t0 = Instant::now();
        let end = t0 + ms(10_000);
        let after = [
            // Sent 100 ms before the end, ended 100 ms after: half.
            (end - ms(100), end + ms(100)),
            // A straggler: 100 ms inside, 1.9 s after.
            (end - ms(100), end + ms(1_900)),
            // Its thread stopped sending earlier, and it ended by the window's end: whole.
            (end - ms(300), end - ms(50)),
        ];
        let a = count_after(after.into_iter(), end, None);
        assert!((a.counted - 1.55).abs() < 1e-9, "{a:?}");
        assert_eq!((a.in_flight, a.late), (2, 0));
    }

    #[test]
    fn an_open_request_counts_if_it_ended_within_the_response_lag_after_the_end() {
        let t0 = Instant::now();
        let end = t0 + ms(10_000);
        let after = [
            (end - ms(10), end + ms(790)),  // within 800 ms: counts
            (end - ms(10), end + ms(800)),  // at 800 ms: counts
            (end - ms(500), end + ms(900)), // a backlog: late
            (end - ms(900), end - ms(100)), // ended inside: counts
        ];
        let a = count_after(after.into_iter(), end, Some(Some(ms(800))));
        assert_eq!(
            a,
            After {
                counted: 3.0,
                in_flight: 3,
                late: 1
            }
        );
        // No response lag known (no response in the first second): every request counts.
        let a = count_after(after.into_iter(), end, Some(None));
        assert_eq!(
            a,
            After {
                counted: 4.0,
                in_flight: 3,
                late: 0
            }
        );
    }
}
