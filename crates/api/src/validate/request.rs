//! What a scenario may put into an HTTP/1.1 request. Pure.
//!
//! A scenario's method, path and headers are written into the request line and header block
//! as they are, so a CR or LF in any of them would start a header or a request of the spec's
//! choosing (request smuggling). These checks keep every piece within its RFC 9110/9112
//! grammar; the CRD's CEL rules say the same at admission ([`crate::spec::Scenario`]) and the
//! load generator checks them again before it sends anything.

use super::FieldError;
use crate::Scenario;

/// Longest scenario path (path and query), in bytes.
pub const MAX_PATH_LEN: usize = 2048;
/// Most headers of one scenario.
pub const MAX_HEADERS: usize = 16;
/// Longest header name, in bytes.
pub const MAX_HEADER_NAME_LEN: usize = 128;
/// Longest header value, in bytes.
pub const MAX_HEADER_VALUE_LEN: usize = 4096;
/// Largest request body, in bytes (it is handed to the load pods as an argument).
pub const MAX_BODY_LEN: usize = 16384;

/// Methods a scenario may use (the CRD's enum).
pub const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

// The load generator's own grammar, so the operator refuses exactly what it would.
pub use benchrun_load::scenario::{is_path, is_token};

/// True for a header value without control characters other than horizontal tab.
pub fn is_header_value(v: &str) -> bool {
    http::HeaderValue::from_bytes(v.as_bytes()).is_ok()
}

fn err(field: String, message: String) -> FieldError {
    FieldError { field, message }
}

/// Every problem with scenario `i`'s method, path, headers and body, each naming its field
/// (`spec.scenarios[0].headers[X-Id]`) and the fix.
pub fn scenario_errors(i: usize, s: &Scenario) -> Vec<FieldError> {
    let at = format!("spec.scenarios[{i}]");
    let mut e = Vec::new();
    if !METHODS.contains(&s.method.as_str()) {
        e.push(err(
            format!("{at}.method"),
            format!("{:?} is not one of {}", s.method, METHODS.join(", ")),
        ));
    }
    if !is_path(&s.path) || s.path.len() > MAX_PATH_LEN {
        e.push(err(
            format!("{at}.path"),
            format!("{:?} must start with '/' and hold at most {MAX_PATH_LEN} visible ASCII characters: no spaces or control characters (percent-encode them, e.g. %20), e.g. /hello?x=1", s.path),
        ));
    }
    if s.headers.len() > MAX_HEADERS {
        e.push(err(
            format!("{at}.headers"),
            format!(
                "{} headers; at most {MAX_HEADERS} are allowed",
                s.headers.len()
            ),
        ));
    }
    let body_len = s.body.as_ref().map_or(0, String::len);
    // A body with placeholders gets its Content-Length per request: the template check
    // below refuses an explicit one.
    let templated_body = !s.values.is_empty()
        && benchrun_load::template::body_has_values(s.body.as_deref().map(str::as_bytes));
    if body_len > MAX_BODY_LEN {
        e.push(err(
            format!("{at}.body"),
            format!("{body_len} bytes; at most {MAX_BODY_LEN} are allowed"),
        ));
    }
    for (name, value) in &s.headers {
        e.extend(header_errors(&at, name, value, body_len, templated_body));
    }
    if !s.values.is_empty() {
        e.extend(template_errors(&at, s));
    }
    e
}

/// Problems of the scenario's placeholders and values, as the load generator would find them.
fn template_errors(at: &str, s: &Scenario) -> Option<FieldError> {
    let mut values = std::collections::BTreeMap::new();
    for (name, v) in &s.values {
        let Some(spec) = v.to_spec() else {
            return Some(err(
                format!("{at}.values[{}]", name.escape_debug()),
                "set exactly one of random ({min, max}), sequence ({start, end}) or pick (a list)"
                    .into(),
            ));
        };
        values.insert(name.clone(), spec);
    }
    let headers: Vec<(&str, &str)> = s
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let body = s.body.as_deref().map(str::as_bytes);
    benchrun_load::template::check_request(&s.path, &headers, body, &values)
        .err()
        .map(|why| err(format!("{at}.values"), why))
}

