use super::*;

pub(crate) fn result_from(samples: &[u64], start_ms: u64, end_ms: u64, second: u64) -> LoadResult {
    let mut h = hist::new_latency();
    let mut t = hist::new_timeline();
    for &s in samples {
        h.record(s).unwrap();
        t.record(s).unwrap();
    }
    let mut c = hist::new_latency();
    c.record(50).unwrap();
    let n = samples.len() as u64;
    let mut errors = ErrorCounts {
        total: 1,
        status_5xx: 1,
        ..Default::default()
    };
    errors.status_codes.insert(500, 1);
    LoadResult {
        schema: SCHEMA.into(),
        url: "http://127.0.0.1:1/".into(),
        method: "GET".into(),
        model: Model::Closed,
        rate: None,
        connections: 2,
        threads: 1,
        keepalive: true,
        window_start_ms: start_ms,
        window_end_ms: end_ms,
        duration: (end_ms - start_ms) as f64 / 1000.0,
        requests: n,
        successes: n - 1,
        errors,
        bytes: 100 * n,
        throughput: 0.0,
        window_counts: None,
        warmup_requests: 7,
        warmup_failed: 2,
        warmup_until_steady: None,
        latency: LatencyStats::from_histogram(&h),
        latency_uncorrected: None,
        connect: LatencyStats::from_histogram(&c),
        schedule_lag: None,
        cpu: CpuStats::new(1000, 500, n),
        timeline: vec![timeline_entry(second, n, 1, &t)],
        histograms: Histograms {
            latency: hist::encode(&h),
            latency_uncorrected: None,
            connect: hist::encode(&c),
        },
        scenarios: Vec::new(),
        nodes: Vec::new(),
        cpu_models: Vec::new(),
        start_at_ms: None,
        start_late_ms: None,
        window_start_spread_ms: 0,
        seed: None,
        backend: None,
        rx_timestamps: None,
        tcp: None,
        protocol: None,
    }
}

#[test]
fn merged_percentiles_equal_those_of_one_histogram_of_all_samples() {
    let a: Vec<u64> = (1..=5000).map(|i| i * 3).collect();
    let b: Vec<u64> = (1..=3000).map(|i| 20_000 + i * 17).collect();
    let ra = result_from(&a, 10_000, 20_000, 10);
    let rb = result_from(&b, 12_000, 25_000, 10);
    // Round trip through JSON, as the operator reads the pods' output.
    let ra: LoadResult = serde_json::from_str(&serde_json::to_string(&ra).unwrap()).unwrap();
    let rb: LoadResult = serde_json::from_str(&serde_json::to_string(&rb).unwrap()).unwrap();
    let merged = merge(&[ra, rb]).unwrap();

    let mut all = hist::new_latency();
    for &s in a.iter().chain(&b) {
        all.record(s).unwrap();
    }
    assert_eq!(merged.latency, LatencyStats::from_histogram(&all));
    assert_eq!(merged.requests, 8000);
    assert_eq!(merged.successes, 7998);
    assert_eq!(merged.errors.total, 2);
    assert_eq!(merged.errors.status_codes.get(&500), Some(&2));
    assert_eq!(merged.bytes, 800_000);
    assert_eq!(merged.warmup_requests, 14);
    assert_eq!(merged.warmup_failed, 4);
    assert_eq!(
        (merged.window_start_ms, merged.window_end_ms),
        (10_000, 25_000)
    );
    assert!((merged.duration - 15.0).abs() < 1e-9);
    assert!((merged.throughput - 8000.0 / 15.0).abs() < 1e-9);
    assert_eq!(merged.cpu.total_us, 3000);
    assert_eq!(merged.connect.count, 2);
    assert_eq!(merged.connections, 4);
}

#[test]
fn merged_timeline_aligns_by_absolute_second_and_merges_histograms() {
    let a: Vec<u64> = (1..=100).collect();
    let b: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
    let merged = merge(&[
        result_from(&a, 0, 1000, 5),
        result_from(&b, 0, 1000, 6),
        result_from(&b, 0, 1000, 5),
    ])
    .unwrap();
    assert_eq!(merged.timeline.len(), 2);
    assert_eq!(merged.timeline[0].second, 5);
    assert_eq!(merged.timeline[0].requests, 200);
    assert_eq!(merged.timeline[0].errors, 2);
    let mut t = hist::new_timeline();
    for &s in a.iter().chain(&b) {
        t.record(s).unwrap();
    }
    assert_eq!(merged.timeline[0].p99_us, t.value_at_quantile(0.99));
    assert_eq!(merged.timeline[1].second, 6);
}

#[test]
fn merge_rejects_empty_input_and_unknown_schema() {
    assert!(merge(&[]).is_err());
    let mut r = result_from(&[1, 2, 3], 0, 1000, 0);
    r.schema = "benchrun.dev/load-result/v0".into();
    assert!(merge(&[r]).is_err());
}

