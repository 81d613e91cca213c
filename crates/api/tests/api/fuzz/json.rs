//! Arbitrary JSON shaped like a `BenchmarkRunSpec`: every field present or absent, of its own
//! type with a hostile value or, now and then, of another type. What deserializes is what
//! the apiserver could hand the operator had admission not checked it.

use proptest::prelude::*;
use serde_json::{Map, Value};

use super::leaves;

type Field = (&'static str, BoxedStrategy<Value>);

/// A leaf of any JSON type, for fields given the wrong type.
fn any_leaf() -> BoxedStrategy<Value> {
    prop_oneof![
        leaves::string().prop_map(Value::from),
        leaves::int().prop_map(Value::from),
        prop::sample::select(vec![1e300, -1e300, -0.0, 0.5, 1.5, 4294967296.0])
            .prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        Just(Value::Array(Vec::new())),
        Just(Value::Object(Map::new())),
    ]
    .boxed()
}

/// The field's own strategy, rarely a leaf of any type: a spec has about a hundred fields,
/// and one of the wrong type fails the whole spec's deserialization.
fn typed(s: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    prop_oneof![400 => s.boxed(), 1 => any_leaf()].boxed()
}

fn string() -> BoxedStrategy<Value> {
    typed(leaves::string().prop_map(Value::from))
}

fn unit() -> BoxedStrategy<Value> {
    typed(leaves::unit().prop_map(Value::from))
}

fn name() -> BoxedStrategy<Value> {
    typed(prop::sample::select(leaves::NAMES).prop_map(Value::from))
}

fn int() -> BoxedStrategy<Value> {
    typed(leaves::int().prop_map(Value::from))
}

/// An integer for an `i32` field: in its range but for the odd one beyond.
fn int32() -> BoxedStrategy<Value> {
    let beyond = prop::sample::select(vec![i64::from(i32::MAX) + 1, i64::from(i32::MIN) - 1]);
    typed(prop_oneof![
        200 => leaves::int().prop_map(|n| Value::from(n as i32)),
        1 => beyond.prop_map(Value::from),
    ])
}

fn array(item: BoxedStrategy<Value>, max: usize) -> BoxedStrategy<Value> {
    typed(prop::collection::vec(item, 0..max).prop_map(Value::Array))
}

fn map(value: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    let entries = prop::collection::vec((leaves::string(), value), 0..4);
    typed(entries.prop_map(|kv| Value::Object(kv.into_iter().collect())))
}

/// An object with each field mostly present (a missing required field fails the spec).
fn object(fields: Vec<Field>) -> BoxedStrategy<Value> {
    let (names, values): (Vec<&str>, Vec<_>) = fields
        .into_iter()
        .map(|(n, s)| (n, prop::option::weighted(0.97, s)))
        .unzip();
    typed(values.prop_map(move |vals| {
        let kv = names
            .iter()
            .zip(vals)
            .filter_map(|(n, v)| Some((n.to_string(), v?)));
        Value::Object(kv.collect())
    }))
}

fn target() -> BoxedStrategy<Value> {
    let env = object(vec![("name", string()), ("value", string())]);
    let toleration = object(vec![
        ("key", string()),
        ("operator", string()),
        ("effect", string()),
        ("tolerationSeconds", int()),
    ]);
    object(vec![
        ("name", name()),
        ("image", string()),
        ("port", int32()),
        ("command", array(string(), 3)),
        ("args", array(string(), 3)),
        ("env", array(env, 3)),
        ("readinessPath", string()),
        ("imagePullPolicy", string()),
        ("nodeSelector", map(string())),
        ("tolerations", array(toleration, 2)),
        ("serviceAccountName", string()),
        ("podSecurity", string()),
        ("runAsUser", int()),
    ])
}

fn scenario() -> BoxedStrategy<Value> {
    object(vec![
        ("name", name()),
        ("method", string()),
        ("path", string()),
        ("headers", map(string())),
        ("body", string()),
    ])
}

fn resources() -> BoxedStrategy<Value> {
    object(vec![
        ("cpu", unit()),
        ("memory", unit()),
        ("cpuRequest", unit()),
        ("memoryRequest", unit()),
    ])
}

fn load() -> BoxedStrategy<Value> {
    object(vec![
        ("connections", int32()),
        ("requests", int()),
        ("duration", unit()),
        ("rate", int()),
        ("warmup", unit()),
        ("warmupRequests", int()),
        ("keepAlive", typed(any::<bool>().prop_map(Value::from))),
        ("timeout", unit()),
        ("pods", int32()),
        ("resources", resources()),
    ])
}

fn matrix() -> BoxedStrategy<Value> {
    object(vec![
        ("targets", array(name(), 6)),
        ("scenarios", array(name(), 6)),
        ("cpu", array(unit(), 6)),
        ("memory", array(unit(), 6)),
        ("replicas", array(int32(), 6)),
        ("connections", array(int32(), 6)),
        ("rate", array(int(), 6)),
    ])
}

/// A JSON value shaped like a spec, with hostile leaves and missing fields.
pub fn spec_json() -> BoxedStrategy<Value> {
    let query = object(vec![("name", string()), ("query", string())]);
    object(vec![
        ("targets", array(target(), 4)),
        ("scenarios", array(scenario(), 4)),
        ("resources", resources()),
        ("replicas", int32()),
        ("load", load()),
        ("matrix", matrix()),
        ("repeats", int32()),
        (
            "slo",
            object(vec![
                ("p99", unit()),
                ("p50", unit()),
                ("errorRate", unit()),
                ("minThroughput", int()),
            ]),
        ),
        (
            "prometheus",
            object(vec![("url", string()), ("extraQueries", array(query, 3))]),
        ),
        (
            "cleanup",
            object(vec![
                ("policy", string()),
                ("ttlSecondsAfterFinished", int()),
            ]),
        ),
        (
            "timeouts",
            object(vec![("ready", unit()), ("loadGrace", unit())]),
        ),
    ])
}
