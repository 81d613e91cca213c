//! The plan: a spec that passed validation, every section parsed. The operator's planner and
//! builders read it, never the spec.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{
    BaselinePlan, CleanupPolicy, Limit, ResourcePlan, ScenarioPlan, ServicePlan, SloPlan,
    TargetPlan, TargetRequests, Warmup,
};
use crate::matrix::Cell;
use crate::spec::BenchmarkRunSpec;
use crate::units;

/// A spec that passed validation, with every unit parsed and the matrix expanded.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatedRun {
    /// The spec as written. Private to this crate: the operator reads the parsed fields below
    /// only.
    pub(crate) spec: BenchmarkRunSpec,
    /// `spec.matrix` (empty when absent): which coordinates the run sweeps.
    pub matrix: crate::Matrix,
    /// `spec.prometheus`: the URL and extra queries, if the run names them.
    pub prometheus: Option<crate::PrometheusSpec>,
    /// Each target of `spec.targets`, parsed, in order (cells index it).
    pub targets: Vec<TargetPlan>,
    /// Each scenario of `spec.scenarios`, parsed, in order (cells index it).
    pub scenarios: Vec<ScenarioPlan>,
    /// Requests of the target pods set apart from their limits.
    pub target_requests: TargetRequests,
    /// The cells in matrix order.
    pub cells: Vec<Cell>,
    /// Measurements per cell (`spec.repeats`; with `until`, the first ones).
    pub repeats: usize,
    /// `spec.repeatsUntil`: the precision goal that adds rounds of repeats, if set.
    pub until: Option<crate::repeats::RepeatGoal>,
    /// Measurement bound.
    pub limit: Limit,
    /// Warm-up bound.
    pub warmup: Warmup,
    /// Per-request timeout.
    pub timeout: Duration,
    /// `load.rampUp`, if any.
    pub ramp_up: Option<Duration>,
    /// `load.thinkTime`, if any.
    pub think_time: Option<Duration>,
    /// `load.seed`: the seed of every measurement's template values, if the spec fixes one.
    pub seed: Option<u64>,
    /// Load pods per measurement.
    pub load_pods: i32,
    /// Resources of each load pod.
    pub load_resources: ResourcePlan,
    /// `load.nodeSelector`: node labels the load pods must match (empty: none given).
    pub load_node_selector: BTreeMap<String, String>,
    /// SLOs, if any.
    pub slo: Option<SloPlan>,
    /// Cleanup policy.
    pub cleanup: CleanupPolicy,
    /// Delete the run this long after it finished.
    pub ttl_after_finished: Option<Duration>,
    /// Readiness timeout of a target.
    pub ready_timeout: Duration,
    /// Grace beyond the expected load time before a Job counts as stuck.
    pub load_grace: Duration,
    /// The run to compare with, if any.
    pub baseline: Option<BaselinePlan>,
    /// Each backing service of `spec.services`, parsed, in order.
    pub services: Vec<ServicePlan>,
    /// `spec.tolerance`: the change that matters in the comparisons within the run, if set.
    pub tolerance: Option<f64>,
    /// `spec.compare.along`: the axis the comparisons within the run run along besides the
    /// targets, if the spec names one (validated: the cells vary along it).
    pub compare_along: Option<crate::vocab::CompareAxis>,
    /// `spec.repeatOrder`: the order of the measurements (when absent, `Interleaved` for a
    /// run that compares something with 2 or more repeats, see [`crate::order::RepeatOrder::parse`]).
    pub repeat_order: crate::order::RepeatOrder,
    /// `spec.repeatOrder` was set, rather than chosen by default.
    pub repeat_order_explicit: bool,
    /// `spec.search`, if set: `cells` then starts with one cell per configuration, and the
    /// operator appends the cells the search asks for as it goes.
    pub search: Option<crate::search::SearchPlan>,
}

impl ValidatedRun {
    /// Number of measurements before any round of `repeatsUntil` (cells × repeats).
    pub fn total(&self) -> usize {
        self.cells.len() * self.repeats
    }

