//! Several scenarios in one run, against a real server on 127.0.0.1: the server sees the
//! weighted mix exactly, bodies and HEAD are handled, each scenario's figures add up to the
//! run's, and per-scenario results merge across runs. Every load is bounded.

use crate::common;

use std::time::Duration;

use benchrun_load::{merge, report, run, Limit, LoadResult, Model, Scenario};
use common::{serve, Behavior};

fn scenario(name: &str, method: &str, path: &str, weight: u32) -> Scenario {
    Scenario {
        name: name.into(),
        method: method.into(),
        path: path.into(),
        headers: Vec::new(),
        body: None,
        weight,
        values: Default::default(),
    }
}

fn mix() -> Vec<Scenario> {
    let mut post = scenario("echo", "POST", "/echo", 1);
    post.body = Some(b"abc".to_vec());
    post.headers = vec![("Content-Type".into(), "text/plain".into())];
    vec![
        scenario("hello", "GET", "/hello", 3),
        post,
        scenario("head", "HEAD", "/head", 1),
    ]
}

fn by_name<'a>(r: &'a LoadResult, name: &str) -> &'a benchrun_load::ScenarioResult {
    r.scenarios.iter().find(|s| s.name == name).unwrap()
}

#[test]
fn the_server_sees_the_weighted_mix_exactly() {
    let server = serve(Behavior::Ok);
    let c = server.scenario_config(5, Limit::Requests(1000), mix());
    let r = run(&c).unwrap();
    // The cycle is 5 long (3 + 1 + 1); 1000 requests are 200 full cycles.
    assert_eq!(r.requests, 1000);
    assert_eq!(r.errors.total, 0, "{:?}", r.errors);
    assert_eq!(server.seen("GET /hello"), (600, 0));
    assert_eq!(server.seen("POST /echo"), (200, 600));
    assert_eq!(server.seen("HEAD /head"), (200, 0));
    for (name, n) in [("hello", 600), ("echo", 200), ("head", 200)] {
        let s = by_name(&r, name);
        assert_eq!(
            (s.requests, s.successes, s.latency.count),
            (n, n, n),
            "{name}"
        );
    }
    assert_eq!(r.method, "GET,POST,HEAD");
    let json: LoadResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(json, r);
    let mut text = Vec::new();
    report::write_text(&r, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("Scenarios (latency in ms)"), "{text}");
    assert!(text.contains("POST /echo"), "{text}");
}

#[test]
fn with_a_count_the_threads_take_consecutive_blocks_of_the_cycle() {
    // 6 requests on 2 threads are 3 each, not a multiple of the cycle (5): only if thread 1
    // starts where thread 0 stops do they add up to the first 6 entries, a b a c a | a.
    let server = serve(Behavior::Ok);
    let r = run(&server.scenario_config(2, Limit::Requests(6), mix())).unwrap();
    assert_eq!(server.seen("GET /hello"), (4, 0));
    assert_eq!(server.seen("POST /echo"), (1, 3));
    assert_eq!(server.seen("HEAD /head"), (1, 0));
    assert_eq!(by_name(&r, "hello").requests, 4);
}

#[test]
fn each_scenario_has_its_own_errors_and_merge_keeps_them_apart() {
    let server = serve(Behavior::Ok);
    let scenarios = vec![
        scenario("ok", "GET", "/hello", 1),
        scenario("gone", "GET", "/missing", 1),
    ];
    let c = server.scenario_config(2, Limit::Requests(100), scenarios);
    let a = run(&c).unwrap();
    let b = run(&c).unwrap();
    for r in [&a, &b] {
        assert_eq!(r.errors.status_4xx, 50);
        assert_eq!(by_name(r, "gone").errors.status_codes.get(&404), Some(&50));
        assert_eq!(by_name(r, "ok").errors.total, 0);
        assert_eq!(by_name(r, "ok").successes, 50);
    }
    let m = merge(&[a.clone(), b]).unwrap();
    assert_eq!(m.scenarios.len(), 2);
    assert_eq!(by_name(&m, "gone").requests, 100);
    assert_eq!(by_name(&m, "gone").errors.status_4xx, 100);
    assert_eq!(by_name(&m, "ok").latency.count, 100);
    assert!(by_name(&m, "ok").latency.max_us >= by_name(&a, "ok").latency.max_us);
    assert_eq!(server.seen("GET /missing").0, 100);
}

#[test]
fn the_open_model_mixes_scenarios_on_schedule() {
    let server = serve(Behavior::Ok);
    let scenarios = vec![scenario("a", "GET", "/a", 1), scenario("b", "GET", "/b", 1)];
    let mut c = server.scenario_config(4, Limit::Duration(Duration::from_secs(1)), scenarios);
    c.rate = Some(400.0);
    let r = run(&c).unwrap();
    assert_eq!(r.model, Model::Open);
    let (a, b) = (by_name(&r, "a").requests, by_name(&r, "b").requests);
    assert_eq!(a + b, r.requests);
    assert!(a.abs_diff(b) <= 4, "a {a} b {b}");
    assert!((360..=440).contains(&r.requests), "{}", r.requests);
    assert_eq!(
        server.seen("GET /a").0 + server.seen("GET /b").0,
        r.requests
    );
}

#[test]
fn a_url_with_a_path_and_scenarios_is_refused_with_the_fix() {
    let server = serve(Behavior::Ok);
    let mut c = server.config(1, Limit::Requests(1));
    c.scenarios = vec![scenario("a", "GET", "/a", 1)];
    let err = run(&c).unwrap_err().to_string();
    assert!(err.contains("without a path"), "{err}");
    assert_eq!(server.requests(), 0);
}
