//! Small std::net HTTP servers for loopback tests; each counts what it saw.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use benchrun_load::{Config, Limit, Scenario, Target};

/// How the server answers.
#[derive(Clone, Copy, Debug)]
pub enum Behavior {
    /// 200 with a 26-byte JSON body (no body to HEAD); 404 for paths under /missing.
    Ok,
    /// 200 with a chunked body.
    Chunked,
    /// The given status with a short body.
    Status(u16),
    /// Announces 100 bytes, sends 10 and closes.
    ShortBody,
    /// Reads the request and never answers.
    Silent,
    /// Reads the request and resets the connection.
    Reset,
    /// 200, but every request handled in [at, at + len) after start waits until at + len.
    StallOnce { at: Duration, len: Duration },
    /// 200; on every connection but the first accepted, after this delay.
    SlowButFirst(Duration),
    /// 200 after a delay that falls linearly from `from` at the start to `to` after `over`,
    /// and stays there: a server warming up (a closed-model load's throughput rises).
    Warming {
        from: Duration,
        to: Duration,
        over: Duration,
    },
    /// 200 after `delay`, every request at once (a thread per connection); the request
    /// numbered `straggler.0` (from 0, in the order they arrived) after `straggler.1` instead.
    Delay {
        delay: Duration,
        straggler: Option<(u64, Duration)>,
    },
    /// 200 after this delay, one request at a time (a queue: the server serves 1 / delay
    /// requests a second, whatever is asked of it).
    Serial(Duration),
}

/// A running server: its address and what it counted.
pub struct Server {
    pub addr: SocketAddr,
    pub requests: Arc<AtomicU64>,
    pub connections: Arc<AtomicU64>,
    /// Requests per "METHOD /path" with the body bytes they carried.
    pub seen: Seen,
}

/// Requests per "METHOD /path": (count, body bytes).
pub type Seen = Arc<Mutex<BTreeMap<String, (u64, u64)>>>;

impl Server {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
    /// (count, body bytes) of the requests seen for "METHOD /path".
    pub fn seen(&self, request_line: &str) -> (u64, u64) {
        let seen = self.seen.lock().unwrap();
        seen.get(request_line).copied().unwrap_or_default()
    }
    pub fn url(&self) -> String {
        format!("http://{}/hello", self.addr)
    }
    /// A closed-model config for scenarios: the URL has no path, the scenarios give theirs.
    pub fn scenario_config(
        &self,
        connections: usize,
        limit: Limit,
        scenarios: Vec<Scenario>,
    ) -> Config {
        let mut c = self.config(connections, limit);
        c.target = Target::parse(&format!("http://{}", self.addr)).unwrap();
        c.scenarios = scenarios;
        c
    }
    /// A closed-model config against this server with a small, bounded load.
    pub fn config(&self, connections: usize, limit: Limit) -> Config {
        let mut c = Config::new(Target::parse(&self.url()).unwrap());
        c.connections = connections;
        c.threads = 2;
        c.limit = limit;
        c.timeout = Duration::from_secs(3);
        c
    }
}

pub fn serve(behavior: Behavior) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicU64::new(0));
    let connections = Arc::new(AtomicU64::new(0));
    let seen = Seen::default();
    let (r, c, p) = (requests.clone(), connections.clone(), seen.clone());
    let start = Instant::now();
    let serial = Arc::new(Mutex::new(()));
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let first = c.fetch_add(1, Ordering::SeqCst) == 0;
            let (r, p, serial) = (r.clone(), p.clone(), serial.clone());
            thread::spawn(move || handle(stream, behavior, &r, &p, start, first, &serial));
        }
    });
    Server {
        addr,
        requests,
        connections,
        seen,
    }
}

/// An address on which nothing listens.
pub fn refused_addr() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

const BODY: &[u8] = br#"{"message":"Hello, World"}"#;

fn handle(
    mut s: TcpStream,
    behavior: Behavior,
    requests: &AtomicU64,
    seen: &Mutex<BTreeMap<String, (u64, u64)>>,
    start: Instant,
    first: bool,
    serial: &Mutex<()>,
) {
    let _ = s.set_nodelay(true);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let raw = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let head = raw.to_ascii_lowercase();
        buf.drain(..head_end);
        let body_len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < body_len {
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..body_len);
        let line: Vec<&str> = raw
            .lines()
            .next()
            .unwrap_or("")
            .split(' ')
            .take(2)
            .collect();
        {
            let mut seen = seen.lock().unwrap();
            let entry = seen.entry(line.join(" ")).or_default();
            entry.0 += 1;
            entry.1 += body_len as u64;
        }
        let number = requests.fetch_add(1, Ordering::SeqCst);
        let close = head.contains("connection: close");
        let is_head = raw.starts_with("HEAD ");
        let resp: Vec<u8> = match behavior {
            Behavior::Ok if line.get(1).is_some_and(|p| p.starts_with("/missing")) => {
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found".to_vec()
            }
            Behavior::Ok if is_head => format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                BODY.len()
            )
            .into_bytes(),
            Behavior::Ok => ok_response(close),
            Behavior::StallOnce { at, len } => {
                let t = start.elapsed();
                if t >= at && t < at + len {
                    thread::sleep(at + len - t);
                }
                ok_response(close)
            }
            Behavior::Warming { from, to, over } => {
                let left = 1.0 - (start.elapsed().as_secs_f64() / over.as_secs_f64()).min(1.0);
                thread::sleep(to + (from.saturating_sub(to)).mul_f64(left));
                ok_response(close)
            }
            Behavior::Delay { delay, straggler } => {
                match straggler {
                    Some((n, slow)) if n == number => thread::sleep(slow),
                    _ => thread::sleep(delay),
                }
                ok_response(close)
            }
            Behavior::Serial(delay) => {
                let _one = serial.lock().unwrap();
                thread::sleep(delay);
                ok_response(close)
            }
            Behavior::SlowButFirst(delay) => {
                if !first {
                    thread::sleep(delay);
                }
                ok_response(close)
            }
            Behavior::Chunked => {
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n".to_vec()
            }
            Behavior::Status(code) => {
                format!("HTTP/1.1 {code} Oops\r\nContent-Length: 4\r\n\r\noops").into_bytes()
            }
            Behavior::ShortBody => {
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789");
                return;
            }
            Behavior::Silent => {
                thread::sleep(Duration::from_secs(30));
                return;
            }
            Behavior::Reset => {
                reset(&s);
                return;
            }
        };
        if s.write_all(&resp).is_err() || close {
            return;
        }
    }
}

/// Bytes of the 200 response to a GET on a kept-alive connection.
pub fn ok_response_len() -> u64 {
    ok_response(false).len() as u64
}

fn ok_response(close: bool) -> Vec<u8> {
    let conn = if close { "Connection: close\r\n" } else { "" };
    let mut r = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{conn}Content-Length: {}\r\n\r\n",
        BODY.len()
    )
    .into_bytes();
    r.extend_from_slice(BODY);
    r
}

/// Closes with SO_LINGER 0 so the peer sees a reset.
fn reset(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: plain setsockopt on a socket we own, with a correctly sized struct.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
