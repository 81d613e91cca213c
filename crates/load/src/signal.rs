//! SIGINT/SIGTERM handling: the first signal asks every event loop to stop sending and
//! finish what is in flight, so the measured part is still reported; a second one exits.

use std::sync::atomic::{AtomicBool, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);

/// True once a stop was requested (by a signal or [`request_stop`]).
#[inline]
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Asks running loads to stop sending new requests and finish the in-flight ones.
pub fn request_stop() {
    STOP.store(true, Ordering::Relaxed);
}

extern "C" fn on_signal(_: libc::c_int) {
    if STOP.swap(true, Ordering::Relaxed) {
        // Second signal: the user really wants out. _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Installs the SIGINT and SIGTERM handlers (the binary does; tests do not).
pub fn install_handlers() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only touches an atomic and calls the async-signal-safe _exit.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}
