//! The load generator against real servers on 127.0.0.1: exact counts, limits, warm-up,
//! error classes, coordinated omission, merge of real runs. Every load is bounded, and every
//! case runs on both I/O back ends.

use crate::common;

/// The cases on the mio/epoll back end.
mod epoll {
    const BACKEND: benchrun_load::Backend = benchrun_load::Backend::Epoll;
    include!("loopback/cases.rs");
}

/// The cases on the io_uring back end (epoll where the kernel refuses io_uring).
mod io_uring {
    const BACKEND: benchrun_load::Backend = benchrun_load::Backend::IoUring;
    include!("loopback/cases.rs");
}