#[test]
fn merging_one_result_keeps_its_figures() {
    let r = result_from(&[10, 20, 30], 1000, 3000, 1);
    let m = merge(std::slice::from_ref(&r)).unwrap();
    assert_eq!(m.latency, r.latency);
    assert_eq!(m.requests, 3);
    assert!((m.throughput - 1.5).abs() < 1e-9);
}

#[test]
fn merge_keeps_the_sorted_set_of_every_inputs_nodes() {
    let on = |nodes: &[&str]| LoadResult {
        nodes: nodes.iter().map(|n| n.to_string()).collect(),
        ..result_from(&[10, 20], 0, 1000, 0)
    };
    let merged = merge(&[on(&["node-b"]), on(&[]), on(&["node-a", "node-b"])]).unwrap();
    assert_eq!(merged.nodes, ["node-a", "node-b"]);
    assert!(merge(&[on(&[]), on(&[])]).unwrap().nodes.is_empty());
    let cpu = |m: &[&str]| LoadResult {
        cpu_models: m.iter().map(|n| n.to_string()).collect(),
        ..result_from(&[10, 20], 0, 1000, 0)
    };
    let merged = merge(&[cpu(&["EPYC"]), cpu(&[]), cpu(&["Xeon", "EPYC"])]).unwrap();
    assert_eq!(merged.cpu_models, ["EPYC", "Xeon"]);
}

#[test]
fn results_without_nodes_still_parse_and_unknown_nodes_are_not_written() {
    let r = result_from(&[10, 20], 0, 1000, 0);
    let mut json = serde_json::to_value(&r).unwrap();
    assert!(json.get("nodes").is_none(), "absent when unknown");
    let back: LoadResult = serde_json::from_value(json.clone()).unwrap();
    assert!(back.nodes.is_empty());
    json["nodes"] = serde_json::json!(["worker-1"]);
    let back: LoadResult = serde_json::from_value(json).unwrap();
    assert_eq!(back.nodes, ["worker-1"]);
}

#[test]
fn merge_reports_how_far_apart_the_windows_started_and_the_latest_start() {
    let at = |start_ms: u64, late: u64| LoadResult {
        start_at_ms: Some(900),
        start_late_ms: Some(late),
        ..result_from(&[10, 20], start_ms, start_ms + 10_000, 0)
    };
    let merged = merge(&[at(1_000, 0), at(1_250, 150), at(1_100, 40)]).unwrap();
    assert_eq!(merged.window_start_spread_ms, 250);
    assert_eq!(merged.start_late_ms, Some(150));
    assert_eq!(merged.start_at_ms, Some(900));
    let one = merge(&[at(1_000, 0)]).unwrap();
    assert_eq!(one.window_start_spread_ms, 0);
    let json = serde_json::to_value(&one).unwrap();
    assert!(
        json.get("window_start_spread_ms").is_none(),
        "absent when 0"
    );
}

#[test]
fn merge_names_each_back_end_once_and_results_without_one_still_parse() {
    let on = |backend: Option<&str>| LoadResult {
        backend: backend.map(String::from),
        ..result_from(&[10], 0, 1000, 0)
    };
    let same = merge(&[on(Some("io-uring")), on(Some("io-uring"))]).unwrap();
    assert_eq!(same.backend.as_deref(), Some("io-uring"));
    let mixed = [on(Some("io-uring")), on(Some("epoll")), on(None)];
    assert_eq!(
        merge(&mixed).unwrap().backend.as_deref(),
        Some("epoll,io-uring")
    );
    let old = on(None);
    let json = serde_json::to_string(&old).unwrap();
    assert!(!json.contains("backend"), "{json}");
    assert_eq!(
        serde_json::from_str::<LoadResult>(&json).unwrap().backend,
        None
    );
}

#[test]
fn merged_results_say_timestamps_only_when_every_part_had_them() {
    let on = |stamps: Option<bool>| LoadResult {
        rx_timestamps: stamps,
        ..result_from(&[10], 0, 1000, 0)
    };
    let m = |a, b| merge(&[on(a), on(b)]).unwrap().rx_timestamps;
    assert_eq!(m(Some(true), Some(true)), Some(true));
    assert_eq!(m(Some(true), Some(false)), Some(false));
    assert_eq!(m(None, Some(false)), Some(false));
    assert_eq!(m(None, Some(true)), None);
    let json = serde_json::to_string(&on(None)).unwrap();
    assert!(!json.contains("rx_timestamps"), "{json}");
}

