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
    Ok((v * scale).round() as i64)
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
    Ok((v * mult).round() as i64)
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
    Ok(Duration::from_secs_f64(total))
}

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
