//! HTTP/2 wire facts against a hand-written h2c server on 127.0.0.1 (std::net, frames
//! written byte by byte): the server's stream limit lowers `--max-concurrent-streams`,
//! RST_STREAM and GOAWAY end the requests they name as `read` errors and are counted, a
//! Huffman-coded `:status` is read, a header block split over CONTINUATION frames is put
//! together, and a stream the server never answers times out without taking its
//! connection down.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use benchrun_load::{Config, Limit, Protocol, Target, Warmup};

/// What the server does with the n-th request (from 0) of a connection.
#[derive(Clone, Copy)]
enum Answer {
    /// `:status 200` (static index) and a 5-byte body.
    Ok,
    /// `:status 201`, Huffman-coded, with the block split over HEADERS + CONTINUATION.
    HuffmanSplit,
    /// RST_STREAM(REFUSED_STREAM).
    Refuse,
    /// Nothing: the stream stays open.
    Ignore,
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let len = payload.len();
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// A server on a free port: SETTINGS with MAX_CONCURRENT_STREAMS `limit`; request n of a
/// connection gets `plan(n)`; after `goaway_after` requests of a connection it sends GOAWAY
/// naming the last one and closes once they are answered. Counts the requests it saw.
fn serve(
    limit: u32,
    goaway_after: Option<u64>,
    plan: fn(u64) -> Answer,
) -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let counter = counter.clone();
            thread::spawn(move || connection(stream, limit, goaway_after, plan, &counter));
        }
    });
    (addr, seen)
}

fn connection(
    mut s: TcpStream,
    limit: u32,
    goaway_after: Option<u64>,
    plan: fn(u64) -> Answer,
    seen: &AtomicU64,
) {
    let _ = s.set_nodelay(true);
    let mut preface = [0u8; 24];
    if s.read_exact(&mut preface).is_err() || &preface != b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" {
        return;
    }
    let mut out = Vec::new();
    let mut settings = vec![0, 3];
    settings.extend_from_slice(&limit.to_be_bytes());
    frame(&mut out, 0x4, 0, 0, &settings);
    if s.write_all(&out).is_err() {
        return;
    }
    let mut n = 0u64;
    loop {
        let mut head = [0u8; 9];
        if s.read_exact(&mut head).is_err() {
            return;
        }
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let mut payload = vec![0; len];
        if s.read_exact(&mut payload).is_err() {
            return;
        }
        let (kind, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut out = Vec::new();
        match kind {
            0x4 if flags & 1 == 0 => frame(&mut out, 0x4, 1, 0, &[]),
            0x1 => {
                seen.fetch_add(1, Ordering::Relaxed);
                match plan(n) {
                    Answer::Ok => {
                        frame(&mut out, 0x1, 0x4, stream, &[0x88]);
                        frame(&mut out, 0x0, 0x1, stream, b"hello");
                    }
                    Answer::HuffmanSplit => {
                        // ":status: 201" with incremental indexing, Huffman: 0x48 0x82 + 2
                        // bytes ('2' 00010, '0' 00000, '1' 00001, 1 bit of padding).
                        frame(&mut out, 0x1, 0x1, stream, &[0x48, 0x82]);
                        frame(&mut out, 0x9, 0x4, stream, &[0x10, 0x03]);
                    }
                    Answer::Refuse => frame(&mut out, 0x3, 0, stream, &7u32.to_be_bytes()),
                    Answer::Ignore => {}
                }
                n += 1;
                if goaway_after == Some(n) {
                    let mut p = stream.to_be_bytes().to_vec();
                    p.extend_from_slice(&0u32.to_be_bytes());
                    frame(&mut out, 0x7, 0, 0, &p);
                    let _ = s.write_all(&out);
                    thread::sleep(Duration::from_millis(50));
                    return;
                }
            }
            _ => {}
        }
        if !out.is_empty() && s.write_all(&out).is_err() {
            return;
        }
    }
}

