//! The status vocabulary: every word the operator writes into a run's status (phases, stages,
//! outcomes, warning codes, verdicts, condition types and reasons) as one type each.
//!
//! Each type serializes exactly as the string the operator has always written, so runs stored
//! before these types existed read the same. The operator writes them and the report plugin
//! reads them; neither parses a status string of its own. The only parsing is here, at the
//! serde boundary: [`Warning`] and [`SloVerdict`] are stored as one string each
//! (`Code: explanation`, `Violated: what`).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// A word that is not one of a vocabulary's: the word and the vocabulary's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownWord {
    /// The vocabulary, e.g. `Phase`.
    pub vocabulary: &'static str,
    /// The word that was read.
    pub word: String,
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a {}", self.word, self.vocabulary)
    }
}

impl std::error::Error for UnknownWord {}

/// Defines a closed vocabulary: a fieldless enum whose variants are written as the given
/// strings, with `as_str`, `ALL`, `Display`, `FromStr`, serde as that string and a JSON schema
/// of a string (listing the words when `listed`). A variant may also be read from older words
/// (`Variant = "Word" | "Older"`): they parse to it and are never written or listed.
macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        $name:ident, listed = $listed:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal $(| $older:literal)*, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every word of the vocabulary, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word as written in the status.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownWord;

            fn from_str(s: &str) -> Result<Self, UnknownWord> {
                match s {
                    $( $text $(| $older)* => Ok($name::$variant), )+
                    _ => Err(UnknownWord { vocabulary: stringify!($name), word: s.to_string() }),
                }
            }
        }

        impl From<$name> for String {
            fn from(w: $name) -> String {
                w.as_str().to_string()
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = Cow::<'de, str>::deserialize(d)?;
                s.parse().map_err(de::Error::custom)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                if $listed {
                    json_schema!({ "type": "string", "enum": [$($text),+] })
                } else {
                    json_schema!({ "type": "string" })
                }
            }
        }
    };
}

vocabulary! {
    /// Lifecycle phase of a run (`status.phase`).
    Phase, listed = true {
        /// Accepted but not started (waiting for validation).
        Pending = "Pending",
        /// Waiting for another measuring run to finish.
        Queued = "Queued",
        /// Measuring cells.
        Running = "Running",
        /// Every cell was measured (individual cells may still have failed; see conditions).
        Succeeded = "Succeeded",
        /// The run could not be carried out (invalid spec, or every cell failed).
        Failed = "Failed",
    }
}

impl Phase {
    /// Whether the run never leaves this phase.
    pub fn is_final(self) -> bool {
        matches!(self, Phase::Succeeded | Phase::Failed)
    }
}

vocabulary! {
    /// Stage of the measurement in progress (`status.current.stage`).
    Stage, listed = true {
        /// Applying the target Deployment and Service and waiting until all replicas are ready.
        Deploying = "Deploying",
        /// The load Job runs (warm-up, then the measured window). Read also from `Collecting`,
        /// the stage operators wrote before cells ran back to back: such a measurement's load
        /// is over and its result not yet recorded, which is what `Loading` with a finished
        /// Job (or its stored detail) continues from.
        Loading = "Loading" | "Collecting",
    }
}

vocabulary! {
    /// What became of one measurement (`status.results[].outcome`).
    Outcome, listed = true {
        /// The load ran and produced figures.
        Measured = "Measured",
        /// The measurement could not be carried out (`reason` says why).
        Failed = "Failed",
    }
}

/// `Measured`: what a result built field by field (tests, fixtures) usually is.
impl Default for Outcome {
    fn default() -> Self {
        Outcome::Measured
    }
}

vocabulary! {
    /// A measurement against its baseline cell (`status.results[].baseline.verdict`).
    Verdict, listed = true {
        /// Faster beyond the tolerance: the 95 % interval of the throughput ratio over the
        /// repeats (this cell's against the baseline cell's) lies wholly above `1 + tolerance`.
        /// (Operators before issue 33 wrote it for a Mann-Whitney p < 0.01 on per-second
        /// samples.)
        Better = "Better",
        /// Within the tolerance: the 90 % interval lies inside it (equivalence). (Written by
        /// earlier operators also for a change the samples did not support.)
        Same = "Same",
        /// Slower beyond the tolerance: the 95 % interval of the throughput ratio over the
        /// repeats lies wholly below `1/(1 + tolerance)`.
        Worse = "Worse",
        /// The repeats cannot tell: the interval straddles a bound of the tolerance (more
        /// repeats would).
        Inconclusive = "Inconclusive",
        /// No measured cell of the baseline run has these coordinates, or its samples could not
        /// be read (the reason says which).
        Unmatched = "Unmatched",
    }
}

