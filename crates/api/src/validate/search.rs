//! `spec.search`: the range and precision, and what a search needs of the rest of the spec
//! (the open model, SLOs to meet, one measurement per value at a time, the searched axis not
//! also swept). The size check comes once the configurations are known ([`check_size`]).

use super::field::{err, split_over_pods, FieldError};
use super::resources::request_within_swept_limits;
use crate::bisection::{Bounds, Direction};
use crate::matrix::Cell;
use crate::search::{SearchAxis, SearchPlan, DEFAULT_PRECISION, MAX_PRECISION, MIN_PRECISION};
use crate::spec::{BenchmarkRunSpec, MAX_MEASUREMENTS};
use crate::units;

/// Smallest CPU limit a demand search may start from.
const MIN_CPU_MILLIS: i64 = 10;

/// Parses `spec.search` against the rest of the spec. The plan's `configurations` is 0 until
/// [`finish`] sets it from the expanded cells.
pub(crate) fn parse(spec: &BenchmarkRunSpec, e: &mut Vec<FieldError>) -> Option<SearchPlan> {
    let s = spec.search.as_ref()?;
    let plan = match (&s.capacity, &s.demand) {
        (Some(c), None) => {
            let precision = precision("spec.search.capacity.precision", &c.precision, e);
            if c.rate.min < 1 || c.rate.min >= c.rate.max {
                e.push(err(
                    "spec.search.capacity.rate",
                    format!(
                        "min {} and max {} must satisfy 1 <= min < max (requests per second)",
                        c.rate.min, c.rate.max
                    ),
                ));
            }
            if spec.load.pods > 1 {
                e.push(err(
                    "spec.load.pods",
                    "search.capacity sets the rate value by value and each must split evenly over the load pods: use load.pods 1 (one pod serves rates up to about 50 000 req/s on two cores)",
                ));
            }
            let m = spec.matrix.as_ref();
            if m.is_some_and(|m| !m.rate.is_empty()) {
                e.push(err(
                    "spec.matrix.rate",
                    "search.capacity searches the rate: remove matrix.rate (or sweep it with the matrix and drop the search)",
                ));
            }
            SearchPlan {
                axis: SearchAxis::Rate,
                direction: Direction::HighestPassing,
                bounds: bounds(c.rate.min as f64, c.rate.max as f64, precision, false),
                configurations: 0,
            }
        }
        (None, Some(d)) => {
            let pods = i64::from(spec.load.pods.max(1));
            split_over_pods(
                "spec.search.demand.rate",
                &format!("a rate of {} req/s", d.rate),
                d.rate,
                pods,
                false,
                e,
            );
            let m = spec.matrix.clone().unwrap_or_default();
            if !m.rate.is_empty() {
                e.push(err(
                    "spec.matrix.rate",
                    "search.demand runs every measurement at search.demand.rate: remove matrix.rate",
                ));
            }
            let precision = precision("spec.search.demand.precision", &d.precision, e);
            match (&d.cpu, &d.replicas) {
                (Some(cpu), None) => {
                    if !m.cpu.is_empty() {
                        e.push(err(
                            "spec.matrix.cpu",
                            "search.demand.cpu searches the CPU limit: remove matrix.cpu",
                        ));
                    }
                    let min = cpu_millis("spec.search.demand.cpu.min", &cpu.min, e);
                    let max = cpu_millis("spec.search.demand.cpu.max", &cpu.max, e);
                    if min.is_some_and(|m| m < MIN_CPU_MILLIS) {
                        e.push(err(
                            "spec.search.demand.cpu.min",
                            format!("{} is below {MIN_CPU_MILLIS}m: a target needs at least that to start", cpu.min),
                        ));
                    }
                    if let (Some(lo), Some(hi)) = (min, max) {
                        if lo >= hi {
                            e.push(err(
                                "spec.search.demand.cpu",
                                format!("min {} must be below max {}", cpu.min, cpu.max),
                            ));
                        }
                    }
                    request_within_swept_limits(
                        "cpu",
                        spec.resources.cpu_request.as_deref(),
                        std::slice::from_ref(&cpu.min),
                        units::cpu_millis,
                        e,
                    );
                    SearchPlan {
                        axis: SearchAxis::Cpu,
                        direction: Direction::LowestPassing,
                        bounds: bounds(
                            min.unwrap_or(MIN_CPU_MILLIS) as f64,
                            max.unwrap_or(MIN_CPU_MILLIS * 2) as f64,
                            precision,
                            false,
                        ),
                        configurations: 0,
                    }
                }
                (None, Some(r)) => {
                    if !m.replicas.is_empty() {
                        e.push(err(
                            "spec.matrix.replicas",
                            "search.demand.replicas searches the replica count: remove matrix.replicas",
                        ));
                    }
                    if r.min < 1 || r.min >= r.max {
                        e.push(err(
                            "spec.search.demand.replicas",
                            format!(
                                "min {} and max {} must satisfy 1 <= min < max",
                                r.min, r.max
                            ),
                        ));
                    }
                    SearchPlan {
                        axis: SearchAxis::Replicas,
                        direction: Direction::LowestPassing,
                        bounds: bounds(f64::from(r.min), f64::from(r.max), precision, true),
                        configurations: 0,
                    }
                }
                _ => {
                    e.push(err(
                        "spec.search.demand",
                        "needs exactly one of cpu or replicas: the resource to search",
                    ));
                    return None;
                }
            }
        }
        _ => {
            e.push(err(
                "spec.search",
                "needs exactly one of capacity or demand",
            ));
            return None;
        }
    };
    rest_of_spec(spec, e);
    Some(plan)
}

