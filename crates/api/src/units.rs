//! Parsing of the spec's string units: CPU and memory quantities, durations and percentages.
//! Pure functions; each error names what was wrong so callers can prefix the field path.

use std::time::Duration;

/// Parses a Kubernetes CPU quantity (`"2"`, `"500m"`, `"0.5"`) into millicores.
pub fn cpu_millis(q: &str) -> Result<i64, String> {
    let q = q.trim();
    let (num, scale) = match q.strip_suffix('m') {
        Some(n) => (n, 1.0),
        None => (q, 1000.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{q:?} is not a CPU quantity (e.g. \"500m\", \"2\")"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("{q:?} must be a positive CPU quantity"));
    }
    let millis = in_range((v * scale).round(), || {
        format!("{q:?} is too large a CPU quantity (e.g. \"500m\", \"64\")")
    })?;
    if millis < 1 {
        return Err(format!(
            "{q:?} is below 1m, the smallest CPU limit a container can have: use at least \"1m\", e.g. \"500m\""
        ));
    }
    Ok(millis)
}

/// Parses a Kubernetes memory quantity (`"512Mi"`, `"1Gi"`, `"1G"`, `"1000000"`) into bytes.
pub fn memory_bytes(q: &str) -> Result<i64, String> {
    let q = q.trim();
    const SUFFIXES: [(&str, f64); 12] = [
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("Pi", 1125899906842624.0),
        ("Ei", 1152921504606846976.0),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let (num, mult) = SUFFIXES
        .iter()
        .find_map(|(s, m)| q.strip_suffix(s).map(|n| (n, *m)))
        .unwrap_or((q, 1.0));
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{q:?} is not a memory quantity (e.g. \"512Mi\", \"1Gi\")"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(format!("{q:?} must be a positive memory quantity"));
    }
    in_range((v * mult).round(), || {
        format!("{q:?} is too large a memory quantity (e.g. \"512Mi\", \"64Gi\")")
    })
}

/// Largest parsed quantity: 2^53, where f64 still counts in ones. Far above any real limit
/// (8 Pi bytes, 9 × 10^12 cores), and sums or `+ 999` of it cannot overflow an `i64`.
const MAX_QUANTITY: f64 = 9_007_199_254_740_992.0;

/// `v` as an integer, or the error when it is beyond [`MAX_QUANTITY`] (an `as` cast would
/// saturate silently).
fn in_range(v: f64, too_large: impl FnOnce() -> String) -> Result<i64, String> {
    if v > MAX_QUANTITY {
        return Err(too_large());
    }
    Ok(v as i64)
}

/// Parses a Go-style duration as the apiserver's CEL `duration()` does: a sequence of
/// number+unit pairs (`"1m30s"`, `"250ms"`, `"1.5h"`); units `h`, `m`, `s`, `ms`, `us`, `ns`.
pub fn duration(s: &str) -> Result<Duration, String> {
    let err = || format!("{s:?} is not a duration (e.g. \"30s\", \"2m\", \"250ms\")");
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(err());
    }
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(err)?;
        let v: f64 = rest[..n].parse().map_err(|_| err())?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let secs = match &rest[..u] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(err()),
        };
        total += v * secs;
        rest = &rest[u..];
    }
    if total.is_nan() || total > MAX_DURATION_SECS {
        return Err(format!(
            "{s:?} is beyond the longest duration (about 2562047h, as in Go): use a shorter one, e.g. \"30s\""
        ));
    }
    Ok(Duration::from_secs_f64(total))
}

/// The longest duration, in seconds: Go's (and so the apiserver's CEL `duration()`) maximum of
/// 2^63 - 1 ns. A spec that skipped admission may hold more; `Duration::from_secs_f64` would
/// panic on it, and sums of longer durations could overflow.
const MAX_DURATION_SECS: f64 = 9_223_372_036.854_775;

/// Formats a duration the way the spec writes them: `"30s"`, `"1500ms"`, `"2m"`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 60_000 == 0 && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// A fraction as a percentage with at most one decimal and no trailing zero: 0.05 is `5%`,
/// 0.041 is `4.1%`.
pub fn format_percent(f: f64) -> String {
    let s = format!("{:.1}", f * 100.0);
    format!("{}%", s.strip_suffix(".0").unwrap_or(&s))
}

/// Parses a percentage such as `"1%"` or `"0.5%"` into a fraction (0.01, 0.005).
pub fn percent(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .strip_suffix('%')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("{s:?} is not a percentage (e.g. \"1%\")"))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("{s:?} must be between 0% and 100%"));
    }
    Ok(v / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_quantities_become_millicores() {
        assert_eq!(cpu_millis("1"), Ok(1000));
        assert_eq!(cpu_millis("3500m"), Ok(3500));
        assert_eq!(cpu_millis("0.5"), Ok(500));
        assert!(cpu_millis("0").is_err());
        assert!(cpu_millis("one").is_err());
        assert_eq!(cpu_millis("0.001"), Ok(1));
        // Rounds to 0 millicores: a limit no container can have.
        assert!(cpu_millis("0.0001").unwrap_err().contains("below 1m"));
    }

    #[test]
    fn memory_quantities_become_bytes() {
        assert_eq!(memory_bytes("512Mi"), Ok(512 << 20));
        assert_eq!(memory_bytes("1Gi"), Ok(1 << 30));
        assert_eq!(memory_bytes("1G"), Ok(1_000_000_000));
        assert_eq!(memory_bytes("1000"), Ok(1000));
        assert!(memory_bytes("lots").is_err());
    }

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert!(duration("30").is_err());
        assert!(duration("").is_err());
        assert!(duration("5 s").is_err());
    }

    #[test]
    fn durations_beyond_gos_range_are_errors_not_panics() {
        assert_eq!(
            duration("2562047h"),
            Ok(Duration::from_secs(2562047 * 3600))
        );
        for huge in [
            "2562048h",
            "99999999999999999999999h",
            "1e400s",
            "9".repeat(400).as_str(),
        ] {
            let text = if huge.ends_with(['h', 's']) {
                huge.to_string()
            } else {
                format!("{huge}s")
            };
            let e = duration(&text).unwrap_err();
            assert!(
                e.contains("beyond the longest duration") || e.contains("is not a duration"),
                "{text}: {e}"
            );
        }
    }

    #[test]
    fn quantities_too_large_for_an_integer_are_errors() {
        assert!(cpu_millis("1e300").unwrap_err().contains("too large"));
        assert!(memory_bytes("1e300Ei").unwrap_err().contains("too large"));
        assert_eq!(cpu_millis("9000000000000"), Ok(9_000_000_000_000_000));
    }

    #[test]
    fn durations_format_back() {
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn percentages_become_fractions() {
        assert_eq!(percent("1%"), Ok(0.01));
        assert_eq!(percent("0.5%"), Ok(0.005));
        assert!(percent("1").is_err());
        assert!(percent("150%").is_err());
    }
}