/// `Unmatched`: no comparison until one is made.
impl Default for Verdict {
    fn default() -> Self {
        Verdict::Unmatched
    }
}

// --- comparisons (issue 33) ---------------------------------------------------------------

vocabulary! {
    /// What the 95 % interval of a ratio says against the tolerance (`status.comparisons[]`):
    /// see `docs/metrics.md`, Comparisons.
    ComparisonVerdict, listed = true {
        /// Better beyond the tolerance: the whole 95 % interval lies past `1 + tolerance` in
        /// the better direction (more throughput, lower latency).
        Faster = "Faster",
        /// Worse beyond the tolerance: the whole 95 % interval lies past the tolerance in the
        /// worse direction.
        Slower = "Slower",
        /// Within the tolerance: the 90 % interval lies wholly inside
        /// `[1/(1 + tolerance), 1 + tolerance]` (two one-sided tests at 5 %).
        Equivalent = "Equivalent",
        /// The interval straddles a bound of the tolerance, or there are too few repeats for
        /// one: more repeats (or less noise) are needed to tell.
        Inconclusive = "Inconclusive",
        /// The cells were not compared: one side failed, was OOM-killed, was generator-bound
        /// or had errors above the comparison threshold; `reason` says which (no ratio, no
        /// interval).
        NotCompared = "NotCompared",
    }
}

vocabulary! {
    /// What a comparison sets side by side (`status.comparisons[].against`).
    ComparisonKind, listed = true {
        /// Two targets at the same other coordinates of this run: each target against the
        /// first target of `spec.targets` measured there.
        Target = "Target",
        /// Two scenarios (different requests) of one target at the same other coordinates,
        /// made only when `spec.compare.along` is `scenario`: each scenario against the first
        /// of `spec.scenarios` measured there.
        Scenario = "Scenario",
        /// A cell against the cell of `spec.baseline` with the same coordinates.
        Baseline = "Baseline",
        /// Two cells that differ only in the value of the matrix axis `spec.compare.along`
        /// names (`axis`: `cpu`, `memory`, `replicas`, `connections` or `keepAlive`): each
        /// value against the first value of that axis measured at the same other coordinates.
        Axis = "Axis",
    }
}

vocabulary! {
    /// An axis comparisons can run along (`spec.compare.along`, `status.comparisons[].axis`):
    /// the coordinate that differs between the two cells compared, everything else the same.
    CompareAxis, listed = true {
        /// The targets (made whenever two or more are measured, asked for or not).
        Target = "target",
        /// The scenarios: different requests of one target.
        Scenario = "scenario",
        /// The CPU limit of the target pods (`matrix.cpu`).
        Cpu = "cpu",
        /// The memory limit of the target pods (`matrix.memory`).
        Memory = "memory",
        /// The target replicas (`matrix.replicas`).
        Replicas = "replicas",
        /// The connections of the load (`matrix.connections`).
        Connections = "connections",
        /// Keep-alive on or off (`matrix.keepAlive`).
        KeepAlive = "keepAlive",
    }
}

// --- end comparisons ------------------------------------------------------------------------

vocabulary! {
    /// Condition types of a run (`status.conditions[].type`).
    ConditionType, listed = false {
        /// The spec passed validation (`False` with the reason and message when it did not).
        Accepted = "Accepted",
        /// The run is measuring.
        Running = "Running",
        /// The run finished and at least one cell was measured.
        Succeeded = "Succeeded",
        /// The run failed.
        Failed = "Failed",
        /// Every measured cell met the SLOs (absent when the spec has none).
        SlosMet = "SLOsMet",
        /// No validity warning was raised (`False` lists what made the results suspect).
        ResultsValid = "ResultsValid",
        /// Prometheus answered (`False` when CPU and memory could not be read, reason
        /// `MetricsMissing`, or are still to be read, reason `MetricsPending`; load results are
        /// still kept).
        MetricsAvailable = "MetricsAvailable",
        /// Present once the apiserver refused one of the run's children (an object it would
        /// never accept, e.g. an invalid `nodeSelector` value): `False`, reason `ApplyRefused`,
        /// with the child and the apiserver's message. The cells that needed the child failed
        /// with it.
        ChildrenApplied = "ChildrenApplied",
        /// Present when the spec names a `baseline`: `True` (reason `Worse`) when some cell is
        /// `Slower` than its baseline cell beyond the tolerance (its 95 % interval wholly past
        /// it, in throughput, p99, spread or errors), reason `EnvironmentChanged` when every
        /// such cell also ran in another environment than the baseline; `False` otherwise, reason `NoneWorse` when
        /// every compared cell is `Equivalent` or `Faster`, `Inconclusive` when some cannot be
        /// told apart yet. Argo CD and Flux can turn `True` into a failed health check (see
        /// docs/experiments.md, GitOps).
        Regressed = "Regressed",
        // kstatus (sigs.k8s.io/cli-utils): the conditions GitOps tools read.
        /// `True` once the run has Succeeded; `False` while it is pending, queued or running
        /// (reason `Queued`, `Measuring`) and when it Failed.
        Ready = "Ready",
        /// `True` while work remains (the run is queued or measuring), `False` once it finished.
        Reconciling = "Reconciling",
        /// `True` when the run Failed (it will not go on by itself), `False` otherwise.
        Stalled = "Stalled",
    }
}

