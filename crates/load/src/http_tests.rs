use super::*;

fn feed_bytewise(p: &mut ResponseParser, data: &[u8]) -> Progress {
    let mut last = Progress::NeedMore;
    for b in data {
        last = p.feed(std::slice::from_ref(b));
        if last != Progress::NeedMore {
            return last;
        }
    }
    last
}

fn done(status: u16, close: bool) -> Progress {
    Progress::Done { status, close }
}

/// `r` completes to `want` when fed whole and when fed byte by byte.
fn assert_completes(r: &[u8], want: Progress) -> ResponseParser {
    let mut p = ResponseParser::new();
    assert_eq!(p.feed(r), want, "whole");
    p.reset(false);
    assert_eq!(feed_bytewise(&mut p, r), want, "byte by byte");
    p
}

#[test]
fn content_length_response_completes_in_one_or_many_reads() {
    assert_completes(
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        done(200, false),
    );
}

#[test]
fn chunked_response_with_extensions_and_trailers_completes() {
    let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n";
    let mut p = assert_completes(r, done(200, false));
    p.reset(false);
    assert_eq!(p.feed(&r[..r.len() - 2]), Progress::NeedMore);
    assert_eq!(p.eof(), Progress::ClosedInBody);
}

#[test]
fn short_body_then_close_is_a_body_mismatch() {
    let mut p = ResponseParser::new();
    assert_eq!(
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc"),
        Progress::NeedMore
    );
    assert_eq!(p.eof(), Progress::ClosedInBody);
}

#[test]
fn body_until_close_and_connection_close_header() {
    let mut p = ResponseParser::new();
    assert_eq!(p.feed(b"HTTP/1.0 200 OK\r\n\r\nabc"), Progress::NeedMore);
    assert_eq!(p.eof(), done(200, true));
    p.reset(false);
    let r = b"HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(p.feed(r), done(503, true));
}

#[test]
fn garbage_and_early_close_are_reported() {
    let mut p = ResponseParser::new();
    assert_eq!(p.feed(b"NOT HTTP\r\n\r\n"), Progress::Invalid);
    p.reset(false);
    assert_eq!(p.eof(), Progress::ClosedInHead);
}

#[test]
fn interim_and_bodyless_responses_are_handled() {
    let mut p = ResponseParser::new();
    let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
    assert_eq!(p.feed(r), done(204, false));
    // A response to HEAD announces a length but has no body; the next request's parser is
    // reset for a GET and waits for the body again.
    p.reset(true);
    let head = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
    assert_eq!(p.feed(head), done(200, false));
    p.reset(false);
    assert_eq!(p.feed(head), Progress::NeedMore);
}
