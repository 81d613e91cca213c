//! The io_uring back end: connects, sends and receives are queued as submissions and all
//! of a loop turn's go to the kernel in the one `io_uring_enter` that also waits for
//! completions (with a nanosecond timeout, so no timerfd). The ring is single-issuer with
//! deferred task work where the kernel has it (6.1+), so completions are only run when
//! this thread asks for them; a flag in the shared ring says when some are pending, so a
//! spin before sleeping reads memory rather than making syscalls.
//!
//! Each connection's receive is one multishot `recvmsg` into a ring of provided buffers
//! ([`super::bufring`]), armed once per socket: no re-arming, no failed first attempt and
//! no readiness poll set up anew per response. Each completion's buffer holds the payload
//! and its receive timestamp ([`super::stamp`]). Needs kernel 6.1; `auto` uses epoll on
//! older ones.
//!
//! A connection that sends a second request is put in the ring's table of registered
//! files (an update queued with its send, no syscall of its own), and its sends name it
//! there: the kernel then takes no file reference per send (`fget`/`fput`, 1.5% of the
//! generator's CPU on a keep-alive loopback benchmark). A connection used once, as without
//! keep-alive, is never registered.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::time::Instant;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::bufring::{BufRing, GROUP};
use super::sock;
use super::stamp::{self, Clock};
use super::{token, untoken, Io, MAX_WAIT};

/// Bytes of one provided receive buffer.
const RECV_BUF: usize = 16 * 1024;

/// Reads of the ring's flags in one non-blocking poll that finds nothing.
const SPIN_CHECKS: u32 = 64;

/// Requests up to this size are sent without a completion on success
/// ([`squeue::Flags::SKIP_SUCCESS`], with `MSG_WAITALL` so a short send is finished by the
/// kernel or fails): they fit the socket's send buffer (at least 4 KiB), which the
/// previous request of the connection has left, so the kernel copies them when the send is
/// submitted. Only a failure completes, and it is handed to the connection's next read.
const QUIET_SEND_MAX: usize = 4096;

/// What a completion belongs to, in bits 48.. of its user data.
const OP_CONNECT: u64 = 0;
const OP_SEND: u64 = 1;
const OP_RECV: u64 = 2;
/// Cancellations and closes of an abandoned socket, and updates of the registered-file
/// table; their completions are ignored.
const OP_CANCEL: u64 = 3;

/// What a registered-file table update writes to remove a connection's entry.
static UNREGISTER: RawFd = -1;

/// One operation of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    None,
    InFlight,
    /// Completed with this result (a count, or a negated errno).
    Done(i32),
}

struct Slot {
    fd: RawFd,
    generation: u32,
    connect: Op,
    send: Op,
    /// The multishot receive is armed.
    receiving: bool,
    /// Receive completions not read yet: result and buffer.
    received: VecDeque<(i32, Option<u16>)>,
    /// Requests sent on this socket (counted to 2).
    sent: u8,
    /// The socket is in the ring's registered-file table, at the connection's index.
    registered: bool,
}

/// Kernel support for io_uring as this back end uses it, as this process may use it
/// (seccomp included).
pub(crate) fn probe() -> io::Result<()> {
    let ring = build(8)?;
    if !ring.params().is_feature_ext_arg() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "io_uring without timeout waits (kernel older than 5.11)",
        ));
    }
    // A refused io_uring_enter (seccomp may allow setup but not enter) shows here, and so
    // does a kernel without provided buffer rings.
    ring.submitter().submit()?;
    BufRing::new(&ring, 1, 64)?;
    Ok(())
}

/// Whether [`probe`] succeeds.
pub(crate) fn available() -> bool {
    probe().is_ok()
}

/// A single-issuer ring with deferred task work (6.1) that flags pending completions.
fn build(entries: u32) -> io::Result<IoUring> {
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_taskrun_flag()
        .setup_clamp()
        .build(entries)
}

