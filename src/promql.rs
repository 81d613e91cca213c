//! PromQL for the figures of one measured window.
//!
//! Pure: strings only, no client. The built-in figures are computed from *raw* samples
//! ([`crate::samples`]): each query is a range selector `METRIC{filter}[R]` evaluated as an
//! instant query at [`Raw::at`], which returns every stored sample of every matching series in
//! `(at - R, at]` with the time cAdvisor took it. The range covers the window plus a margin of
//! [`MARGIN_SAMPLES`] sample intervals on both sides, so the samples bracketing each edge are
//! there. Container series are selected with
//! `{namespace="NS", pod=~"REGEX", container!="", container!="POD", image!=""}`, which keeps
//! the real containers of the pods and drops the pod-level cgroup (`container=""`) and the
//! sandbox (`POD`) that cAdvisor also reports, so nothing is counted twice.
//!
//! The spacing of cAdvisor samples is not the scrape interval: the kubelet stamps each series
//! with the time of its own (dynamic) housekeeping, one to two housekeeping intervals apart
//! however often Prometheus scrapes: 10–20 s with kubelet defaults, 1–2 s on the local cluster.

use std::time::Duration;

/// Spacing of cAdvisor samples assumed when the operator is not told otherwise
/// (`--sample-interval`), to size the margins and the waits: the kubelet's housekeeping interval
/// (cAdvisor stretches each one by up to its length again, at random) plus Prometheus' scrape
/// interval. 10 s is the wait of earlier releases; kubelet-default clusters, whose samples are
/// 10–20 s apart, need 20 s plus their scrape interval; the local cluster (housekeeping 1 s,
/// scrapes 1 s) sets 3 s. The figures themselves learn the real spacing from the samples.
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_secs(10);

/// Sample intervals of margin queried on each side of the window.
pub const MARGIN_SAMPLES: u32 = 3;

/// cAdvisor's CPU counter (seconds).
pub const CPU: &str = "container_cpu_usage_seconds_total";
/// cAdvisor's working-set gauge (bytes).
pub const WORKING_SET: &str = "container_memory_working_set_bytes";
/// cAdvisor's resident-set gauge (bytes: anonymous memory, no page cache).
pub const RSS: &str = "container_memory_rss";
/// CFS periods in which the container was throttled (counter).
pub const THROTTLED_PERIODS: &str = "container_cpu_cfs_throttled_periods_total";
/// CFS periods in which the container was runnable (counter).
pub const PERIODS: &str = "container_cpu_cfs_periods_total";

/// Where the figures are taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector<'a> {
    /// Namespace of the pods.
    pub namespace: &'a str,
    /// Regex matching the pod names (anchored by Prometheus).
    pub pods: &'a str,
}

/// Which raw samples to ask for: the range and the evaluation time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw {
    /// Evaluation time in Unix milliseconds: the window's end plus the margin.
    pub at_ms: i64,
    /// Range in whole seconds: the window plus both margins.
    pub range_secs: u64,
}

impl Raw {
    /// The raw samples around the window `[start_ms, end_ms]` with margins of
    /// [`MARGIN_SAMPLES`] × `sample` (at least 1 s) on both sides.
    pub fn around(start_ms: i64, end_ms: i64, sample: Duration) -> Self {
        let margin_ms = (sample.as_millis() as i64).max(1000) * i64::from(MARGIN_SAMPLES);
        let span_ms = (end_ms - start_ms).max(0) + 2 * margin_ms;
        Raw {
            at_ms: end_ms + margin_ms,
            range_secs: (span_ms as u64).div_ceil(1000),
        }
    }

    /// The evaluation time.
    pub fn at(&self) -> jiff::Timestamp {
        jiff::Timestamp::from_millisecond(self.at_ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
    }
}

/// The window's length as `$window` in extra queries: whole seconds, at least 1.
pub fn window_range(start_ms: i64, end_ms: i64) -> String {
    format!("{}s", (((end_ms - start_ms).max(0) + 500) / 1000).max(1))
}

/// Escapes a label value for a double-quoted PromQL string.
fn quote(value: &str) -> String {
    value.replace('\\', r"\\").replace('"', r#"\""#)
}

/// The container label filter for the pods of `sel`.
pub fn filter(sel: &Selector<'_>) -> String {
    format!(
        r#"{{namespace="{}", pod=~"{}", container!="", container!="POD", image!=""}}"#,
        quote(sel.namespace),
        quote(sel.pods)
    )
}

/// The raw samples of `metric` for the containers of `sel` over the range of `raw`.
pub fn raw(metric: &str, sel: &Selector<'_>, raw: &Raw) -> String {
    format!("{metric}{}[{}s]", filter(sel), raw.range_secs)
}

/// The sum over the containers of `sel` of each one's last sample of `metric` in the
/// `lookback_secs` before the evaluation time: a gauge's value at an instant, from the raw
/// samples (no rate, no interpolation).
pub fn last_sum(metric: &str, sel: &Selector<'_>, lookback_secs: u64) -> String {
    format!(
        "sum(last_over_time({metric}{}[{lookback_secs}s]))",
        filter(sel)
    )
}

/// A user's extra query with `$namespace`, `$pods` and `$window` substituted (values are
/// inserted verbatim: the user writes the quotes).
pub fn extra(query: &str, sel: &Selector<'_>, window: &str) -> String {
    query
        .replace("$namespace", sel.namespace)
        .replace("$pods", sel.pods)
        .replace("$window", window)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEL: Selector<'static> = Selector {
        namespace: "bench",
        pods: "run-express-1a2b3c4d-.*",
    };
    const F: &str = r#"{namespace="bench", pod=~"run-express-1a2b3c4d-.*", container!="", container!="POD", image!=""}"#;

    #[test]
    fn last_sum_reads_each_containers_last_sample() {
        assert_eq!(
            last_sum(WORKING_SET, &SEL, 60),
            format!("sum(last_over_time(container_memory_working_set_bytes{F}[60s]))")
        );
    }

    #[test]
    fn filter_selects_real_containers_of_the_pods() {
        assert_eq!(filter(&SEL), F);
    }

    #[test]
    fn filter_escapes_quotes_and_backslashes() {
        let sel = Selector {
            namespace: "ns",
            pods: r#"a\d+"x"#,
        };
        assert!(filter(&sel).contains(r#"pod=~"a\\d+\"x""#));
    }

    #[test]
    fn raw_samples_cover_the_window_and_three_sample_intervals_each_side() {
        let r = Raw::around(1_000_000, 1_015_400, Duration::from_secs(10));
        assert_eq!(
            r,
            Raw {
                at_ms: 1_045_400,
                range_secs: 76
            }
        );
        assert_eq!(
            raw(CPU, &SEL, &r),
            format!("container_cpu_usage_seconds_total{F}[76s]")
        );
    }

    #[test]
    fn the_window_variable_is_whole_seconds_and_at_least_one() {
        assert_eq!(window_range(0, 30_600), "31s");
        assert_eq!(window_range(5_000, 0), "1s");
    }

    #[test]
    fn extra_queries_get_namespace_pods_and_window() {
        assert_eq!(
            extra(
                r#"sum(rate(http_requests_total{namespace="$namespace", pod=~"$pods"}[$window]))"#,
                &SEL,
                "30s"
            ),
            r#"sum(rate(http_requests_total{namespace="bench", pod=~"run-express-1a2b3c4d-.*"}[30s]))"#
        );
    }
}
