//! The byte-level rules of a request's pieces (RFC 9110/9112): tokens, origin-form paths and
//! header values. [`crate::request`] applies them to whole requests; [`crate::template`] to the
//! items a placeholder may draw.

/// Whether `s` is an RFC 9110 token (a method or a header name), so it cannot break the
/// request line or a header line.
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_tchar)
}

/// The bytes of an RFC 9110 token: letters, digits and ``!#$%&'*+-.^_`|~``.
pub(crate) fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `path` is an origin-form request target: `/` and visible ASCII, so no space, CR,
/// LF or other control character can end the request line early.
pub fn is_path(path: &str) -> bool {
    path.starts_with('/') && path.bytes().all(|b| b.is_ascii_graphic())
}

/// Whether `value` can be a header value: no control character but horizontal tab.
pub fn is_header_value(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || !(b < 0x20 || b == 0x7f))
}