/// A ring and the per-connection sockets it drives.
pub(crate) struct UringIo {
    /// Declared first, so dropped before the buffers it may write into.
    ring: IoUring,
    bufs: BufRing,
    /// The buffer of the slice [`Io::read`] last returned, handed back on the next call.
    lent: Option<u16>,
    /// The target, in the form connect wants (boxed: its address goes to the kernel).
    addr: Box<(libc::sockaddr_storage, libc::socklen_t)>,
    family: libc::c_int,
    slots: Vec<Slot>,
    /// The multishot receives' message header: no name, room for a timestamp (boxed: its
    /// address goes to the kernel).
    msghdr: Box<libc::msghdr>,
    /// Sockets are asked for receive timestamps (the kernel agreed when probed).
    stamps: bool,
    /// Both clocks as read after the last wait, to place this turn's timestamps.
    clock: Clock,
    /// When the data of the last read arrived, if its receive carried a timestamp.
    arrival: Option<Instant>,
    /// Connects and sends in flight: their completions come at once, so a wait for `want`
    /// responses waits for this many completions more.
    quick: usize,
    /// The ring has a registered-file table with an entry per connection (empty if the
    /// kernel refused one: then every operation names its descriptor).
    table: Box<[RawFd]>,
}

fn result(res: i32) -> io::Result<usize> {
    if res < 0 {
        Err(io::Error::from_raw_os_error(-res))
    } else {
        Ok(res as usize)
    }
}

impl UringIo {
    fn user_data(&self, i: usize, op: u64) -> u64 {
        token(i, self.slots[i].generation) | op << 48
    }

