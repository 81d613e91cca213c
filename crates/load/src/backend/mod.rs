//! The I/O back ends of a worker: io_uring (batched submissions and completions, one
//! `io_uring_enter` per loop turn) and mio/epoll (readiness, one syscall per operation).
//! Both offer the worker the same non-blocking, per-connection operations, so one event
//! loop and one connection state machine drive either.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

mod bufring;
pub(crate) mod epoll;
mod sock;
mod stamp;
pub(crate) mod uring;

/// Which back end runs the event loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// io_uring when the kernel (and a container's seccomp profile) allows it, else epoll.
    #[default]
    Auto,
    /// mio over epoll.
    Epoll,
    /// io_uring; the run fails when the kernel refuses it.
    IoUring,
}

impl Backend {
    /// The back end that will run: `Auto` resolved by probing the kernel once.
    pub fn resolve(self) -> io::Result<Backend> {
        match self {
            Backend::Auto => Ok(if uring::available() {
                Backend::IoUring
            } else {
                Backend::Epoll
            }),
            Backend::IoUring => uring::probe().map(|()| Backend::IoUring),
            Backend::Epoll => Ok(Backend::Epoll),
        }
    }

    /// The name reported in results and accepted by `--backend`: `auto`, `epoll` or
    /// `io-uring`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Epoll => "epoll",
            Backend::IoUring => "io-uring",
        }
    }

    /// Parses a name of [`Backend::name`].
    pub fn parse(name: &str) -> Option<Backend> {
        [Backend::Auto, Backend::Epoll, Backend::IoUring]
            .into_iter()
            .find(|b| b.name() == name)
    }
}

/// Non-blocking operations on a worker's connections `0..n`, each with at most one socket.
///
/// Reads and writes behave like non-blocking socket calls: `WouldBlock` means "wait for
/// this connection to come back from [`Io::wait`]". A completion-based back end starts the
/// operation on the first call and returns its result on a later one.
pub(crate) trait Io: Sized {
    /// Creates the back end for `conns` connections to `addr`.
    fn new(conns: usize, addr: SocketAddr) -> io::Result<Self>;

    /// Whether connection `i` has a socket (connected or connecting).
    fn is_open(&self, i: usize) -> bool;

    /// Opens a new socket for connection `i` and begins connecting it.
    fn connect(&mut self, i: usize) -> io::Result<()>;

    /// The outcome of the connect of connection `i`, once it is known.
    fn connect_result(&mut self, i: usize) -> Option<io::Result<()>>;

    /// Writes a prefix of `bytes`. The bytes must stay unchanged until the response to
    /// them has been read or the connection is closed: a completion-based back end hands
    /// their address to the kernel, and may count a short request as written before the
    /// kernel has copied it (io_uring copies it when the next wait submits the queue).
    fn write(&mut self, i: usize, bytes: &[u8]) -> io::Result<usize>;

    /// Reads what arrived; an empty slice is the end of the stream.
    fn read(&mut self, i: usize) -> io::Result<&[u8]>;

    /// When the data of the last [`Io::read`] arrived, if the kernel timestamped its receive
    /// ([`stamp`]): a latency ends then rather than when the read ran.
    fn arrival(&self) -> Option<Instant>;

    /// Whether receives carry timestamps, so a wait may sleep through several responses
    /// without adding that sleep to their latencies.
    fn timestamps(&self) -> bool;

    /// Whether a blocking wait can end when a number of completions has arrived (io_uring),
    /// rather than at the first event (epoll). Only then does the closed model batch by
    /// default: epoll would have to sleep the whole batch wait.
    fn waits_for_count(&self) -> bool;

    /// Connection `i` is kept alive without a request: report it when the peer closes it.
    fn watch_idle(&mut self, i: usize);

    /// Drops the socket of connection `i` (abandoning its operations in flight).
    fn close(&mut self, i: usize);

    /// Waits until a connection has news or the time is up (`None`: do not block; `Some`
    /// with `precise`: wake at `until` to the microsecond rather than the millisecond) and
    /// appends those connections to `ready`. Returns whether any arrived. A back end that
    /// can may sleep on until `want` operations have completed (or `until`).
    fn wait(
        &mut self,
        until: Option<Instant>,
        precise: bool,
        want: usize,
        ready: &mut Vec<usize>,
    ) -> bool;
}

/// Whether the kernel timestamps TCP receives, as both back ends then ask it to.
pub(crate) fn receive_timestamps() -> bool {
    stamp::probe()
}

/// A blocking wait that should never last longer than this (the timeout scan needs turns).
pub(crate) const MAX_WAIT: Duration = Duration::from_millis(10);

/// Encodes connection `i` and its socket's generation in one word (tokens, user data).
#[inline]
pub(crate) fn token(i: usize, generation: u32) -> u64 {
    (i as u64 & 0xff_ffff) | (u64::from(generation) & 0xff_ffff) << 24
}

/// The connection and generation of a [`token`].
#[inline]
pub(crate) fn untoken(t: u64) -> (usize, u32) {
    ((t & 0xff_ffff) as usize, ((t >> 24) & 0xff_ffff) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_carry_connection_and_generation() {
        assert_eq!(untoken(token(5, 7)), (5, 7));
        assert_eq!(untoken(token(0xff_ffff, 0xff_ffff)), (0xff_ffff, 0xff_ffff));
        // The generation wraps within its 24 bits.
        assert_eq!(untoken(token(3, 0x100_0001)), (3, 1));
    }

    #[test]
    fn backend_names_round_trip() {
        for b in [Backend::Auto, Backend::Epoll, Backend::IoUring] {
            assert_eq!(Backend::parse(b.name()), Some(b));
        }
        assert_eq!(Backend::parse("kqueue"), None);
    }
}
