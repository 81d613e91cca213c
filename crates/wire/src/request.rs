//! What a scenario may put into an HTTP/1.1 request: the one statement of that grammar.
//!
//! A scenario's method, path and headers are written into the request line and header block
//! as they are, so a CR or LF in any of them would start a header or a request of the spec's
//! choosing (request smuggling), and a wrong `Content-Length` would make the server read the
//! next request as this one's body. [`problems`] keeps every piece within its RFC 9110/9112
//! grammar and the limits below; the API's validation and the load generator both call it,
//! and the CRD's admission rules are the [`cel`] constants, tested here against the same
//! functions, so all three refuse the same requests.

use std::collections::BTreeMap;

use crate::template::{self, ValueSpec};

/// Longest path (path and query), in bytes.
pub const MAX_PATH_LEN: usize = 2048;
/// Most headers of one request.
pub const MAX_HEADERS: usize = 16;
/// Longest header name, in bytes.
pub const MAX_HEADER_NAME_LEN: usize = 128;
/// Longest header value, in bytes.
pub const MAX_HEADER_VALUE_LEN: usize = 4096;

pub use crate::grammar::{is_header_value, is_path, is_token};

/// The part of a request a [`Problem`] is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// The method.
    Method,
    /// The path and query.
    Path,
    /// The header list as a whole (too many).
    Headers,
    /// The header with this name.
    Header(String),
    /// The placeholders and their values.
    Values,
}

/// Why a request cannot be sent as written, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where the problem is.
    pub part: Part,
    /// What is wrong and what to do, as a sentence without the location.
    pub message: String,
}

/// A request as a scenario declares it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// HTTP method.
    pub method: &'a str,
    /// Path and query.
    pub path: &'a str,
    /// Headers in order, as (name, value).
    pub headers: &'a [(String, String)],
    /// Body, if any.
    pub body: Option<&'a [u8]>,
    /// Values of the `{{name}}` placeholders; without values, `{{` is plain text.
    pub values: &'a BTreeMap<String, ValueSpec>,
}

/// Every problem of `r`, in the order method, path, headers, values; empty when it can be sent.
pub fn problems(r: &Request) -> Vec<Problem> {
    let mut out = Vec::new();
    let mut add = |part: Part, message: String| out.push(Problem { part, message });
    if !is_token(r.method) {
        add(
            Part::Method,
            format!(
                "method {:?} must be an RFC 9110 token like GET or POST",
                r.method
            ),
        );
    }
    if !is_path(r.path) || r.path.len() > MAX_PATH_LEN {
        add(
            Part::Path,
            format!(
                "path {:?} must start with '/' and hold at most {MAX_PATH_LEN} visible ASCII \
                 characters: no spaces or control characters (percent-encode them, e.g. %20), \
                 e.g. /hello?x=1",
                r.path
            ),
        );
    }
    if r.headers.len() > MAX_HEADERS {
        add(
            Part::Headers,
            format!(
                "{} headers; at most {MAX_HEADERS} are allowed",
                r.headers.len()
            ),
        );
    }
    let templated_body = !r.values.is_empty() && template::body_has_values(r.body);
    let body_len = r.body.map_or(0, <[u8]>::len);
    for (name, value) in r.headers {
        for message in header_problems(name, value, body_len, templated_body) {
            add(Part::Header(name.clone()), message);
        }
    }
    if !r.values.is_empty() {
        let headers: Vec<(&str, &str)> = r
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if let Err(why) = template::check_request(r.path, &headers, r.body, r.values) {
            add(Part::Values, why);
        }
    }
    out
}

