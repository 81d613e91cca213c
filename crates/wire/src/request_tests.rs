use super::*;
use crate::grammar::is_tchar;

fn request<'a>(
    path: &'a str,
    headers: &'a [(String, String)],
    body: Option<&'a str>,
    values: &'a BTreeMap<String, ValueSpec>,
) -> Request<'a> {
    Request {
        method: "POST",
        path,
        headers,
        body: body.map(str::as_bytes),
        values,
    }
}

fn headers(h: &[(&str, &str)]) -> Vec<(String, String)> {
    h.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn parts(r: &Request) -> Vec<Part> {
    problems(r).into_iter().map(|p| p.part).collect()
}

fn no_values() -> BTreeMap<String, ValueSpec> {
    BTreeMap::new()
}

fn id_values() -> BTreeMap<String, ValueSpec> {
    BTreeMap::from([("id".to_string(), ValueSpec::Random { min: 1, max: 10 })])
}

/// The bytes a regular-expression character class (as written in the CEL rules) matches:
/// single characters, `a-b` ranges and `\\xNN` escapes.
fn class_bytes(class: &str) -> Vec<u8> {
    let mut items = Vec::new();
    let b = class.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(br"\\x") {
            let hex = std::str::from_utf8(&b[i + 3..i + 5]).unwrap();
            items.push(u8::from_str_radix(hex, 16).unwrap());
            i += 5;
        } else {
            items.push(b[i]);
            i += 1;
        }
        // A '-' between two items is a range (a leading or trailing '-' is itself).
        let n = items.len();
        if n >= 3 && items[n - 2] == b'-' && !(n == 3 && class.starts_with('-')) {
            let (lo, hi) = (items[n - 3], items[n - 1]);
            items.truncate(n - 3);
            items.extend(lo..=hi);
        }
    }
    items.sort_unstable();
    items.dedup();
    items
}

/// The text between the first `[` and the `]` that closes it.
fn first_class(rule: &str) -> &str {
    let start = rule.find('[').unwrap() + 1;
    let end = start + rule[start..].find(']').unwrap();
    &rule[start..end]
}

#[test]
fn the_cel_path_rule_is_is_path() {
    let class = class_bytes(first_class(cel::PATH));
    for b in 0..=255u8 {
        assert_eq!(class.contains(&b), b.is_ascii_graphic(), "byte {b:#x}");
    }
    assert!(cel::PATH.contains("'^/"), "{}", cel::PATH);
}

#[test]
fn the_cel_header_name_rule_is_is_token_with_the_length_limit() {
    let class = class_bytes(first_class(cel::HEADER_NAMES));
    for b in 0..=255u8 {
        assert_eq!(class.contains(&b), is_tchar(b), "byte {b:#x}");
    }
    assert!(cel::HEADER_NAMES.contains(&format!("{{1,{MAX_HEADER_NAME_LEN}}}")));
}

#[test]
fn the_cel_header_value_rule_is_is_header_value() {
    let forbidden = class_bytes(first_class(cel::HEADER_VALUE));
    for b in 0..=127u8 {
        let text = (b as char).to_string();
        assert_eq!(
            !forbidden.contains(&b),
            is_header_value(&text),
            "byte {b:#x}"
        );
    }
}

#[test]
fn ordinary_requests_pass() {
    let h = headers(&[
        ("Content-Type", "application/json; charset=utf-8\tx"),
        ("Content-Length", "2"),
    ]);
    let v = no_values();
    assert_eq!(
        problems(&request("/compute?n=10000&q=%20a", &h, Some("{}"), &v)),
        []
    );
}

#[test]
fn crlf_in_a_header_value_is_refused_naming_the_header() {
    let h = headers(&[("X-A", "b\r\nX-Injected: 1")]);
    let v = no_values();
    let p = problems(&request("/", &h, None, &v));
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].part, Part::Header("X-A".into()));
    assert!(
        p[0].message.contains("no control characters"),
        "{}",
        p[0].message
    );
    for bad in ["a\rb", "a\nb", "a\0b", "a\x1bb", "a\x7fb"] {
        assert!(!is_header_value(bad), "{bad:?}");
    }
}

#[test]
fn methods_and_header_names_must_be_tokens() {
    for bad in ["", "X A", "X:A", "X\r\nA", "X(A)", "Ä"] {
        let h = headers(&[(bad, "1")]);
        let v = no_values();
        assert_eq!(
            parts(&request("/", &h, None, &v)),
            [Part::Header(bad.into())],
            "{bad:?}"
        );
    }
    assert!(is_token("X-Request-Id") && is_token("!#$%&'*+-.^_`|~09az"));
    let v = no_values();
    let mut r = request("/", &[], None, &v);
    r.method = "GET / HTTP/1.1\r\n";
    assert_eq!(parts(&r), [Part::Method]);
}

#[test]
fn paths_with_spaces_or_control_characters_are_refused() {
    let v = no_values();
    let long = format!("/{}", "a".repeat(MAX_PATH_LEN));
    for bad in [
        "/a b",
        "/a\r\nHost: x",
        "/?q=a b",
        "/\t",
        "hello",
        "/café",
        "",
        &long,
    ] {
        assert_eq!(parts(&request(bad, &[], None, &v)), [Part::Path], "{bad:?}");
    }
}

#[test]
fn content_length_must_match_the_body_and_transfer_encoding_is_refused() {
    let v = no_values();
    let h = headers(&[("content-length", "5")]);
    let p = problems(&request("/", &h, Some("{}"), &v));
    assert_eq!(p[0].part, Part::Header("content-length".into()));
    assert!(p[0].message.contains("(2 bytes)"), "{}", p[0].message);
    for (value, body, n) in [("3", None, 1), ("0", None, 0), ("+2", Some("{}"), 1)] {
        let h = headers(&[("Content-Length", value)]);
        assert_eq!(problems(&request("/", &h, body, &v)).len(), n, "{value}");
    }
    let h = headers(&[("Transfer-Encoding", "chunked")]);
    assert_eq!(
        parts(&request("/", &h, Some("{}"), &v)),
        [Part::Header("Transfer-Encoding".into())]
    );
}

#[test]
fn too_many_headers_are_refused_once() {
    let many: Vec<(String, String)> = (0..=MAX_HEADERS)
        .map(|i| (format!("X-{i}"), "1".to_string()))
        .collect();
    let v = no_values();
    assert_eq!(parts(&request("/", &many, None, &v)), [Part::Headers]);
}

#[test]
fn templates_are_checked_with_the_request() {
    let v = id_values();
    assert_eq!(
        problems(&request("/doc/{{id}}", &[], Some("{\"id\": {{id}}}"), &v)),
        []
    );
    let p = problems(&request("/doc/{{idd}}", &[], None, &v));
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].part, Part::Values);
    assert!(
        p[0].message.contains("{{idd}} names no declared value"),
        "{}",
        p[0].message
    );
    // A body with placeholders has its Content-Length set per request: one given is refused
    // once, by the template check, not also as a mismatch.
    let h = headers(&[("Content-Length", "6")]);
    let p = problems(&request("/", &h, Some("{{id}}"), &v));
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].message.contains("set per request"), "{}", p[0].message);
    // Without values, braces are plain text.
    let none = no_values();
    assert_eq!(problems(&request("/{{x}}", &[], None, &none)), []);
}
