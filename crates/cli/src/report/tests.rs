use std::collections::BTreeMap;

use benchrun_wire::result::{CpuStats, ErrorCounts, Histograms, LatencyStats, Model};
use benchrun_wire::{hist, LoadResult, TimelineEntry, SCHEMA};
use hdrhistogram::Histogram;

use super::figures::{self, spectrum, Inputs};
use super::svg::{Chart, Scale};
use super::*;
use crate::fixtures;
use benchrun_api::Outcome;

/// A load result whose latency histogram holds `latencies_us` and whose timeline has one
/// entry per value of `per_second`.
fn detail(latencies_us: &[u64], per_second: &[u64]) -> LoadResult {
    let mut h = hist::new_latency();
    for &v in latencies_us {
        h.record(v).unwrap();
    }
    let stats = LatencyStats::from_histogram(&h);
    LoadResult {
        schema: SCHEMA.into(),
        url: "http://demo:8080/hello".into(),
        method: "GET".into(),
        model: Model::Closed,
        rate: None,
        connections: 10,
        threads: 1,
        keepalive: true,
        window_start_ms: 1_800_000_000_000,
        window_end_ms: 1_800_000_000_000 + 1000 * per_second.len() as u64,
        duration: per_second.len() as f64,
        requests: h.len(),
        successes: h.len(),
        errors: ErrorCounts::default(),
        bytes: 0,
        throughput: 0.0,
        window_counts: None,
        protocol: None,
        warmup_requests: 0,
        warmup_failed: 0,
        warmup_until_steady: None,
        latency: stats.clone(),
        latency_uncorrected: None,
        connect: stats,
        schedule_lag: None,
        cpu: CpuStats::new(0, 0, 1),
        timeline: per_second
            .iter()
            .enumerate()
            .map(|(i, &requests)| TimelineEntry {
                second: 1_800_000_000 + i as u64,
                requests,
                errors: 0,
                p50_us: 0,
                p99_us: 0,
                histogram: String::new(),
            })
            .collect(),
        histograms: Histograms {
            latency: hist::encode(&h),
            latency_uncorrected: None,
            connect: hist::encode(&h),
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
    }
}

/// Details for every measured fixture cell: latencies 1..=1000 ms, a three-second timeline.
fn details() -> BTreeMap<String, LoadResult> {
    let latencies: Vec<u64> = (1..=1000).map(|ms| ms * 1000).collect();
    fixtures::results()
        .iter()
        .filter_map(|r| r.detail.clone())
        .map(|name| (name, detail(&latencies, &[900, 1000, 950])))
        .collect()
}

fn render(
    details: &BTreeMap<String, LoadResult>,
    baseline: Option<(&str, &BenchmarkRunStatus)>,
) -> String {
    let status = fixtures::status();
    let mut out = Vec::new();
    write_report(
        &mut out,
        &Report {
            name: "demo",
            namespace: "bench",
            status: &status,
            details,
            baseline,
            generated: "2026-12-01T20:00:00Z",
            notes: &[],
        },
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_report_is_one_html_document_with_every_chart_inline_and_no_script() {
    let html = render(&details(), None);
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(!html.contains("<script"), "no JavaScript");
    assert!(
        !html.contains("src=\"") && !html.contains("href=\"http"),
        "nothing to fetch"
    );
    for id in [
        "chart-throughput",
        "chart-p99",
        "chart-cpu",
        "chart-memory",
        "chart-spectrum-0",
        "chart-timeline-0",
    ] {
        assert!(
            html.contains(&format!("<figure class=\"chart\" id=\"{id}\">")),
            "{id} missing"
        );
        assert!(
            html.contains(&format!("<a href=\"#{id}\">")),
            "{id} not in the list"
        );
    }
    let figures = html.matches("<figure class=\"chart\"").count();
    assert_eq!(
        html.matches("<svg").count(),
        figures,
        "each chart is an inline SVG"
    );
    assert!(
        html.contains("chart-capacity-"),
        "the fitted capacity entry is drawn"
    );
    assert!(
        html.contains("Capacity of ") && html.contains("not fitted"),
        "the refused one is named"
    );
    assert!(html.contains("<h2>Measurements</h2>") && html.contains("<table>"));
}

#[test]
fn text_from_the_cluster_is_escaped() {
    let mut status = fixtures::status();
    status.results[0].reason = Some("<img src=x onerror=alert(1)> & \"more\"".into());
    status.results[0].outcome = Outcome::Failed;
    let mut out = Vec::new();
    let details = BTreeMap::new();
    write_report(
        &mut out,
        &Report {
            name: "demo<b>",
            namespace: "bench",
            status: &status,
            details: &details,
            baseline: None,
            generated: "now",
            notes: &[],
        },
    )
    .unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(
        !html.contains("<img") && !html.contains("demo<b>"),
        "{html}"
    );
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;more&quot;"));
}

#[test]
fn without_detail_configmaps_the_spectrum_comes_from_status_and_timelines_are_named_missing() {
    let html = render(&BTreeMap::new(), None);
    assert!(html.contains("chart-spectrum-0"));
    assert!(!html.contains("chart-timeline-"));
    assert!(html.contains("Per-second timeline: no measurement has a readable detail ConfigMap"));
}

#[test]
fn a_baseline_adds_dashed_series_to_the_connection_charts() {
    let base = fixtures::status();
    let html = render(&details(), Some(("last-week", &base)));
    assert!(html.contains("compared with the baseline run last-week"));
    assert!(
        html.contains("baseline last-week: "),
        "baseline series in the legend"
    );
    assert!(html.contains("swatch dashed"));
    let (charts, _) = figures::charts(&Inputs {
        results: &base.results,
        capacity: &[],
        details: &BTreeMap::new(),
        baseline: Some(("last-week", &base.results)),
    });
    let Chart::Line(t) = &charts[0] else {
        panic!("throughput is a line chart")
    };
    let own = t.series.iter().filter(|s| !s.dashed).count();
    assert_eq!(t.series.iter().filter(|s| s.dashed).count(), own);
}

#[test]
fn the_spectrum_runs_from_the_median_up_to_what_the_count_resolves() {
    let mut h: Histogram<u64> = hist::new_latency();
    for v in 1..=1000u64 {
        h.record(v * 1000).unwrap();
    }
    let s = spectrum(&h);
    // 1000 samples resolve three decades: 0 %, …, 99.9 %.
    assert_eq!(s.len(), 61);
    assert_eq!(s[0].0, 0.0);
    assert!(
        (s[20].0 - 0.9).abs() < 1e-9 && (s[20].1 - 900.0).abs() < 2.0,
        "{:?}",
        s[20]
    );
    assert!((Scale::Percentile.position(s[60].0).unwrap() - 3.0).abs() < 1e-9);
    assert!(
        s.windows(2).all(|w| w[0].1 <= w[1].1),
        "latency never falls with the percentile"
    );
}

#[test]
fn the_capacity_chart_draws_the_fitted_curve_through_its_peak() {
    let capacity = fixtures::capacity();
    let results = fixtures::results();
    let (charts, _) = figures::charts(&Inputs {
        results: &results,
        capacity: &capacity,
        details: &BTreeMap::new(),
        baseline: None,
    });
    let Some(Chart::Line(c)) = charts
        .iter()
        .find(|c| c.id().starts_with("chart-capacity-"))
    else {
        panic!("no capacity chart")
    };
    let fit = capacity[0].fit.as_ref().unwrap();
    let curve = &c.series[1].points;
    let top = curve.iter().map(|p| p.1).fold(0.0, f64::max);
    let peak = fit.peak_throughput.expect("the fixture's fit has a peak");
    assert!(
        (top - peak).abs() / peak < 0.02,
        "curve top {top} vs peak {peak}"
    );
    assert!(c.series[0].markers_only && !c.series[0].points.is_empty());
}

#[test]
fn slugs_are_anchor_safe() {
    assert_eq!(
        figures::slug("demo/hello cpu=500m mem=1Gi"),
        "demo-hello-cpu-500m-mem-1gi"
    );
}

#[test]
fn the_percentile_table_has_a_column_per_percentage_and_the_connect_times() {
    let mut results = fixtures::results();
    assert!(
        percentile_table(&results).is_none(),
        "no table without percentile rows"
    );
    let l = results[0].latency_ms.as_mut().unwrap();
    l.table = [50.0, 66.0, 99.9, 100.0]
        .iter()
        .map(|&percent| benchrun_api::LatencyPercentile {
            percent,
            ms: percent / 10.0,
        })
        .collect();
    results[0].connect_times_ms = Some(benchrun_api::ConnectTimes {
        count: 10,
        min: 0.1,
        mean: 0.25,
        max: 1.5,
    });
    let t = percentile_table(&results).unwrap();
    let heads: Vec<&str> = t.columns.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        heads,
        [
            "MEASUREMENT",
            "50%",
            "66%",
            "99.9%",
            "100%",
            "CONNECT MIN",
            "MEAN",
            "MAX"
        ]
    );
    assert_eq!(t.rows.len(), 1, "only measurements with a table get a row");
    assert_eq!(
        t.rows[0][1..],
        ["5.00", "6.60", "9.99", "10.0", "0.10", "0.25", "1.50"]
    );
}
