//! The committed claims file: per seed, what is matched, what is substituted, and each claim
//! with the cells that answer it.

use serde::Deserialize;

/// `examples/seeds/claims/claims.yaml`.
#[derive(Deserialize, Clone, Debug, PartialEq)]
pub struct ClaimsFile {
    /// The five seeds, in order.
    pub seeds: Vec<SeedClaims>,
}

/// One write-up and how this project reproduces it.
#[derive(Deserialize, Clone, Debug, PartialEq)]
pub struct SeedClaims {
    /// The seed's number (1 to 5).
    pub number: u32,
    /// The write-up in a line.
    pub title: String,
    /// The example whose run answers the claims.
    pub file: String,
    /// Items of the faithful-reproduction list the example matches.
    #[serde(default)]
    pub matches: Vec<String>,
    /// What the example substitutes, each with its expected effect.
    #[serde(default)]
    pub substitutions: Vec<Substitution>,
    /// The write-up's claims.
    pub claims: Vec<Claim>,
    /// Whether the page shows what the wire saw (SYN retransmits beside connect times) for
    /// this seed's run: for claims about connect times.
    #[serde(default)]
    pub wire: bool,
}

/// A substitution and what it is expected to change.
#[derive(Deserialize, Clone, Debug, PartialEq)]
pub struct Substitution {
    /// What stands in for what.
    pub what: String,
    /// Its expected effect on the figures.
    pub effect: String,
}

/// One claim of a write-up.
#[derive(Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    /// Its number, e.g. `1.3`.
    pub id: String,
    /// The claim in the project's words.
    pub claim: String,
    /// The metric compared.
    #[serde(default)]
    pub metric: Option<Metric>,
    /// The direction claimed, candidate against reference.
    #[serde(default)]
    pub expect: Option<Expect>,
    /// The margin of "equal" (default 0.05).
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The ratio candidate / reference the claim states, for `expect: ratio`.
    #[serde(default)]
    pub ratio: Option<f64>,
    /// Why that ratio (e.g. "linear in the users: 150 / 10").
    #[serde(default)]
    pub ratio_why: Option<String>,
    /// A hypothesis of this project's (to explain a write-up's figure), not the write-up's
    /// claim: listed and counted apart.
    #[serde(default)]
    pub ours: bool,
    /// The cells that answer it.
    #[serde(default)]
    pub comparisons: Vec<Comparison>,
    /// Why this machine cannot answer it, when it cannot.
    #[serde(default)]
    pub not_testable: Option<String>,
}

/// What is compared.
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Metric {
    /// Requests per second.
    Throughput,
    /// Mean latency, ms.
    LatencyMean,
    /// Median latency, ms.
    LatencyP50,
    /// Maximum latency, ms.
    LatencyMax,
    /// Maximum connect time, ms.
    ConnectMax,
    /// Peak memory (working set), bytes.
    MemoryPeak,
    /// The image's size, bytes.
    ImageBytes,
}

impl Metric {
    /// Whether a higher value is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Throughput)
    }

    /// How the page names it.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Throughput => "throughput",
            Metric::LatencyMean => "mean latency",
            Metric::LatencyP50 => "median latency",
            Metric::LatencyMax => "maximum latency",
            Metric::ConnectMax => "maximum connect time",
            Metric::MemoryPeak => "peak memory",
            Metric::ImageBytes => "image size",
        }
    }

    /// The unit of its values as the page shows them.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Throughput => "req/s",
            Metric::MemoryPeak | Metric::ImageBytes => "MB",
            _ => "ms",
        }
    }
}

/// The direction a claim states, candidate against reference.
#[derive(Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Expect {
    /// The candidate is better on the metric.
    Better,
    /// The candidate is worse.
    Worse,
    /// The two are equal within the tolerance.
    Equal,
    /// The candidate is equal or better.
    NotWorse,
    /// The candidate is the reference times the claim's `ratio`, within the tolerance (e.g.
    /// "grows linearly": the latency at 150 users is 15 times that at 10).
    Ratio,
}

/// One comparison answering a claim.
#[derive(Deserialize, Clone, Debug, PartialEq)]
pub struct Comparison {
    /// What it compares, in a few words.
    pub label: String,
    /// The original's figures, when the write-up gives them.
    #[serde(default)]
    pub original: Option<Original>,
    /// The candidate's cells.
    pub candidate: Selector,
    /// The reference's cells.
    pub reference: Selector,
}

/// The write-up's figures for one comparison.
#[derive(Deserialize, Clone, Debug, PartialEq)]
pub struct Original {
    /// The candidate's figure.
    pub candidate: f64,
    /// The reference's figure.
    pub reference: f64,
    /// Their unit.
    pub unit: String,
    /// Where in the write-up (batch, level).
    #[serde(default)]
    pub r#where: String,
}

/// Cells of a run by their coordinates; an absent key matches any value.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Selector {
    /// Target name.
    #[serde(default)]
    pub target: Option<String>,
    /// Scenario name.
    #[serde(default)]
    pub scenario: Option<String>,
    /// Connections.
    #[serde(default)]
    pub connections: Option<i32>,
}

impl Selector {
    /// The selector in a few words, e.g. `express / list-projected / c=100`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.target {
            parts.push(t.clone());
        }
        if let Some(s) = &self.scenario {
            parts.push(s.clone());
        }
        if let Some(c) = self.connections {
            parts.push(format!("c={c}"));
        }
        parts.join(" / ")
    }
}
