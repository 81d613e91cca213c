//! Rounding and formatting of the figures the operator writes to a run's status (one small
//! module for both).
//!
//! Pure and dependency-free, so that the Prometheus client, the result assembly, the validity
//! warnings and the SLO verdicts all use it without importing each other.

/// `x` rounded to `decimals` decimal places (half away from zero).
pub fn round(x: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (x * f).round() / f
}

/// A measured latency in milliseconds with one decimal: `250.1ms`.
pub fn format_ms(ms: f64) -> String {
    format!("{ms:.1}ms")
}

/// A measured fraction as a percentage with enough decimals to tell it from a bound:
/// `2.0%`, `0.15%`, `0.004%`.
pub fn format_rate(fraction: f64) -> String {
    let pct = fraction * 100.0;
    if pct >= 1.0 || pct == 0.0 {
        format!("{pct:.1}%")
    } else if pct >= 0.01 {
        format!("{pct:.2}%")
    } else {
        format!("{pct:.3}%")
    }
}

/// A bound as the user wrote it: `1%`, `0.5%`.
pub fn format_bound(fraction: f64) -> String {
    let pct = (fraction * 100.0 * 10_000.0).round() / 10_000.0;
    format!("{pct}%")
}

/// A latency for a headline: `850µs`, `2.5ms`, `41ms`, `1.2s`, `12s`.
pub fn format_latency(ms: f64) -> String {
    if ms < 1.0 {
        format!("{}µs", (ms * 1000.0).round() as i64)
    } else if ms < 10.0 {
        trim(format!("{ms:.1}")) + "ms"
    } else if ms < 999.5 {
        format!("{}ms", ms.round() as i64)
    } else if ms < 9_950.0 {
        trim(format!("{:.1}", ms / 1000.0)) + "s"
    } else {
        format!("{}s", (ms / 1000.0).round() as i64)
    }
}

fn trim(s: String) -> String {
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_half_away_from_zero_to_the_given_places() {
        assert_eq!(round(0.123_45, 4), 0.1235);
        assert_eq!(round(-0.123_45, 4), -0.1235);
        assert_eq!(round(2.5, 0), 3.0);
        assert_eq!(round(1234.0, -2), 1200.0);
    }

    #[test]
    fn headline_latencies_use_the_natural_unit() {
        assert_eq!(format_latency(0.85), "850µs");
        assert_eq!(format_latency(2.5), "2.5ms");
        assert_eq!(format_latency(3.0), "3ms");
        assert_eq!(format_latency(41.3), "41ms");
        assert_eq!(format_latency(1234.0), "1.2s");
        assert_eq!(format_latency(12_400.0), "12s");
    }
}