vocabulary! {
    /// Reasons of the run's conditions and of the Kubernetes events the operator records.
    Reason, listed = false {
        /// The spec passed validation.
        Valid = "Valid",
        /// The spec failed validation (the message lists every field).
        InvalidSpec = "InvalidSpec",
        /// The operator's policy refuses the spec (Prometheus URL or image not allowed).
        NotAllowed = "NotAllowed",
        /// Waiting for another measuring run.
        Queued = "Queued",
        /// Not queued: the run's namespace had as many runs waiting for a measuring slot as
        /// the operator allows (`--max-queued-per-namespace`); the run failed.
        QueueFull = "QueueFull",
        /// The run measures cells.
        Measuring = "Measuring",
        /// The run started.
        Started = "Started",
        /// Backing services are being seeded.
        Seeding = "Seeding",
        /// A measurement's load Job was created.
        LoadStarted = "LoadStarted",
        /// A measurement's load figures were recorded.
        Measured = "Measured",
        /// A measurement could not be carried out.
        MeasurementFailed = "MeasurementFailed",
        /// The run finished.
        Completed = "Completed",
        /// The run failed.
        Failed = "Failed",
        /// The run finished with no measurement.
        NothingMeasured = "NothingMeasured",
        /// The apiserver refused one of the run's children.
        ApplyRefused = "ApplyRefused",
        /// A measured window's CPU and memory are being read.
        CollectingMetrics = "CollectingMetrics",
        /// Prometheus could not be reached; the next load waits for it.
        WaitingForPrometheus = "WaitingForPrometheus",
        /// A measured window's CPU and memory were read.
        MetricsCollected = "MetricsCollected",
        /// A measured window's CPU and memory are read later (Prometheus unreachable).
        MetricsDeferred = "MetricsDeferred",
        /// A measured window's CPU and memory could not be read.
        MetricsUnavailable = "MetricsUnavailable",
        /// The measured window is too short for CPU figures.
        WindowTooShort = "WindowTooShort",
        /// A reconcile failed and is retried.
        RetryingAfterError = "RetryingAfterError",
        /// Every measured cell met the SLOs.
        AllCellsMet = "AllCellsMet",
        /// At least one measured cell violated an SLO.
        SloViolated = "SLOViolated",
        /// Nothing measured yet.
        NoMeasurements = "NoMeasurements",
        /// No measurement raised a validity warning.
        NoWarnings = "NoWarnings",
        /// Some measurement raised a validity warning.
        SuspectResults = "SuspectResults",
        /// Prometheus gave CPU and memory for every measurement.
        MetricsRead = "MetricsRead",
        /// Prometheus gave no CPU or memory for some measurement.
        MetricsMissing = "MetricsMissing",
        /// Some measurement's CPU and memory wait for an unreachable Prometheus.
        MetricsPending = "MetricsPending",
        /// Some measurement is worse than its baseline cell.
        Worse = "Worse",
        /// Some measurement is worse than its baseline cell, and every such cell ran in another
        /// environment than its baseline cell (another kernel, OS, runtime, kubelet, CPU count,
        /// instance type, load CPU model or operator version): the change may be the
        /// environment's, not the code's.
        EnvironmentChanged = "EnvironmentChanged",
        /// No measurement is worse than its baseline cell.
        NoneWorse = "NoneWorse",
        /// No cell is worse than its baseline cell, but some comparison is `Inconclusive`: the
        /// repeats cannot tell a change within the tolerance from one beyond it.
        Inconclusive = "Inconclusive",
        // kstatus conditions (Ready, Reconciling, Stalled).
        /// The run has not been started yet.
        NotStarted = "NotStarted",
        /// The run succeeded (`Ready=True`).
        Succeeded = "Succeeded",
        /// The run has not failed (`Stalled=False`).
        NotStalled = "NotStalled",
    }
}

