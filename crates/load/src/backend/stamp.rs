//! Receive timestamps: the kernel notes when each packet entered its receive path
//! (`SO_TIMESTAMPNS`), and a receive hands that instant back as control data. A response's
//! latency then ends when its last bytes arrived, not when this thread got round to reading
//! them, so a thread may sleep through a batch of responses without adding that sleep to
//! any latency. The kernel's clock is `CLOCK_REALTIME`; [`Clock`] converts to [`Instant`].

use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Bytes of control data one receive needs for its timestamp (`CMSG_SPACE` of a
/// `timespec`).
pub(crate) fn control_len() -> usize {
    // SAFETY: CMSG_SPACE is arithmetic on its argument.
    unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::timespec>() as u32) as usize }
}

/// Asks the kernel to timestamp what `fd` receives; returns whether it agreed.
pub(crate) fn enable(fd: RawFd) -> bool {
    super::sock::set_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// Whether the kernel timestamps TCP receives, tried once per process on a socket made
/// for the purpose and then kept open: the kernel turns receive timestamps on for the whole
/// machine while any socket wants them and switches over in the background, so the socket
/// kept open makes sure they are on by the time the first connection receives.
pub(crate) fn probe() -> bool {
    static PROBED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PROBED.get_or_init(|| {
        if std::env::var_os("BENCHRUN_LOAD_RX_TIMESTAMPS").is_some_and(|v| v == "0") {
            return false;
        }
        // SAFETY: plain syscalls on a descriptor this function owns; it is kept open on
        // purpose (closed with the process).
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return false;
            }
            let ok = enable(fd);
            if !ok {
                libc::close(fd);
            }
            ok
        }
    })
}

/// The receive timestamp in `control` (the control data of one `recvmsg`), as nanoseconds
/// of `CLOCK_REALTIME`, if it holds one.
pub(crate) fn parse(control: &[u8]) -> Option<i128> {
    let header = std::mem::size_of::<libc::cmsghdr>();
    let mut at = 0;
    while at + header <= control.len() {
        // SAFETY: `header` bytes from `at` are in bounds; read_unaligned needs no alignment.
        let cmsg: libc::cmsghdr =
            unsafe { std::ptr::read_unaligned(control[at..].as_ptr().cast()) };
        let len = cmsg.cmsg_len as usize;
        if len < header || at + len > control.len() {
            return None;
        }
        // SAFETY: CMSG_LEN is arithmetic on its argument.
        let data_at = at + unsafe { libc::CMSG_LEN(0) } as usize;
        let ts_len = std::mem::size_of::<libc::timespec>();
        if cmsg.cmsg_level == libc::SOL_SOCKET
            && cmsg.cmsg_type == libc::SCM_TIMESTAMPNS
            && data_at + ts_len <= at + len
        {
            // SAFETY: bounds checked above.
            let ts: libc::timespec =
                unsafe { std::ptr::read_unaligned(control[data_at..].as_ptr().cast()) };
            return Some(i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec));
        }
        // The next message starts at the next multiple of a word (CMSG_ALIGN).
        let word = std::mem::size_of::<usize>();
        at += len.div_ceil(word) * word;
    }
    None
}

/// One reading of both clocks, to place realtime timestamps on the monotonic clock.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    mono: Instant,
    real_ns: i128,
}

impl Clock {
    /// Reads both clocks now.
    pub fn now() -> Clock {
        let mono = Instant::now();
        Clock {
            mono,
            real_ns: realtime_ns(),
        }
    }

    /// The monotonic instant of a realtime timestamp: as far before (or after) this
    /// reading's `Instant` as the timestamp is before (or after) its realtime reading.
    /// `None` when it is implausibly far (more than a minute) away.
    pub fn instant(&self, real_ns: i128) -> Option<Instant> {
        let ago = self.real_ns - real_ns;
        if ago.unsigned_abs() > 60_000_000_000 {
            return None;
        }
        let d = Duration::from_nanos(ago.unsigned_abs() as u64);
        if ago >= 0 {
            self.mono.checked_sub(d)
        } else {
            self.mono.checked_add(d)
        }
    }
}

