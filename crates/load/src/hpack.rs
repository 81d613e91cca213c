//! The little HPACK (RFC 7541) a load generator needs, without a dynamic table: it announces
//! SETTINGS_HEADER_TABLE_SIZE 0, so a server's header blocks use only the static table and
//! literals, and the one field read from them, `:status`, decodes without state or
//! allocation. Requests are encoded once per scenario (static-table names, literal values).
//! Pure: no I/O.

/// Static-table indices (RFC 7541, Appendix A) of the fields a request uses.
const AUTHORITY: usize = 1;
const METHOD_GET: usize = 2;
const METHOD_POST: usize = 3;
const PATH: usize = 4;
const SCHEME_HTTP: usize = 6;
const SCHEME_HTTPS: usize = 7;
/// `:status` in the static table: index 8 names it, 8..=14 carry these values.
const STATUS: usize = 8;
const STATUS_VALUES: [u16; 7] = [200, 204, 206, 304, 400, 404, 500];
/// The static table's size: a larger index refers to the dynamic table, which is empty.
const STATIC_LEN: usize = 61;

/// Encodes a request's header block: the pseudo-headers then `headers` (names lowercased,
/// as HTTP/2 requires; connection-specific ones dropped), every field a literal without
/// indexing, so the server's decoder table is left alone.
pub fn encode_request(
    method: &str,
    https: bool,
    authority: &str,
    path: &str,
    headers: &[(String, String)],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + path.len() + authority.len());
    match method {
        "GET" => indexed(&mut out, METHOD_GET),
        "POST" => indexed(&mut out, METHOD_POST),
        m => literal_indexed_name(&mut out, METHOD_GET, m.as_bytes()),
    }
    indexed(&mut out, if https { SCHEME_HTTPS } else { SCHEME_HTTP });
    literal_indexed_name(&mut out, PATH, path.as_bytes());
    literal_indexed_name(&mut out, AUTHORITY, authority.as_bytes());
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        // RFC 9113 §8.2.2: connection-specific fields are malformed in HTTP/2; Host is
        // :authority.
        if matches!(
            name.as_str(),
            "connection"
                | "keep-alive"
                | "proxy-connection"
                | "transfer-encoding"
                | "upgrade"
                | "host"
        ) {
            continue;
        }
        out.push(0x00); // literal without indexing, new name
        string(&mut out, name.as_bytes());
        string(&mut out, value.as_bytes());
    }
    out
}

fn indexed(out: &mut Vec<u8>, index: usize) {
    integer(out, 0x80, 7, index);
}

fn literal_indexed_name(out: &mut Vec<u8>, index: usize, value: &[u8]) {
    integer(out, 0x00, 4, index);
    string(out, value);
}

fn string(out: &mut Vec<u8>, s: &[u8]) {
    integer(out, 0x00, 7, s.len());
    out.extend_from_slice(s);
}

/// An integer with an `n`-bit prefix, the first byte's other bits `flags` (§5.1).
fn integer(out: &mut Vec<u8>, flags: u8, n: u32, mut v: usize) {
    let max = (1usize << n) - 1;
    if v < max {
        out.push(flags | v as u8);
        return;
    }
    out.push(flags | max as u8);
    v -= max;
    while v >= 128 {
        out.push((v % 128) as u8 | 0x80);
        v /= 128;
    }
    out.push(v as u8);
}

/// Why a header block could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Truncated or malformed.
    Malformed,
    /// A reference to the dynamic table, which was announced as empty.
    DynamicTable,
}

/// The `:status` of a response header block (`None` when it has none, as in trailers).
pub fn decode_status(mut b: &[u8]) -> Result<Option<u16>, DecodeError> {
    let mut status = None;
    while let Some(&first) = b.first() {
        if first & 0x80 != 0 {
            let (index, rest) = read_integer(b, 7)?;
            b = rest;
            match index {
                0 => return Err(DecodeError::Malformed),
                STATUS..=14 => status = Some(STATUS_VALUES[index - STATUS]),
                i if i > STATIC_LEN => return Err(DecodeError::DynamicTable),
                _ => {}
            }
        } else if first & 0xe0 == 0x20 {
            // A dynamic table size update: nothing to keep, the table stays empty.
            b = read_integer(b, 5)?.1;
        } else {
            // Literal with incremental indexing (6-bit prefix; with a table of size 0 the
            // entry is evicted at once), without indexing or never indexed (4-bit prefix).
            let prefix = if first & 0xc0 == 0x40 { 6 } else { 4 };
            let (index, rest) = read_integer(b, prefix)?;
            b = rest;
            let is_status = if index == 0 {
                let (name, huffman, rest) = read_string(b)?;
                b = rest;
                !huffman && name == b":status"
            } else if index > STATIC_LEN {
                return Err(DecodeError::DynamicTable);
            } else {
                index == STATUS
            };
            let (value, huffman, rest) = read_string(b)?;
            b = rest;
            if is_status {
                status = Some(parse_status(value, huffman)?);
            }
        }
    }
    Ok(status)
}

fn read_integer(b: &[u8], n: u32) -> Result<(usize, &[u8]), DecodeError> {
    let max = (1usize << n) - 1;
    let (&first, mut rest) = b.split_first().ok_or(DecodeError::Malformed)?;
    let mut v = usize::from(first) & max;
    if v < max {
        return Ok((v, rest));
    }
    let mut shift = 0;
    loop {
        let (&byte, r) = rest.split_first().ok_or(DecodeError::Malformed)?;
        rest = r;
        if shift > 28 {
            return Err(DecodeError::Malformed);
        }
        v += usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Ok((v, rest));
        }
    }
}