    /// Queues a submission, handing the queue to the kernel first if it is full.
    fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: every buffer and address an entry points to outlives its operation:
            // request bytes by the contract of `Io::write`, the receive buffers and the
            // target address are owned by `self` and only dropped with the ring, whose drop
            // waits for nothing but whose file references keep the sockets alive.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            if let Err(e) = self.ring.submit() {
                if e.raw_os_error() != Some(libc::EBUSY) {
                    panic!("failed to submit to io_uring: {e}");
                }
                // Completions must be reaped first; the next wait does.
                self.ring.submit_and_wait(0).ok();
            }
        }
    }

    fn reap(&mut self, ready: &mut Vec<usize>) -> bool {
        if self.stamps {
            self.clock = Clock::now();
        }
        let mut any = false;
        let mut rearm = Vec::new();
        let (slots, bufs) = (&mut self.slots, &mut self.bufs);
        for cqe in self.ring.completion() {
            let data = cqe.user_data();
            let op = data >> 48;
            let (i, generation) = untoken(data & ((1 << 48) - 1));
            let buf = cqueue::buffer_select(cqe.flags());
            let Some(slot) = slots.get_mut(i) else {
                continue;
            };
            if op == OP_CANCEL || slot.generation != generation || slot.fd < 0 {
                // Of a socket that has been closed.
                if let Some(bid) = buf {
                    bufs.put(bid);
                }
                continue;
            }
            match op {
                OP_CONNECT => {
                    slot.connect = Op::Done(cqe.result());
                    self.quick -= 1;
                }
                OP_SEND if slot.send == Op::InFlight => {
                    slot.send = Op::Done(cqe.result());
                    self.quick -= 1;
                }
                OP_SEND => {
                    // A quiet send failed (or fell short): the request is lost, which the
                    // connection's read reports.
                    let err = match cqe.result() {
                        res if res < 0 => res,
                        _ => -libc::EPIPE,
                    };
                    slot.received.push_front((err, None));
                }
                _ => {
                    if !cqueue::more(cqe.flags()) {
                        slot.receiving = false;
                    }
                    if cqe.result() == -libc::ENOBUFS {
                        // Every buffer was in use: receive again once some are back.
                        rearm.push(i);
                        continue;
                    }
                    slot.received.push_back((cqe.result(), buf));
                }
            }
            any = true;
            ready.push(i);
        }
        self.bufs.publish();
        for i in rearm {
            self.watch_idle(i);
        }
        any
    }

    /// Hands back the buffer of the last read.
    fn give_back(&mut self) {
        if let Some(bid) = self.lent.take() {
            self.bufs.put(bid);
            self.bufs.publish();
        }
    }

    /// Puts a socket that sends its second request in the registered-file table: the
    /// update is queued before the send, and the kernel runs a batch's submissions in
    /// order. Returns whether sends name the socket by its table entry.
    fn register(&mut self, i: usize) -> bool {
        let slot = &mut self.slots[i];
        if slot.registered || self.table.is_empty() {
            return slot.registered;
        }
        slot.sent = slot.sent.saturating_add(1);
        if slot.sent < 2 {
            return false;
        }
        slot.registered = true;
        self.table[i] = slot.fd;
        self.update_table(i, &self.table[i]);
        true
    }

    /// Queues the write of `*fd` into connection `i`'s entry of the registered-file table
    /// (`-1`: empty it). The kernel reads `*fd` when the queue is submitted.
    fn update_table(&mut self, i: usize, fd: *const RawFd) {
        let entry = opcode::FilesUpdate::new(fd, 1)
            .offset(i as i32)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(self.user_data(i, OP_CANCEL));
        self.push(entry);
    }

    /// The send of `len` bytes at `ptr` on connection `i`, by its table entry if it has one.
    fn send_entry(&mut self, i: usize, ptr: *const u8, len: u32, flags: i32) -> squeue::Entry {
        let fd = self.slots[i].fd;
        if self.register(i) {
            opcode::Send::new(types::Fixed(i as u32), ptr, len)
                .flags(flags)
                .build()
        } else {
            opcode::Send::new(types::Fd(fd), ptr, len)
                .flags(flags)
                .build()
        }
    }

    /// Submits what is queued and runs pending completions without blocking, making a
    /// syscall only when there is something to submit or complete.
    fn poll_now(&mut self) {
        let mut pending = false;
        // A few µs of reading the ring's flags (no syscall, no PAUSE that a hypervisor
        // might trap) before giving up: completions arrive as deferred task work, flagged.
        for _ in 0..SPIN_CHECKS {
            pending = {
                let sq = self.ring.submission();
                !sq.is_empty() || sq.taskrun() || sq.cq_overflow()
            };
            if pending || !self.ring.completion().is_empty() {
                break;
            }
        }
        if pending {
            if let Err(e) = self.ring.submit() {
                if !matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY)) {
                    panic!("failed to submit to io_uring: {e}");
                }
            }
        }
    }
}

impl Io for UringIo {
    fn new(conns: usize, addr: SocketAddr) -> io::Result<Self> {
        // Each connection has at most two operations in flight (send and receive) plus a
        // cancellation or a connect; a full queue is submitted early.
        let entries = (2 * conns + 16).next_power_of_two().clamp(64, 4096) as u32;
        let ring = build(entries)?;
        // A buffer per connection: a connection's are read in the loop turn they arrive
        // in, and running out only delays a receive (it is armed again). Only the pages
        // written into count in the resident size.
        let count = conns.next_power_of_two().clamp(16, 32768) as u16;
        let bufs = BufRing::new(&ring, count, RECV_BUF)?;
        // Ask the kernel not to coalesce this thread's timeouts by the default 50 µs.
        // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        // SAFETY: all-zero is a valid msghdr (no name, no iovec: the buffers are provided).
        let mut msghdr: Box<libc::msghdr> = Box::new(unsafe { std::mem::zeroed() });
        msghdr.msg_controllen = stamp::control_len() as _;
        // A table entry per connection; without one (a kernel older than 5.19, or a limit
        // on open files), descriptors are named as they are.
        let table = match ring.submitter().register_files_sparse(conns as u32) {
            Ok(()) => vec![-1; conns].into_boxed_slice(),
            Err(_) => Box::default(),
        };
        Ok(UringIo {
            table,
            msghdr,
            stamps: stamp::probe(),
            clock: Clock::now(),
            arrival: None,
            quick: 0,
            ring,
            bufs,
            lent: None,
            addr: Box::new(sock::sockaddr(addr)),
            family: if addr.is_ipv4() {
                libc::AF_INET
            } else {
                libc::AF_INET6
            },
            slots: (0..conns)
                .map(|_| Slot {
                    fd: -1,
                    generation: 0,
                    connect: Op::None,
                    send: Op::None,
                    receiving: false,
                    received: VecDeque::new(),
                    sent: 0,
                    registered: false,
                })
                .collect(),
        })
    }

