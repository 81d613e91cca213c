//! The mio/epoll back end: readiness events, one `write`/`recvmsg` syscall per operation
//! (the receive also returns its timestamp, [`super::stamp`]), a timerfd for wake-ups finer
//! than epoll's millisecond.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::stamp::{self, Clock};
use super::{token, untoken, Io, MAX_WAIT};
use crate::timer::Timer;

/// Token of the timer; connection tokens never reach it.
const TIMER_TOKEN: usize = usize::MAX;

/// Per-connection sockets registered with one epoll instance.
pub(crate) struct EpollIo {
    addr: SocketAddr,
    poll: Poll,
    events: Events,
    streams: Vec<Option<TcpStream>>,
    generations: Vec<u32>,
    /// Read buffer shared by all connections: a read is parsed before the next one.
    buf: Vec<u8>,
    /// Wakes the loop precisely (created on the first precise wait).
    timer: Option<Timer>,
    /// When the timer is set to fire, if it is.
    armed: Option<Instant>,
    /// Control data of the last receive (its timestamp).
    control: Vec<u8>,
    /// Sockets are asked for receive timestamps (the kernel agreed when probed).
    stamps: bool,
    /// When the data of the last read arrived, if its receive carried a timestamp.
    arrival: Option<Instant>,
    /// Both clocks as read after the last wait, to place this turn's timestamps.
    clock: Clock,
}

impl EpollIo {
    fn stream(&mut self, i: usize) -> io::Result<&mut TcpStream> {
        self.streams[i]
            .as_mut()
            .ok_or_else(|| io::ErrorKind::NotConnected.into())
    }

    fn timer(&mut self) -> io::Result<&Timer> {
        if self.timer.is_none() {
            let t = Timer::new()?;
            let mut source = SourceFd(&t.raw());
            self.poll
                .registry()
                .register(&mut source, Token(TIMER_TOKEN), Interest::READABLE)?;
            self.timer = Some(t);
        }
        Ok(self.timer.as_ref().expect("just created"))
    }
}

impl Io for EpollIo {
    fn new(conns: usize, addr: SocketAddr) -> io::Result<Self> {
        // Sleeps of a batched wait end when asked, not up to the default 50 µs later.
        // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        Ok(EpollIo {
            addr,
            poll: Poll::new()?,
            events: Events::with_capacity(1024),
            streams: (0..conns).map(|_| None).collect(),
            generations: vec![0; conns],
            buf: vec![0; 64 * 1024],
            timer: None,
            armed: None,
            control: vec![0; stamp::control_len()],
            stamps: stamp::probe(),
            arrival: None,
            clock: Clock::now(),
        })
    }

    fn is_open(&self, i: usize) -> bool {
        self.streams[i].is_some()
    }

    fn connect(&mut self, i: usize) -> io::Result<()> {
        self.streams[i] = None;
        let mut stream = TcpStream::connect(self.addr)?;
        let _ = stream.set_nodelay(true);
        if self.stamps {
            stamp::enable(stream.as_raw_fd());
        }
        self.generations[i] = self.generations[i].wrapping_add(1);
        let t = token(i, self.generations[i]) as usize;
        self.poll.registry().register(
            &mut stream,
            Token(t),
            Interest::READABLE | Interest::WRITABLE,
        )?;
        self.streams[i] = Some(stream);
        Ok(())
    }

    fn connect_result(&mut self, i: usize) -> Option<io::Result<()>> {
        let stream = self.streams[i].as_ref()?;
        match stream.take_error() {
            Ok(Some(e)) | Err(e) => Some(Err(e)),
            Ok(None) => match stream.peer_addr() {
                Ok(_) => Some(Ok(())),
                Err(e) if e.kind() == io::ErrorKind::NotConnected => None,
                Err(e) => Some(Err(e)),
            },
        }
    }

    fn write(&mut self, i: usize, bytes: &[u8]) -> io::Result<usize> {
        self.stream(i)?.write(bytes)
    }

    fn read(&mut self, i: usize) -> io::Result<&[u8]> {
        self.arrival = None;
        let fd = self.streams[i]
            .as_ref()
            .ok_or(io::ErrorKind::NotConnected)?
            .as_raw_fd();
        let mut iov = libc::iovec {
            iov_base: self.buf.as_mut_ptr().cast(),
            iov_len: self.buf.len(),
        };
        // SAFETY: all-zero is a valid msghdr; the buffers it points to outlive the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if self.stamps {
            msg.msg_control = self.control.as_mut_ptr().cast();
            msg.msg_controllen = self.control.len() as _;
        }
        // SAFETY: `fd` is the open socket of connection `i`, `msg` is valid.
        let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if self.stamps {
            let control = &self.control[..(msg.msg_controllen as usize).min(self.control.len())];
            self.arrival = stamp::parse(control).and_then(|ns| self.clock.instant(ns));
        }
        Ok(&self.buf[..n as usize])
    }

    fn arrival(&self) -> Option<Instant> {
        self.arrival
    }

    fn timestamps(&self) -> bool {
        self.stamps
    }

    fn waits_for_count(&self) -> bool {
        false
    }

    fn watch_idle(&mut self, _i: usize) {
        // Registered for readability all along.
    }

    fn close(&mut self, i: usize) {
        self.streams[i] = None;
    }

    fn wait(
        &mut self,
        until: Option<Instant>,
        precise: bool,
        want: usize,
        ready: &mut Vec<usize>,
    ) -> bool {
        if want > 1 && self.stamps {
            // epoll wakes on the first event: to take several responses per wake-up, sleep
            // to the end of the wait (the timestamps keep their latencies), then collect.
            if let Some(until) = until {
                let nap = until
                    .saturating_duration_since(Instant::now())
                    .min(MAX_WAIT);
                if !nap.is_zero() {
                    std::thread::sleep(nap);
                }
            }
            return self.wait(None, precise, 1, ready);
        }
        let timeout = match until {
            None => Duration::ZERO,
            Some(until) => {
                let now = Instant::now();
                let mut timeout = until.saturating_duration_since(now).min(MAX_WAIT);
                if precise && !timeout.is_zero() {
                    // Re-arm only when the wake-up moved: one syscall less per loop turn.
                    if self.armed != Some(until) {
                        match self.timer() {
                            Ok(t) => t.arm(timeout),
                            Err(e) => panic!("failed to create a timer: {e}"),
                        }
                        self.armed = Some(until);
                    }
                    timeout += Duration::from_millis(1); // the timer fires first
                }
                timeout
            }
        };
        if let Err(e) = self.poll.poll(&mut self.events, Some(timeout)) {
            if e.kind() != io::ErrorKind::Interrupted {
                // Nothing sensible can continue without the poller.
                panic!("failed to poll: {e}");
            }
        }
        if self.stamps {
            self.clock = Clock::now();
        }
        let mut any = false;
        for event in self.events.iter() {
            if event.token().0 == TIMER_TOKEN {
                if let Some(t) = &self.timer {
                    t.clear();
                }
                self.armed = None;
                continue;
            }
            any = true;
            let (i, generation) = untoken(event.token().0 as u64);
            // A stale event of a socket that has been replaced is dropped.
            if self.generations.get(i) == Some(&generation) && self.streams[i].is_some() {
                ready.push(i);
            }
        }
        any
    }
}