/// A string literal: its bytes (Huffman-coded or not), whether Huffman-coded, the rest.
fn read_string(b: &[u8]) -> Result<(&[u8], bool, &[u8]), DecodeError> {
    let huffman = b.first().ok_or(DecodeError::Malformed)? & 0x80 != 0;
    let (len, rest) = read_integer(b, 7)?;
    if rest.len() < len {
        return Err(DecodeError::Malformed);
    }
    Ok((&rest[..len], huffman, &rest[len..]))
}

/// A three-digit status, raw or Huffman-coded.
fn parse_status(value: &[u8], huffman: bool) -> Result<u16, DecodeError> {
    let mut digits = [0u8; 3];
    let n = if huffman {
        huffman_digits(value, &mut digits)?
    } else {
        let n = value.len().min(4);
        digits[..n.min(3)].copy_from_slice(&value[..n.min(3)]);
        n
    };
    if n != 3 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(DecodeError::Malformed);
    }
    Ok(digits
        .iter()
        .fold(0u16, |v, d| v * 10 + u16::from(d - b'0')))
}

/// Decodes a Huffman-coded string of digits (RFC 7541 Appendix B: `0`–`2` are the 5-bit
/// codes 0–2, `3`–`9` the 6-bit codes 0x19–0x1f) into `out`; returns how many there were.
/// Anything else is not a status.
fn huffman_digits(value: &[u8], out: &mut [u8; 3]) -> Result<usize, DecodeError> {
    let bits = value.len() * 8;
    let bit = |i: usize| (value[i / 8] >> (7 - i % 8)) & 1;
    let (mut i, mut n) = (0, 0);
    while bits - i >= 5 {
        let code5 = (0..5).fold(0u8, |v, k| v << 1 | bit(i + k));
        let (digit, len) = if code5 <= 2 {
            (b'0' + code5, 5)
        } else if bits - i >= 6 {
            let code6 = code5 << 1 | bit(i + 5);
            match code6 {
                0x19..=0x1f => (b'3' + (code6 - 0x19), 6),
                // Padding: the most significant bits of EOS, all ones, fewer than 8.
                _ if bits - i < 8 && (i..bits).all(|k| bit(k) == 1) => break,
                _ => return Err(DecodeError::Malformed),
            }
        } else if (i..bits).all(|k| bit(k) == 1) {
            break;
        } else {
            return Err(DecodeError::Malformed);
        };
        if n == out.len() {
            return Err(DecodeError::Malformed);
        }
        out[n] = digit;
        n += 1;
        i += len;
    }
    if (i..bits).any(|k| bit(k) == 0) {
        return Err(DecodeError::Malformed);
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_of_the_static_table_are_read_from_their_index() {
        assert_eq!(decode_status(&[0x88]), Ok(Some(200)));
        assert_eq!(decode_status(&[0x8d]), Ok(Some(404)));
        // A dynamic table size update first, then :status 500.
        assert_eq!(decode_status(&[0x20, 0x8e]), Ok(Some(500)));
    }

    #[test]
    fn huffman_coded_statuses_of_rfc_7541_appendix_c6_decode() {
        // C.6.1: ":status: 302" as a literal with incremental indexing, Huffman-coded.
        assert_eq!(decode_status(&[0x48, 0x82, 0x64, 0x02]), Ok(Some(302)));
        // C.6.2: ":status: 307", with padding.
        assert_eq!(
            decode_status(&[0x48, 0x83, 0x64, 0x0e, 0xff]),
            Ok(Some(307))
        );
    }

    #[test]
    fn a_raw_literal_status_and_other_fields_are_read_or_skipped() {
        // :status 429 without indexing (name index 8), then "server: x" with a literal name.
        let block = [
            0x08, 0x03, b'4', b'2', b'9', 0x00, 0x06, b's', b'e', b'r', b'v', b'e', b'r', 0x01,
            b'x',
        ];
        assert_eq!(decode_status(&block), Ok(Some(429)));
        // Trailers: no status.
        assert_eq!(decode_status(&[0x00, 0x01, b'a', 0x01, b'b']), Ok(None));
    }

    #[test]
    fn dynamic_table_references_and_truncation_are_errors() {
        assert_eq!(decode_status(&[0xbe]), Err(DecodeError::DynamicTable));
        assert_eq!(
            decode_status(&[0x48, 0x83, 0x64]),
            Err(DecodeError::Malformed)
        );
        assert_eq!(
            decode_status(&[0x08, 0x02, b'2', b'0']),
            Err(DecodeError::Malformed)
        );
    }

    #[test]
    fn a_request_block_uses_static_names_and_lowercases_header_names() {
        let block = encode_request(
            "GET",
            true,
            "a:1",
            "/x",
            &[
                ("X-Id".into(), "7".into()),
                ("Connection".into(), "close".into()),
            ],
        );
        let want = [
            0x82, 0x87, 0x04, 0x02, b'/', b'x', 0x01, 0x03, b'a', b':', b'1', 0x00, 0x04, b'x',
            b'-', b'i', b'd', 0x01, b'7',
        ];
        assert_eq!(block, want);
        // PUT: the :method name from the table, the value literal.
        assert_eq!(
            &encode_request("PUT", false, "a", "/", &[])[..5],
            [0x02, 0x03, b'P', b'U', b'T']
        );
    }

    #[test]
    fn long_integers_use_continuation_bytes() {
        let mut out = Vec::new();
        integer(&mut out, 0x00, 5, 1337); // RFC 7541 C.1.2
        assert_eq!(out, [31, 154, 10]);
        assert_eq!(read_integer(&out, 5), Ok((1337, &[][..])));
    }
}
