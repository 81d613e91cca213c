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

#[test]
fn a_repeated_head_is_remembered_and_a_changed_byte_is_parsed_again() {
    let mut p = ResponseParser::new();
    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
    assert_eq!(p.feed(ok), done(200, false));
    assert_eq!(p.last.bytes.len(), ok.len() - 5, "the head is remembered");
    // The same head again: the same outcome, the body still counted to its length.
    p.reset(false);
    assert_eq!(p.feed(&ok[..ok.len() - 1]), Progress::NeedMore);
    assert_eq!(p.feed(b"o"), done(200, false));
    // One byte of the length changed: framed by the new length, not the remembered one.
    p.reset(false);
    assert_eq!(
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello"),
        Progress::NeedMore
    );
    assert_eq!(p.feed(b"!"), done(200, false));
    // Another status with the old length, and a close.
    p.reset(false);
    assert_eq!(
        p.feed(b"HTTP/1.1 503 Busy\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"),
        done(503, true)
    );
    // The remembered head answering a HEAD request has no body.
    p.reset(false);
    assert_eq!(p.feed(ok), done(200, false));
    p.reset(true);
    assert_eq!(p.feed(&ok[..ok.len() - 5]), done(200, false));
    // A head cut short where the remembered one goes on is not taken for it.
    p.reset(false);
    assert_eq!(p.feed(&ok[..20]), Progress::NeedMore);
    assert_eq!(p.feed(&ok[20..]), done(200, false));
    // Garbage after a remembered head is still garbage.
    p.reset(false);
    assert_eq!(
        p.feed(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"),
        Progress::Invalid
    );
}
