//! The binary: bad input gives a clean message and a non-zero exit; `merge` prints JSON.

use crate::common;

use std::process::Command;

use benchrun_load::LoadResult;
use common::{serve, Behavior};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_benchrun-load"))
}

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    let cases: &[&[&str]] = &[
        &["ftp://127.0.0.1:1/"],
        &["--max-concurrent-streams", "5", "https://127.0.0.1:1/"],
        &["--insecure-skip-verify", "http://127.0.0.1:1/"],
        &["--protocol", "h3", "http://127.0.0.1:1/"],
        &["not-a-url"],
        &["-c", "0", "http://127.0.0.1:1/"],
        &["-n", "5", "-d", "1s", "http://127.0.0.1:1/"],
        &["--rate", "10", "http://127.0.0.1:1/"],
        &["-d", "10parsecs", "http://127.0.0.1:1/"],
        &["-H", "no-colon", "http://127.0.0.1:1/"],
        &[
            "--rate",
            "10",
            "-d",
            "1s",
            "--schedule-quantum",
            "1s",
            "http://127.0.0.1:1/",
        ],
        &[
            "--schedule-quantum",
            "1ms",
            "-n",
            "5",
            "http://127.0.0.1:1/",
        ],
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
    // The node comes from --node or, as in the load Job, from BENCHRUN_NODE_NAME.
    for (i, n) in [30, 20].iter().enumerate() {
        let mut cmd = bin();
        cmd.env_remove("BENCHRUN_NODE_NAME");
        if i == 0 {
            cmd.args(["--node", "node-b"]);
        } else {
            cmd.env("BENCHRUN_NODE_NAME", "node-a");
        }
        let out = cmd
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
    assert_eq!(merged.nodes, ["node-a", "node-b"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_scenarios_file_mixes_requests_and_bad_ones_name_the_problem() {
    let server = serve(Behavior::Ok);
    let dir = std::env::temp_dir().join(format!("benchrun-load-scn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.json");
    std::fs::write(
        &good,
        r#"[{"name":"hello","path":"/hello","weight":2},
            {"name":"echo","method":"POST","path":"/echo","body":"hi"}]"#,
    )
    .unwrap();
    let base = format!("http://{}", server.addr);
    let good_arg = good.to_str().unwrap();
    let out = bin()
        .args(["-c", "3", "-n", "30", "-H", "X-Run: 1"])
        .args(["--scenarios", good_arg, &base])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Scenarios (latency in ms)"), "{text}");
    assert_eq!(server.seen("GET /hello"), (20, 0));
    assert_eq!(server.seen("POST /echo"), (10, 20));

    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"[{"name":"x","path":"nope"}]"#).unwrap();
    let bad_arg = bad.to_str().unwrap();
    let with_path = format!("{base}/hello");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--scenarios", bad_arg, &base],
            "path \"nope\" must start with '/'",
        ),
        (&["--scenarios", good_arg, &with_path], "without a path"),
        (
            &["--scenarios", good_arg, "-m", "POST", &base],
            "cannot be used with",
        ),
        (
            &["--scenarios", "/nonexistent.json", &base],
            "failed to read",
        ),
    ];
    for (args, want) in cases {
        let out = bin().args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fail_on_errors_exits_3_when_requests_failed_and_0_otherwise() {
    let not_found = serve(Behavior::Status(404));
    let run = |server_url: &str, flag: bool| {
        let mut cmd = bin();
        cmd.args(["-c", "2", "-t", "1", "-n", "10"]);
        if flag {
            cmd.arg("--fail-on-errors");
        }
        cmd.arg(server_url).output().unwrap()
    };

    let failed = run(&not_found.url(), true);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "benchrun-load: 10 of 10 requests failed (4xx 10): exiting with status 3 \
             (--fail-on-errors)"
        ),
        "{stderr}"
    );
    // The result is printed as usual before the exit.
    let stdout = String::from_utf8_lossy(&failed.stdout);
    assert!(stdout.contains("Failed requests:        10"), "{stdout}");

    let tolerated = run(&not_found.url(), false);
    assert_eq!(
        tolerated.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&tolerated.stderr)
    );
    assert_eq!(not_found.requests(), 20);

    let ok = serve(Behavior::Ok);
    let clean = run(&ok.url(), true);
    assert_eq!(
        clean.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert!(
        clean.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
}
