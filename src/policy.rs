//! The operator's allow-lists: which Prometheus URLs a run may have the operator query and
//! which target images a run may deploy.
//!
//! Pure. RBAC decides who may create a BenchmarkRun; these lists bound what such a run can make
//! the operator do with the operator's own network position and credentials. The controller
//! checks them before it observes or creates anything for a run that has not finished, so a
//! refused run sends no request to the URL it names and starts no pod of the image it names.

use benchrun_api::{BenchmarkRunSpec, FieldError};

/// Flag and environment variable that extend the Prometheus allow-list.
pub const PROMETHEUS_FLAG: &str = "--allowed-prometheus-urls (BENCHRUN_ALLOWED_PROMETHEUS_URLS)";
/// Flag and environment variable of the image allow-list.
pub const IMAGE_FLAG: &str = "--allowed-image-prefixes (BENCHRUN_ALLOWED_IMAGE_PREFIXES)";

/// What runs may name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Normalized Prometheus base URLs runs may name; `None` allows any URL.
    prometheus_urls: Option<Vec<String>>,
    /// Prefixes a target image must start with; empty allows every image.
    image_prefixes: Vec<String>,
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
        }
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
        if !self.image_prefixes.is_empty() {
            for (i, t) in spec.targets.iter().enumerate() {
                if !self.image_prefixes.iter().any(|p| t.image.starts_with(p)) {
                    errors.push(FieldError {
                        field: format!("spec.targets[{i}].image"),
                        message: format!(
                            "{:?} does not start with an allowed prefix ({}): use an image from one of them, \
                             or ask the operator's administrator to add its registry to {IMAGE_FLAG}",
                            t.image,
                            self.image_prefixes.join(", ")
                        ),
                    });
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
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

    #[test]
    fn a_run_breaking_both_lists_hears_of_both() {
        let p = Policy::new(OWN, &[], &["benchrun.local/".into()]);
        assert_eq!(
            fields(p.check(&spec(Some("http://x:9090"), &["evil:1"]))),
            ["spec.prometheus.url", "spec.targets[0].image"]
        );
    }
}
