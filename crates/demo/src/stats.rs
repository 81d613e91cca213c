//! Request counters behind `/stats`: per path and per `X-Benchrun-Cell` tag.
//!
//! The hot path is one relaxed atomic add per counter; the tag map takes a shared read
//! lock except the first time a tag is seen, so counting never becomes the bottleneck.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

/// The request header the benchrun operator sets on every load request of a cell.
pub const CELL_HEADER: &str = "x-benchrun-cell";

/// Most distinct tags kept; requests with further new tags count under [`OVERFLOW_TAG`].
pub const MAX_TAGS: usize = 4096;

/// The tag that counts requests whose own tag no longer fits (see [`MAX_TAGS`]).
pub const OVERFLOW_TAG: &str = "_overflow";

/// Longest tag value kept as is; longer values count under [`OVERFLOW_TAG`].
pub const MAX_TAG_LEN: usize = 253;

/// The endpoints whose requests are counted, indexed by `path_index` (`/stats` lists them
/// sorted by name). `/docs` counts every `/docs/{id}` request, `/upstream` every
/// `/upstream/docs/{id}` one; `other` (last) the 404s.
pub const COUNTED_PATHS: [&str; 7] = [
    "/hello",
    "/compute",
    "/sleep",
    "/alloc",
    "/docs",
    "/upstream",
    "other",
];

/// Counters of the requests served since start (excluding `/stats` and `/healthz`).
#[derive(Debug, Default)]
pub struct Stats {
    total: AtomicU64,
    paths: [AtomicU64; COUNTED_PATHS.len()],
    tags: RwLock<HashMap<Box<str>, AtomicU64>>,
    /// Sum and sum of squares of the `n` of every `/compute` request (wrapping), so a test
    /// can tell which values a templated run sent without a log of every request.
    compute_n: [AtomicU64; 2],
}

impl Stats {
    /// Creates zeroed counters.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts one served request: `path_index` indexes [`COUNTED_PATHS`], `tag` is the
    /// value of the [`CELL_HEADER`] header, if the request had one.
    pub fn record(&self, path_index: usize, tag: Option<&str>) {
        self.total.fetch_add(1, Ordering::Relaxed);
        self.paths[path_index].fetch_add(1, Ordering::Relaxed);
        if let Some(tag) = tag {
            self.record_tag(tag);
        }
    }

    /// Adds one `/compute` request's `n` to the sums.
    pub fn record_compute_n(&self, n: u64) {
        self.compute_n[0].fetch_add(n, Ordering::Relaxed);
        self.compute_n[1].fetch_add(n.wrapping_mul(n), Ordering::Relaxed);
    }

    fn record_tag(&self, tag: &str) {
        let tag = if tag.len() > MAX_TAG_LEN {
            OVERFLOW_TAG
        } else {
            tag
        };
        {
            let tags = self.tags.read().unwrap_or_else(|e| e.into_inner());
            if let Some(count) = tags.get(tag) {
                count.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let mut tags = self.tags.write().unwrap_or_else(|e| e.into_inner());
        let key = if tags.len() >= MAX_TAGS && !tags.contains_key(tag) {
            OVERFLOW_TAG
        } else {
            tag
        };
        tags.entry(key.into())
            .or_default()
            .fetch_add(1, Ordering::Relaxed);
    }

    /// The counters as the `/stats` JSON document:
    /// `{"requests": n, "paths": {"/hello": n, ...}, "tags": {"<cell>": n, ...},
    /// "computeN": {"sum": s, "sumOfSquares": q}}`.
    pub fn to_json(&self) -> serde_json::Value {
        let paths: serde_json::Map<String, serde_json::Value> = COUNTED_PATHS
            .iter()
            .zip(&self.paths)
            .map(|(path, n)| ((*path).to_owned(), n.load(Ordering::Relaxed).into()))
            .collect();
        let tags: serde_json::Map<String, serde_json::Value> = self
            .tags
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(tag, n)| (tag.to_string(), n.load(Ordering::Relaxed).into()))
            .collect();
        serde_json::json!({
            "requests": self.total.load(Ordering::Relaxed),
            "paths": paths,
            "tags": tags,
            "computeN": {
                "sum": self.compute_n[0].load(Ordering::Relaxed),
                "sumOfSquares": self.compute_n[1].load(Ordering::Relaxed),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_requests_per_path_and_tag() {
        let stats = Stats::new();
        stats.record(0, Some("cell-1"));
        stats.record(0, Some("cell-1"));
        stats.record(1, Some("cell-2"));
        stats.record(COUNTED_PATHS.len() - 1, None);
        stats.record(4, None);
        let json = stats.to_json();
        assert_eq!(json["requests"], 5);
        assert_eq!(json["paths"]["/hello"], 2);
        let s = Stats::new();
        for n in [3, 4] {
            s.record_compute_n(n);
        }
        assert_eq!(
            s.to_json()["computeN"],
            serde_json::json!({"sum": 7, "sumOfSquares": 25})
        );
        assert_eq!(json["paths"]["/compute"], 1);
        assert_eq!(json["paths"]["/sleep"], 0);
        assert_eq!(json["paths"]["other"], 1);
        assert_eq!(json["paths"]["/docs"], 1);
        assert_eq!(json["paths"]["/upstream"], 0);
        assert_eq!(json["tags"], serde_json::json!({"cell-1": 2, "cell-2": 1}));
    }

    #[test]
    fn tags_beyond_the_limit_count_as_overflow() {
        let stats = Stats::new();
        for i in 0..MAX_TAGS + 3 {
            stats.record(0, Some(&format!("t{i}")));
        }
        stats.record(0, Some("t0"));
        stats.record(0, Some(&"x".repeat(MAX_TAG_LEN + 1)));
        let json = stats.to_json();
        assert_eq!(json["tags"]["t0"], 2);
        assert_eq!(json["tags"][OVERFLOW_TAG], 4);
        assert_eq!(json["requests"], MAX_TAGS as u64 + 5);
    }
}