    /// The most repeats a cell may get: `repeatsUntil.maxRepeats`, else `repeats`.
    pub fn max_repeats(&self) -> usize {
        if self.search.is_some() {
            return crate::bisection::MAX_PER_VALUE as usize;
        }
        self.until
            .map_or(self.repeats, |u| u.max_repeats.max(self.repeats))
    }

    /// The most measurements the run may take (cells × [`Self::max_repeats`]).
    pub fn max_total(&self) -> usize {
        if let Some(s) = &self.search {
            return s.max_total();
        }
        self.cells.len() * self.max_repeats()
    }

    /// Every (cell index, repeat) in the order it is measured (`spec.repeatOrder`).
    pub fn order(&self) -> Vec<(usize, usize)> {
        crate::order::measurement_order(&self.cells, self.repeats, self.repeat_order)
    }

    /// [`Self::order`] followed by the rounds `repeatsUntil` added: round `k` measures repeat
    /// `repeats + k` of the cells `rounds[k]` ([`crate::order::order_with_rounds`]).
    pub fn order_with_rounds(&self, rounds: &[Vec<usize>]) -> Vec<(usize, usize)> {
        crate::order::order_with_rounds(&self.cells, self.repeats, rounds, self.repeat_order)
    }

    /// The deployment round of measurement `repeat` ([`crate::order::RepeatOrder::deployment_round`]):
    /// its own round under `Interleaved`, `None` when every repeat shares one deployment.
    pub fn deployment_round(&self, repeat: usize) -> Option<usize> {
        self.repeat_order.deployment_round(repeat)
    }

    /// What the order costs, for the Accepted condition: under `Interleaved` the deployments
    /// of the target configurations (one per configuration and round) against `Sequential`'s;
    /// under `Sequential` chosen by the user in a run that compares, that its verdicts stay
    /// `Inconclusive`. `None` otherwise.
    pub fn order_note(&self) -> Option<String> {
        let sequential = crate::order::measurement_order(
            &self.cells,
            self.repeats,
            crate::order::RepeatOrder::Sequential,
        );
        let once = crate::order::deployments(
            &self.cells,
            &sequential,
            crate::order::RepeatOrder::Sequential,
        );
        let crate::order::RepeatOrder::Interleaved { seed } = self.repeat_order else {
            let compares_with_repeats = self.repeat_order_explicit
                && self.search.is_none()
                && self.repeats >= 2
                && (self.baseline.is_some() || self.compares_within());
            return compares_with_repeats.then(|| {
                "repeatOrder Sequential: each target configuration is deployed once and its repeats share that deployment, so the comparisons' intervals leave out deployment-to-deployment variance and their verdicts stay Inconclusive (remove repeatOrder for independent repeats)".to_string()
            });
        };
        let now = crate::order::deployments(&self.cells, &self.order(), self.repeat_order);
        let why = match self.repeat_order_explicit {
            true => "",
            false => ", the default for a run that compares with 2 or more repeats",
        };
        Some(format!(
            "repeatOrder Interleaved (seed {seed}{why}): {} rounds of {} cells, the target configurations and each one's cells in a shuffled order each round, each round on a fresh deployment; {now} deployments instead of {once} ({} more, each the previous pods deleted once their last window is scraped, a pod start, its readiness and a settle of one sample interval before the load; set repeatOrder: Sequential to deploy once, at the cost of verdicts that stay Inconclusive)",
            self.repeats,
            self.cells.len(),
            now.saturating_sub(once)
        ))
    }

    /// Two or more targets among the cells, or an axis named by `spec.compare`: the run
    /// compares its own cells.
    fn compares_within(&self) -> bool {
        self.compare_along.is_some() || super::targets_compared(&self.cells)
    }

