//! `spec.search`: the sizing questions answered by measuring instead of sweeping a grid.
//! *Capacity* is the highest offered rate (open model) at which a configuration meets every
//! SLO; *demand* is the smallest CPU limit or replica count that meets every SLO at a given
//! rate (the two metrics Theodolite names). Each configuration of the matrix (its other axes)
//! gets its own search, one after the other.
//!
//! This module holds the spec types and the parsed plan ([`SearchPlan`]), pure; the status
//! entries are [`crate::status::SearchResult`].
//! The algorithm that picks each next value from the measurements so far is
//! [`crate::bisection`]; the operator feeds it (`src/search.rs`). A search's cells are made
//! as it goes: the run starts with one cell per configuration at the value measured first, and
//! every value the search asks for later becomes a new cell (index after the existing ones);
//! repeats of a cell are the confirmations of that value.

use kube::KubeSchema;
use serde::{Deserialize, Serialize};

use crate::bisection::{self, Bounds, Direction};

/// Default `precision` of a search.
pub const DEFAULT_PRECISION: &str = "5%";
/// Finest precision a search may ask for: finer than run-to-run noise only costs measurements.
pub const MIN_PRECISION: f64 = 0.01;
/// Coarsest precision a search may ask for.
pub const MAX_PRECISION: f64 = 0.5;

/// Find a boundary by measuring: exactly one of `capacity` or `demand`.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.capacity) != has(self.demand)").message("search needs exactly one of search.capacity or search.demand"))]
pub struct Search {
    /// The highest offered rate (requests per second over all load pods, open model) at which
    /// every SLO is met, for each configuration of the matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySearch>,
    /// The smallest CPU limit or replica count at which every SLO is met at a given rate, for
    /// each configuration of the matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demand: Option<DemandSearch>,
}

/// `search.capacity`: the offered rates to search.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CapacitySearch {
    /// The range of offered rates in requests per second; `min` is measured first and is
    /// expected to pass, `max` is expected to fail.
    pub rate: RateRange,
    /// How finely to locate the answer, a percentage such as `"5%"` (default): the search
    /// stops when the lowest failing rate is within this much above the highest passing one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) >= 1.0 && double(self.replace('%', '')) <= 50.0").message("search precision must be a percentage between 1% and 50% such as \"5%\""))]
    pub precision: Option<String>,
}

/// A range of offered rates.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.min < self.max").message("search rate range: min must be below max"))]
pub struct RateRange {
    /// Lowest rate searched (requests per second, at least 1).
    #[schemars(range(min = 1, max = 1_000_000))]
    pub min: i64,
    /// Highest rate searched (requests per second).
    #[schemars(range(min = 1, max = 1_000_000))]
    pub max: i64,
}

/// `search.demand`: the rate to serve and the resource to search.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("has(self.cpu) != has(self.replicas)").message("search.demand needs exactly one of cpu or replicas: the resource to search"))]
pub struct DemandSearch {
    /// The offered rate (requests per second over all load pods, open model) every measurement
    /// runs at.
    #[schemars(range(min = 1, max = 1_000_000))]
    pub rate: i64,
    /// The CPU limits to search, as Kubernetes quantities (`{min: "100m", max: "2"}`); `max`
    /// is measured first and is expected to pass. Values in between are whole millicores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuRange>,
    /// The replica counts to search; `max` is measured first and is expected to pass. The
    /// search ends at two adjacent counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<ReplicaRange>,
    /// How finely to locate a CPU answer, a percentage such as `"5%"` (default): the search
    /// stops when the highest failing limit is within this much below the lowest passing one.
    /// Not used for replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[x_kube(validation = Rule::new("self.matches('^[0-9]+(\\\\.[0-9]+)?%$') && double(self.replace('%', '')) >= 1.0 && double(self.replace('%', '')) <= 50.0").message("search precision must be a percentage between 1% and 50% such as \"5%\""))]
    pub precision: Option<String>,
}