fn header_errors(
    at: &str,
    name: &str,
    value: &str,
    body_len: usize,
    templated_body: bool,
) -> Vec<FieldError> {
    let field = format!("{at}.headers[{}]", name.escape_debug());
    let mut e = Vec::new();
    if !is_token(name) || name.len() > MAX_HEADER_NAME_LEN {
        e.push(err(
            field.clone(),
            format!("the header name must be an RFC 9110 token of at most {MAX_HEADER_NAME_LEN} characters (letters, digits and !#$%&'*+-.^_`|~; no spaces, colons or control characters), e.g. X-Request-Id"),
        ));
    }
    if !is_header_value(value) || value.len() > MAX_HEADER_VALUE_LEN {
        e.push(err(
            field.clone(),
            format!("the value {value:?} must hold at most {MAX_HEADER_VALUE_LEN} bytes and no control characters (CR, LF, NUL, ...; only tab is allowed): put each header in its own entry"),
        ));
    }
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    if name.eq_ignore_ascii_case("content-length")
        && !templated_body
        && !(digits && value.parse::<usize>().ok() == Some(body_len))
    {
        e.push(err(
            field.clone(),
            format!("Content-Length {value:?} does not match the body ({body_len} bytes): remove the header (the load generator sets it) or make it the body's length in bytes"),
        ));
    }
    if name.eq_ignore_ascii_case("transfer-encoding") {
        e.push(err(
            field,
            "the load generator frames bodies with Content-Length: remove the Transfer-Encoding header".into(),
        ));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Scenario {
        Scenario {
            name: "s".into(),
            method: "POST".into(),
            path: path.into(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: body.map(Into::into),
            values: Default::default(),
        }
    }

    fn fields(s: &Scenario) -> Vec<String> {
        scenario_errors(0, s).into_iter().map(|e| e.field).collect()
    }

    fn templated(path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Scenario {
        let mut s = scenario(path, headers, body);
        s.values.insert(
            "id".into(),
            crate::RequestValue {
                random: Some(crate::RandomRange { min: 1, max: 10 }),
                ..Default::default()
            },
        );
        s
    }

    #[test]
    fn templates_are_checked_by_the_load_generators_own_rules() {
        assert!(fields(&templated("/doc/{{id}}", &[], Some("{\"id\": {{id}}}"))).is_empty());
        let errs = scenario_errors(0, &templated("/doc/{{idd}}", &[], None));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.scenarios[0].values");
        assert!(
            errs[0].message.contains("{{idd}} names no declared value"),
            "{}",
            errs[0]
        );
        // A body with placeholders has its Content-Length set per request: one given is
        // refused once, by the template check, not also as a mismatch.
        let errs = scenario_errors(
            0,
            &templated("/", &[("Content-Length", "6")], Some("{{id}}")),
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].message.contains("set per request"), "{}", errs[0]);
        let mut neither = templated("/{{id}}", &[], None);
        neither.values.get_mut("id").unwrap().random = None;
        assert_eq!(fields(&neither), ["spec.scenarios[0].values[id]"]);
        // Without values, braces are plain text.
        assert!(fields(&scenario("/{{x}}", &[], None)).is_empty());
    }

    #[test]
    fn ordinary_scenarios_pass() {
        let s = scenario(
            "/compute?n=10000&q=%20a",
            &[
                ("Content-Type", "application/json; charset=utf-8\tx"),
                ("Content-Length", "2"),
            ],
            Some("{}"),
        );
        assert_eq!(fields(&s), Vec::<String>::new());
    }

    #[test]
    fn crlf_in_a_header_value_is_refused_naming_the_header() {
        let s = scenario("/", &[("X-A", "b\r\nX-Injected: 1")], None);
        let errs = scenario_errors(0, &s);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "spec.scenarios[0].headers[X-A]");
        assert!(
            errs[0].message.contains("no control characters"),
            "{}",
            errs[0]
        );
        for bad in ["a\rb", "a\nb", "a\0b", "a\x1bb", "a\x7fb"] {
            assert!(!is_header_value(bad), "{bad:?}");
        }
    }

    #[test]
    fn header_names_must_be_tokens() {
        for bad in ["", "X A", "X:A", "X\r\nA", "X(A)", "Ä"] {
            let s = scenario("/", &[(bad, "1")], None);
            assert_eq!(
                fields(&s),
                [format!("spec.scenarios[0].headers[{}]", bad.escape_debug())],
                "{bad:?}"
            );
        }
        assert!(is_token("X-Request-Id") && is_token("!#$%&'*+-.^_`|~09az"));
    }

    #[test]
    fn paths_with_spaces_or_control_characters_are_refused() {
        for bad in [
            "/a b",
            "/a\r\nHost: x",
            "/?q=a b",
            "/\t",
            "hello",
            "/café",
            "",
        ] {
            let s = scenario(bad, &[], None);
            assert_eq!(fields(&s), ["spec.scenarios[0].path"], "{bad:?}");
        }
        let long = format!("/{}", "a".repeat(MAX_PATH_LEN));
        assert_eq!(
            fields(&scenario(&long, &[], None)),
            ["spec.scenarios[0].path"]
        );
    }

    #[test]
    fn content_length_must_match_the_body_and_transfer_encoding_is_refused() {
        let s = scenario("/", &[("content-length", "5")], Some("{}"));
        let errs = scenario_errors(0, &s);
        assert_eq!(errs[0].field, "spec.scenarios[0].headers[content-length]");
        assert!(errs[0].message.contains("(2 bytes)"), "{}", errs[0]);
        assert_eq!(
            fields(&scenario("/", &[("Content-Length", "3")], None)).len(),
            1
        );
        assert_eq!(
            fields(&scenario("/", &[("Content-Length", "0")], None)).len(),
            0
        );
        assert_eq!(
            fields(&scenario("/", &[("Content-Length", "+2")], Some("{}"))).len(),
            1
        );
        let te = scenario("/", &[("Transfer-Encoding", "chunked")], Some("{}"));
        assert_eq!(
            fields(&te),
            ["spec.scenarios[0].headers[Transfer-Encoding]"]
        );
    }

    #[test]
    fn methods_outside_the_enum_are_refused() {
        let mut s = scenario("/", &[], None);
        s.method = "GET / HTTP/1.1\r\n".into();
        assert_eq!(fields(&s), ["spec.scenarios[0].method"]);
    }
}
