//! Hostile leaf values for the spec fuzz tests: the strings and numbers a spec that skipped
//! admission (created before a CEL rule existed, or with validation off) may hold.

use proptest::prelude::*;

/// Unit strings that have broken or nearly broken parsers: overflowing exponents, negative
/// and empty numbers, lone suffixes, NaN, Go's duration bounds, non-ASCII units.
pub const ODD_UNITS: &[&str] = &[
    "",
    " ",
    "0",
    "-0",
    "0s",
    "0m",
    "1e400",
    "1e400s",
    "-1s",
    "-1",
    "-500m",
    "999999999999h",
    "2562047h",
    "2562048h",
    "9223372036.854775807s",
    "Ki",
    "Mi",
    "m",
    "s",
    "ms",
    ".s",
    "..5s",
    "0.0000001m",
    "0.0000001",
    "1e-300",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "1e300Ei",
    "9007199254740993",
    "9007199254740992m",
    "1.5.5",
    "1h1h1h",
    "1µs",
    "500us",
    "1ns",
    "1m30s",
    "1%",
    "-1%",
    "100.0000001%",
    "NaN%",
    "%",
    "1e2%",
    "+1",
    "0x10",
    "1_000",
    "١",
];

/// Values that pass the checks, so mutated specs often stay valid and reach the code behind
/// validation.
pub const GOOD_UNITS: &[&str] = &[
    "1", "2", "250m", "500m", "3500m", "0.5", "64Mi", "128Mi", "512Mi", "1Gi", "1G", "10s", "30s",
    "2m", "1ms", "3m", "1h", "200ms", "1%", "0.5%",
];

/// Names: valid DNS labels (some shared with the examples, so matrix entries can match),
/// and names that are not.
pub const NAMES: &[&str] = &[
    "web",
    "demo",
    "hello",
    "compute",
    "express",
    "spring",
    "a",
    "a-b",
    "x1",
    "t2345678901234567890",
    "t23456789012345678901",
    "",
    "-a",
    "a-",
    "A",
    "9a",
    "a.b",
    "a b",
    "é",
    "a\u{0}",
    "a\r\nb",
];

/// Strings with control characters, CR/LF, NUL, non-ASCII and HTTP-meaningful bytes.
pub const NASTY: &[&str] = &[
    "\u{0}",
    "\r",
    "\n",
    "\r\n",
    "\t",
    "\u{7f}",
    "\u{1b}[31m",
    "é",
    "日本",
    "\u{202e}",
    "/",
    "/hello",
    "/a b",
    "/\r\nHost: x",
    "GET",
    "GET / HTTP/1.1\r\n",
    "content-length",
    "Content-Length",
    "Transfer-Encoding",
    "chunked",
    "X-Id",
    "X:Y",
    "(",
    "http://p:9090",
    "https://x",
    "http://",
    "Delete",
    "Keep",
    "KeepOnFailure",
    "Baseline",
    "Restricted",
    "Privileged",
    "Always",
    "Never",
    "IfNotPresent",
    "img:1",
    "   ",
];

/// A unit-like string: mostly from the lists above, sometimes generated around the grammar.
pub fn unit() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(GOOD_UNITS).prop_map(String::from),
        3 => prop::sample::select(ODD_UNITS).prop_map(String::from),
        2 => "-?[0-9]{0,22}(\\.[0-9]{0,8})?(e-?[0-9]{1,4})?(m|Mi|Gi|Ki|Ei|E|k|s|ms|us|ns|h|%)?",
        1 => "([0-9.]{1,6}(h|m|s|ms|us|µs|ns|x)){1,4}",
    ]
}

/// Any string a spec field may hold, hostile ones included; enormous ones are rare.
pub fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => unit(),
        3 => prop::sample::select(NAMES).prop_map(String::from),
        3 => prop::sample::select(NASTY).prop_map(String::from),
        2 => any::<String>(),
        1 => "[ -~]{0,64}",
        1 => (prop::sample::select(NASTY), 1usize..70_000)
            .prop_map(|(s, n)| s.repeat(n.min(70_000 / s.len().max(1)))),
    ]
}

/// An integer: the edges of i32 and i64, zero, negatives, and small values that often pass.
pub fn int() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 1i64..=16,
        2 => prop::sample::select(vec![
            0,
            -1,
            1,
            2,
            3,
            50,
            200,
            201,
            20_000,
            65_535,
            65_536,
            10_000_000,
            10_000_001,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
            i64::MAX,
            i64::MIN,
        ]),
        1 => any::<i64>(),
        1 => any::<i32>().prop_map(i64::from),
    ]
}
