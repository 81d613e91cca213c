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
        method: &s.method,
        path: &s.path,
        headers: &headers,
        body: s.body.as_deref().map(str::as_bytes),
        values: &values,
    };
    for p in request::problems(&request) {
        let field = match &p.part {
            // The enum above admits only tokens and says so in the API's words.
            Part::Method => continue,
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
    //! The grammar is tested in `benchrun_wire::request`; these check that each problem lands
    //! on its field, and the API's own policy.
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

    fn with_id(mut s: Scenario, random: Option<crate::RandomRange>) -> Scenario {
        let value = crate::RequestValue {
            random,
            ..Default::default()
        };
        s.values.insert("id".into(), value);
        s
    }

    #[test]
    fn each_problem_names_its_field() {
        let id = Some(crate::RandomRange { min: 1, max: 10 });
        let many: Vec<(String, String)> = (0..=MAX_HEADERS)
            .map(|i| (format!("X-{i}"), "1".to_string()))
            .collect();
        let many: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let big = "x".repeat(MAX_BODY_LEN + 1);
        let cases = [
            (scenario("/a b", &[], None), "spec.scenarios[0].path"),
            (scenario("/", &many, None), "spec.scenarios[0].headers"),
            (
                scenario("/", &[("X-A", "b\r\nX-Injected: 1")], None),
                "spec.scenarios[0].headers[X-A]",
            ),
            (
                scenario("/", &[("X\r\nA", "1")], None),
                "spec.scenarios[0].headers[X\\r\\nA]",
            ),
            (scenario("/", &[], Some(&big)), "spec.scenarios[0].body"),
            (
                with_id(scenario("/doc/{{idd}}", &[], None), id.clone()),
                "spec.scenarios[0].values",
            ),
            (
                with_id(scenario("/{{id}}", &[], None), None),
                "spec.scenarios[0].values[id]",
            ),
        ];
        for (s, field) in cases {
            assert_eq!(fields(&s), [field], "{s:?}");
        }
        let ok = with_id(scenario("/doc/{{id}}", &[], Some("{\"id\": {{id}}}")), id);
        assert_eq!(fields(&ok), Vec::<String>::new());
    }

    #[test]
    fn methods_outside_the_enum_are_refused_in_the_apis_words() {
        let mut s = scenario("/", &[], None);
        s.method = "GET / HTTP/1.1\r\n".into();
        let errs = scenario_errors(0, &s);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.scenarios[0].method");
        assert!(errs[0].message.contains("is not one of GET"), "{}", errs[0]);
        s.method = "M-SEARCH".into();
        assert_eq!(fields(&s), ["spec.scenarios[0].method"]);
    }
}