/// What a search needs of the rest of the spec.
fn rest_of_spec(spec: &BenchmarkRunSpec, e: &mut Vec<FieldError>) {
    if spec.load.rate.is_some() {
        e.push(err(
            "spec.load.rate",
            "the search sets the offered rate (search.capacity.rate or search.demand.rate): remove load.rate",
        ));
    }
    if spec.load.duration.is_none() {
        e.push(err(
            "spec.load.duration",
            "a search measures the open model, which needs load.duration (e.g. \"20s\") instead of load.requests",
        ));
    }
    if spec.load.think_time.is_some() {
        e.push(err(
            "spec.load.thinkTime",
            "think time is for the closed model; a search measures the open model: remove it",
        ));
    }
    let bounded = spec.slo.as_ref().is_some_and(|s| {
        s.p99.is_some() || s.p50.is_some() || s.error_rate.is_some() || s.min_throughput.is_some()
    });
    if !bounded {
        e.push(err(
            "spec.slo",
            "a search looks for where the SLOs stop (or start) being met: set at least one of slo.p99, slo.p50, slo.errorRate or slo.minThroughput",
        ));
    }
    if spec.repeats > 1 || spec.repeats_until.is_some() {
        e.push(err(
            "spec.repeats",
            "a search repeats the values that decide its answer itself (three agreeing measurements each): leave repeats at 1 and remove repeatsUntil",
        ));
    }
    if spec.repeat_order.as_deref() == Some("Interleaved") {
        e.push(err(
            "spec.repeatOrder",
            "a search measures one configuration after the other, each value chosen from the last: remove repeatOrder Interleaved",
        ));
    }
    if spec.matrix.as_ref().is_some_and(|m| !m.include.is_empty()) {
        e.push(err(
            "spec.matrix.include",
            "not supported with search: list the configurations with the matrix axes (and exclude)",
        ));
    }
}

/// Sets the number of configurations from the expanded cells and checks the run's size: every
/// configuration's worst case together within the measurement limit.
pub(crate) fn finish(plan: &mut SearchPlan, cells: &[Cell], e: &mut Vec<FieldError>) {
    plan.configurations = cells.len();
    let most = plan.max_total();
    if most > MAX_MEASUREMENTS {
        e.push(err(
            "spec.search",
            format!(
                "{} configurations × at most {} measurements each = {most}, more than the maximum of {MAX_MEASUREMENTS}; narrow the range, coarsen the precision or search fewer configurations per run",
                plan.configurations,
                plan.worst_case()
            ),
        ));
    }
}

/// Moves every cell to the value its search measures first.
pub(crate) fn first_cells(plan: &SearchPlan, cells: Vec<Cell>, rate: Option<i64>) -> Vec<Cell> {
    cells
        .into_iter()
        .map(|c| {
            let mut c = c.with_searched(plan.axis, plan.first_value());
            if plan.axis != SearchAxis::Rate {
                c.rate = rate;
            }
            c
        })
        .collect()
}

fn bounds(min: f64, max: f64, precision: f64, integer: bool) -> Bounds {
    Bounds {
        min,
        max,
        precision,
        integer,
        whole_values: !integer,
    }
}

