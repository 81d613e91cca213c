//! Request templates against a real server on 127.0.0.1: the values arrive in the path and
//! the body with a matching Content-Length, generators that share a seed walk a sequence
//! together, the same seed sends the same values, and the binary takes `--value`, `--seed`
//! and the Job's completion index. Every load is bounded by a request count.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use benchrun_load::{run, Limit, LoadResult, Scenario, ValueSpec};
use common::{serve, Behavior, Server};

fn templated(path: &str, body: Option<&str>, values: &[(&str, ValueSpec)]) -> Scenario {
    Scenario {
        name: "doc".into(),
        method: if body.is_some() { "POST" } else { "GET" }.into(),
        path: path.into(),
        // The first value again in a header, spaces inside the braces allowed.
        headers: vec![("X-Doc".into(), format!("{{{{ {} }}}}", values[0].0))],
        body: body.map(|b| b.as_bytes().to_vec()),
        weight: 1,
        values: values
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    }
}

/// What the server saw: "METHOD /path" -> (count, body bytes).
fn seen(server: &Server) -> BTreeMap<String, (u64, u64)> {
    server.seen.lock().unwrap().clone()
}

#[test]
fn two_generators_sharing_a_seed_walk_a_sequence_together_with_bodies_framed_per_request() {
    let server = serve(Behavior::Ok);
    let seq = ValueSpec::Sequence { start: 1, end: 100 };
    let s = templated("/doc/{{id}}", Some(r#"{"id":{{id}}}"#), &[("id", seq)]);
    // Instance i of 2 with one connection sends 1 + i, 3 + i, …: 100 requests each are two laps
    // of its half, so together every value twice.
    for instance in 0..2 {
        let mut c = server.scenario_config(1, Limit::Requests(100), vec![s.clone()]);
        (c.instance, c.instances, c.seed) = (instance, 2, Some(5));
        let r = run(&c).unwrap();
        assert_eq!((r.requests, r.errors.total), (100, 0), "{:?}", r.errors);
        assert_eq!(r.seed, Some(5));
    }
    let seen = seen(&server);
    assert_eq!(seen.len(), 100, "{seen:?}");
    for id in 1..=100 {
        // The body {"id":N} and its Content-Length grew with the digits of N.
        let body_len = format!(r#"{{"id":{id}}}"#).len() as u64;
        assert_eq!(seen[&format!("POST /doc/{id}")], (2, 2 * body_len), "{id}");
    }
}

#[test]
fn the_same_seed_sends_the_same_values_and_another_seed_others() {
    let random = ValueSpec::Random {
        min: 1,
        max: 1_000_000,
    };
    let pick = ValueSpec::Pick(vec!["red".into(), "green".into(), "blue".into()]);
    let s = templated("/doc/{{id}}?c={{c}}", None, &[("id", random), ("c", pick)]);
    let sent = |seed: u64| {
        let server = serve(Behavior::Ok);
        // One connection per thread: each sends exactly its share, so the values sent do not
        // depend on which connection was faster.
        let mut c = server.scenario_config(2, Limit::Requests(300), vec![s.clone()]);
        c.seed = Some(seed);
        let r = run(&c).unwrap();
        assert_eq!((r.requests, r.errors.total), (300, 0), "{:?}", r.errors);
        seen(&server)
    };
    let (a, b, other) = (sent(11), sent(11), sent(12));
    assert!(a == b, "the same seed sent other values");
    assert!(a != other, "another seed sent the same values");
    // 300 draws of 1e6 values: (nearly) all distinct, and every colour came up.
    assert!(a.len() > 290, "{}", a.len());
    for colour in ["red", "green", "blue"] {
        assert!(
            a.keys().any(|k| k.ends_with(&format!("?c={colour}"))),
            "{colour}"
        );
    }
}

#[test]
fn a_run_without_a_seed_picks_one_and_reports_it_and_one_without_values_reports_none() {
    let server = serve(Behavior::Ok);
    let s = templated(
        "/{{n}}",
        None,
        &[("n", ValueSpec::Sequence { start: 0, end: 9 })],
    );
    let r = run(&server.scenario_config(1, Limit::Requests(10), vec![s])).unwrap();
    assert!(r.seed.is_some());
    let plain = run(&server.config(1, Limit::Requests(10))).unwrap();
    assert_eq!(plain.seed, None);
    let json = serde_json::to_value(&plain).unwrap();
    assert!(json.get("seed").is_none(), "{json}");
}

#[test]
fn mistakes_in_templates_are_refused_before_anything_is_sent() {
    let server = serve(Behavior::Ok);
    let seq = || ValueSpec::Sequence { start: 1, end: 2 };
    let cases = [
        (
            templated("/{{idd}}", None, &[("id", seq())]),
            "{{idd}} names no declared value",
        ),
        (
            templated("/", None, &[("id", seq()), ("unused", seq())]),
            "no {{unused}} uses it",
        ),
        (
            templated(
                "/{{p}}",
                None,
                &[("p", ValueSpec::Pick(vec!["a b".into()]))],
            ),
            "used in the path",
        ),
    ];
    for (s, want) in cases {
        let e = run(&server.scenario_config(1, Limit::Requests(1), vec![s]))
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    let mut s = templated("/{{id}}", Some("{{id}}"), &[("id", seq())]);
    s.headers.push(("Content-Length".into(), "1".into()));
    let e = run(&server.scenario_config(1, Limit::Requests(1), vec![s]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("Content-Length is set per request"), "{e}");
    assert_eq!(server.requests(), 0);
}

#[test]
fn the_binary_takes_values_a_seed_and_the_jobs_completion_index() {
    let server = serve(Behavior::Ok);
    let url = format!("http://{}/item/{{{{n}}}}", server.addr);
    for index in ["0", "1"] {
        let out = Command::new(env!("CARGO_BIN_EXE_benchrun-load"))
            .args(["-c", "1", "-t", "1", "-n", "5", "--output", "json"])
            .args([
                "--value",
                "n=sequence:10..19",
                "--seed",
                "3",
                "--instances",
                "2",
            ])
            .arg(&url)
            .env("JOB_COMPLETION_INDEX", index)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: LoadResult = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((r.requests, r.seed), (5, Some(3)));
    }
    // Index 0 sent 10, 12, …, 18 and index 1 sent 11, 13, …, 19: each value once.
    let seen = seen(&server);
    let want: BTreeMap<String, (u64, u64)> = (10..20)
        .map(|n| (format!("GET /item/{n}"), (1, 0)))
        .collect();
    assert_eq!(seen, want);
    // Without values the index does not matter: every pod of an indexed Job has one, and
    // a plain run must not trip over it (the e2e suite found that it did).
    let plain = Command::new(env!("CARGO_BIN_EXE_benchrun-load"))
        .args(["-c", "1", "-n", "3", "--output", "json"])
        .arg(format!("http://{}/hello", server.addr))
        .env("JOB_COMPLETION_INDEX", "1")
        .output()
        .unwrap();
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_benchrun-load"))
        .args(["-n", "1", "--value", "n=uniform:1..2"])
        .arg(&url)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown kind"));
}