    fn is_open(&self, i: usize) -> bool {
        self.slots[i].fd >= 0
    }

    fn connect(&mut self, i: usize) -> io::Result<()> {
        self.close(i);
        let fd = sock::tcp_socket(self.family)?;
        if self.stamps {
            stamp::enable(fd);
        }
        let slot = &mut self.slots[i];
        slot.fd = fd;
        slot.generation = slot.generation.wrapping_add(1) & 0xff_ffff;
        slot.connect = Op::InFlight;
        self.quick += 1;
        let (storage, len) = &*self.addr;
        let entry = opcode::Connect::new(
            types::Fd(fd),
            (storage as *const libc::sockaddr_storage).cast(),
            *len,
        )
        .build()
        .user_data(self.user_data(i, OP_CONNECT));
        self.push(entry);
        Ok(())
    }

    fn connect_result(&mut self, i: usize) -> Option<io::Result<()>> {
        match self.slots[i].connect {
            Op::Done(res) => {
                self.slots[i].connect = Op::None;
                Some(result(res).map(|_| ()))
            }
            _ => None,
        }
    }

    fn write(&mut self, i: usize, bytes: &[u8]) -> io::Result<usize> {
        let slot = &mut self.slots[i];
        if slot.fd < 0 {
            return Err(io::ErrorKind::NotConnected.into());
        }
        match slot.send {
            Op::Done(res) => {
                slot.send = Op::None;
                result(res)
            }
            Op::InFlight => Err(io::ErrorKind::WouldBlock.into()),
            Op::None if bytes.len() <= QUIET_SEND_MAX => {
                let flags = libc::MSG_NOSIGNAL | libc::MSG_WAITALL;
                let entry = self
                    .send_entry(i, bytes.as_ptr(), bytes.len() as u32, flags)
                    .flags(squeue::Flags::SKIP_SUCCESS)
                    .user_data(self.user_data(i, OP_SEND));
                self.push(entry);
                // The response's receive goes to the kernel in the same batch.
                self.watch_idle(i);
                Ok(bytes.len())
            }
            Op::None => {
                slot.send = Op::InFlight;
                self.quick += 1;
                let len = bytes.len().min(u32::MAX as usize) as u32;
                let entry = self
                    .send_entry(i, bytes.as_ptr(), len, libc::MSG_NOSIGNAL)
                    .user_data(self.user_data(i, OP_SEND));
                self.push(entry);
                // The response's receive goes to the kernel in the same batch.
                self.watch_idle(i);
                Err(io::ErrorKind::WouldBlock.into())
            }
        }
    }

    fn read(&mut self, i: usize) -> io::Result<&[u8]> {
        self.give_back();
        self.arrival = None;
        let slot = &mut self.slots[i];
        if slot.fd < 0 {
            return Err(io::ErrorKind::NotConnected.into());
        }
        match slot.received.pop_front() {
            Some((res, bid)) => {
                let n = result(res)?;
                match bid {
                    Some(bid) => {
                        self.lent = Some(bid);
                        let data = self.bufs.data(bid, n);
                        let out = types::RecvMsgOut::parse(data, &self.msghdr)
                            .map_err(|()| io::Error::other("malformed multishot recvmsg buffer"))?;
                        self.arrival =
                            stamp::parse(out.control_data()).and_then(|ns| self.clock.instant(ns));
                        let payload = out.payload_data();
                        let start = payload.as_ptr() as usize - data.as_ptr() as usize;
                        // An empty payload is the end of the stream.
                        Ok(&data[start..start + payload.len()])
                    }
                    None => Ok(&[]),
                }
            }
            None => {
                self.watch_idle(i);
                Err(io::ErrorKind::WouldBlock.into())
            }
        }
    }

