//! The listening socket, with a chosen accept-queue size.
//!
//! The listen backlog is the accept queue: connections whose handshake completed and that the
//! server has not accepted yet. When it is full Linux drops further SYNs (`ListenOverflows`)
//! and the client retransmits them after 1 s, then 3 s, 7 s: the connect-time tail of an
//! overloaded accept loop. A small backlog and a slow accept loop
//! ([`crate::ServeOptions::accept_delay`]) reproduce it on purpose.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// The backlog `tokio::net::TcpListener::bind` uses, and the demo target's default.
pub const DEFAULT_BACKLOG: u32 = 1024;

/// Binds `addr` (with `SO_REUSEADDR`, as `TcpListener::bind` does) and listens with an accept
/// queue of `backlog` (the kernel caps it at `net.core.somaxconn`). Call it inside a tokio
/// runtime.
pub fn listen(addr: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}