vocabulary! {
    /// The code of a validity warning: why a measured number may not mean what it seems to
    /// (`docs/metrics.md` lists each with its threshold).
    WarningCode, listed = false {
        /// The load generator, not the target, may have limited the rate.
        GeneratorBound = "GeneratorBound",
        /// Target and load pods ran on the same node.
        SameNode = "SameNode",
        /// More than 1 % of the requests failed.
        HighErrorRate = "HighErrorRate",
        /// Target containers restarted during the measurement.
        Restarts = "Restarts",
        /// Target containers were OOM-killed during the measurement.
        OomKilled = "OOMKilled",
        /// No warm-up ran before the measured window.
        NoWarmup = "NoWarmup",
        /// Throughput varied by more than 10 % (CV) across repeats.
        HighVariance = "HighVariance",
        /// Closed model with a target far below its CPU limit.
        ConcurrencyBound = "ConcurrencyBound",
        /// Prometheus gave no CPU or memory figures.
        MetricsUnavailable = "MetricsUnavailable",
        /// Prometheus could not be reached yet; CPU and memory are still to be read.
        MetricsPending = "MetricsPending",
        /// The window held too few CPU samples for trustworthy CPU figures.
        WindowTooShort = "WindowTooShort",
        /// The load pods began their measured windows far apart.
        StaggeredStart = "StaggeredStart",
        /// A backing service ran at its CPU limit.
        ServiceBound = "ServiceBound",
        /// The next measurement's load, made ahead to begin when this window ends, began
        /// before this window's last response.
        LoadOverlap = "LoadOverlap",
        /// Open model: the achieved rate stayed below 95 % of the offered rate (the message
        /// names what limited it: the generator, its connections or the target).
        RateNotMet = "RateNotMet",
        /// The kernel retransmitted SYNs and connect times cluster at its retransmit steps
        /// (1 s, 3 s, 7 s, ...): dropped SYNs, typically a full listen backlog.
        SynRetransmits = "SynRetransmits",
        /// The load pods held more than 80 % of their ephemeral port range.
        EphemeralPortsLow = "EphemeralPortsLow",
        /// Connections were reset rather than closed.
        Resets = "Resets",
        /// A backing service's container restarted since the run made it: what its seeding
        /// Job wrote may be gone, so the cell may have read an empty or partial store.
        ServiceRestarted = "ServiceRestarted",
        /// The target was not at steady state: the per-second throughput trended within the
        /// measured window, the cell's repeats trended in the order measured, or a warm-up
        /// until steady reached its cap (the message gives the trend).
        NotSteady = "NotSteady",
    }
}

/// One validity warning: its code and the explanation with the numbers behind it and what to
/// do about it. Stored as `Code: explanation`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// What kind of doubt this is.
    pub code: WarningCode,
    /// The explanation (without the code).
    pub message: String,
}

impl Warning {
    /// A warning of `code` explained by `message`.
    pub fn new(code: WarningCode, message: impl Into<String>) -> Self {
        Warning {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl FromStr for Warning {
    type Err = UnknownWord;

    fn from_str(s: &str) -> Result<Self, UnknownWord> {
        let (code, message) = s.split_once(':').unwrap_or((s, ""));
        Ok(Warning::new(code.trim().parse()?, message.trim_start()))
    }
}

/// The SLO verdict of one measurement (`status.results[].slo`): `Met`, or `Violated: ` followed
/// by each objective that does not hold, e.g. `Violated: p99 250.1ms > 200ms; error rate 2.0% >
/// 1%`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SloVerdict {
    /// Every objective holds.
    Met,
    /// Some objective does not hold; each one broken, as written after `Violated: `.
    Violated(Vec<String>),
}

impl SloVerdict {
    /// Whether some objective does not hold.
    pub fn is_violated(&self) -> bool {
        matches!(self, SloVerdict::Violated(_))
    }

    /// `Met` or `Violated`, without what was violated.
    pub fn word(&self) -> &'static str {
        match self {
            SloVerdict::Met => MET,
            SloVerdict::Violated(_) => VIOLATED,
        }
    }
}

const MET: &str = "Met";
const VIOLATED: &str = "Violated";

impl fmt::Display for SloVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SloVerdict::Met => f.write_str(MET),
            SloVerdict::Violated(broken) => write!(f, "{VIOLATED}: {}", broken.join("; ")),
        }
    }
}

impl FromStr for SloVerdict {
    type Err = UnknownWord;