    fn watch_idle(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        if slot.fd < 0 || slot.receiving {
            return;
        }
        slot.receiving = true;
        let entry = opcode::RecvMsgMulti::new(types::Fd(slot.fd), &*self.msghdr, GROUP)
            .build()
            .user_data(self.user_data(i, OP_RECV));
        self.push(entry);
    }

    fn close(&mut self, i: usize) {
        let slot = &self.slots[i];
        if slot.fd < 0 {
            return;
        }
        let receive = if slot.receiving {
            Op::InFlight
        } else {
            Op::None
        };
        let (fd, registered, ops) = (slot.fd, slot.registered, [slot.connect, slot.send, receive]);
        self.quick -= ops[..2].iter().filter(|&&op| op == Op::InFlight).count();
        // Operations in flight hold their own reference to the socket: cancel them (by
        // user data, so a reused descriptor number is never touched). Their completions,
        // and any receive not read yet, hand their buffers back.
        for (op, state) in [OP_CONNECT, OP_SEND, OP_RECV].into_iter().zip(ops) {
            if state == Op::InFlight {
                let target = self.user_data(i, op);
                let entry = opcode::AsyncCancel::new(target)
                    .build()
                    .user_data(self.user_data(i, OP_CANCEL));
                self.push(entry);
            }
        }
        // The table's reference goes first, so the close ends the socket.
        if registered {
            self.update_table(i, &UNREGISTER);
        }
        // The close goes with the turn's other submissions (one syscall less per request
        // without keep-alive); the descriptor number stays taken until it has run.
        let entry = opcode::Close::new(types::Fd(fd))
            .build()
            .user_data(self.user_data(i, OP_CANCEL));
        self.push(entry);
        let slot = &mut self.slots[i];
        slot.fd = -1;
        slot.generation = slot.generation.wrapping_add(1) & 0xff_ffff;
        (slot.connect, slot.send, slot.receiving) = (Op::None, Op::None, false);
        (slot.sent, slot.registered) = (0, false);
        for (_, bid) in std::mem::take(&mut slot.received) {
            if let Some(bid) = bid {
                self.bufs.put(bid);
            }
        }
        self.bufs.publish();
    }

    fn arrival(&self) -> Option<Instant> {
        self.arrival
    }

    fn timestamps(&self) -> bool {
        self.stamps
    }

    fn waits_for_count(&self) -> bool {
        true
    }

    fn wait(
        &mut self,
        until: Option<Instant>,
        _precise: bool,
        want: usize,
        ready: &mut Vec<usize>,
    ) -> bool {
        self.give_back();
        let timeout = until.map(|u| u.saturating_duration_since(Instant::now()).min(MAX_WAIT));
        match timeout {
            Some(t) if !t.is_zero() && self.ring.completion().is_empty() => {
                // A batch counts responses: the connects' and sends' completions on top.
                let min_complete = if want > 1 { want + self.quick } else { 1 };
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                if let Err(e) = self.ring.submitter().submit_with_args(min_complete, &args) {
                    if !matches!(
                        e.raw_os_error(),
                        Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                    ) {
                        panic!("failed to wait on io_uring: {e}");
                    }
                }
            }
            _ => self.poll_now(),
        }
        self.reap(ready)
    }
}

impl Drop for UringIo {
    fn drop(&mut self) {
        // Queued closes (and cancellations) run now rather than leak their descriptors.
        let _ = self.ring.submit();
        for slot in &self.slots {
            if slot.fd >= 0 {
                // SAFETY: the slot owns the descriptor.
                unsafe { libc::close(slot.fd) };
            }
        }
    }
}