fn precision(field: &str, p: &Option<String>, e: &mut Vec<FieldError>) -> f64 {
    let text = p.as_deref().unwrap_or(DEFAULT_PRECISION);
    match units::percent(text) {
        Ok(f) if (MIN_PRECISION..=MAX_PRECISION).contains(&f) => f,
        Ok(_) => {
            e.push(err(
                field,
                format!("{text:?} must be between 1% and 50%, e.g. \"5%\""),
            ));
            0.05
        }
        Err(x) => {
            e.push(err(field, x));
            0.05
        }
    }
}

fn cpu_millis(field: &str, q: &str, e: &mut Vec<FieldError>) -> Option<i64> {
    match units::cpu_millis(q) {
        Ok(m) => Some(m),
        Err(x) => {
            e.push(err(field, x));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::BenchmarkRunSpec;
    use crate::validate;

    fn spec(yaml: &str) -> BenchmarkRunSpec {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn errors(yaml: &str) -> Vec<(String, String)> {
        match validate(&spec(yaml)) {
            Ok(_) => Vec::new(),
            Err(e) => e.into_iter().map(|f| (f.field, f.message)).collect(),
        }
    }

    const BASE: &str = r#"
targets: [{name: web, image: "demo:1"}]
scenarios: [{name: s, path: /compute}]
load: {connections: 16, duration: 10s}
slo: {p99: 50ms}
"#;

    #[test]
    fn capacity_cells_start_at_min_and_the_size_counts_the_worst_case() {
        let yaml = format!("{BASE}search: {{capacity: {{rate: {{min: 50, max: 2000}}}}}}\nmatrix: {{cpu: [250m, 500m]}}\n");
        let run = validate(&spec(&yaml)).unwrap();
        let plan = run.search.clone().unwrap();
        assert_eq!(plan.configurations, 2);
        assert_eq!(run.cells.len(), 2);
        assert!(run.cells.iter().all(|c| c.rate == Some(50)));
        assert_eq!(run.max_total(), 2 * plan.worst_case());
        assert!(plan.worst_case() > 10 && plan.worst_case() < 100);
        assert!(plan.note().contains("at most"), "{}", plan.note());
    }

    #[test]
    fn demand_cpu_cells_start_at_max_with_the_rate() {
        let yaml =
            format!("{BASE}search: {{demand: {{rate: 400, cpu: {{min: 100m, max: \"1\"}}}}}}\n");
        let run = validate(&spec(&yaml)).unwrap();
        assert_eq!(run.cells[0].cpu, "1000m");
        assert_eq!(run.cells[0].rate, Some(400));
        let p = run.search.unwrap();
        assert_eq!((p.bounds.min, p.bounds.max), (100.0, 1000.0));
    }

    #[test]
    fn what_a_search_needs_is_named_by_field() {
        let yaml = r#"
targets: [{name: web, image: "demo:1"}]
scenarios: [{name: s, path: /}]
load: {connections: 16, requests: 1000, rate: 100}
repeats: 3
matrix: {rate: [100, 200]}
search: {capacity: {rate: {min: 300, max: 100}, precision: "90%"}}
"#;
        let fields: Vec<String> = errors(yaml).into_iter().map(|(f, _)| f).collect();
        for f in [
            "spec.search.capacity.rate",
            "spec.search.capacity.precision",
            "spec.matrix.rate",
            "spec.load.rate",
            "spec.load.duration",
            "spec.slo",
            "spec.repeats",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} missing from {fields:?}");
        }
    }

    #[test]
    fn too_many_configurations_for_the_limit_is_refused() {
        let yaml = format!("{BASE}search: {{capacity: {{rate: {{min: 1, max: 1000000}}, precision: \"1%\"}}}}\nmatrix: {{cpu: [100m, 200m, 300m, 400m]}}\n");
        let errs = errors(&yaml);
        assert!(
            errs.iter()
                .any(|(f, m)| f == "spec.search" && m.contains("more than the maximum")),
            "{errs:?}"
        );
    }

    #[test]
    fn demand_replicas_is_an_integer_search() {
        let yaml =
            format!("{BASE}search: {{demand: {{rate: 400, replicas: {{min: 1, max: 4}}}}}}\n");
        let run = validate(&spec(&yaml)).unwrap();
        assert_eq!(run.cells[0].replicas, 4);
        assert!(run.search.unwrap().bounds.integer);
    }
}
