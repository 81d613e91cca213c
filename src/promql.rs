//! PromQL for the figures of one measured window.
//!
//! Pure: strings only, no client. Every query is an instant query evaluated at the end of the
//! window; `W` is the window length in whole seconds (at least [`MIN_WINDOW_SECS`]). Container
//! series are selected with
//! `{namespace="NS", pod=~"REGEX", container!="", container!="POD", image!=""}`, which keeps
//! the real containers of the pods and drops the pod-level cgroup (`container=""`) and the
//! sandbox (`POD`) that cAdvisor also reports, so nothing is counted twice.
//!
//! The short-range rates behind the CPU peak need at least two samples in their range. The
//! spacing of cAdvisor samples is not the scrape interval: the kubelet stamps each series with
//! the time of its own (dynamic) housekeeping, so samples arrive every 6–10 s on the local
//! cluster even when Prometheus scrapes every 5 s, and every 10–15 s with kubelet defaults.
//! The short range is therefore two *sample* intervals (20 s by default) and the subquery
//! step half of one (5 s).

use std::time::Duration;

/// The shortest window queried: shorter ones hold too few samples for a rate.
pub const MIN_WINDOW_SECS: u64 = 10;

/// Spacing of cAdvisor samples assumed when none is configured: the larger of Prometheus'
/// scrape interval and the kubelet's housekeeping interval (measured 6–10 s on the local
/// cluster, which scrapes every 5 s).
pub const DEFAULT_SAMPLE_INTERVAL: Duration = Duration::from_secs(10);

/// Where and over how long the figures are taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector<'a> {
    /// Namespace of the pods.
    pub namespace: &'a str,
    /// Regex matching the pod names (anchored by Prometheus).
    pub pods: &'a str,
}

/// Window and resolution of the queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Window length in whole seconds (≥ [`MIN_WINDOW_SECS`]).
    pub secs: u64,
    /// Spacing of cAdvisor samples in whole seconds (≥ 1), see [`DEFAULT_SAMPLE_INTERVAL`].
    pub sample_secs: u64,
}

impl Window {
    /// The window between two instants: rounded to whole seconds, at least
    /// [`MIN_WINDOW_SECS`].
    pub fn between(start: jiff::Timestamp, end: jiff::Timestamp, sample: Duration) -> Self {
        let ms = end
            .as_millisecond()
            .saturating_sub(start.as_millisecond())
            .max(0) as u64;
        Window {
            secs: ((ms + 500) / 1000).max(MIN_WINDOW_SECS),
            sample_secs: sample.as_secs().max(1),
        }
    }

    /// `W` as PromQL writes it, e.g. `30s`.
    pub fn range(&self) -> String {
        format!("{}s", self.secs)
    }

    /// Range of the short rates behind the CPU peak: 2 sample intervals.
    fn short(&self) -> String {
        format!("{}s", 2 * self.sample_secs)
    }

