//! `make test` and the cluster suites never run against someone else's cluster by accident: a
//! `KUBECONFIG` that is not the local cluster's is refused before anything runs, unless
//! `BENCHRUN_TEST_FOREIGN_CLUSTER=yes` opts in (hack/cluster-guard.sh).

use std::path::PathBuf;
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"))
}

/// Runs `program args` in the checkout with a foreign KUBECONFIG (a path that is not the local
/// cluster's; it need not exist: nothing may read it). CARGO_TARGET_DIR is set so that the
/// Makefile's choice of a build directory has nothing to do.
fn with_foreign_kubeconfig(program: &str, args: &[&str], opt_in: Option<&str>) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(repo_root())
        .env(
            "KUBECONFIG",
            "/nonexistent/someone-elses-cluster/kubeconfig",
        )
        .env(
            "CARGO_TARGET_DIR",
            std::env::temp_dir().join("benchrun-guard-test-target"),
        )
        .env_remove("BENCHRUN_TEST_FOREIGN_CLUSTER")
        .env_remove("MAKEFLAGS")
        .env_remove("MAKELEVEL");
    if let Some(value) = opt_in {
        cmd.env("BENCHRUN_TEST_FOREIGN_CLUSTER", value);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("failed to run {program}: {e}"))
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn make_test_refuses_a_foreign_kubeconfig_before_any_suite() {
    let out = with_foreign_kubeconfig("tests/run-all.sh", &[], None);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("refusing to run make test"), "{all}");
    assert!(
        all.contains("BENCHRUN_TEST_FOREIGN_CLUSTER=yes"),
        "names the opt-in: {all}"
    );
    assert!(!all.contains("===="), "no suite may start: {all}");
}

#[test]
fn the_cluster_suites_refuse_a_foreign_kubeconfig_before_installing() {
    for target in ["e2e", "e2e-run", "smoke"] {
        let out = with_foreign_kubeconfig("make", &["--no-print-directory", target], None);
        let all = text(&out);
        assert!(!out.status.success(), "make {target}: {all}");
        assert!(
            all.contains("cluster-guard: refusing"),
            "make {target}: {all}"
        );
        assert!(
            !all.contains("install:"),
            "make {target} must not install: {all}"
        );
        assert!(
            !all.contains("Compiling"),
            "make {target} must not build: {all}"
        );
    }
}

#[test]
fn the_guard_lets_the_opt_in_and_only_the_exact_word_through() {
    let yes = with_foreign_kubeconfig("hack/cluster-guard.sh", &["the tests"], Some("yes"));
    assert_eq!(yes.status.code(), Some(0), "{}", text(&yes));
    let other = with_foreign_kubeconfig("hack/cluster-guard.sh", &["the tests"], Some("1"));
    assert_eq!(other.status.code(), Some(2), "{}", text(&other));
}