fn realtime_ns() -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmsg(level: i32, ty: i32, data: &[u8]) -> Vec<u8> {
        // SAFETY: arithmetic macros.
        let (len, space) = unsafe {
            (
                libc::CMSG_LEN(data.len() as u32) as usize,
                libc::CMSG_SPACE(data.len() as u32) as usize,
            )
        };
        let mut out = vec![0u8; space];
        let hdr = libc::cmsghdr {
            cmsg_len: len as _,
            cmsg_level: level,
            cmsg_type: ty,
        };
        // SAFETY: `out` holds at least a header.
        unsafe { std::ptr::write_unaligned(out.as_mut_ptr().cast(), hdr) };
        let at = unsafe { libc::CMSG_LEN(0) } as usize;
        out[at..at + data.len()].copy_from_slice(data);
        out
    }

    fn timespec_bytes(sec: i64, nsec: i64) -> Vec<u8> {
        let mut v = sec.to_ne_bytes().to_vec();
        v.extend_from_slice(&nsec.to_ne_bytes());
        v
    }

    #[test]
    fn finds_the_timestamp_among_other_control_messages() {
        let mut control = cmsg(libc::IPPROTO_IP, libc::IP_TOS, &[0x10, 0, 0, 0]);
        control.extend(cmsg(
            libc::SOL_SOCKET,
            libc::SCM_TIMESTAMPNS,
            &timespec_bytes(1_700_000_000, 250),
        ));
        assert_eq!(parse(&control), Some(1_700_000_000_000_000_250));
        assert_eq!(parse(&[]), None);
        // Truncated: no timestamp rather than garbage.
        let ts = cmsg(
            libc::SOL_SOCKET,
            libc::SCM_TIMESTAMPNS,
            &timespec_bytes(5, 6),
        );
        assert_eq!(parse(&ts[..ts.len() - 12]), None);
    }

    #[test]
    fn places_realtime_stamps_on_the_monotonic_clock() {
        let c = Clock {
            mono: Instant::now() + Duration::from_secs(10),
            real_ns: 1_000_000_000_000,
        };
        assert_eq!(
            c.instant(1_000_000_000_000 - 1500),
            Some(c.mono - Duration::from_nanos(1500))
        );
        assert_eq!(
            c.instant(1_000_000_000_000 + 700),
            Some(c.mono + Duration::from_nanos(700))
        );
        assert_eq!(c.instant(0), None);
    }

    #[test]
    fn loopback_tcp_receives_carry_a_timestamp_near_now() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(server.local_addr().unwrap()).unwrap();
        let (mut peer, _) = server.accept().unwrap();
        assert!(probe());
        // The kernel turns timestamps on in the background after the first socket asks.
        std::thread::sleep(Duration::from_millis(50));
        assert!(enable(client.as_raw_fd()));
        let sent = Instant::now();
        peer.write_all(b"hello").unwrap();
        std::thread::sleep(Duration::from_millis(30));
        let mut data = [0u8; 16];
        let mut control = vec![0u8; control_len() + 64];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        // SAFETY: all-zero is a valid msghdr; the pointers set below outlive the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len() as _;
        // SAFETY: a valid descriptor and msghdr.
        let n = unsafe { libc::recvmsg(client.as_raw_fd(), &mut msg, 0) };
        let read_at = Clock::now();
        assert_eq!(n, 5);
        let stamp = parse(&control[..msg.msg_controllen as usize]).expect("a timestamp");
        let arrived = read_at.instant(stamp).unwrap();
        // It arrived right after the write, about 30 ms before the read.
        assert!(
            arrived >= sent - Duration::from_millis(1),
            "{arrived:?} {sent:?}"
        );
        assert!(
            arrived < sent + Duration::from_millis(10),
            "{arrived:?} {sent:?}"
        );
    }
}
