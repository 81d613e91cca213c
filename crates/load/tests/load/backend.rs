//! Back-end selection against a loopback server: where seccomp refuses io_uring (as the
//! default profiles of container runtimes do), `auto` runs on epoll and says so in the
//! result, and a forced io_uring fails instead of falling back.

use crate::common;

use benchrun_load::{run, Backend, Limit};
use common::{serve, Behavior};

/// Makes `io_uring_setup` fail with EPERM for this thread and the threads it starts, the
/// way a container runtime's default seccomp profile does.
#[cfg(target_arch = "x86_64")]
fn forbid_io_uring() {
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let allow = stmt(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW);
    let filter = [
        stmt(load, 4), // seccomp_data.arch
        jump(AUDIT_ARCH_X86_64, 1, 0),
        allow,
        stmt(load, 0), // seccomp_data.nr
        jump(libc::SYS_io_uring_setup as u32, 0, 1),
        stmt(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        ),
        allow,
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: prctl with a filter program that outlives the call (the kernel copies it).
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        let set = libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
        );
        assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn auto_runs_on_epoll_where_seccomp_refuses_io_uring_and_a_forced_io_uring_fails() {
    let server = serve(Behavior::Ok);
    std::thread::scope(|s| {
        s.spawn(|| {
            forbid_io_uring();
            let mut c = server.config(4, Limit::Requests(200));
            c.backend = Backend::Auto;
            let r = run(&c).unwrap();
            assert_eq!(r.backend.as_deref(), Some("epoll"));
            assert_eq!((r.requests, r.successes), (200, 200));
            c.backend = Backend::IoUring;
            let err = run(&c).unwrap_err().to_string();
            assert!(err.contains("io_uring"), "{err}");
        });
    });
    assert_eq!(server.requests(), 200);
}

#[test]
fn the_result_names_the_back_end_that_ran() {
    let server = serve(Behavior::Ok);
    let mut c = server.config(2, Limit::Requests(20));
    c.backend = Backend::Epoll;
    assert_eq!(run(&c).unwrap().backend.as_deref(), Some("epoll"));
    c.backend = Backend::Auto;
    let expected = Backend::Auto.resolve().unwrap().name();
    assert_eq!(run(&c).unwrap().backend.as_deref(), Some(expected));
}