    /// Subquery resolution: half a sample interval (at least 1 s).
    fn step(&self) -> String {
        format!("{}s", (self.sample_secs / 2).max(1))
    }
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

/// Average CPU in cores over the window, summed over the pods.
pub fn cpu_avg(sel: &Selector<'_>, w: &Window) -> String {
    format!(
        "sum(rate(container_cpu_usage_seconds_total{}[{}]))",
        filter(sel),
        w.range()
    )
}

/// Highest short-range CPU rate (cores, summed over the pods) within the window.
pub fn cpu_peak(sel: &Selector<'_>, w: &Window) -> String {
    format!(
        "max_over_time(sum(rate(container_cpu_usage_seconds_total{}[{}]))[{}:{}])",
        filter(sel),
        w.short(),
        w.range(),
        w.step()
    )
}

fn memory(func: &str, sel: &Selector<'_>, w: &Window) -> String {
    format!(
        "{func}(sum(container_memory_working_set_bytes{})[{}:{}])",
        filter(sel),
        w.range(),
        w.step()
    )
}

/// Average working set in bytes over the window, summed over the pods.
pub fn memory_avg(sel: &Selector<'_>, w: &Window) -> String {
    memory("avg_over_time", sel, w)
}

/// Peak working set in bytes within the window, summed over the pods.
pub fn memory_peak(sel: &Selector<'_>, w: &Window) -> String {
    memory("max_over_time", sel, w)
}

/// Fraction of CFS periods in the window in which the pods were throttled.
pub fn cpu_throttled(sel: &Selector<'_>, w: &Window) -> String {
    let f = filter(sel);
    let r = w.range();
    format!(
        "sum(increase(container_cpu_cfs_throttled_periods_total{f}[{r}])) / sum(increase(container_cpu_cfs_periods_total{f}[{r}]))"
    )
}

/// A user's extra query with `$namespace`, `$pods` and `$window` substituted (values are
/// inserted verbatim: the user writes the quotes).
pub fn extra(query: &str, sel: &Selector<'_>, w: &Window) -> String {
    query
        .replace("$namespace", sel.namespace)
        .replace("$pods", sel.pods)
        .replace("$window", &w.range())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEL: Selector<'static> = Selector {
        namespace: "bench",
        pods: "run-express-1a2b3c4d-.*",
    };
    const W: Window = Window {
        secs: 30,
        sample_secs: 10,
    };
    const F: &str = r#"{namespace="bench", pod=~"run-express-1a2b3c4d-.*", container!="", container!="POD", image!=""}"#;

    fn ts(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
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
    fn window_rounds_to_whole_seconds() {
        let w = Window::between(
            ts("2026-11-30T14:00:00Z"),
            ts("2026-11-30T14:00:30.600Z"),
            DEFAULT_SAMPLE_INTERVAL,
        );
        assert_eq!(
            w,
            Window {
                secs: 31,
                sample_secs: 10
            }
        );
        assert_eq!(w.range(), "31s");
    }

    #[test]
    fn window_is_at_least_ten_seconds() {
        let t = ts("2026-11-30T14:00:00Z");
        assert_eq!(Window::between(t, t, Duration::from_secs(5)).secs, 10);
        let later = ts("2026-11-30T14:00:03Z");
        assert_eq!(Window::between(later, t, Duration::from_secs(5)).secs, 10);
    }

    #[test]
    fn cpu_average_is_a_rate_over_the_window() {
        assert_eq!(
            cpu_avg(&SEL, &W),
            format!("sum(rate(container_cpu_usage_seconds_total{F}[30s]))")
        );
    }

    #[test]
    fn cpu_peak_is_the_highest_short_rate_in_the_window() {
        assert_eq!(
            cpu_peak(&SEL, &W),
            format!("max_over_time(sum(rate(container_cpu_usage_seconds_total{F}[20s]))[30s:5s])")
        );
    }

    #[test]
    fn cpu_peak_short_range_follows_the_sample_interval() {
        let w = Window {
            secs: 60,
            sample_secs: 15,
        };
        assert!(cpu_peak(&SEL, &w).ends_with("[30s]))[60s:7s])"));
    }

    #[test]
    fn memory_average_and_peak_are_subqueries_over_the_working_set() {
        assert_eq!(
            memory_avg(&SEL, &W),
            format!("avg_over_time(sum(container_memory_working_set_bytes{F})[30s:5s])")
        );
        assert_eq!(
            memory_peak(&SEL, &W),
            format!("max_over_time(sum(container_memory_working_set_bytes{F})[30s:5s])")
        );
    }

    #[test]
    fn throttling_is_throttled_periods_over_periods() {
        assert_eq!(
            cpu_throttled(&SEL, &W),
            format!(
                "sum(increase(container_cpu_cfs_throttled_periods_total{F}[30s])) / sum(increase(container_cpu_cfs_periods_total{F}[30s]))"
            )
        );
    }

    #[test]
    fn extra_queries_get_namespace_pods_and_window() {
        assert_eq!(
            extra(
                r#"sum(rate(http_requests_total{namespace="$namespace", pod=~"$pods"}[$window]))"#,
                &SEL,
                &W
            ),
            r#"sum(rate(http_requests_total{namespace="bench", pod=~"run-express-1a2b3c4d-.*"}[30s]))"#
        );
    }
}
