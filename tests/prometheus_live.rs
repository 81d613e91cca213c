//! The PromQL of `benchrun::promql` against a real Prometheus scraping cAdvisor.
//!
//! Ignored by default: it needs the local cluster (`hack/cluster.sh up`) and a CPU-burning pod
//! with a 500m limit that has run for a minute. `make e2e` runs them with
//! `tests/prometheus-live.sh`, which does the following; by hand:
//!
//! ```text
//! eval "$(hack/cluster.sh env)"
//! kubectl create namespace promql-check
//! kubectl -n promql-check run burner --image=benchrun.local/busybox:1.35 \
//!   --image-pull-policy=IfNotPresent --restart=Never \
//!   --overrides='{"spec":{"containers":[{"name":"burner","image":"benchrun.local/busybox:1.35","imagePullPolicy":"IfNotPresent","command":["sh","-c","while :; do :; done"],"resources":{"limits":{"cpu":"500m","memory":"64Mi"}}}]}}'
//! sleep 75
//! cargo test --release --workspace --test prometheus_live -- --ignored --nocapture
//! kubectl delete namespace promql-check
//! ```
//!
//! `PROMETHEUS_URL` names the Prometheus; `PROMQL_CHECK_NAMESPACE` and `PROMQL_CHECK_POD`
//! override the namespace (`promql-check`) and pod regex (`burner`).

use std::time::Duration;

use benchrun::prometheus::{Prometheus, ServiceQuery, UsageQuery};

fn env(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

/// The local Prometheus, from `PROMETHEUS_URL`.
fn prometheus() -> Prometheus {
    let url = std::env::var("PROMETHEUS_URL").expect("PROMETHEUS_URL is set");
    Prometheus::new(&url).unwrap()
}

/// The burner pod's usage over the `window` before `end`; no load pod matches, so the load
/// figures must be missing, not zero.
fn burner_query(
    end: jiff::Timestamp,
    window: jiff::SignedDuration,
    extra: Vec<benchrun_api::ExtraQuery>,
) -> UsageQuery {
    UsageQuery {
        namespace: env("PROMQL_CHECK_NAMESPACE", "promql-check"),
        target_pods: env("PROMQL_CHECK_POD", "burner"),
        load_pods: "no-such-pod-.*".into(),
        start: end - window,
        end,
        target_cpu_limit_cores: 0.5,
        target_pod_cpu_limit_cores: 0.5,
        before_load: Some(end - window),
        extra,
        confine_extra: false,
        // The same pod read as a backing service: its figures must be the target's.
        services: vec![ServiceQuery {
            name: "burner".into(),
            pods: env("PROMQL_CHECK_POD", "burner"),
            cpu_limit_cores: 0.5,
        }],
    }
}

#[tokio::test]
#[ignore = "needs the local cluster's Prometheus and a CPU-burning pod (see the module doc)"]
async fn a_pod_burning_half_a_core_reads_as_half_a_core() {
    let prom = prometheus();
    let end = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(10);
    let q = burner_query(
        end,
        jiff::SignedDuration::from_secs(45),
        vec![benchrun_api::ExtraQuery {
            name: "containers".into(),
            query: r#"count(container_cpu_usage_seconds_total{namespace="$namespace", pod=~"$pods", container!="", container!="POD", image!=""})"#.into(),
        }],
    );
    let (u, extra) = prom.usage(&q).await.unwrap();
    println!("{u:#?}\n{extra:?}");
    let avg = u.cpu_avg_cores.expect("CPU average");
    assert!((0.4..=0.55).contains(&avg), "avg {avg} ≈ 0.5 cores");
    let peak = u.cpu_peak_cores.expect("CPU peak");
    assert!(peak >= avg && peak <= 0.7, "peak {peak} vs avg {avg}");
    let interval = u.sample_interval_seconds.expect("sample spacing");
    assert!((1.0..=20.0).contains(&interval), "interval {interval}");
    assert!(u.cpu_samples.expect("CPU samples") >= 2, "{u:?}");
    assert!(u.memory_samples.expect("memory samples") >= 2, "{u:?}");
    assert!(u.cpu_avg_of_limit.unwrap() > 0.8);
    assert!(u.cpu_throttled.expect("throttling") > 0.1);
    assert!(u.memory_avg_bytes.expect("memory avg") > 0);
    assert!(u.memory_peak_bytes.unwrap() >= u.memory_avg_bytes.unwrap());
    // Nothing matches the load pods; their own CPU comes from the generator, never from here.
    assert_eq!(u.load_cpu_cores_prometheus, None);
    assert_eq!(u.load_cpu_cores, None);
    // Without `image!=""` cAdvisor's second, image-less series of the container would make 2.
    assert_eq!(extra.get("containers"), Some(&1.0));
    // One pod: no per-pod list; RSS and the working set before the window are read.
    assert!(u.pods.is_empty(), "{:?}", u.pods);
    let rss = u.memory_rss_peak_bytes.expect("RSS peak");
    assert!(
        rss > 0 && rss <= u.memory_peak_bytes.unwrap() * 2,
        "RSS {rss}"
    );
    assert!(u.memory_before_load_bytes.expect("memory before") > 0);
    let s = &u.services[0];
    assert_eq!(s.name, "burner");
    assert_eq!(s.cpu_avg_cores, u.cpu_avg_cores, "{s:?}");
    assert_eq!(s.cpu_avg_of_limit, u.cpu_avg_of_limit, "{s:?}");
    assert_eq!(s.memory_peak_bytes, u.memory_peak_bytes, "{s:?}");
}

#[tokio::test]
#[ignore = "needs the local cluster's Prometheus and a CPU-burning pod (see the module doc)"]
async fn a_window_shorter_than_the_sample_spacing_holds_at_most_one_sample_and_says_so() {
    // The local cluster's kubelets sample every 1-2 s (housekeeping 1 s plus up to as much
    // again of jitter): an 800 ms window holds one sample at most.
    let prom = prometheus();
    let end = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(20);
    let q = burner_query(end, jiff::SignedDuration::from_millis(800), Vec::new());
    let (u, _) = prom.usage(&q).await.unwrap();
    println!("{u:#?}");
    let n = u.cpu_samples.expect("the burner's series was found");
    assert!(n <= 1, "{n} samples in 800 ms");
    assert_eq!(u.cpu_avg_cores.is_some(), n == 1, "{u:?}");
    assert!(u.sample_interval_seconds.expect("spacing") > 0.8);
}

#[tokio::test]
#[ignore = "needs the local cluster's Prometheus"]
async fn a_bad_query_is_an_error_that_names_it() {
    let err = prometheus()
        .instant("sum(rate(", jiff::Timestamp::now())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bad_data"), "{err}");
}

#[tokio::test]
#[ignore = "needs nothing listening on 127.0.0.1:9"]
async fn an_unreachable_prometheus_is_an_error() {
    let prom = Prometheus::new("http://127.0.0.1:9")
        .unwrap()
        .with_sample_interval(Duration::from_secs(5));
    let err = prom
        .instant("up", jiff::Timestamp::now())
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with("failed to reach Prometheus"),
        "{err}"
    );
}
