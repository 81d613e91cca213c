//! Sockets made with plain syscalls: for the io_uring back end the target address in the
//! form `connect` takes and a TCP socket with `TCP_NODELAY`; for both, integer socket
//! options.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

/// `addr` as a `sockaddr_storage` and its length.
pub(crate) fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: all-zero is a valid sockaddr_storage; the family-specific views written below
    // fit inside it.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_in fits in and is aligned within sockaddr_storage.
            let sin = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in) };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from(*a.ip()).to_be();
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: sockaddr_in6 fits in and is aligned within sockaddr_storage.
            let sin6 = unsafe { &mut *(&mut storage as *mut _ as *mut libc::sockaddr_in6) };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_scope_id = a.scope_id();
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// A new TCP socket of `family` with `TCP_NODELAY`, blocking: io_uring itself waits for
/// readiness instead of failing with EAGAIN.
pub(crate) fn tcp_socket(family: libc::c_int) -> io::Result<RawFd> {
    // SAFETY: plain syscalls on a descriptor this function owns until it returns it.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    set_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    Ok(fd)
}

/// Sets the integer socket option `name` of `level` on `fd`; returns whether the kernel
/// took it.
pub(crate) fn set_int(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> bool {
    // SAFETY: a c_int option value of the stated size; a bad descriptor is an error return.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    rc == 0
}
