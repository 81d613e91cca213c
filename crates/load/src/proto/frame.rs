//! HTTP/2 framing (RFC 9113 §4, §6): the frame header, and the frames a client writes.
//! Pure: appends to a buffer.

/// The client connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Frame types.
pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;
/// Flags.
pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY: u8 = 0x20;
/// SETTINGS identifiers.
pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 0x1;
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
/// The largest frame payload a peer may send before our SETTINGS say otherwise (we don't).
pub const MAX_FRAME: usize = 16_384;
/// The largest flow-control window.
pub const MAX_WINDOW: u32 = (1 << 31) - 1;
/// The connection window every connection starts with.
pub const DEFAULT_WINDOW: u32 = 65_535;
/// Error code of RST_STREAM for a request given up (timed out).
pub const CANCEL: u32 = 0x8;

/// A parsed frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

/// The frame header at the start of `b`, if 9 bytes are there.
pub fn parse_header(b: &[u8]) -> Option<Header> {
    let h: &[u8; 9] = b.get(..9)?.try_into().ok()?;
    Some(Header {
        len: usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]),
        kind: h[3],
        flags: h[4],
        stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
    })
}

/// Appends a frame header.
pub fn put_header(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// The connection's opening: preface, SETTINGS (no dynamic HPACK table, no push, the
/// largest stream window) and a WINDOW_UPDATE opening the connection window as wide.
pub fn put_opening(out: &mut Vec<u8>) {
    out.extend_from_slice(PREFACE);
    let settings: [(u16, u32); 3] = [
        (SETTINGS_HEADER_TABLE_SIZE, 0),
        (SETTINGS_ENABLE_PUSH, 0),
        (SETTINGS_INITIAL_WINDOW_SIZE, MAX_WINDOW),
    ];
    put_header(out, settings.len() * 6, SETTINGS, 0, 0);
    for (id, v) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
    put_window_update(out, 0, MAX_WINDOW - DEFAULT_WINDOW);
}

/// Appends a WINDOW_UPDATE of `n` bytes for `stream` (0: the connection).
pub fn put_window_update(out: &mut Vec<u8>, stream: u32, n: u32) {
    put_header(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&n.to_be_bytes());
}

/// Appends a request: HEADERS (one frame, the block is small) and the body as DATA frames.
pub fn put_request(out: &mut Vec<u8>, stream: u32, block: &[u8], body: &[u8]) {
    let end = if body.is_empty() { END_STREAM } else { 0 };
    put_header(out, block.len(), HEADERS, END_HEADERS | end, stream);
    out.extend_from_slice(block);
    let mut chunks = body.chunks(MAX_FRAME).peekable();
    while let Some(chunk) = chunks.next() {
        let flags = if chunks.peek().is_none() {
            END_STREAM
        } else {
            0
        };
        put_header(out, chunk.len(), DATA, flags, stream);
        out.extend_from_slice(chunk);
    }
}

/// Appends an RST_STREAM.
pub fn put_rst(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_header(out, 4, RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

/// The payload of a HEADERS or DATA frame without its padding (and HEADERS' priority
/// fields); `None` when the padding does not fit.
pub fn unpadded<'a>(h: &Header, payload: &'a [u8]) -> Option<&'a [u8]> {
    let mut p = payload;
    let mut pad = 0;
    if h.flags & PADDED != 0 {
        pad = usize::from(*p.first()?);
        p = &p[1..];
    }
    if h.kind == HEADERS && h.flags & PRIORITY != 0 {
        p = p.get(5..)?;
    }
    p.get(..p.len().checked_sub(pad)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_header_round_trips() {
        let mut out = Vec::new();
        put_header(&mut out, 70_000, HEADERS, END_HEADERS, 0x8000_0003);
        let h = parse_header(&out).unwrap();
        assert_eq!(
            (h.len, h.kind, h.flags, h.stream),
            (70_000, HEADERS, END_HEADERS, 3)
        );
        assert_eq!(parse_header(&out[..8]), None);
    }

    #[test]
    fn a_body_is_split_into_data_frames_ending_the_stream_on_the_last() {
        let mut out = Vec::new();
        put_request(&mut out, 5, &[0x82], &vec![7; MAX_FRAME + 1]);
        let h = parse_header(&out).unwrap();
        assert_eq!((h.kind, h.flags, h.len), (HEADERS, END_HEADERS, 1));
        let d1 = parse_header(&out[10..]).unwrap();
        assert_eq!((d1.kind, d1.flags, d1.len), (DATA, 0, MAX_FRAME));
        let d2 = parse_header(&out[19 + MAX_FRAME..]).unwrap();
        assert_eq!(
            (d2.kind, d2.flags, d2.len, d2.stream),
            (DATA, END_STREAM, 1, 5)
        );
    }

    #[test]
    fn padding_and_priority_are_stripped() {
        let h = Header {
            len: 0,
            kind: HEADERS,
            flags: PADDED | PRIORITY,
            stream: 1,
        };
        assert_eq!(
            unpadded(&h, &[2, 0, 0, 0, 0, 9, 0x88, 0, 0]),
            Some(&[0x88][..])
        );
        assert_eq!(unpadded(&h, &[9, 0, 0, 0, 0, 9, 0x88]), None);
    }
}