    /// The values of `axis` in the order the spec lists them, the reference first
    /// ([`crate::along::listed`]).
    pub fn compare_order(&self, axis: crate::vocab::CompareAxis) -> Vec<String> {
        let targets: Vec<&str> = self.targets.iter().map(|t| t.name.as_str()).collect();
        let scenarios: Vec<&str> = self.scenarios.iter().map(|s| s.name.as_str()).collect();
        crate::along::listed(axis, &self.matrix, &targets, &scenarios)
    }

    /// What `repeatsUntil` may add, for the Accepted condition; `None` without it.
    pub fn until_note(&self) -> Option<String> {
        let u = self.until?;
        Some(format!(
            "repeatsUntil: after {} repeats of every cell, rounds of one more repeat of the cells whose comparisons are wider than ±{}, up to {} repeats ({} measurements at most)",
            self.repeats,
            crate::units::format_percent(u.ratio_within),
            self.max_repeats(),
            self.max_total()
        ))
    }

    /// The resources of a cell's target pods.
    pub fn target_resources(&self, cell: &Cell) -> ResourcePlan {
        let r = &self.target_requests;
        // A swept limit replaces the limit. A request set apart applies to every cell (validation
        // checked it against every swept limit); otherwise the request follows the cell's limit.
        ResourcePlan {
            cpu_millis: units::cpu_millis(&cell.cpu).unwrap_or(0),
            cpu: cell.cpu.clone(),
            memory: cell.memory.clone(),
            cpu_request: r.cpu.clone().unwrap_or_else(|| cell.cpu.clone()),
            memory_request: r.memory.clone().unwrap_or_else(|| cell.memory.clone()),
        }
    }

    /// Why `load.duration` may be too short for the CPU figures, or `None`: durations below
    /// two `sample_interval`s (the spacing of the cluster's container CPU samples that the
    /// operator was given, its `--sample-interval`), the shortest window that holds 2 samples
    /// wherever it falls. Request counts cannot be judged before they run (their cells are
    /// checked when measured).
    pub fn short_window_warning(&self, sample_interval: Duration) -> Option<String> {
        let Limit::Duration(d) = self.limit else {
            return None;
        };
        let min_secs = (2 * sample_interval.as_millis()).div_ceil(1000).max(1);
        (d.as_millis() < min_secs * 1000).then(|| {
            format!(
                "spec.load.duration {} is shorter than {min_secs}s: this cluster samples container CPU about every {} (the operator's --sample-interval), so a window may hold fewer than 2 CPU samples and its cells then get WindowTooShort instead of trustworthy CPU figures; measure for at least {min_secs}s",
                units::format_duration(d),
                units::format_duration(sample_interval),
            )
        })
    }

    /// Upper bound of how long one load Job should run (warm-up + measurement), used with
    /// `load_grace` to detect a stuck Job. Request-count limits get a generous allowance.
    pub fn expected_load_time(&self) -> Duration {
        // With think time, a request count takes at least one pause per request of a
        // connection (the fewest connections of any cell is the slowest).
        let conns = self
            .cells
            .iter()
            .map(|c| c.connections)
            .min()
            .unwrap_or(1)
            .max(1);
        let paused = |n: i64| {
            self.think_time.map_or(Duration::ZERO, |t| {
                t * (n / i64::from(conns) + 1).min(u32::MAX.into()) as u32
            })
        };
        let warm = match self.warmup {
            Warmup::Duration(d) => d,
            // The cap, plus the requests in flight when it ends.
            Warmup::UntilSteady { max, .. } => max + self.timeout,
            Warmup::Requests(n) => Duration::from_secs(30).max(paused(n)),
            Warmup::None => Duration::from_secs(30),
        };
        let most = self.cells.iter().filter_map(|c| c.requests);
        let measure = match self.limit {
            Limit::Duration(d) => d,
            Limit::Requests(n) => {
                Duration::from_secs(300).max(paused(most.max().unwrap_or(n).max(n)))
            }
        };
        self.ramp_up.unwrap_or_default() + warm + measure
    }
}
