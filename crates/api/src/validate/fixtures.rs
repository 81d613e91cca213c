//! Specs the section parsers' tests start from.

use crate::spec::BenchmarkRunSpec;

/// One target `a`, one scenario `hello` and the load settings of `load_json`.
pub(crate) fn spec(load_json: &str) -> BenchmarkRunSpec {
    serde_json::from_value(serde_json::json!({
        "targets": [{"name": "a", "image": "img:1"}],
        "scenarios": [{"name": "hello", "path": "/hello"}],
        "load": serde_json::from_str::<serde_json::Value>(load_json).unwrap(),
    }))
    .unwrap()
}
