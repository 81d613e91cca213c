//! What a scenario may put into an HTTP/1.1 request, as field errors. Pure.
//!
//! The grammar itself (method and header names are tokens, paths and header values hold no
//! control characters, `Content-Length` matches the body, no `Transfer-Encoding`, templates
//! whose placeholders and values agree) is [`benchrun_wire::request`]'s, which the load
//! generator checks again before it sends anything and whose CEL form the CRD carries
//! ([`crate::spec::Scenario`]). What this module adds is the API's own policy: the methods of
//! the CRD's enum, the body size a load pod's argument can carry, and a `values` entry that
//! sets exactly one kind.

use std::collections::BTreeMap;

use benchrun_wire::request::{self, Part, Request};

use super::FieldError;
use crate::Scenario;

pub use benchrun_wire::request::{
    is_header_value, is_path, is_token, MAX_HEADERS, MAX_HEADER_NAME_LEN, MAX_HEADER_VALUE_LEN,
    MAX_PATH_LEN,
};

/// Largest request body, in bytes (it is handed to the load pods as an argument).
pub const MAX_BODY_LEN: usize = 16384;

/// Methods a scenario may use (the CRD's enum).
pub const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

fn err(field: String, message: String) -> FieldError {
    FieldError { field, message }
}

/// Every problem with scenario `i`'s method, path, headers, body and values, each naming its
/// field (`spec.scenarios[0].headers[X-Id]`) and the fix.
pub fn scenario_errors(i: usize, s: &Scenario) -> Vec<FieldError> {
    let at = format!("spec.scenarios[{i}]");
    let mut e = Vec::new();
    if !METHODS.contains(&s.method.as_str()) {
        e.push(err(
            format!("{at}.method"),
            format!("{:?} is not one of {}", s.method, METHODS.join(", ")),
        ));
    }
    let body_len = s.body.as_ref().map_or(0, String::len);
    if body_len > MAX_BODY_LEN {
        e.push(err(
            format!("{at}.body"),
            format!("{body_len} bytes; at most {MAX_BODY_LEN} are allowed"),
        ));
    }
    let mut values = BTreeMap::new();
    for (name, v) in &s.values {
        match v.to_spec() {
            Some(spec) => {
                values.insert(name.clone(), spec);
            }
            None => e.push(err(
                format!("{at}.values[{}]", name.escape_debug()),
                "set exactly one of random ({min, max}), sequence ({start, end}) or pick (a list)"
                    .into(),
            )),
        }
    }
    let headers: Vec<(String, String)> = s
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // A value that sets no kind is reported above; its template is checked once it does.
    let complete = values.len() == s.values.len();
    let request = Request {
        // The method enum is reported above, in the API's words.
        method: "GET",
        path: &s.path,
        headers: &headers,
        body: s.body.as_deref().map(str::as_bytes),
        values: &values,
    };
    for p in request::problems(&request) {
        let field = match &p.part {
            Part::Method => format!("{at}.method"),
            Part::Path => format!("{at}.path"),
            Part::Headers => format!("{at}.headers"),
            Part::Header(name) => format!("{at}.headers[{}]", name.escape_debug()),
            Part::Values if !complete => continue,
            Part::Values => format!("{at}.values"),
        };
        e.push(err(field, p.message));
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
