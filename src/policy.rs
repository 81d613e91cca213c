//! The operator's allow-lists: which Prometheus URLs a run may have the operator query,
//! which images a run may have the operator start (targets, backing services, seeding Jobs)
//! and where its pods may go ([`crate::placement_policy`]).
//!
//! Pure. RBAC decides who may create a BenchmarkRun; these lists bound what such a run can make
//! the operator do with the operator's own network position and credentials. The controller
//! checks them before it observes or creates anything for a run that has not finished, so a
//! refused run sends no request to the URL it names and starts no pod of the image it names.

use benchrun_api::{BenchmarkRunSpec, FieldError};

use crate::placement_policy::PlacementPolicy;

/// Flag and environment variable that extend the Prometheus allow-list.
pub const PROMETHEUS_FLAG: &str = "--allowed-prometheus-urls (BENCHRUN_ALLOWED_PROMETHEUS_URLS)";
/// Flag and environment variable of the image allow-list.
pub const IMAGE_FLAG: &str = "--allowed-image-prefixes (BENCHRUN_ALLOWED_IMAGE_PREFIXES)";
/// Flag and environment variable that let extra queries read every namespace.
pub const CLUSTER_WIDE_QUERIES_FLAG: &str =
    "--allow-cluster-wide-queries (BENCHRUN_ALLOW_CLUSTER_WIDE_QUERIES)";

/// What runs may name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Normalized Prometheus base URLs runs may name; `None` allows any URL.
    prometheus_urls: Option<Vec<String>>,
    /// Prefixes every image a run names (targets, services, seeds) must start with; empty
    /// allows every image.
    image_prefixes: Vec<String>,
    /// Extra queries run as written, over every namespace (a single-tenant install); otherwise
    /// they are confined to the run's namespace ([`crate::promql_scope`]).
    cluster_wide_queries: bool,
    /// Which node labels runs may select and which taints they may tolerate.
    placement: PlacementPolicy,
}

impl Policy {
    /// The operator's own Prometheus (`default_prometheus`) plus `extra_prometheus` URLs, of
    /// which `*` allows any; images starting with one of `image_prefixes` (empty: any image).
    /// Blank entries are ignored.
    pub fn new(
        default_prometheus: &str,
        extra_prometheus: &[String],
        image_prefixes: &[String],
    ) -> Self {
        let extra = extra_prometheus
            .iter()
            .map(|u| u.trim())
            .filter(|u| !u.is_empty());
        let prometheus_urls = if extra.clone().any(|u| u == "*") {
            None
        } else {
            let mut urls: Vec<String> = std::iter::once(default_prometheus)
                .chain(extra)
                .map(normalize_url)
                .collect();
            urls.sort();
            urls.dedup();
            Some(urls)
        };
        let image_prefixes = image_prefixes
            .iter()
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        Policy {
            prometheus_urls,
            image_prefixes,
            cluster_wide_queries: false,
            placement: PlacementPolicy::default(),
        }
    }

    /// This policy, with `placement` deciding where runs may put their pods (default: each
    /// pod on the nodes of its own role, no toleration).
    pub fn with_placement(mut self, placement: PlacementPolicy) -> Self {
        self.placement = placement;
        self
    }

    /// This policy, with extra queries run over every namespace when `allow` is true.
    pub fn with_cluster_wide_queries(mut self, allow: bool) -> Self {
        self.cluster_wide_queries = allow;
        self
    }

    /// Whether extra queries are confined to their run's namespace.
    pub fn confines_queries(&self) -> bool {
        !self.cluster_wide_queries
    }

    /// Every way `spec` exceeds the allow-lists, each naming the field and how to allow it.
    pub fn check(&self, spec: &BenchmarkRunSpec) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let url = spec.prometheus.as_ref().and_then(|p| p.url.as_deref());
        if let (Some(url), Some(allowed)) = (url, &self.prometheus_urls) {
            if !allowed.contains(&normalize_url(url)) {
                errors.push(FieldError {
                    field: "spec.prometheus.url".into(),
                    message: format!(
                        "{url:?} is not a Prometheus this operator may query for runs, so no request was sent to it: \
                         remove spec.prometheus.url to use the operator's own Prometheus, \
                         or ask the operator's administrator to add the URL to {PROMETHEUS_FLAG}"
                    ),
                });
            }
        }
        for (field, image) in images(spec) {
            if !self.image_allowed(image) {
                errors.push(FieldError {
                    field,
                    message: format!(
                        "{image:?} does not start with an allowed prefix ({}): use an image from one of them, \
                         or ask the operator's administrator to add its registry to {IMAGE_FLAG}",
                        self.image_prefixes.join(", ")
                    ),
                });
            }
        }
        if self.confines_queries() {
            confinable(spec, &mut errors);
        }
        self.placement.check(spec, &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

impl Policy {
    /// Whether `image` starts with an allowed prefix (any image when the list is empty).
    fn image_allowed(&self, image: &str) -> bool {
        self.image_prefixes.is_empty() || self.image_prefixes.iter().any(|p| image.starts_with(p))
    }
}

/// Every image the operator would start a container from for `spec`, with the field that names
/// it: each target's, each backing service's and each service's seeding image (a seed without
/// an image runs the service's, checked as `spec.services[i].image`). The load generator's
/// image is the operator's own (`--load-image`), not the run's.
fn images(spec: &BenchmarkRunSpec) -> Vec<(String, &str)> {
    let targets = spec
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("spec.targets[{i}].image"), t.image.as_str()));
    let services = spec.services.iter().enumerate().flat_map(|(i, s)| {
        let seed = s.seed.as_ref().and_then(|d| d.image.as_deref());
        std::iter::once((format!("spec.services[{i}].image"), s.image.as_str()))
            .chain(seed.map(|image| (format!("spec.services[{i}].seed.image"), image)))
    });
    targets.chain(services).collect()
}

