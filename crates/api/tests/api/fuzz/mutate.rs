//! Near-valid specs: a repository example with a few fields replaced by hostile values, so
//! that many cases still pass validation and reach the matrix expansion and unit conversions
//! behind it.

use std::path::PathBuf;

use benchrun_api::{
    BenchmarkRun, BenchmarkRunSpec, Cleanup, ExtraQuery, Matrix, PrometheusSpec, Scenario, Slo,
    Timeouts,
};
use k8s_openapi::api::core::v1::{EnvVar, Toleration};
use proptest::prelude::*;

use super::leaves;

/// The values one mutation may use; each mutator takes the ones its field needs.
#[derive(Clone, Debug)]
pub struct Leaf {
    s: String,
    unit: String,
    n: i64,
    on: bool,
    names: Vec<String>,
    units: Vec<String>,
    ints: Vec<i64>,
}

fn list<T: std::fmt::Debug + 'static>(item: BoxedStrategy<T>) -> impl Strategy<Value = Vec<T>> {
    // Mostly short axes; sometimes many (beyond the CRD's maxItems), never enough to make
    // a case slow: validation refuses more than 200 measurements before anything is expanded.
    prop_oneof![
        6 => prop::collection::vec(item.clone(), 0..5),
        1 => prop::collection::vec(item, 5..48),
    ]
}

fn leaf() -> impl Strategy<Value = Leaf> {
    let names = prop::sample::select(leaves::NAMES).prop_map(String::from);
    (
        leaves::string(),
        leaves::unit(),
        leaves::int(),
        any::<bool>(),
        list(names.boxed()),
        list(leaves::unit().boxed()),
        list(leaves::int().boxed()),
    )
        .prop_map(|(s, unit, n, on, names, units, ints)| Leaf {
            s,
            unit,
            n,
            on,
            names,
            units,
            ints,
        })
}

type Mutator = fn(&mut BenchmarkRunSpec, &Leaf);

/// An index into a list of `len` entries chosen by the leaf (`None` for an empty list).
fn pick(len: usize, l: &Leaf) -> Option<usize> {
    (len > 0).then(|| l.n.unsigned_abs() as usize % len)
}

fn some_if(on: bool, s: &str) -> Option<String> {
    on.then(|| s.to_string())
}

fn ints32(l: &Leaf) -> Vec<i32> {
    l.ints.iter().map(|&n| n as i32).collect()
}

