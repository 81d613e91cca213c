//! The CRD's CEL rules reject bad specs with a message that names the field. These run the
//! same rules the apiserver runs, client-side (kube's `cel` feature); the end-to-end suite
//! checks one of them against the real apiserver.

use benchrun_api::{BenchmarkRun, MAX_MEASUREMENTS};
use kube::CustomResourceExt;

const BASE: &str = r#"
apiVersion: benchrun.dev/v1alpha1
kind: BenchmarkRun
metadata: {name: t}
spec:
  targets: [{name: a, image: img:1}]
  scenarios: [{name: hello, path: /hello}]
  resources: {cpu: "1", memory: 1Gi}
  load: {connections: 10, duration: 10s}
"#;

fn with(patch: &str) -> BenchmarkRun {
    let mut v: serde_json::Value = serde_yaml::from_str(BASE).unwrap();
    let p: serde_json::Value = serde_yaml::from_str(patch).unwrap();
    merge(&mut v["spec"], &p);
    serde_json::from_value(v).unwrap()
}

fn merge(a: &mut serde_json::Value, b: &serde_json::Value) {
    match (a, b) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (a, b) => *a = b.clone(),
    }
}

fn rejected_with(patch: &str, needle: &str) {
    let run = with(patch);
    let err = run
        .validate_cel()
        .expect_err(&format!("CEL accepted {patch}"));
    let text = format!("{err:?}");
    assert!(
        text.contains(needle),
        "message for {patch} was {text}, wanted {needle:?}"
    );
}

#[test]
fn base_spec_is_accepted() {
    with("{}").validate_cel().unwrap();
}

#[test]
fn duration_and_count_together_are_rejected() {
    rejected_with(
        "{load: {requests: 1000}}",
        "set exactly one of load.requests",
    );
}

#[test]
fn rate_without_duration_is_rejected() {
    rejected_with(
        "{load: {duration: null, requests: 100, rate: 50}}",
        "load.rate (open model) needs load.duration",
    );
}

#[test]
fn duplicate_target_names_are_rejected() {
    rejected_with(
        "{targets: [{name: a, image: x}, {name: a, image: y}]}",
        "targets: names must be unique",
    );
}

#[test]
fn limit_below_request_is_rejected() {
    rejected_with(
        "{resources: {cpu: 500m, memory: 1Gi, cpuRequest: \"1\"}}",
        "cpuRequest must be a quantity not above cpu",
    );
}

#[test]
fn matrix_naming_an_unknown_target_is_rejected() {
    rejected_with(
        "{matrix: {targets: [nope]}}",
        "matrix.targets: every entry must name",
    );
}

#[test]
fn oversized_matrix_is_rejected() {
    rejected_with(
        "{matrix: {connections: [1,2,3,4,5,6,7,8,9,10], cpu: [\"1\",\"2\",\"3\",\"4\",\"5\"], replicas: [1,2,3,4,5]}}",
        "the matrix is too large",
    );
}

