//! Scenarios: the requests of a run. One run may mix several (method, path, headers, body),
//! each with a weight; the threads walk one weighted cycle (with `-n`, each its own
//! consecutive block of it), so the mix is exact. Pure: parsing, validation and the cycle,
//! no I/O.

use std::collections::BTreeMap;

use serde::Deserialize;

use benchrun_wire::request::{self, Request};

use crate::error::{Error, Result};
use crate::template::ValueSpec;

/// Most scenarios in one run (indices are kept small on the hot path).
pub const MAX_SCENARIOS: usize = 100;
/// Largest weight of one scenario.
pub const MAX_WEIGHT: u32 = 1000;

/// One kind of request of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    /// Name in the per-scenario results (unique in the run).
    pub name: String,
    /// HTTP method, e.g. `GET`.
    pub method: String,
    /// Path and query, starting with `/`.
    pub path: String,
    /// Request headers of this scenario, added after the run's common headers.
    pub headers: Vec<(String, String)>,
    /// Request body.
    pub body: Option<Vec<u8>>,
    /// Relative share of the requests (1..=1000).
    pub weight: u32,
    /// Values of the `{{name}}` placeholders in the path, header values and body, drawn per
    /// request (see [`crate::template`]). Without values, `{{` is sent as it is.
    pub values: BTreeMap<String, ValueSpec>,
}

/// The JSON form of one scenario in a `--scenarios` file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioSpec {
    name: String,
    #[serde(default = "default_method")]
    method: String,
    path: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default = "default_weight")]
    weight: u32,
    #[serde(default)]
    values: BTreeMap<String, ValueSpec>,
}

fn default_method() -> String {
    "GET".into()
}

fn default_weight() -> u32 {
    1
}

/// Parses a scenarios file: a JSON array of
/// `{"name", "path", "method"?, "headers"? {name: value}, "body"?, "weight"?, "values"?
/// {name: spec}}` (a spec as in [`ValueSpec`]).
/// The scenarios are validated with [`validate`].
pub fn parse_file(text: &str) -> Result<Vec<Scenario>> {
    let specs: Vec<ScenarioSpec> = serde_json::from_str(text).map_err(|e| {
        Error::InvalidConfig(format!(
            "scenarios file: {e} (expected a JSON array of {{\"name\", \"path\", \"method\", \
             \"headers\", \"body\", \"weight\", \"values\"}})"
        ))
    })?;
    let scenarios: Vec<Scenario> = specs
        .into_iter()
        .map(|s| Scenario {
            name: s.name,
            method: s.method.to_ascii_uppercase(),
            path: s.path,
            headers: s.headers.into_iter().collect(),
            body: s.body.map(String::into_bytes),
            weight: s.weight,
            values: s.values,
        })
        .collect();
    validate(&scenarios)?;
    Ok(scenarios)
}

/// Checks names and weights, and each request against the grammar all of benchrun shares
/// ([`benchrun_wire::request`]); the message names the scenario.
pub fn validate(scenarios: &[Scenario]) -> Result<()> {
    let bad = |m: String| Err(Error::InvalidConfig(m));
    if scenarios.is_empty() {
        return bad("give at least one scenario".into());
    }
    if scenarios.len() > MAX_SCENARIOS {
        return bad(format!(
            "{} scenarios given; at most {MAX_SCENARIOS} are supported",
            scenarios.len()
        ));
    }
    for (i, s) in scenarios.iter().enumerate() {
        let at = format!("scenarios[{i}] ({:?})", s.name);
        if s.name.is_empty() {
            return bad(format!("scenarios[{i}].name must not be empty"));
        }
        if scenarios[..i].iter().any(|o| o.name == s.name) {
            return bad(format!("{at}: names must be unique"));
        }
        let request = Request {
            method: &s.method,
            path: &s.path,
            headers: &s.headers,
            body: s.body.as_deref(),
            values: &s.values,
        };
        if let Some(p) = request::problems(&request).into_iter().next() {
            return bad(format!("{at}: {}", p.message));
        }
        if !(1..=MAX_WEIGHT).contains(&s.weight) {
            return bad(format!("{at}: weight must be between 1 and {MAX_WEIGHT}"));
        }
    }
    Ok(())
}