    fn from_str(s: &str) -> Result<Self, UnknownWord> {
        if s == MET {
            return Ok(SloVerdict::Met);
        }
        match s.split_once(':') {
            Some((VIOLATED, broken)) => Ok(SloVerdict::Violated(
                broken.split(';').map(|b| b.trim().to_string()).collect(),
            )),
            _ if s == VIOLATED => Ok(SloVerdict::Violated(Vec::new())),
            _ => Err(UnknownWord {
                vocabulary: "SloVerdict",
                word: s.to_string(),
            }),
        }
    }
}

/// The run's SLO headline (`status.summary.slo`): `Met`, or `Violated (n)` with the number of
/// measurements that violated an objective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SloSummary {
    /// Every measured cell met the SLOs.
    Met,
    /// This many measurements violated an objective.
    Violated(u32),
}

impl fmt::Display for SloSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SloSummary::Met => f.write_str(MET),
            SloSummary::Violated(n) => write!(f, "{VIOLATED} ({n})"),
        }
    }
}

impl FromStr for SloSummary {
    type Err = UnknownWord;

    fn from_str(s: &str) -> Result<Self, UnknownWord> {
        let unknown = || UnknownWord {
            vocabulary: "SloSummary",
            word: s.to_string(),
        };
        if s == MET {
            return Ok(SloSummary::Met);
        }
        let n = s
            .strip_prefix(VIOLATED)
            .and_then(|r| r.trim().strip_prefix('('))
            .and_then(|r| r.strip_suffix(')'))
            .ok_or_else(unknown)?;
        n.parse().map(SloSummary::Violated).map_err(|_| unknown())
    }
}

/// Serde and schema of a type stored as its `Display` string and read with its `FromStr`.
macro_rules! stored_as_string {
    ($name:ident, $doc:literal) => {
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = Cow::<'de, str>::deserialize(d)?;
                s.parse().map_err(de::Error::custom)
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn inline_schema() -> bool {
                true
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({ "type": "string", "description": $doc })
            }
        }
    };
}

stored_as_string!(Warning, "`Code: explanation`");
stored_as_string!(
    SloVerdict,
    "`Met`, or `Violated: ` followed by what was violated"
);
stored_as_string!(SloSummary, "`Met` or `Violated (n)`");

/// The key of a measurement's detail ConfigMap that holds its merged load result (histograms
/// and per-second timeline) as JSON.
pub const DETAIL_KEY: &str = "result.json";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_their_strings() {
        for p in Phase::ALL {
            assert_eq!(p.as_str().parse::<Phase>(), Ok(*p));
            assert_eq!(serde_json::to_string(p).unwrap(), format!("\"{p}\""));
        }
        for c in WarningCode::ALL {
            assert_eq!(c.as_str().parse::<WarningCode>(), Ok(*c));
        }
        for r in Reason::ALL {
            assert_eq!(r.as_str().parse::<Reason>(), Ok(*r));
        }
        assert_eq!(WarningCode::OomKilled.as_str(), "OOMKilled");
        assert_eq!(ConditionType::SlosMet.as_str(), "SLOsMet");
        assert_eq!(Reason::SloViolated.as_str(), "SLOViolated");
    }

    #[test]
    fn an_unknown_word_is_an_error_naming_the_vocabulary() {
        let e = "Collected".parse::<Stage>().unwrap_err();
        assert_eq!(e.to_string(), "\"Collected\" is not a Stage");
        assert!(serde_json::from_str::<Stage>("\"deploying\"").is_err());
    }

    #[test]
    fn warnings_are_stored_as_code_colon_explanation() {
        let text = "HighErrorRate: 1.23% of requests failed (read 665): see x";
        let w: Warning = serde_json::from_value(serde_json::json!(text)).unwrap();
        assert_eq!(w.code, WarningCode::HighErrorRate);
        assert_eq!(w.message, "1.23% of requests failed (read 665): see x");
        assert_eq!(serde_json::to_value(&w).unwrap(), serde_json::json!(text));
        assert!(serde_json::from_value::<Warning>(serde_json::json!("Nope: x")).is_err());
    }

    #[test]
    fn slo_verdicts_read_back_as_written() {
        for text in [
            "Met",
            "Violated: p99 250.1ms > 200ms",
            "Violated: p99 250.1ms > 200ms; error rate 2.0% > 1%",
        ] {
            let v: SloVerdict = text.parse().unwrap();
            assert_eq!(v.to_string(), text);
        }
        assert!("Violated: x".parse::<SloVerdict>().unwrap().is_violated());
        assert!("met".parse::<SloVerdict>().is_err());
        for text in ["Met", "Violated (3)"] {
            assert_eq!(text.parse::<SloSummary>().unwrap().to_string(), text);
        }
        assert!("Violated (x)".parse::<SloSummary>().is_err());
    }
}
