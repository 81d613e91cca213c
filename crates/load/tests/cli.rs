//! The binary: bad input gives a clean message and a non-zero exit; `merge` prints JSON.

mod common;

use std::process::Command;

use benchrun_load::LoadResult;
use common::{serve, Behavior};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchrun-load"))
}

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    let cases: &[&[&str]] = &[
        &["https://127.0.0.1:1/"],
        &["not-a-url"],
        &["-c", "0", "http://127.0.0.1:1/"],
        &["-n", "5", "-d", "1s", "http://127.0.0.1:1/"],
        &["--rate", "10", "http://127.0.0.1:1/"],
        &["-d", "10parsecs", "http://127.0.0.1:1/"],
        &["-H", "no-colon", "http://127.0.0.1:1/"],
        &[],
    ];
    for args in cases {
        let out = bin().args(*args).output().unwrap();
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.is_empty() && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn json_output_merges_through_the_merge_subcommand() {
    let server = serve(Behavior::Ok);
    let dir = std::env::temp_dir().join(format!("benchrun-load-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for (i, n) in [30, 20].iter().enumerate() {
        let out = bin()
            .args([
                "-c",
                "2",
                "-t",
                "1",
                "-n",
                &n.to_string(),
                "--output",
                "json",
                &server.url(),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let f = dir.join(format!("{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        files.push(f);
    }
    let out = bin().arg("merge").args(&files).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: LoadResult = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(merged.requests, 50);
    assert_eq!(merged.latency.count, 50);
    assert_eq!(server.requests(), 50);
    let _ = std::fs::remove_dir_all(&dir);
}
