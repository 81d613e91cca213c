//! Request templates: `{{name}}` placeholders in a scenario's path, header values and body,
//! filled for every request from the scenario's named values: a random integer in a range, a
//! sequence, or a pick from a list. Every connection draws from its own generator, seeded
//! from the run's seed and the connection's global number, so a run with the same seed,
//! connection count and generator instances gives each connection the same values.
//!
//! Compiling and checking a template is pure; [`Template::render`] writes one request into a
//! buffer the connection keeps, so it allocates nothing once that buffer has grown.

use std::collections::BTreeMap;
use std::io::Write as _;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Most values one scenario may declare.
pub const MAX_VALUES: usize = 16;
/// Most items of one `pick` list.
pub const MAX_ITEMS: usize = 10_000;
/// Longest item of a `pick` list, in bytes.
pub const MAX_ITEM_LEN: usize = 4096;

/// How the value of one placeholder is drawn for each request. JSON: `{"random": {"min": 1,
/// "max": 10000}}`, `{"sequence": {"start": 1, "end": 100}}` or `{"pick": ["a", "b"]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum ValueSpec {
    /// An integer drawn uniformly from `min..=max`.
    Random {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// `start, start + 1, …, end`, then `start` again. Connection `i` of `N` (over all
    /// generator instances) sends the values `start + i`, `start + i + N`, … of the sequence,
    /// so together the connections walk it in about its order, each value once per lap.
    Sequence {
        /// First value.
        start: i64,
        /// Last value (at least `start`).
        end: i64,
    },
    /// One of the items, drawn uniformly.
    Pick(Vec<String>),
}

/// Parses the command-line form `NAME=SPEC` of `--value`, where SPEC is `random:MIN..MAX`,
/// `sequence:START..END`, `pick:A,B,C` (items without commas) or the JSON form of
/// [`ValueSpec`].
pub fn parse_value_arg(arg: &str) -> Result<(String, ValueSpec)> {
    let bad = |why: String| {
        Error::InvalidConfig(format!(
            "--value {arg:?}: {why} (expected NAME=random:MIN..MAX, NAME=sequence:START..END, \
             NAME=pick:A,B,C or NAME={{\"pick\": [..]}})"
        ))
    };
    let (name, spec) = arg
        .split_once('=')
        .ok_or_else(|| bad("no '=' after the name".into()))?;
    if spec.starts_with('{') {
        let v = serde_json::from_str(spec).map_err(|e| bad(e.to_string()))?;
        return Ok((name.to_string(), v));
    }
    let (kind, rest) = spec
        .split_once(':')
        .ok_or_else(|| bad("no kind before ':'".into()))?;
    let range = |rest: &str| -> Result<(i64, i64)> {
        let (a, b) = rest
            .split_once("..")
            .ok_or_else(|| bad(format!("{rest:?} is not a range like 1..100")))?;
        let int = |s: &str| {
            s.trim()
                .parse::<i64>()
                .map_err(|_| bad(format!("{s:?} is not an integer")))
        };
        Ok((int(a)?, int(b)?))
    };
    let v = match kind {
        "random" => {
            let (min, max) = range(rest)?;
            ValueSpec::Random { min, max }
        }
        "sequence" => {
            let (start, end) = range(rest)?;
            ValueSpec::Sequence { start, end }
        }
        "pick" => ValueSpec::Pick(rest.split(',').map(String::from).collect()),
        other => return Err(bad(format!("unknown kind {other:?}"))),
    };
    Ok((name.to_string(), v))
}

/// Whether `name` can name a value: a letter or `_`, then letters, digits or `_`, at most 64.
fn is_name(name: &str) -> bool {
    let mut b = name.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
        && name.len() <= 64
}