/// The problems of one header of a request whose body is `body_len` bytes. With
/// `templated_body`, `Content-Length` is written per request, and the template check refuses
/// one given.
fn header_problems(name: &str, value: &str, body_len: usize, templated_body: bool) -> Vec<String> {
    let mut out = Vec::new();
    if !is_token(name) || name.len() > MAX_HEADER_NAME_LEN {
        out.push(format!(
            "header name {name:?} must be an RFC 9110 token of at most {MAX_HEADER_NAME_LEN} \
             characters (letters, digits and !#$%&'*+-.^_`|~; no spaces, colons or control \
             characters), e.g. X-Request-Id"
        ));
    }
    if !is_header_value(value) || value.len() > MAX_HEADER_VALUE_LEN {
        out.push(format!(
            "header {name:?}: the value {value:?} must hold at most {MAX_HEADER_VALUE_LEN} bytes \
             and no control characters (CR, LF, NUL, ...; only tab is allowed): put each header \
             in its own entry"
        ));
    }
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    if name.eq_ignore_ascii_case("content-length")
        && !templated_body
        && !(digits && value.parse::<usize>().ok() == Some(body_len))
    {
        out.push(format!(
            "Content-Length {value:?} does not match the body ({body_len} bytes): remove the \
             header (the load generator sets it) or make it the body's length in bytes"
        ));
    }
    if name.eq_ignore_ascii_case("transfer-encoding") {
        out.push(
            "the load generator frames bodies with Content-Length: remove the Transfer-Encoding \
             header"
                .into(),
        );
    }
    out
}

/// The same grammar as the CRD's CEL admission rules (and their messages), for the API's
/// `Scenario` type; the tests below check each rule against the functions above.
pub mod cel {
    /// `path`: starts with `/`, visible ASCII only ([`super::is_path`]).
    pub const PATH: &str = "self.matches('^/[!-~]*$')";
    /// The message of [`PATH`].
    pub const PATH_MESSAGE: &str = "scenarios[].path must start with '/' and hold only visible \
        ASCII: no spaces or control characters (percent-encode them, e.g. %20), e.g. /hello?x=1";
    /// `headers` (the map): every name a token of 1 to 128 characters ([`super::is_token`],
    /// [`super::MAX_HEADER_NAME_LEN`]).
    pub const HEADER_NAMES: &str =
        r#"self.all(k, k.matches("^[-!#$%&'*+.^_`|~0-9A-Za-z]{1,128}$"))"#;
    /// The message of [`HEADER_NAMES`].
    pub const HEADER_NAMES_MESSAGE: &str = "scenarios[].headers names must be RFC 9110 tokens of \
        at most 128 characters (letters, digits and !#$%&'*+-.^_`|~; no spaces, colons or \
        control characters), e.g. X-Request-Id";
    /// A header value: no control character but tab ([`super::is_header_value`]).
    pub const HEADER_VALUE: &str = r"!self.matches('[\\x00-\\x08\\x0a-\\x1f\\x7f]')";
    /// The message of [`HEADER_VALUE`].
    pub const HEADER_VALUE_MESSAGE: &str = "scenarios[].headers values must not hold control \
        characters (CR, LF, NUL, ...; only tab is allowed): put each header in its own entry";
    /// The scenario: an explicit `Content-Length` equals the body's length in bytes (0 without
    /// a body).
    pub const CONTENT_LENGTH: &str = r"!has(self.headers) || self.headers.all(k, !k.matches('(?i)^content-length$') || (self.headers[k].matches('^[0-9]{1,12}$') && int(self.headers[k]) == (has(self.body) ? size(bytes(self.body)) : 0)))";
    /// The message of [`CONTENT_LENGTH`].
    pub const CONTENT_LENGTH_MESSAGE: &str = "scenarios[].headers: Content-Length must be the \
        body's length in bytes (0 without a body): remove the header (the load generator sets \
        it) or correct it";
    /// The scenario: no `Transfer-Encoding` header.
    pub const TRANSFER_ENCODING: &str =
        r"!has(self.headers) || self.headers.all(k, !k.matches('(?i)^transfer-encoding$'))";
    /// The message of [`TRANSFER_ENCODING`].
    pub const TRANSFER_ENCODING_MESSAGE: &str = "scenarios[].headers: the load generator frames \
        bodies with Content-Length: remove the Transfer-Encoding header";
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