fn config(addr: SocketAddr, streams: usize, n: u64) -> Config {
    let mut c = Config::new(Target::parse(&format!("http://{addr}/")).unwrap());
    c.protocol = Protocol::H2;
    c.max_concurrent_streams = streams;
    c.connections = 1;
    c.threads = 1;
    c.warmup = Warmup::None;
    c.limit = Limit::Requests(n);
    c.timeout = Duration::from_secs(5);
    c
}

#[test]
fn the_servers_stream_limit_caps_the_streams_and_refused_streams_count_as_resets() {
    // Every third request refused; the server allows 2 streams where 8 were asked.
    let (addr, seen) = serve(2, None, |n| {
        if n % 3 == 2 {
            Answer::Refuse
        } else {
            Answer::Ok
        }
    });
    let r = benchrun_load::run(&config(addr, 8, 300)).unwrap();
    assert_eq!(seen.load(Ordering::Relaxed), 300);
    assert_eq!(r.requests, 300);
    assert_eq!(r.successes, 200, "{:?}", r.errors);
    assert_eq!(r.errors.read, 100, "{:?}", r.errors);
    let h2 = r.protocol.unwrap().h2.unwrap();
    assert_eq!(h2.max_concurrent_streams, 2, "{h2:?}");
    assert_eq!(h2.rst_stream_received, 100);
}

#[test]
fn a_goaway_ends_the_connection_and_the_next_requests_reconnect() {
    let (addr, seen) = serve(100, Some(10), |_| Answer::Ok);
    let r = benchrun_load::run(&config(addr, 1, 35)).unwrap();
    assert_eq!(r.successes, 35, "{:?}", r.errors);
    assert_eq!(seen.load(Ordering::Relaxed), 35);
    let h2 = r.protocol.unwrap().h2.unwrap();
    assert_eq!(h2.goaway_received, 3, "one per 10 requests: {h2:?}");
}

#[test]
fn after_a_goaway_streams_the_server_did_not_take_fail_and_waiting_requests_go_to_a_new_connection()
{
    // Three streams in flight: those sent after the GOAWAY's last stream are lost (read
    // errors), what had not been sent yet goes out on the next connection.
    let (addr, seen) = serve(100, Some(10), |_| Answer::Ok);
    let r = benchrun_load::run(&config(addr, 3, 60)).unwrap();
    assert_eq!(r.requests, 60);
    assert_eq!(
        r.successes,
        seen.load(Ordering::Relaxed),
        "answered = served"
    );
    assert_eq!(r.successes + r.errors.read, 60, "{:?}", r.errors);
    assert_eq!(r.errors.total, r.errors.read, "{:?}", r.errors);
    assert!(r.protocol.unwrap().h2.unwrap().goaway_received >= 5);
}

#[test]
fn a_huffman_coded_status_split_over_continuation_frames_is_read() {
    let (addr, _) = serve(10, None, |_| Answer::HuffmanSplit);
    let r = benchrun_load::run(&config(addr, 4, 40)).unwrap();
    assert_eq!(r.successes, 40, "{:?}", r.errors);
    assert_eq!(r.latency.count, 40);
}

#[test]
fn an_unanswered_stream_times_out_and_the_connection_serves_the_others() {
    // The first request of the connection is never answered.
    let (addr, seen) = serve(
        10,
        None,
        |n| if n == 0 { Answer::Ignore } else { Answer::Ok },
    );
    let mut c = config(addr, 2, 50);
    c.timeout = Duration::from_millis(300);
    let r = benchrun_load::run(&c).unwrap();
    assert_eq!(r.errors.timeout, 1, "{:?}", r.errors);
    assert_eq!(r.successes, 49);
    assert_eq!(
        seen.load(Ordering::Relaxed),
        50,
        "one connection served all"
    );
}

#[test]
fn a_batch_wait_takes_several_responses_per_wake_up_and_loses_none() {
    let (addr, seen) = serve(100, None, |_| Answer::Ok);
    let mut c = config(addr, 8, 400);
    c.connections = 2;
    c.batch_wait = Some(Duration::from_micros(200));
    let r = benchrun_load::run(&c).unwrap();
    assert_eq!(r.successes, 400, "{:?}", r.errors);
    assert_eq!(seen.load(Ordering::Relaxed), 400);
    assert_eq!(r.latency.count, 400);
}