/// Checks the declared values on their own: names, ranges and lists.
pub fn check_values(values: &BTreeMap<String, ValueSpec>) -> std::result::Result<(), String> {
    if values.len() > MAX_VALUES {
        return Err(format!(
            "{} values declared; at most {MAX_VALUES} are supported",
            values.len()
        ));
    }
    for (name, v) in values {
        if !is_name(name) {
            return Err(format!(
                "value name {name:?} must start with a letter or '_' and hold only letters, \
                 digits and '_' (at most 64), e.g. id"
            ));
        }
        match v {
            ValueSpec::Random { min, max } if min > max => {
                return Err(format!("value {name:?}: min {min} is above max {max}"))
            }
            ValueSpec::Sequence { start, end } if start > end => {
                return Err(format!("value {name:?}: start {start} is above end {end}"))
            }
            ValueSpec::Pick(items) if items.is_empty() || items.len() > MAX_ITEMS => {
                return Err(format!(
                    "value {name:?}: pick needs 1 to {MAX_ITEMS} items, not {}",
                    items.len()
                ))
            }
            ValueSpec::Pick(items) => {
                if let Some(i) = items.iter().position(|s| s.len() > MAX_ITEM_LEN) {
                    return Err(format!(
                        "value {name:?}: pick item {i} is longer than {MAX_ITEM_LEN} bytes"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Checks a request's placeholders against its values as the generator will before it
/// sends anything: every placeholder declared, every value used, pick items that fit where
/// they are used, and no explicit `Content-Length` beside a body with placeholders.
pub fn check_request(
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    values: &BTreeMap<String, ValueSpec>,
) -> std::result::Result<(), String> {
    let templated_body = body_has_values(body);
    let mut head = format!("GET {path} HTTP/1.1\r\n");
    for (k, v) in headers {
        if templated_body && k.eq_ignore_ascii_case("content-length") {
            return Err(
                "the body has placeholders, so Content-Length is set per request: remove the header"
                    .into(),
            );
        }
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    Template::compile(&head, body, values).map(|_| ())
}

/// Whether a body holds a placeholder, so that, in a scenario with values, its
/// `Content-Length` is written per request (and must not be given).
pub fn body_has_values(body: Option<&[u8]>) -> bool {
    body.is_some_and(|b| find(b, b"{{").is_some())
}

/// A piece of a template: bytes sent as they are, or the value with this index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(Box<[u8]>),
    Value(usize),
}

/// A value's generator, compiled from its [`ValueSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Gen {
    Random { min: i64, max: i64 },
    Sequence { start: i64, span: u128 },
    Pick(Vec<Box<[u8]>>),
}

/// Where a placeholder appears, which decides the bytes its values may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    RequestLine,
    Header,
    Body,
}

/// Splits `text` at its `{{name}}` placeholders (spaces inside the braces are allowed).
fn parts(text: &[u8], names: &[&String]) -> std::result::Result<Vec<Part>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = find(rest, b"{{") {
        if open > 0 {
            out.push(Part::Text(rest[..open].into()));
        }
        let after = &rest[open + 2..];
        let close = find(after, b"}}").ok_or_else(|| {
            format!(
                "a '{{{{' is not closed: write placeholders as {{{{name}}}} (near {:?})",
                String::from_utf8_lossy(&rest[open..rest.len().min(open + 20)])
            )
        })?;
        let name = String::from_utf8_lossy(&after[..close]);
        let name = name.trim();
        let index = names
            .iter()
            .position(|n| n.as_str() == name)
            .ok_or_else(|| {
                format!(
                    "{{{{{name}}}}} names no declared value: declare it in the scenario's values, \
                 or remove it (declared: {})",
                    names
                        .iter()
                        .map(|n| n.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        out.push(Part::Value(index));
        rest = &after[close + 2..];
    }
    if !rest.is_empty() {
        out.push(Part::Text(rest.into()));
    }
    Ok(out)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A request with placeholders, ready to render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The request line and headers, without the blank line that ends them.
    head: Vec<Part>,
    /// The body, when the request has one.
    body: Option<Vec<Part>>,
    /// Write `Content-Length` per request (the body has placeholders).
    length: bool,
    gens: Vec<Gen>,
}

impl Template {
    /// Compiles a request whose head (request line and header lines, each ending in CRLF,
    /// without the final blank line and without `Content-Length` when `body` has
    /// placeholders) and body hold placeholders for `values`. Every placeholder must name a
    /// declared value and every value be used; a value in the request line must be visible
    /// ASCII and one in a header must hold no control character, whatever item is drawn.
    pub fn compile(
        head: &str,
        body: Option<&[u8]>,
        values: &BTreeMap<String, ValueSpec>,
    ) -> std::result::Result<Template, String> {
        check_values(values)?;
        let names: Vec<&String> = values.keys().collect();
        let head_parts = parts(head.as_bytes(), &names)?;
        let body_parts = body.map(|b| parts(b, &names)).transpose()?;
        let line_end = head.find("\r\n").unwrap_or(head.len());
        let mut used = vec![None; names.len()];
        let mut at = 0;
        for p in &head_parts {
            match p {
                Part::Text(t) => at += t.len(),
                Part::Value(i) => {
                    let place = if at < line_end {
                        Place::RequestLine
                    } else {
                        Place::Header
                    };
                    used[*i] = Some(used[*i].map_or(place, |p: Place| p.min_with(place)));
                }
            }
        }
        for p in body_parts.iter().flatten() {
            if let Part::Value(i) = p {
                used[*i] = Some(used[*i].unwrap_or(Place::Body));
            }
        }
        let mut gens = Vec::new();
        for ((name, spec), place) in values.iter().zip(&used) {
            let Some(place) = place else {
                return Err(format!(
                    "value {name:?} is declared but no {{{{{name}}}}} uses it: use it in the \
                     path, a header or the body, or remove it"
                ));
            };
            gens.push(compile_gen(name, spec, *place)?);
        }
        let length = body_parts
            .as_ref()
            .is_some_and(|b| b.iter().any(|p| matches!(p, Part::Value(_))));
        Ok(Template {
            head: head_parts,
            body: body_parts,
            length,
            gens,
        })
    }

    /// Writes one request into `out` (cleared first), drawing its values from `draw`.
    pub fn render(&self, draw: &mut Draw, out: &mut Vec<u8>) {
        out.clear();
        let k = draw.count;
        draw.count += 1;
        // Drawn once per request: a value used twice is the same in both places.
        let mut drawn = [Drawn::Int(0); MAX_VALUES];
        for (d, g) in drawn.iter_mut().zip(&self.gens) {
            *d = match g {
                Gen::Random { min, max } => Drawn::Int(draw.rng.random_range(*min..=*max)),
                Gen::Sequence { start, span } => {
                    let n = (u128::from(draw.conn) + u128::from(draw.conns) * u128::from(k)) % span;
                    // n < span ≤ 2^64 and start + n ≤ end: exact in i128 and in range.
                    Drawn::Int((i128::from(*start) + n as i128) as i64)
                }
                Gen::Pick(items) => Drawn::Item(draw.rng.random_range(0..items.len())),
            };
        }
        self.write(&self.head, &drawn, out);
        let Some(body) = &self.body else {
            out.extend_from_slice(b"\r\n");
            return;
        };
        if self.length {
            let len: usize = body.iter().map(|p| self.len_of(p, &drawn)).sum();
            let _ = write!(out, "Content-Length: {len}\r\n");
        }
        out.extend_from_slice(b"\r\n");
        self.write(body, &drawn, out);
    }

    fn write(&self, parts: &[Part], drawn: &[Drawn], out: &mut Vec<u8>) {
        for p in parts {
            match p {
                Part::Text(t) => out.extend_from_slice(t),
                Part::Value(i) => match (drawn[*i], &self.gens[*i]) {
                    (Drawn::Int(n), _) => {
                        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes())
                    }
                    (Drawn::Item(j), Gen::Pick(items)) => out.extend_from_slice(&items[j]),
                    (Drawn::Item(_), _) => unreachable!("items are drawn only for picks"),
                },
            }
        }
    }

    fn len_of(&self, p: &Part, drawn: &[Drawn]) -> usize {
        match p {
            Part::Text(t) => t.len(),
            Part::Value(i) => match (drawn[*i], &self.gens[*i]) {
                (Drawn::Int(n), _) => itoa::Buffer::new().format(n).len(),
                (Drawn::Item(j), Gen::Pick(items)) => items[j].len(),
                (Drawn::Item(_), _) => 0,
            },
        }
    }
}

impl Place {
    /// The stricter of two places a value is used in.
    fn min_with(self, other: Place) -> Place {
        match (self, other) {
            (Place::RequestLine, _) | (_, Place::RequestLine) => Place::RequestLine,
            (Place::Header, _) | (_, Place::Header) => Place::Header,
            _ => Place::Body,
        }
    }
}

fn compile_gen(name: &str, spec: &ValueSpec, place: Place) -> std::result::Result<Gen, String> {
    Ok(match spec {
        ValueSpec::Random { min, max } => Gen::Random {
            min: *min,
            max: *max,
        },
        ValueSpec::Sequence { start, end } => Gen::Sequence {
            start: *start,
            span: (i128::from(*end) - i128::from(*start) + 1) as u128,
        },
        ValueSpec::Pick(items) => {
            for (i, item) in items.iter().enumerate() {
                let ok = match place {
                    Place::RequestLine => item.bytes().all(|b| b.is_ascii_graphic()),
                    Place::Header => crate::grammar::is_header_value(item),
                    Place::Body => true,
                };
                if !ok {
                    let rule = if place == Place::RequestLine {
                        "is used in the path, so it must hold only visible ASCII (percent-encode \
                         spaces and control characters, e.g. %20)"
                    } else {
                        "is used in a header, so it must hold no control characters"
                    };
                    return Err(format!("value {name:?}: pick item {i} ({item:?}) {rule}"));
                }
            }
            Gen::Pick(items.iter().map(|s| s.as_bytes().into()).collect())
        }
    })
}

/// A value drawn for one request.
#[derive(Debug, Clone, Copy)]
enum Drawn {
    Int(i64),
    Item(usize),
}

/// One connection's source of values: its generator and how many requests of the scenario
/// it has rendered (the position in a sequence).
#[derive(Debug, Clone)]
pub struct Draw {
    rng: Pcg64Mcg,
    conn: u64,
    conns: u64,
    count: u64,
}

impl Draw {
    /// The source of connection `conn` of `conns` (numbered over every generator instance
    /// that shares `seed`) for the scenario numbered `scenario`.
    pub fn new(seed: u64, conn: u64, conns: u64, scenario: usize) -> Draw {
        // Distinct inputs give distinct streams: seed_from_u64 expands its input with PCG.
        let stream = seed
            ^ conn.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (scenario as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        Draw {
            rng: Pcg64Mcg::seed_from_u64(stream),
            conn,
            conns: conns.max(1),
            count: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, ValueSpec)]) -> BTreeMap<String, ValueSpec> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    fn render_n(t: &Template, draw: &mut Draw, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        (0..n)
            .map(|_| {
                t.render(draw, &mut out);
                String::from_utf8(out.clone()).unwrap()
            })
            .collect()
    }

    #[test]
    fn placeholders_are_filled_in_path_header_and_body_with_the_body_length() {
        let v = values(&[
            ("id", ValueSpec::Sequence { start: 7, end: 9 }),
            ("who", ValueSpec::Pick(vec!["ann".into()])),
        ]);
        let head = "POST /doc/{{id}} HTTP/1.1\r\nX-Who: {{ who }}\r\n";
        let t = Template::compile(head, Some(b"{\"id\":{{id}}}"), &v).unwrap();
        let mut d = Draw::new(1, 0, 1, 0);
        let r = render_n(&t, &mut d, 4);
        assert_eq!(
            r[0],
            "POST /doc/7 HTTP/1.1\r\nX-Who: ann\r\nContent-Length: 8\r\n\r\n{\"id\":7}"
        );
        assert!(r[1].starts_with("POST /doc/8 ") && r[1].ends_with("{\"id\":8}"));
        assert!(r[2].starts_with("POST /doc/9 "));
        assert!(r[3].starts_with("POST /doc/7 "), "wraps: {}", r[3]);
    }

    #[test]
    fn connections_stride_through_a_sequence_and_cover_it_once_per_lap() {
        let v = values(&[("n", ValueSpec::Sequence { start: 1, end: 10 })]);
        let t = Template::compile("GET /{{n}} HTTP/1.1\r\n", None, &v).unwrap();
        let mut seen = Vec::new();
        for conn in 0..5 {
            let mut d = Draw::new(3, conn, 5, 0);
            for r in render_n(&t, &mut d, 2) {
                seen.push(r.split(' ').nth(1).unwrap()[1..].parse::<i64>().unwrap());
            }
        }
        seen.sort();
        assert_eq!(seen, (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn the_same_seed_gives_the_same_values_and_another_seed_others() {
        let v = values(&[
            (
                "id",
                ValueSpec::Random {
                    min: 1,
                    max: 1_000_000,
                },
            ),
            (
                "c",
                ValueSpec::Pick(vec!["a".into(), "b".into(), "c".into()]),
            ),
        ]);
        let t = Template::compile("GET /{{id}}/{{c}} HTTP/1.1\r\n", None, &v).unwrap();
        let a = render_n(&t, &mut Draw::new(42, 3, 8, 0), 50);
        let b = render_n(&t, &mut Draw::new(42, 3, 8, 0), 50);
        let other_seed = render_n(&t, &mut Draw::new(43, 3, 8, 0), 50);
        let other_conn = render_n(&t, &mut Draw::new(42, 4, 8, 0), 50);
        assert_eq!(a, b);
        assert_ne!(a, other_seed);
        assert_ne!(a, other_conn);
    }

    #[test]
    fn random_values_stay_in_range_and_reach_both_ends() {
        let v = values(&[("x", ValueSpec::Random { min: -2, max: 2 })]);
        let t = Template::compile("GET /?x={{x}} HTTP/1.1\r\n", None, &v).unwrap();
        let mut counts = BTreeMap::new();
        for r in render_n(&t, &mut Draw::new(0, 0, 1, 0), 5000) {
            let x: i64 = r["GET /?x=".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            *counts.entry(x).or_insert(0) += 1;
        }
        assert_eq!(
            counts.keys().copied().collect::<Vec<_>>(),
            vec![-2, -1, 0, 1, 2]
        );
        // Uniform: each of 5 values near 1000 of 5000.
        assert!(
            counts.values().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn the_widest_sequence_and_range_do_not_overflow() {
        let v = values(&[
            (
                "s",
                ValueSpec::Sequence {
                    start: i64::MIN,
                    end: i64::MAX,
                },
            ),
            (
                "r",
                ValueSpec::Random {
                    min: i64::MIN,
                    max: i64::MAX,
                },
            ),
        ]);
        let t = Template::compile("GET /{{s}}/{{r}} HTTP/1.1\r\n", None, &v).unwrap();
        let r = render_n(&t, &mut Draw::new(0, u64::MAX - 1, u64::MAX, 0), 3);
        assert!(
            r[0].starts_with(&format!("GET /{}/", i64::MAX - 1)),
            "{}",
            r[0]
        );
    }

    #[test]
    fn mistakes_name_the_value_and_the_fix() {
        let seq = ValueSpec::Sequence { start: 1, end: 2 };
        let cases = [
            (
                "GET /{{idd}} HTTP/1.1\r\n",
                values(&[("id", seq.clone())]),
                "{{idd}} names no declared value",
            ),
            (
                "GET /{{id HTTP/1.1\r\n",
                values(&[("id", seq.clone())]),
                "is not closed",
            ),
            (
                "GET / HTTP/1.1\r\n",
                values(&[("id", seq.clone())]),
                "no {{id}} uses it",
            ),
            (
                "GET / HTTP/1.1\r\n",
                values(&[("1d", seq.clone())]),
                "must start with a letter",
            ),
            (
                "GET /{{a}} HTTP/1.1\r\n",
                values(&[("a", ValueSpec::Random { min: 2, max: 1 })]),
                "min 2 is above max 1",
            ),
            (
                "GET /{{a}} HTTP/1.1\r\n",
                values(&[("a", ValueSpec::Pick(vec![]))]),
                "pick needs 1 to",
            ),
            (
                "GET /{{a}} HTTP/1.1\r\n",
                values(&[("a", ValueSpec::Pick(vec!["x y".into()]))]),
                "used in the path",
            ),
            (
                "GET / HTTP/1.1\r\nX: {{a}}\r\n",
                values(&[("a", ValueSpec::Pick(vec!["x\r\nY: 1".into()]))]),
                "used in a header",
            ),
        ];
        for (head, v, want) in cases {
            let e = Template::compile(head, None, &v).unwrap_err();
            assert!(e.contains(want), "{head:?}: {e}");
        }
        // Any bytes in the body; a space in a header.
        let v = values(&[("a", ValueSpec::Pick(vec!["x y\n".into()]))]);
        assert!(Template::compile(
            "GET / HTTP/1.1\r\nX: {{a}}\r\n",
            None,
            &values(&[("a", ValueSpec::Pick(vec!["x y".into()]))])
        )
        .is_ok());
        assert!(Template::compile("GET / HTTP/1.1\r\n", Some(b"{{a}}"), &v).is_ok());
    }

    #[test]
    fn command_line_values_parse_in_short_and_json_form() {
        assert_eq!(
            parse_value_arg("id=random:1..10000").unwrap(),
            ("id".into(), ValueSpec::Random { min: 1, max: 10000 })
        );
        assert_eq!(
            parse_value_arg("n=sequence:-5..5").unwrap().1,
            ValueSpec::Sequence { start: -5, end: 5 }
        );
        assert_eq!(
            parse_value_arg("c=pick:red,green").unwrap().1,
            ValueSpec::Pick(vec!["red".into(), "green".into()])
        );
        assert_eq!(
            parse_value_arg(r#"c={"pick":["a,b","c"]}"#).unwrap().1,
            ValueSpec::Pick(vec!["a,b".into(), "c".into()])
        );
        for (bad, want) in [
            ("id", "no '='"),
            ("id=1..2", "no kind"),
            ("id=random:1-2", "not a range"),
            ("id=random:a..2", "not an integer"),
            ("id=uniform:1..2", "unknown kind"),
            (r#"id={"random":{"min":1}}"#, "missing field"),
        ] {
            let e = parse_value_arg(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