/// A range of CPU limits.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct CpuRange {
    /// Smallest CPU limit searched, e.g. `"100m"`.
    #[schemars(length(min = 1, max = 32))]
    pub min: String,
    /// Largest CPU limit searched, e.g. `"2"`.
    #[schemars(length(min = 1, max = 32))]
    pub max: String,
}

/// A range of replica counts.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("self.min < self.max").message("search replicas range: min must be below max"))]
pub struct ReplicaRange {
    /// Fewest replicas searched.
    #[schemars(range(min = 1, max = 32))]
    pub min: i32,
    /// Most replicas searched.
    #[schemars(range(min = 1, max = 32))]
    pub max: i32,
}

/// The coordinate a search moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchAxis {
    /// The offered rate (capacity).
    Rate,
    /// The CPU limit in millicores (demand).
    Cpu,
    /// The replica count (demand).
    Replicas,
}

impl SearchAxis {
    /// The axis's name in status and messages.
    pub fn name(self) -> &'static str {
        match self {
            SearchAxis::Rate => "rate",
            SearchAxis::Cpu => "cpu",
            SearchAxis::Replicas => "replicas",
        }
    }

    /// The axis of a status entry's `axis` word ([`SearchAxis::name`]).
    pub fn from_name(name: &str) -> Option<SearchAxis> {
        [SearchAxis::Rate, SearchAxis::Cpu, SearchAxis::Replicas]
            .into_iter()
            .find(|a| a.name() == name)
    }

    /// A value on this axis for people: `412 req/s`, `250m`, `3 replicas`.
    pub fn show(self, value: f64) -> String {
        match self {
            SearchAxis::Rate => format!("{value} req/s"),
            SearchAxis::Cpu => format!("{value}m"),
            SearchAxis::Replicas => format!("{value} replicas"),
        }
    }
}

/// `spec.search`, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchPlan {
    /// What is searched.
    pub axis: SearchAxis,
    /// Capacity (highest passing) or demand (lowest passing).
    pub direction: Direction,
    /// The range and precision.
    pub bounds: Bounds,
    /// The configurations searched, one after the other: the matrix's cells before the
    /// search adds any (cell `i` < `configurations` starts configuration `i`).
    pub configurations: usize,
}

impl SearchPlan {
    /// `capacity` or `demand`.
    pub fn kind(&self) -> &'static str {
        match self.direction {
            Direction::HighestPassing => "capacity",
            Direction::LowestPassing => "demand",
        }
    }

    /// The most measurements one configuration's search may take.
    pub fn worst_case(&self) -> usize {
        bisection::worst_case(&self.bounds) as usize
    }

    /// The most measurements the whole run may take.
    pub fn max_total(&self) -> usize {
        self.configurations * self.worst_case()
    }

    /// The value measured first: the end expected to pass.
    pub fn first_value(&self) -> f64 {
        match self.direction {
            Direction::HighestPassing => self.bounds.min,
            Direction::LowestPassing => self.bounds.max,
        }
    }

    /// What the search will do, for the Accepted condition.
    pub fn note(&self) -> String {
        let what = match self.direction {
            Direction::HighestPassing => "the highest rate",
            Direction::LowestPassing => match self.axis {
                SearchAxis::Replicas => "the fewest replicas",
                _ => "the smallest CPU limit",
            },
        };
        let precision = match self.axis {
            SearchAxis::Replicas => "to one replica".to_string(),
            _ => format!("to {}", crate::units::format_percent(self.bounds.precision)),
        };
        format!(
            "search {}: {what} meeting every SLO between {} and {} {precision}, for {} configuration{}; at most {} measurements each ({} in all), usually far fewer",
            self.kind(),
            self.axis.show(self.bounds.min),
            self.axis.show(self.bounds.max),
            self.configurations,
            if self.configurations == 1 { "" } else { "s" },
            self.worst_case(),
            self.max_total()
        )
    }
}