/// The order in which scenarios are sent: a cycle of scenario indices, `weight` times each,
/// spread out by smooth weighted round-robin (weights 3 and 1 give `0 0 1 0`, not `0 0 0 1`).
pub fn weighted_cycle(weights: &[u32]) -> Vec<u16> {
    let total: i64 = weights.iter().map(|&w| i64::from(w)).sum();
    let mut current = vec![0i64; weights.len()];
    let mut cycle = Vec::with_capacity(total as usize);
    for _ in 0..total {
        for (c, &w) in current.iter_mut().zip(weights) {
            *c += i64::from(w);
        }
        let (best, _) = current
            .iter()
            .enumerate()
            .max_by_key(|&(i, &c)| (c, std::cmp::Reverse(i)))
            .expect("at least one weight");
        current[best] -= total;
        cycle.push(best as u16);
    }
    cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_interleave_and_each_cycle_is_exact() {
        assert_eq!(weighted_cycle(&[1]), vec![0]);
        assert_eq!(weighted_cycle(&[3, 1]), vec![0, 0, 1, 0]);
        assert_eq!(weighted_cycle(&[1, 1, 1]), vec![0, 1, 2]);
        let c = weighted_cycle(&[5, 2, 3]);
        assert_eq!(c.len(), 10);
        for (i, w) in [5, 2, 3].iter().enumerate() {
            assert_eq!(c.iter().filter(|&&x| x as usize == i).count(), *w);
        }
        assert!(!c.windows(3).any(|w| w.iter().all(|&x| x == w[0])), "{c:?}");
    }

    #[test]
    fn a_file_parses_with_defaults() {
        let s = parse_file(
            r#"[{"name":"hello","path":"/hello","weight":3},
                {"name":"echo","method":"post","path":"/echo",
                 "headers":{"Content-Type":"application/json"},"body":"{}"}]"#,
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].method.as_str(), s[0].weight), ("GET", 3));
        assert_eq!(s[1].method, "POST");
        assert_eq!(
            s[1].headers,
            vec![("Content-Type".into(), "application/json".into())]
        );
        assert_eq!(s[1].body.as_deref(), Some(&b"{}"[..]));
    }

    #[test]
    fn explicit_content_length_matching_the_body_and_extension_methods_pass() {
        let s = parse_file(
            r#"[{"name":"a","method":"M-SEARCH","path":"/?q=%20","body":"{}",
                 "headers":{"Content-Length":"2","X-Tab":"a\tb"}}]"#,
        )
        .unwrap();
        assert_eq!(s[0].method, "M-SEARCH");
    }

    #[test]
    fn bad_files_name_the_scenario_and_the_fix() {
        let cases = [
            ("[]", "at least one scenario"),
            ("{}", "expected a JSON array"),
            (
                r#"[{"name":"a","path":"hello"}]"#,
                "path \"hello\" must start with '/'",
            ),
            (
                r#"[{"name":"a","path":"/"},{"name":"a","path":"/b"}]"#,
                "scenarios[1] (\"a\"): names must be unique",
            ),
            (r#"[{"name":"a","path":"/","weight":0}]"#, "weight must be"),
            (r#"[{"name":"a","path":"/","method":"G T"}]"#, "method"),
            (r#"[{"name":"a","path":"/","pth":"/"}]"#, "unknown field"),
            (
                r#"[{"name":"a","path":"/","headers":{"X:Y":"1"}}]"#,
                "header name \"X:Y\" must be an RFC 9110 token",
            ),
            (
                r#"[{"name":"a","path":"/","headers":{"X-A":"b\r\nX-Injected: 1"}}]"#,
                "scenarios[0] (\"a\"): header \"X-A\": the value",
            ),
            (
                r#"[{"name":"a","path":"/","headers":{"X-A":"b\u0000"}}]"#,
                "no control characters",
            ),
            (
                r#"[{"name":"a","path":"/a b\r\nHost: x"}]"#,
                "must start with '/' and hold at most 2048 visible ASCII",
            ),
            (r#"[{"name":"a","path":"/?q=a\tb"}]"#, "visible ASCII"),
            (
                r#"[{"name":"a","path":"/","method":"GET / HTTP/1.1\r\n"}]"#,
                "must be an RFC 9110 token",
            ),
            (
                r#"[{"name":"a","path":"/","body":"{}","headers":{"content-length":"5"}}]"#,
                "Content-Length \"5\" does not match the body (2 bytes)",
            ),
            (
                r#"[{"name":"a","path":"/","headers":{"Content-Length":"3"}}]"#,
                "does not match the body (0 bytes)",
            ),
            (
                r#"[{"name":"a","path":"/","body":"{}","headers":{"Transfer-Encoding":"chunked"}}]"#,
                "remove the Transfer-Encoding header",
            ),
        ];
        for (text, want) in cases {
            let err = parse_file(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
