//! The PromQL that `docs/metrics.md` (Gauges of finished runs) gives for the history of a
//! schedule's runs: it is in the docs verbatim, and `promtool test rules` evaluates it over the
//! gauges of 35 runs as the operator exports them. Each run exists for 50 minutes after it
//! completes (then it is deleted and its series end with a staleness marker, as after a scrape
//! without them), runs complete every 10 minutes, and at minute 200 the leader changes, so
//! later samples come from another `instance` and `pod`.

use std::fmt::Write as _;
use std::path::PathBuf;

/// "Throughput of target X over the last 30 runs" of a schedule: one value per run and cell.
const LAST_30_RUNS: &str = r#"max without (instance, pod) (
  last_over_time(benchrun_cell_throughput_rps{namespace="bench", schedule="nightly", target="express"}[30d])
)
and on (namespace, run)
  topk(30, max without (instance, pod) (
    last_over_time(benchrun_run_completion_timestamp_seconds{namespace="bench", schedule="nightly"}[30d])
  ))"#;

/// The latest finished run's figure, a line per cell over time.
const LATEST_RUN: &str = r#"max without (run, instance, pod) (
    benchrun_cell_throughput_rps{namespace="bench", schedule="nightly", target="express"}
  and on (namespace, run)
    topk by (namespace, schedule) (1, benchrun_run_completion_timestamp_seconds{namespace="bench", schedule="nightly"})
)"#;

const RUNS: u32 = 35;
/// Minutes a run exists after it completed.
const KEPT: u32 = 50;
/// The minute the leader changes (instance `a` before, `b` from then on).
const TAKEOVER: u32 = 200;

/// The cell's labels apart from the run's and the target's (`job` is the scrape's).
const CELL: &str = r#"namespace="bench",schedule="nightly",cell="0",target="express",scenario="hello",cpu="500m",memory="256Mi",replicas="1",connections="10",job="benchrun-operator""#;

fn repo_root() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test"))
}

/// Run `i` completes at minute `10 i` with throughput `1000 + i`.
fn input_series() -> String {
    let mut out = String::new();
    for i in 1..=RUNS {
        let (start, end) = (10 * i, 10 * i + KEPT);
        for (instance, from, to) in [
            ("a", start, end.min(TAKEOVER)),
            ("b", start.max(TAKEOVER), end),
        ] {
            if from >= to {
                continue;
            }
            let target = format!(r#"run="r{i}",instance="{instance}",pod="op-{instance}""#);
            let values = |v: u32| format!("_x{from} {v}x{} stale", to - from - 1);
            let _ = writeln!(
                out,
                "      - series: 'benchrun_cell_throughput_rps{{{CELL},{target},rate=\"\"}}'\n        values: '{}'",
                values(1000 + i)
            );
            let _ = writeln!(
                out,
                "      - series: 'benchrun_run_completion_timestamp_seconds{{namespace=\"bench\",schedule=\"nightly\",job=\"benchrun-operator\",{target},phase=\"Succeeded\"}}'\n        values: '{}'",
                values(600 * i)
            );
        }
    }
    out
}

fn expr_test(expr: &str, minute: u32, samples: &[(String, u32)]) -> String {
    let mut out = String::from("      - expr: |\n");
    for line in expr.lines() {
        let _ = writeln!(out, "          {line}");
    }
    let _ = writeln!(out, "        eval_time: {minute}m\n        exp_samples:");
    for (labels, value) in samples {
        let _ = writeln!(
            out,
            "          - labels: '{labels}'\n            value: {value}"
        );
    }
    out
}

fn promtool_tests() -> String {
    let mut out = String::from(
        "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n",
    );
    out += &input_series();
    out += "    promql_expr_test:\n";
    // At minute 390 only run 35 exists; the last 30 are runs 6 to 35, deleted ones included.
    let last_30: Vec<(String, u32)> = (RUNS - 29..=RUNS)
        .map(|i| (format!(r#"{{{CELL},run="r{i}"}}"#), 1000 + i))
        .collect();
    out += &expr_test(LAST_30_RUNS, 390, &last_30);
    // The latest run's figure, before and after the takeover.
    for (minute, run) in [(355, 35), (345, 34), (205, 20), (199, 19)] {
        out += &expr_test(LATEST_RUN, minute, &[(format!("{{{CELL}}}"), 1000 + run)]);
    }
    // The query that finds one run's gauge.
    let one = r#"benchrun_cell_throughput_rps{namespace="bench", run="r35"}"#;
    let labels =
        format!(r#"benchrun_cell_throughput_rps{{{CELL},run="r35",instance="b",pod="op-b"}}"#);
    out += &expr_test(one, 355, &[(labels, 1035)]);
    out
}

#[test]
fn the_docs_give_the_queries_tested_here() {
    let docs = std::fs::read_to_string(repo_root().join("docs/metrics.md")).unwrap();
    for q in [LAST_30_RUNS, LATEST_RUN] {
        assert!(
            docs.contains(&format!("```\n{q}\n```")),
            "docs/metrics.md no longer shows this query as tested here:\n{q}"
        );
    }
}

/// Needs `promtool` (Debian's prometheus package, which `hack/cluster.sh up` installs), so it
/// runs in `make e2e`, after the cluster suite, rather than in `make unit`, which on a fresh
/// machine comes first: it fails, never skips, when promtool is missing.
#[test]
#[ignore = "needs promtool from hack/cluster.sh up: make e2e"]
fn the_history_queries_answer_as_the_docs_say() {
    let dir = std::env::temp_dir().join(format!("benchrun-gauges-promql-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gauges_test.yml");
    std::fs::write(&file, promtool_tests()).unwrap();
    let out = std::process::Command::new("promtool")
        .arg("test")
        .arg("rules")
        .arg(&file)
        .output()
        .expect("promtool runs (Debian's prometheus package: hack/cluster.sh up installs it)");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "promtool test rules:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