#[test]
fn merge_sums_the_tcp_counters_of_the_pods_that_read_them_and_older_results_parse() {
    let tcp = |opens, syn, ports| crate::tcp::TcpStats {
        active_opens: opens,
        syn_retrans: syn,
        ports_in_use: Some(ports),
        port_range: Some([32768, 60999]),
        ..Default::default()
    };
    let mut a = result_from(&[100], 1_000, 2_000, 1);
    let mut b = a.clone();
    let c = a.clone();
    a.tcp = Some(tcp(100, 3, 2000));
    b.tcp = Some(tcp(50, 1, 5000));
    let merged = merge(&[a.clone(), b, c.clone()]).unwrap().tcp.unwrap();
    assert_eq!((merged.active_opens, merged.syn_retrans), (150, 4));
    assert_eq!(merged.ports_in_use, Some(5000));
    assert_eq!(merge(&[c.clone(), c.clone()]).unwrap().tcp, None);
    // A result written before `tcp` existed has no such key and reads as None.
    let mut old = serde_json::to_value(&c).unwrap();
    assert!(old.get("tcp").is_none(), "absent, not null");
    old.as_object_mut().unwrap().remove("tcp");
    let old: LoadResult = serde_json::from_value(old).unwrap();
    assert_eq!(old.tcp, None);
    let round: LoadResult = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(round.tcp, a.tcp);
}

#[test]
fn warm_ups_until_steady_merge_to_the_longest_and_steady_only_if_all_were() {
    let warm = |seconds: f64, steady: bool, change: Option<f64>| SteadyWarmup {
        seconds,
        steady,
        max_seconds: 60.0,
        figure: SteadyFigure::Throughput,
        trailing_seconds: 10,
        change,
    };
    let mut a = result_from(&[100], 1_000, 2_000, 1);
    let mut b = a.clone();
    assert_eq!(
        merge(&[a.clone(), b.clone()]).unwrap().warmup_until_steady,
        None
    );
    a.warmup_until_steady = Some(warm(12.5, true, Some(0.01)));
    let one = merge(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(one.warmup_until_steady, a.warmup_until_steady);
    b.warmup_until_steady = Some(warm(60.2, false, Some(-0.09)));
    let both = merge(&[a.clone(), b]).unwrap().warmup_until_steady.unwrap();
    assert_eq!(
        (both.seconds, both.steady, both.change),
        (60.2, false, Some(-0.09))
    );
    // Written as the schema says, read back the same; absent from older results.
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(
        json["warmup_until_steady"],
        serde_json::json!({"seconds": 12.5, "steady": true, "max_seconds": 60.0,
            "figure": "throughput", "trailing_seconds": 10, "change": 0.01})
    );
    let mut old = json.clone();
    old.as_object_mut().unwrap().remove("warmup_until_steady");
    let read: LoadResult = serde_json::from_value(old).unwrap();
    assert_eq!(read.warmup_until_steady, None);
}

#[test]
fn merge_counts_the_windows_requests_and_keeps_the_last_drain() {
    let with = |start_ms: u64, counts: Option<WindowCounts>| LoadResult {
        window_counts: counts,
        ..result_from(&[10, 20, 30, 40], start_ms, start_ms + 10_000, 0)
    };
    let a = with(
        0,
        Some(WindowCounts {
            requests: 3.5,
            in_flight_at_end: 1,
            drain_ms: 800,
            late: 0,
            response_lag_ms: Some(100.0),
        }),
    );
    let b = with(
        500,
        Some(WindowCounts {
            requests: 2.0,
            in_flight_at_end: 2,
            drain_ms: 100,
            late: 2,
            response_lag_ms: Some(300.0),
        }),
    );
    // A JSON round trip: the counts are written and read back.
    let a: LoadResult = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    let m = merge(&[a.clone(), b]).unwrap();
    assert_eq!((m.window_start_ms, m.window_end_ms), (0, 10_500));
    assert!((m.throughput - 5.5 / 10.5).abs() < 1e-9, "{}", m.throughput);
    let c = m.window_counts.clone().unwrap();
    assert_eq!((c.in_flight_at_end, c.late), (3, 2));
    // a's last request ended at 10 800, b's at 10 600: 300 ms after the merged end.
    assert_eq!(c.drain_ms, 300);
    assert_eq!(m.last_end_ms(), 10_800);
    assert!((c.response_lag_ms.unwrap() - 200.0).abs() < 1e-9);
    // An older generator's result counts every request over a window that held its drain.
    let old = with(0, None);
    assert_eq!(old.counted_requests(), 4.0);
    assert_eq!(old.last_end_ms(), old.window_end_ms);
    let m = merge(&[a, old]).unwrap();
    assert!((m.throughput - 7.5 / 10.0).abs() < 1e-9, "{}", m.throughput);
    assert!(merge(&[with(0, None)]).unwrap().window_counts.is_none());
}