#[test]
fn matrix_size_rule_uses_max_measurements() {
    let crd = serde_json::to_value(BenchmarkRun::crd()).unwrap();
    let rules = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-validations"]
        .as_array()
        .expect("spec has CEL rules");
    let size = rules
        .iter()
        .find(|r| {
            r["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with("the matrix is too large")
        })
        .expect("the matrix size rule is in the CRD");
    let rule = size["rule"].as_str().unwrap();
    assert!(rule.ends_with(&format!(" <= {MAX_MEASUREMENTS}")), "{rule}");
    let message = size["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("at most {MAX_MEASUREMENTS};")),
        "{message}"
    );
    // 10 × 5 × 4 cells: exactly the maximum is accepted.
    assert_eq!(10 * 5 * 4, MAX_MEASUREMENTS);
    with("{matrix: {connections: [1,2,3,4,5,6,7,8,9,10], cpu: [\"1\",\"2\",\"3\",\"4\",\"5\"], replicas: [1,2,3,4]}}")
        .validate_cel()
        .unwrap();
}

#[test]
fn matrix_connections_above_load_requests_are_rejected() {
    with("{load: {duration: null, requests: 100}, matrix: {connections: [10, 100]}}")
        .validate_cel()
        .unwrap();
    rejected_with(
        "{load: {duration: null, requests: 100}, matrix: {connections: [10, 200]}}",
        "matrix.connections entries must not exceed load.requests",
    );
}

#[test]
fn request_count_axes_need_a_counted_run_and_may_pair_more_connections() {
    rejected_with(
        "{matrix: {requests: [1000, 2000]}}",
        "matrix.requests needs load.requests",
    );
    rejected_with(
        "{load: {duration: null, requests: 100}, matrix: {requests: [0]}}",
        "matrix.requests entries must be between 1 and 100000000",
    );
    // Each cell's pair of connections and requests is the operator's to check.
    with(
        "{load: {duration: null, requests: 100}, matrix: {connections: [10, 500], include: [{connections: 500, requests: 1000000}]}}",
    )
    .validate_cel()
    .unwrap();
}

#[test]
fn keep_alive_axis_entries_must_differ() {
    with("{matrix: {keepAlive: [true, false]}}")
        .validate_cel()
        .unwrap();
    rejected_with(
        "{matrix: {keepAlive: [false, false]}}",
        "matrix.keepAlive entries must differ",
    ); // The axis counts in the size rule: 100 cells × 2 = 200 is the maximum, × 2 repeats not.
    let axes = "connections: [1,2,3,4,5,6,7,8,9,10], cpu: [\"1\",\"2\",\"3\",\"4\",\"5\"], replicas: [1,2], keepAlive: [true, false]";
    with(&format!("{{matrix: {{{axes}}}}}"))
        .validate_cel()
        .unwrap();
    rejected_with(
        &format!("{{repeats: 2, matrix: {{{axes}}}}}"),
        "the matrix is too large",
    );
}

#[test]
fn matrix_rate_above_the_load_rate_cap_is_rejected() {
    with("{matrix: {rate: [1, 10000000]}}")
        .validate_cel()
        .unwrap();
    rejected_with(
        "{matrix: {rate: [1000, 10000001]}}",
        "matrix.rate entries must be between 1 and 10000000",
    );
}

#[test]
fn timeout_below_a_millisecond_is_rejected() {
    with("{load: {timeout: 1ms}}").validate_cel().unwrap();
    rejected_with(
        "{load: {timeout: 500us}}",
        "load.timeout must be a duration between 1ms and 5m",
    );
}

#[test]
fn warmup_below_a_millisecond_is_rejected_but_zero_is_none() {
    with("{load: {warmup: 0s}}").validate_cel().unwrap();
    rejected_with(
        "{load: {warmup: 500us}}",
        "load.warmup must be 0s (none) or a duration between 1ms and 30m",
    );
}

#[test]
fn a_warmup_until_steady_is_checked_at_admission() {
    with("{load: {warmupUntilSteady: {}}}")
        .validate_cel()
        .unwrap();
    with("{load: {warmup: 5s, warmupUntilSteady: {max: 2m}}}")
        .validate_cel()
        .unwrap();
    with("{load: {pods: 1, warmupUntilSteady: {max: 15s}}}")
        .validate_cel()
        .unwrap();
    rejected_with(
        "{load: {warmupUntilSteady: {max: 10s}}}",
        "load.warmupUntilSteady.max must be a duration between 15s and 30m",
    );
    rejected_with(
        "{load: {warmupRequests: 100, warmupUntilSteady: {}}}",
        "load.warmupUntilSteady warms up by time: remove load.warmupRequests",
    );
    rejected_with(
        "{load: {pods: 2, warmupUntilSteady: {}}}",
        "load.warmupUntilSteady needs load.pods: 1",
    );
    rejected_with(
        "{load: {warmup: 2m, warmupUntilSteady: {}}}",
        "must not exceed load.warmupUntilSteady.max (the most, default 1m)",
    );
    rejected_with(
        "{load: {warmup: 3m, warmupUntilSteady: {max: 2m}}}",
        "must not exceed load.warmupUntilSteady.max",
    );
}

#[test]
fn bad_duration_is_rejected() {
    rejected_with(
        "{load: {duration: 0s}}",
        "load.duration must be a duration between 1s and 1h",
    );
}

#[test]
fn spec_changes_after_start_are_rejected() {
    let old = with("{}");
    let mut old_json = serde_json::to_value(&old).unwrap();
    old_json["status"] = serde_json::json!({"phase": "Running"});
    let old: BenchmarkRun = serde_json::from_value(old_json).unwrap();
    let mut new = old.clone();
    new.spec.load.connections = 20;
    let err = new
        .validate_cel_update(&old)
        .expect_err("spec change accepted");
    assert!(format!("{err:?}").contains("spec is immutable once the run has started"));
}

#[test]
fn crlf_in_a_header_value_is_rejected() {
    rejected_with(
        "{scenarios: [{name: hello, path: /hello, headers: {X-A: \"b\\r\\nX-Injected: 1\"}}]}",
        "headers values must not hold control characters",
    );
    rejected_with(
        "{scenarios: [{name: hello, path: /hello, headers: {X-A: \"b\\0\"}}]}",
        "headers values must not hold control characters",
    );
    with("{scenarios: [{name: hello, path: /hello, headers: {X-A: \"b\\tc; d=é\"}}]}")
        .validate_cel()
        .unwrap();
}

#[test]
fn header_names_that_are_not_tokens_are_rejected() {
    for bad in ["X A", "X:A", "\"X\\r\\nA\"", "X(A)"] {
        rejected_with(
            &format!("{{scenarios: [{{name: hello, path: /hello, headers: {{{bad}: \"1\"}}}}]}}"),
            "headers names must be RFC 9110 tokens",
        );
    }
    with("{scenarios: [{name: hello, path: /hello, headers: {\"X-Request-Id\": \"1\", \"!#$%&'*+-.^_`|~\": \"2\"}}]}")
        .validate_cel()
        .unwrap();
}

#[test]
fn paths_with_spaces_or_control_characters_are_rejected() {
    for bad in [
        "\"/a b\"",
        "\"/a\\r\\nHost: x\"",
        "\"/?q=a b\"",
        "\"/\\t\"",
        "hello",
        "/café",
    ] {
        rejected_with(
            &format!("{{scenarios: [{{name: hello, path: {bad}}}]}}"),
            "scenarios[].path must start with '/' and hold only visible ASCII",
        );
    }
    with("{scenarios: [{name: hello, path: \"/compute?n=10000&q=%20a\"}]}")
        .validate_cel()
        .unwrap();
}

#[test]
fn content_length_must_match_the_body() {
    with("{scenarios: [{name: e, method: POST, path: /e, body: \"{}\", headers: {Content-Length: \"2\"}}]}")
        .validate_cel()
        .unwrap();
    with("{scenarios: [{name: e, path: /e, headers: {content-length: \"0\"}}]}")
        .validate_cel()
        .unwrap();
    for bad in [
        "{name: e, method: POST, path: /e, body: \"{}\", headers: {content-length: \"5\"}}",
        "{name: e, path: /e, headers: {Content-Length: \"3\"}}",
        "{name: e, method: POST, path: /e, body: \"{}\", headers: {Content-Length: \"+2\"}}",
        // Bytes, not characters: "é" is two bytes.
        "{name: e, method: POST, path: /e, body: \"é\", headers: {Content-Length: \"1\"}}",
    ] {
        rejected_with(
            &format!("{{scenarios: [{bad}]}}"),
            "Content-Length must be the body's length in bytes",
        );
    }
    rejected_with(
        "{scenarios: [{name: e, method: POST, path: /e, body: \"{}\", headers: {Transfer-Encoding: chunked}}]}",
        "remove the Transfer-Encoding header",
    );
}

#[test]
fn request_values_need_exactly_one_kind_an_ordered_range_and_a_plain_name() {
    let scenario = |values: &str| {
        format!("{{scenarios: [{{name: doc, path: '/doc/{{{{id}}}}', values: {values}}}]}}")
    };
    with(&scenario("{id: {random: {min: 1, max: 10000}}}"))
        .validate_cel()
        .unwrap();
    with(&scenario(
        "{id: {pick: [a, b]}, n_2: {sequence: {start: 5, end: 5}}}",
    ))
    .validate_cel()
    .unwrap();
    rejected_with(
        &scenario("{id: {random: {min: 1, max: 2}, pick: [a]}}"),
        "must set exactly one of random",
    );
    rejected_with(&scenario("{id: {}}"), "must set exactly one of random");
    rejected_with(
        &scenario("{id: {random: {min: 3, max: 2}}}"),
        "min must not be above max",
    );
    rejected_with(
        &scenario("{id: {sequence: {start: 3, end: 2}}}"),
        "start must not be above end",
    );
    rejected_with(
        &scenario("{'my-id': {pick: [a]}}"),
        "values names must start with a letter",
    );
}

#[test]
fn backing_services_are_checked_at_admission() {
    with("{services: [{name: store, image: 'db:1', seed: {args: [load]}}]}")
        .validate_cel()
        .unwrap();
    rejected_with(
        "{services: [{name: db, image: x}, {name: db, image: y}]}",
        "services: names must be unique",
    );
    rejected_with(
        "{services: [{name: Store_1, image: x}]}",
        "services[].name must be a lowercase DNS label",
    );
    rejected_with(
        "{services: [{name: db, image: x, seed: {timeout: 1m}}]}",
        "services[].seed: set command or args",
    );
    rejected_with(
        "{services: [{name: db, image: x, podSecurity: Privileged}]}",
        "services[].podSecurity must be Restricted or Baseline",
    );
}

#[test]
fn env_names_with_the_reserved_benchrun_prefix_are_rejected_naming_the_field() {
    with("{targets: [{name: a, image: x, env: [{name: DB_URL, value: 'http://$(BENCHRUN_SERVICE_DB_ADDR)'}]}]}")
        .validate_cel()
        .unwrap();
    rejected_with(
        "{targets: [{name: a, image: x, env: [{name: BENCHRUN_SERVICE_DB_ADDR, value: x}]}]}",
        "targets[].env: names starting with BENCHRUN_ are reserved",
    );
    rejected_with(
        "{services: [{name: db, image: x, env: [{name: BENCHRUN_CPU_LIMIT_MILLICORES, value: '1'}]}]}",
        "services[].env: names starting with BENCHRUN_ are reserved",
    );
    rejected_with(
        "{services: [{name: db, image: x, seed: {args: [load], env: [{name: BENCHRUN_X, value: '1'}]}}]}",
        "services[].seed.env: names starting with BENCHRUN_ are reserved",
    );
}

#[test]
fn repeats_until_is_checked_at_admission_naming_the_field_and_the_fix() {
    // Two scenarios of one target compared with each other, as asked: something to compare.
    const TWO: &str = "scenarios: [{name: hello, path: /hello}, {name: other, path: /other}], compare: {along: scenario}";
    with(&format!(
        "{{{TWO}, repeats: 3, repeatsUntil: {{maxRepeats: 6, ratioWithin: \"5%\"}}}}"
    ))
    .validate_cel()
    .unwrap();
    rejected_with(
        &format!("{{{TWO}, repeats: 3, repeatsUntil: {{maxRepeats: 2, ratioWithin: \"5%\"}}}}"),
        "repeatsUntil.maxRepeats must be at least spec.repeats",
    );
    rejected_with(
        &format!("{{{TWO}, repeatsUntil: {{maxRepeats: 11, ratioWithin: \"5%\"}}}}"),
        "repeatsUntil.maxRepeats must be between 1 and 10",
    );
    for bad in ["0%", "50.5%", "5", "five"] {
        rejected_with(
            &format!("{{{TWO}, repeatsUntil: {{maxRepeats: 6, ratioWithin: \"{bad}\"}}}}"),
            "repeatsUntil.ratioWithin must be a percentage above 0% and at most 50%",
        );
    }
    with(&format!(
        "{{{TWO}, repeatsUntil: {{maxRepeats: 6, ratioWithin: \"50%\"}}}}"
    ))
    .validate_cel()
    .unwrap();
    // Two scenarios not asked to be compared: nothing to compare (scenarios are compared only
    // when asked).
    rejected_with(
        "{scenarios: [{name: hello, path: /hello}, {name: other, path: /other}], repeatsUntil: {maxRepeats: 6, ratioWithin: \"5%\"}}",
        "repeatsUntil needs something to compare",
    );
    // One target, one scenario and no baseline: nothing to compare.
    rejected_with(
        "{repeats: 3, repeatsUntil: {maxRepeats: 6, ratioWithin: \"5%\"}}",
        "repeatsUntil needs something to compare",
    );
    with("{repeats: 3, repeatsUntil: {maxRepeats: 6, ratioWithin: \"5%\"}, baseline: {run: last}}")
        .validate_cel()
        .unwrap();
    with("{targets: [{name: a, image: x}, {name: b, image: y}], repeatsUntil: {maxRepeats: 6, ratioWithin: \"5%\"}}")
        .validate_cel()
        .unwrap();
    rejected_with(
        "{targets: [{name: a, image: x}, {name: b, image: y}], matrix: {targets: [b]}, repeatsUntil: {maxRepeats: 6, ratioWithin: \"5%\"}}",
        "repeatsUntil needs something to compare",
    );
}

#[test]
fn the_size_rule_counts_max_repeats() {
    // 2 targets × 10 × 5 = 100 cells: 2 repeats fit (200), a maxRepeats of 3 does not.
    let two = "{targets: [{name: a, image: x}, {name: b, image: y}], matrix: {connections: [1,2,3,4,5,6,7,8,9,10], cpu: [\"1\",\"2\",\"3\",\"4\",\"5\"]}";
    with(&format!("{two}, repeats: 2}}"))
        .validate_cel()
        .unwrap();
    with(&format!(
        "{two}, repeats: 2, repeatsUntil: {{maxRepeats: 2, ratioWithin: \"5%\"}}}}"
    ))
    .validate_cel()
    .unwrap();
    rejected_with(
        &format!("{two}, repeats: 2, repeatsUntil: {{maxRepeats: 3, ratioWithin: \"5%\"}}}}"),
        "cells × repeats (repeatsUntil.maxRepeats when set) must be at most",
    );
}

#[test]
fn compare_along_must_name_an_axis_the_run_varies() {
    with("{matrix: {cpu: [250m, 500m]}, compare: {along: cpu}}")
        .validate_cel()
        .unwrap();
    with("{targets: [{name: a, image: x}, {name: b, image: y}], compare: {along: target}}")
        .validate_cel()
        .unwrap();
    with("{matrix: {connections: [4, 16]}, compare: {along: connections}}")
        .validate_cel()
        .unwrap();
    let not_varied = "compare.along names an axis the run does not vary";
    rejected_with("{compare: {along: cpu}}", not_varied);
    rejected_with("{matrix: {cpu: [250m]}, compare: {along: cpu}}", not_varied);
    rejected_with(
        "{matrix: {cpu: [250m, 500m]}, compare: {along: replicas}}",
        not_varied,
    );
    rejected_with("{compare: {along: scenario}}", not_varied);
    rejected_with("{compare: {along: target}}", not_varied);
    rejected_with(
        "{matrix: {rate: [10, 20]}, compare: {along: rate}}",
        "compare.along must be one of target, scenario, cpu, memory, replicas, connections, keepAlive",
    );
}
