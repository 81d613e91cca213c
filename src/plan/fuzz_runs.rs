//! Validated runs for the planner's property tests: the planner's, builders' and results'
//! test specs and the repository's examples, with edits to what the planner reads (repeats,
//! cleanup, time limits from 1ns to Go's longest, warm-up, SLOs, the load bound, the matrix with
//! its include and exclude entries).

use benchrun_api::{
    validate, BenchmarkRunSpec, Cleanup, Matrix, MatrixEntry, Slo, Timeouts, ValidatedRun,
};
use proptest::prelude::*;

use crate::plan::tests::SPEC;
use crate::{builders, results};

/// A change to a base spec that moves what the planner sees: repeats, cleanup, time limits,
/// warm-up, SLOs, the load bound and the matrix.
#[derive(Clone, Debug)]
enum Edit {
    Repeats(i32),
    Cleanup(Option<&'static str>, Option<i64>),
    Warmup(Option<&'static str>),
    WarmupRequests(i64),
    Duration(&'static str),
    Requests(i64),
    Timeouts(Option<&'static str>, Option<&'static str>),
    Slo(Option<&'static str>, Option<&'static str>, Option<i64>),
    Replicas(Vec<i32>),
    /// An include entry: a replica count and a CPU limit, either of which may be absent.
    Include(Option<i32>, Option<&'static str>),
    /// An exclude entry naming a replica count.
    Exclude(i32),
    NoMatrix,
}

/// Durations from the shortest the checks let through to Go's longest.
const DURATIONS: &[&str] = &["0s", "1ns", "1ms", "3s", "10s", "1h", "2562047h"];

fn edit() -> impl Strategy<Value = Edit> {
    let d = || prop::sample::select(DURATIONS);
    let policy = prop::sample::select(vec![
        None,
        Some("Delete"),
        Some("KeepOnFailure"),
        Some("Keep"),
    ]);
    let ttl = prop::option::of(prop::sample::select(vec![0, 1, 3600, -5, i64::MAX]));
    prop_oneof![
        (1..=5i32).prop_map(Edit::Repeats),
        (policy, ttl).prop_map(|(p, t)| Edit::Cleanup(p, t)),
        prop::option::of(d()).prop_map(Edit::Warmup),
        prop::sample::select(vec![1, 1000, i64::MAX]).prop_map(Edit::WarmupRequests),
        d().prop_map(Edit::Duration),
        prop::sample::select(vec![2000, 100_000_000, i64::MAX - 1]).prop_map(Edit::Requests),
        (prop::option::of(d()), prop::option::of(d())).prop_map(|(r, g)| Edit::Timeouts(r, g)),
        (
            prop::option::of(d()),
            prop::option::of(prop::sample::select(vec!["0%", "1%", "100%"])),
            prop::option::of(prop::sample::select(vec![0, 1000, i64::MAX])),
        )
            .prop_map(|(p99, e, t)| Edit::Slo(p99, e, t)),
        prop::collection::vec(prop::sample::select(vec![1, 2, 32]), 0..4).prop_map(Edit::Replicas),
        (
            prop::option::of(prop::sample::select(vec![1, 2, 3])),
            prop::option::of(prop::sample::select(vec!["250m", "1", "3500m"])),
        )
            .prop_map(|(r, c)| Edit::Include(r, c)),
        prop::sample::select(vec![1, 2, 32]).prop_map(Edit::Exclude),
        Just(Edit::NoMatrix),
    ]
}

fn apply(spec: &mut BenchmarkRunSpec, e: &Edit) {
    let l = &mut spec.load;
    match e {
        Edit::Repeats(n) => spec.repeats = *n,
        Edit::Cleanup(p, t) => {
            spec.cleanup = Some(Cleanup {
                policy: p.map(Into::into),
                ttl_seconds_after_finished: *t,
            })
        }
        Edit::Warmup(w) => (l.warmup, l.warmup_requests) = (w.map(Into::into), None),
        Edit::WarmupRequests(n) => (l.warmup, l.warmup_requests) = (None, Some(*n)),
        Edit::Duration(d) => (l.duration, l.requests) = (Some(d.to_string()), None),
        Edit::Requests(n) => {
            (l.duration, l.requests, l.rate) = (None, Some(*n), None);
            if let Some(m) = &mut spec.matrix {
                m.rate.clear();
            }
        }
        Edit::Timeouts(ready, grace) => {
            spec.timeouts = Some(Timeouts {
                ready: ready.map(Into::into),
                load_grace: grace.map(Into::into),
            })
        }
        Edit::Slo(p99, error_rate, t) => {
            spec.slo = Some(Slo {
                p99: p99.map(Into::into),
                error_rate: error_rate.map(Into::into),
                min_throughput: *t,
                ..Slo::default()
            })
        }
        Edit::Replicas(r) => spec.matrix.get_or_insert_with(Matrix::default).replicas = r.clone(),
        Edit::Include(replicas, cpu) => {
            let entry = MatrixEntry {
                replicas: *replicas,
                cpu: cpu.map(Into::into),
                ..MatrixEntry::default()
            };
            spec.matrix
                .get_or_insert_with(Matrix::default)
                .include
                .push(entry);
        }
        Edit::Exclude(r) => {
            let entry = MatrixEntry {
                replicas: Some(*r),
                ..MatrixEntry::default()
            };
            spec.matrix
                .get_or_insert_with(Matrix::default)
                .exclude
                .push(entry);
        }
        Edit::NoMatrix => spec.matrix = None,
    }
}

/// The specs the runs start from: the planner's, the builders' and the results' test specs
/// and the repository's examples.
fn bases() -> Vec<BenchmarkRunSpec> {
    // Read at run time, like the repository-consistency tests: a test binary reused from
    // another checkout's build would otherwise read that checkout's examples.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test");
    let examples = std::path::Path::new(&root).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(examples)
        .expect("examples/ exists")
        .map(|e| e.expect("readable entry").path())
        .collect();
    files.sort();
    let mut specs: Vec<BenchmarkRunSpec> = [SPEC, builders::fixtures::DEMO]
        .iter()
        .map(|y| serde_yaml::from_str(y).expect("fixture parses"))
        .collect();
    specs.push(results::tests::spec_yaml(
        "slo: {p99: 200ms, errorRate: 1%}",
    ));
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "yaml"))
    {
        let text = std::fs::read_to_string(f).expect("example is readable");
        let run: benchrun_api::BenchmarkRun = serde_yaml::from_str(&text).expect("example parses");
        specs.push(run.spec);
    }
    specs
}

/// A validated run: a base spec with a few edits, or the base itself when the edits made it
/// invalid.
pub fn run() -> impl Strategy<Value = ValidatedRun> {
    (
        prop::sample::select(bases()),
        prop::collection::vec(edit(), 0..4),
    )
        .prop_map(|(base, edits)| {
            let mut spec = base.clone();
            edits.iter().for_each(|e| apply(&mut spec, e));
            validate(&spec)
                .or_else(|_| validate(&base))
                .expect("base specs are valid")
        })
}
