//! Human-readable rendering of a [`LoadResult`], in the spirit of ApacheBench's summary.
//! Pure: writes into any `impl Write`.

use std::io::{self, Write};

use crate::result::{LatencyStats, LoadResult, Model};

fn ms(us: impl Into<f64>) -> f64 {
    us.into() / 1000.0
}

/// Writes the human summary of `r` to `w`.
pub fn write_text(r: &LoadResult, mut w: impl Write) -> io::Result<()> {
    writeln!(w, "Target:                 {} {}", r.method, r.url)?;
    let model = match (r.model, r.rate) {
        (Model::Open, Some(rate)) => format!("open, {rate} req/s"),
        _ => "closed".to_string(),
    };
    writeln!(w, "Model:                  {model}")?;
    let ka = if r.keepalive {
        "keep-alive"
    } else {
        "no keep-alive"
    };
    writeln!(
        w,
        "Connections:            {} ({ka}, {} threads)",
        r.connections, r.threads
    )?;
    writeln!(w)?;
    writeln!(w, "Time taken for tests:   {:.3} seconds", r.duration)?;
    writeln!(w, "Complete requests:      {}", r.requests)?;
    writeln!(w, "Successful requests:    {}", r.successes)?;
    writeln!(w, "Failed requests:        {}", r.errors.total)?;
    let e = &r.errors;
    let classes = [
        ("connect refused", e.connect_refused),
        ("connect timeout", e.connect_timeout),
        ("connect other", e.connect_other),
        ("timeout", e.timeout),
        ("read", e.read),
        ("body mismatch", e.body_mismatch),
        ("protocol", e.protocol),
        ("TLS handshake", e.tls_handshake),
        ("TLS certificate", e.tls_certificate),
        ("ALPN mismatch", e.alpn_mismatch),
        ("status 4xx", e.status_4xx),
        ("status 5xx", e.status_5xx),
    ];
    for (name, n) in classes.iter().filter(|(_, n)| *n > 0) {
        writeln!(w, "   ({name}: {n})")?;
    }
    for (code, n) in &e.status_codes {
        writeln!(w, "   (HTTP {code}: {n})")?;
    }
    if let Some(p) = &r.protocol {
        write_protocol(&mut w, p)?;
    }
    if r.warmup_requests > 0 {
        writeln!(
            w,
            "Warm-up requests:       {} (not counted; {} failed)",
            r.warmup_requests, r.warmup_failed
        )?;
    }
    if let Some(s) = &r.warmup_until_steady {
        let how = if s.steady {
            format!("{} steady", s.figure.as_str())
        } else {
            format!(
                "cap of {:.0} s reached, {} not steady",
                s.max_seconds,
                s.figure.as_str()
            )
        };
        writeln!(w, "Warm-up until steady:   {:.1} s ({how})", s.seconds)?;
    }
    writeln!(w, "Total transferred:      {} bytes", r.bytes)?;
    writeln!(
        w,
        "Requests per second:    {:.2} [#/sec] (mean)",
        r.throughput
    )?;
    if let Some(c) = &r.window_counts {
        let late = if c.late > 0 {
            format!(
                ", {} answered later than {:.1} ms after it",
                c.late,
                c.response_lag_ms.unwrap_or_default()
            )
        } else {
            String::new()
        };
        writeln!(
            w,
            "Drain:                  {} in flight at the window's end, the last ended {:.3} s after it (measured; their time after it not in the rate{late})",
            c.in_flight_at_end,
            c.drain_ms as f64 / 1000.0
        )?;
    }
    writeln!(
        w,
        "Time per request:       {:.3} [ms] (mean)",
        ms(r.latency.mean_us)
    )?;
    let kb = if r.duration > 0.0 {
        r.bytes as f64 / 1024.0 / r.duration
    } else {
        0.0
    };
    writeln!(w, "Transfer rate:          {kb:.2} [Kbytes/sec] received")?;
    let cpu = &r.cpu;
    writeln!(
        w,
        "Generator CPU:          {:.3} s user, {:.3} s sys, {:.2} µs/request",
        cpu.user_us as f64 / 1e6,
        cpu.system_us as f64 / 1e6,
        cpu.us_per_request
    )?;
    if let Some(lag) = &r.schedule_lag {
        writeln!(
            w,
            "Schedule lag:           mean {:.3} ms, max {:.3} ms",
            ms(lag.mean_us),
            ms(lag.max_us as f64)
        )?;
    }
    if let Some(t) = &r.tcp {
        writeln!(
            w,
            "TCP (this namespace):   {} opened, {} failed, {} SYN retransmits, {} retransmitted, {} reset while established, {} RST sent",
            t.active_opens, t.attempt_fails, t.syn_retrans, t.retrans_segs, t.estab_resets, t.out_rsts
        )?;
        if let (Some(used), Some([first, last])) = (t.ports_in_use, t.port_range) {
            writeln!(
                w,
                "Local ports:            {used} of {first}-{last} in use ({} in TIME_WAIT)",
                t.time_wait.unwrap_or_default()
            )?;
        }
    }
    writeln!(w)?;
    writeln!(w, "Connection Times (ms)")?;
    writeln!(w, "              min   mean[+/-sd] median     max")?;
    stats_row(&mut w, "Connect:", &r.connect)?;
    let label = if r.model == Model::Open {
        "Total (CO):"
    } else {
        "Total:"
    };
    stats_row(&mut w, label, &r.latency)?;
    if let Some(u) = &r.latency_uncorrected {
        stats_row(&mut w, "Service:", u)?;
    }
    writeln!(w)?;
    writeln!(
        w,
        "Percentage of the requests served within a certain time (ms)"
    )?;
    let l = &r.latency;
    let rows = [
        ("50%", l.p50_us),
        ("75%", l.p75_us),
        ("90%", l.p90_us),
        ("99%", l.p99_us),
        ("99.9%", l.p999_us),
        ("99.99%", l.p9999_us),
        ("100%", l.max_us),
    ];
    for (p, v) in rows {
        let tail = if p == "100%" {
            " (longest request)"
        } else {
            ""
        };
        writeln!(w, "  {p:>6}  {:>10.3}{tail}", ms(v as f64))?;
    }
    if r.model == Model::Open {
        if let Some(u) = &r.latency_uncorrected {
            writeln!(
                w,
                "  (uncorrected service time: p50 {:.3}, p99 {:.3}, max {:.3})",
                ms(u.p50_us as f64),
                ms(u.p99_us as f64),
                ms(u.max_us as f64)
            )?;
        }
    }
    if !r.scenarios.is_empty() {
        write_scenarios(r, &mut w)?;
    }
    Ok(())
}