const MUTATORS: &[Mutator] = &[
    |s, _| s.targets.clear(),
    |s, _| s.targets.extend(s.targets.first().cloned()),
    |s, l| {
        if let Some(mut t) = s.targets.first().cloned() {
            t.name = l.s.clone();
            s.targets.push(t);
        }
    },
    |s, l| {
        pick(s.targets.len(), l)
            .into_iter()
            .for_each(|i| s.targets[i].name = l.s.clone())
    },
    |s, l| s.targets.iter_mut().for_each(|t| t.image = l.s.clone()),
    |s, l| s.targets.iter_mut().for_each(|t| t.port = l.n as i32),
    |s, l| {
        s.targets
            .iter_mut()
            .for_each(|t| t.readiness_path = some_if(l.on, &l.s))
    },
    |s, l| {
        s.targets
            .iter_mut()
            .for_each(|t| t.image_pull_policy = some_if(l.on, &l.s))
    },
    |s, l| {
        s.targets
            .iter_mut()
            .for_each(|t| t.pod_security = some_if(l.on, &l.s))
    },
    |s, l| {
        s.targets
            .iter_mut()
            .for_each(|t| t.run_as_user = l.on.then_some(l.n))
    },
    |s, l| {
        s.targets
            .iter_mut()
            .for_each(|t| t.service_account_name = some_if(l.on, &l.s))
    },
    |s, l| {
        for t in &mut s.targets {
            t.command = l.names.clone();
            t.args = l.units.clone();
            t.node_selector.insert(l.s.clone(), l.unit.clone());
            t.env.push(EnvVar {
                name: l.s.clone(),
                value: Some(l.unit.clone()),
                ..EnvVar::default()
            });
            t.tolerations.push(Toleration {
                key: Some(l.s.clone()),
                toleration_seconds: Some(l.n),
                ..Toleration::default()
            });
        }
    },
    |s, _| s.scenarios.clear(),
    |s, _| s.scenarios.extend(s.scenarios.first().cloned()),
    |s, l| {
        s.scenarios.push(Scenario {
            name: l.s.clone(),
            method: l.unit.clone(),
            path: l.s.clone(),
            headers: l
                .names
                .iter()
                .cloned()
                .zip(l.units.iter().cloned())
                .collect(),
            body: some_if(l.on, &l.s),
            // A value with an odd name and a range that may be empty or reversed.
            values: [(
                l.s.clone(),
                benchrun_api::RequestValue {
                    random: l.on.then(|| benchrun_api::RandomRange {
                        min: l.n,
                        max: l.n.wrapping_neg(),
                    }),
                    pick: (!l.on).then(|| l.units.clone()),
                    ..Default::default()
                },
            )]
            .into(),
        })
    },
    |s, l| {
        pick(s.scenarios.len(), l)
            .into_iter()
            .for_each(|i| s.scenarios[i].name = l.s.clone())
    },
    |s, l| s.scenarios.iter_mut().for_each(|c| c.method = l.s.clone()),
    |s, l| s.scenarios.iter_mut().for_each(|c| c.path = l.s.clone()),
    |s, l| {
        s.scenarios
            .iter_mut()
            .for_each(|c| c.body = some_if(l.on, &l.s))
    },
    |s, l| {
        for c in &mut s.scenarios {
            c.headers.insert(l.s.clone(), l.unit.clone());
            c.headers.insert("Content-Length".into(), l.n.to_string());
        }
    },
    |s, l| s.resources.cpu = l.unit.clone(),
    |s, l| s.resources.memory = l.unit.clone(),
    |s, l| s.resources.cpu_request = some_if(l.on, &l.unit),
    |s, l| s.resources.memory_request = some_if(l.on, &l.unit),
    |s, l| s.load.resources.cpu = l.unit.clone(),
    |s, l| s.load.resources.memory = l.unit.clone(),
    |s, l| s.load.resources.cpu_request = some_if(l.on, &l.unit),
    |s, l| s.replicas = l.n as i32,
    |s, l| s.repeats = l.n as i32,
    |s, l| s.load.connections = l.n as i32,
    |s, l| s.load.pods = l.n as i32,
    |s, l| {
        // Switch between a request count and a duration, or set both or neither.
        s.load.requests = l.on.then_some(l.n);
        s.load.duration = (l.n % 3 != 0).then(|| l.unit.clone());
    },
    |s, l| s.load.duration = some_if(l.on, &l.unit),
    |s, l| s.load.rate = l.on.then_some(l.n),
    |s, l| s.load.warmup = some_if(l.on, &l.unit),
    |s, l| s.load.warmup_requests = l.on.then_some(l.n),
    |s, l| s.load.timeout = l.unit.clone(),
    |s, l| s.load.keep_alive = l.on,
    |s, _| s.matrix = None,
    |s, l| s.matrix.get_or_insert_with(Matrix::default).targets = l.names.clone(),
    |s, l| s.matrix.get_or_insert_with(Matrix::default).scenarios = l.names.clone(),
    |s, l| s.matrix.get_or_insert_with(Matrix::default).cpu = l.units.clone(),
    |s, l| s.matrix.get_or_insert_with(Matrix::default).memory = l.units.clone(),
    |s, l| s.matrix.get_or_insert_with(Matrix::default).replicas = ints32(l),
    |s, l| s.matrix.get_or_insert_with(Matrix::default).connections = ints32(l),
    |s, l| s.matrix.get_or_insert_with(Matrix::default).rate = l.ints.clone(),
    |s, l| {
        s.slo = l.on.then(|| Slo {
            p99: Some(l.unit.clone()),
            p50: Some(l.s.clone()),
            error_rate: l.units.first().cloned(),
            min_throughput: Some(l.n),
        })
    },
    |s, l| {
        s.prometheus = Some(PrometheusSpec {
            url: some_if(l.on, &l.s),
            extra_queries: l
                .names
                .iter()
                .map(|n| ExtraQuery {
                    name: n.clone(),
                    query: l.s.clone(),
                })
                .collect(),
        })
    },
    |s, l| {
        s.cleanup = Some(Cleanup {
            policy: some_if(l.on, &l.s),
            ttl_seconds_after_finished: Some(l.n),
        })
    },
    |s, l| {
        s.timeouts = Some(Timeouts {
            ready: some_if(l.on, &l.unit),
            load_grace: l.units.first().cloned(),
        })
    },
];

fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test")).join("../..")
}

/// The specs of `examples/*.yaml` and `examples/seeds/*.yaml`, the starting points of the mutations.
pub fn examples() -> Vec<BenchmarkRunSpec> {
    let mut files: Vec<PathBuf> = ["examples", "examples/seeds"]
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(repo().join(dir)).expect("examples/ and examples/seeds/ exist")
        })
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).expect("example is readable");
            let run: BenchmarkRun = serde_yaml::from_str(&text).expect("example parses");
            run.spec
        })
        .collect()
}

/// An example spec with up to four hostile mutations (none in about one case in six).
pub fn near_valid_spec() -> impl Strategy<Value = BenchmarkRunSpec> {
    let examples = examples();
    assert!(!examples.is_empty(), "examples/ holds no YAML");
    let mutation = (0..MUTATORS.len(), leaf());
    (
        prop::sample::select(examples),
        prop::collection::vec(mutation, 0..5),
    )
        .prop_map(|(mut spec, mutations)| {
            for (i, l) in &mutations {
                MUTATORS[*i](&mut spec, l);
            }
            spec
        })
}