/// Every extra query must parse, so that it can be confined to the run's namespace: each is
/// confined with placeholder values for `$namespace`, `$pods` and `$window`.
fn confinable(spec: &BenchmarkRunSpec, errors: &mut Vec<FieldError>) {
    let Some(p) = &spec.prometheus else { return };
    let sel = crate::promql::Selector {
        namespace: "namespace",
        pods: "pods-.*",
    };
    for (i, q) in p.extra_queries.iter().enumerate() {
        let text = crate::promql::extra(&q.query, &sel, "30s");
        if let Err(e) = crate::promql_scope::confine(&text, "namespace") {
            errors.push(FieldError {
                field: format!("spec.prometheus.extraQueries[{i}].query"),
                message: format!(
                    "{e}: extra queries are confined to the run's namespace, which needs a query the PromQL parser reads; \
                     correct the query, or ask the operator's administrator for {CLUSTER_WIDE_QUERIES_FLAG}, which runs them as written"
                ),
            });
        }
    }
}

/// The form URLs are compared in: parsed (lowercase scheme and host, default port dropped)
/// and without a trailing slash; the trimmed text when it does not parse.
fn normalize_url(url: &str) -> String {
    let trimmed = url.trim();
    let parsed = reqwest::Url::parse(trimmed).map(String::from);
    parsed
        .as_deref()
        .unwrap_or(trimmed)
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
mod query_tests {
    use super::*;

    fn with_query() -> BenchmarkRunSpec {
        serde_json::from_value(serde_json::json!({
            "targets": [{"name": "t", "image": "img:1"}],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": {"duration": "10s"},
            "prometheus": {"extraQueries": [
                {"name": "ok", "query": "sum(rate(x{pod=~\"$pods\"}[$window]))"},
                {"name": "bad", "query": "sum(rate(x[$window])"}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn a_query_the_parser_cannot_confine_is_refused_naming_the_field_and_the_flag() {
        let errs = Policy::new("http://p:9090", &[], &[])
            .check(&with_query())
            .unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.prometheus.extraQueries[1].query");
        assert!(
            errs[0].message.contains("cannot be parsed as PromQL"),
            "{errs:?}"
        );
        assert!(
            errs[0].message.contains(CLUSTER_WIDE_QUERIES_FLAG),
            "{errs:?}"
        );
    }

    #[test]
    fn with_cluster_wide_queries_allowed_queries_are_not_parsed() {
        let p = Policy::new("http://p:9090", &[], &[]).with_cluster_wide_queries(true);
        assert!(!p.confines_queries());
        assert_eq!(p.check(&with_query()), Ok(()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "http://prometheus.monitoring.svc:9090";

    fn spec(url: Option<&str>, images: &[&str]) -> BenchmarkRunSpec {
        let targets: Vec<_> = images
            .iter()
            .enumerate()
            .map(|(i, image)| serde_json::json!({"name": format!("t{i}"), "image": image}))
            .collect();
        let mut v = serde_json::json!({
            "targets": targets,
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "load": {"duration": "10s"},
        });
        if let Some(url) = url {
            v["prometheus"] = serde_json::json!({"url": url});
        }
        serde_json::from_value(v).unwrap()
    }

    fn fields(r: Result<(), Vec<FieldError>>) -> Vec<String> {
        r.err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.field)
            .collect()
    }

    #[test]
    fn by_default_only_the_operators_own_prometheus_is_allowed() {
        let p = Policy::new(OWN, &[], &[]);
        assert_eq!(p.check(&spec(None, &["img:1"])), Ok(()));
        assert_eq!(p.check(&spec(Some(OWN), &["img:1"])), Ok(()));
        let err = p
            .check(&spec(Some("http://169.254.169.254/latest"), &["img:1"]))
            .unwrap_err();
        assert_eq!(err[0].field, "spec.prometheus.url");
        let m = &err[0].message;
        assert!(m.contains("no request was sent"), "{m}");
        assert!(m.contains("remove spec.prometheus.url"), "{m}");
        assert!(m.contains("BENCHRUN_ALLOWED_PROMETHEUS_URLS"), "{m}");
        assert!(!m.contains(OWN), "the allowed URLs stay private: {m}");
    }

    #[test]
    fn urls_compare_without_case_default_port_or_trailing_slash() {
        let p = Policy::new(OWN, &["http://thanos.obs:80/prom/".into()], &[]);
        for url in [
            "HTTP://Prometheus.Monitoring.svc:9090/",
            "http://thanos.obs/prom",
            " http://thanos.obs:80/prom ",
        ] {
            assert_eq!(p.check(&spec(Some(url), &["i:1"])), Ok(()), "{url}");
        }
        for url in [
            "http://thanos.obs/prom/other",
            "http://thanos.obs:8080/prom",
            "https://thanos.obs/prom",
            "http://thanos.obs@evil.example/prom",
        ] {
            assert_eq!(
                fields(p.check(&spec(Some(url), &["i:1"]))),
                ["spec.prometheus.url"],
                "{url}"
            );
        }
    }

    #[test]
    fn a_star_allows_any_prometheus() {
        let p = Policy::new(OWN, &["*".into()], &[]);
        assert_eq!(p.check(&spec(Some("http://anything:1"), &["i:1"])), Ok(()));
    }

    #[test]
    fn images_must_start_with_an_allowed_prefix_when_a_list_is_set() {
        let open = Policy::new(OWN, &[], &[]);
        assert_eq!(open.check(&spec(None, &["docker.io/x:1"])), Ok(()));
        let p = Policy::new(
            OWN,
            &[],
            &[
                "registry.example.com/bench/".into(),
                " benchrun.local/ ".into(),
                "".into(),
            ],
        );
        let s = spec(
            None,
            &[
                "benchrun.local/benchrun-demo:0.1.0",
                "docker.io/evil:1",
                "registry.example.com/bench/a:1",
            ],
        );
        let err = p.check(&s).unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].field, "spec.targets[1].image");
        assert!(err[0]
            .message
            .contains("registry.example.com/bench/, benchrun.local/"));
        assert!(err[0].message.contains("BENCHRUN_ALLOWED_IMAGE_PREFIXES"));
    }

    /// A run of one allowed target with `services` (JSON) added.
    fn with_services(services: serde_json::Value) -> BenchmarkRunSpec {
        let mut v = serde_json::to_value(spec(None, &["benchrun.local/web:1"])).unwrap();
        v["services"] = services;
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_backing_services_image_must_start_with_an_allowed_prefix() {
        let p = Policy::new(OWN, &[], &["benchrun.local/".into()]);
        let s = with_services(serde_json::json!([
            {"name": "db", "image": "benchrun.local/db:1"},
            {"name": "cache", "image": "docker.io/redis:7"},
        ]));
        let err = p.check(&s).unwrap_err();
        assert_eq!(err.len(), 1, "{err:?}");
        assert_eq!(err[0].field, "spec.services[1].image");
        assert!(err[0].message.contains("\"docker.io/redis:7\""), "{err:?}");
        assert!(err[0].message.contains("benchrun.local/"), "{err:?}");
        assert!(err[0].message.contains(IMAGE_FLAG), "{err:?}");
        let open = Policy::new(OWN, &[], &[]);
        assert_eq!(open.check(&s), Ok(()));
    }

    #[test]
    fn a_seeding_image_must_start_with_an_allowed_prefix() {
        let p = Policy::new(OWN, &[], &["benchrun.local/".into()]);
        let s = with_services(serde_json::json!([
            {"name": "db", "image": "benchrun.local/db:1",
             "seed": {"image": "docker.io/evil/loader:1", "args": ["load"]}},
        ]));
        assert_eq!(fields(p.check(&s)), ["spec.services[0].seed.image"]);
        // A seed without its own image runs the service's, which is checked as the service's.
        let s = with_services(serde_json::json!([
            {"name": "db", "image": "docker.io/evil/db:1", "seed": {"args": ["load"]}},
        ]));
        assert_eq!(fields(p.check(&s)), ["spec.services[0].image"]);
        let s = with_services(serde_json::json!([
            {"name": "db", "image": "benchrun.local/db:1",
             "seed": {"image": "benchrun.local/loader:1", "args": ["load"]}},
        ]));
        assert_eq!(p.check(&s), Ok(()));
    }

    #[test]
    fn every_image_outside_the_list_is_named_in_spec_order() {
        let p = Policy::new(OWN, &[], &["benchrun.local/".into()]);
        let mut v = serde_json::to_value(spec(None, &["evil/web:1"])).unwrap();
        v["services"] = serde_json::json!([
            {"name": "db", "image": "evil/db:1", "seed": {"image": "evil/seed:1", "args": ["x"]}},
        ]);
        let s: BenchmarkRunSpec = serde_json::from_value(v).unwrap();
        assert_eq!(
            fields(p.check(&s)),
            [
                "spec.targets[0].image",
                "spec.services[0].image",
                "spec.services[0].seed.image"
            ]
        );
    }

    #[test]
    fn a_run_breaking_both_lists_hears_of_both() {
        let p = Policy::new(OWN, &[], &["benchrun.local/".into()]);
        assert_eq!(
            fields(p.check(&spec(Some("http://x:9090"), &["evil:1"]))),
            ["spec.prometheus.url", "spec.targets[0].image"]
        );
    }
}