/// The per-scenario table of a multi-scenario run.
fn write_scenarios(r: &LoadResult, w: &mut impl Write) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, "Scenarios (latency in ms)")?;
    writeln!(
        w,
        "  {:<16} {:>6} {:>10} {:>8} {:>10} {:>8} {:>8} {:>8}",
        "name", "weight", "requests", "errors", "req/s", "p50", "p99", "max"
    )?;
    for s in &r.scenarios {
        let rps = if r.duration > 0.0 {
            s.requests as f64 / r.duration
        } else {
            0.0
        };
        writeln!(
            w,
            "  {:<16} {:>6} {:>10} {:>8} {:>10.1} {:>8.3} {:>8.3} {:>8.3}",
            s.name,
            s.weight,
            s.requests,
            s.errors.total,
            rps,
            ms(s.latency.p50_us as f64),
            ms(s.latency.p99_us as f64),
            ms(s.latency.max_us as f64)
        )?;
        writeln!(w, "    {} {}", s.method, s.path)?;
    }
    Ok(())
}

fn stats_row(w: &mut impl Write, label: &str, s: &LatencyStats) -> io::Result<()> {
    writeln!(
        w,
        "{label:<11} {:>7.2} {:>7.2} {:>6.2} {:>7.2} {:>8.2}",
        ms(s.min_us as f64),
        ms(s.mean_us),
        ms(s.stdev_us),
        ms(s.p50_us as f64),
        ms(s.max_us as f64)
    )
}

/// The protocol lines: TLS handshakes and HTTP/2 wire facts.
fn write_protocol(w: &mut impl Write, p: &crate::proto::ProtocolStats) -> std::io::Result<()> {
    let scheme = if p.tls { "over TLS" } else { "cleartext" };
    writeln!(w, "Protocol:               {} {scheme}", p.protocol)?;
    if let Some(t) = &p.tls_stats {
        writeln!(
            w,
            "TLS handshakes:         {} ({} resumed; mean {:.0} us, max {} us; {}{}{})",
            t.handshakes,
            t.resumed,
            t.handshake_mean_us,
            t.handshake_max_us,
            t.versions.join(", "),
            if t.alpn.is_empty() { "" } else { "; ALPN " },
            t.alpn.join(", ")
        )?;
    }
    if let Some(h) = &p.h2 {
        writeln!(
            w,
            "HTTP/2:                 {} streams per connection; {} RST_STREAM, {} GOAWAY received",
            h.max_concurrent_streams, h.rst_stream_received, h.goaway_received
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{merge, tests_support::sample};

    #[test]
    fn text_summary_has_the_ab_percentage_table() {
        let r = merge(&[sample()]).unwrap();
        let mut out = Vec::new();
        write_text(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Percentage of the requests served within a certain time (ms)"));
        assert!(text.contains("Complete requests:      3"));
        assert!(text.contains("(HTTP 500: 1)"));
        assert!(text.contains("(longest request)"));
    }

    #[test]
    fn tls_and_http2_runs_show_their_handshakes_wire_facts_and_failure_kinds() {
        let mut r = merge(&[sample()]).unwrap();
        r.errors.alpn_mismatch = 2;
        r.protocol = Some(crate::proto::ProtocolStats {
            protocol: "h2".into(),
            tls: true,
            tls_stats: Some(crate::proto::TlsStats {
                versions: vec!["TLSv1_3".into()],
                alpn: vec!["h2".into()],
                handshakes: 4,
                resumed: 3,
                handshake_total_us: 400,
                handshake_mean_us: 100.0,
                handshake_max_us: 180,
            }),
            h2: Some(crate::proto::H2Stats {
                max_concurrent_streams: 10,
                rst_stream_received: 1,
                goaway_received: 0,
                stream_waits: 0,
            }),
        });
        let mut out = Vec::new();
        write_text(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("(ALPN mismatch: 2)"), "{text}");
        assert!(text.contains("Protocol:               h2 over TLS"));
        assert!(
            text.contains(
                "TLS handshakes:         4 (3 resumed; mean 100 us, max 180 us; TLSv1_3; ALPN h2)"
            ),
            "{text}"
        );
        assert!(text.contains("10 streams per connection; 1 RST_STREAM, 0 GOAWAY received"));
    }
}
