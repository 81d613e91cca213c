//! Repository consistency: the committed CRD is the generated one, and every example parses,
//! validates and passes the CRD's CEL rules.

use std::path::PathBuf;

use benchrun_api::{validate, BenchmarkRun};

fn repo() -> PathBuf {
    // Read at run time: a test binary reused from a build in another checkout (same sources,
    // shared target directory) would otherwise look in that checkout.
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo test")).join("../..")
}

#[test]
fn committed_crd_matches_generated() {
    let committed = std::fs::read_to_string(repo().join("crds/benchmarkrun.yaml"))
        .expect("crds/benchmarkrun.yaml exists");
    assert!(
        committed == benchrun_api::crd_yaml(),
        "crds/benchmarkrun.yaml is stale: run `make crds` and commit it"
    );
}

#[test]
fn committed_schedule_crd_and_reference_match_generated() {
    let read = |p: &str| std::fs::read_to_string(repo().join(p)).expect("committed file exists");
    assert!(
        read("crds/benchmarkschedule.yaml") == benchrun_api::schedule_crd_yaml(),
        "crds/benchmarkschedule.yaml is stale: run `make crds` and commit it"
    );
    assert!(
        read("docs/api-schedule.md") == benchrun_api::schedule_api_markdown(),
        "docs/api-schedule.md is stale: run `make crds` and commit it"
    );
}

#[test]
fn committed_api_reference_matches_generated() {
    let committed =
        std::fs::read_to_string(repo().join("docs/api.md")).expect("docs/api.md exists");
    assert!(
        committed == benchrun_api::api_markdown(),
        "docs/api.md is stale: run `make crds` and commit it"
    );
}

fn examples() -> Vec<PathBuf> {
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
}

#[test]
fn every_example_parses_validates_and_passes_cel() {
    let files = examples();
    assert!(!files.is_empty(), "examples/ holds no YAML");
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let run: BenchmarkRun = serde_yaml::from_str(&text)
            .unwrap_or_else(|e| panic!("{} does not parse: {e}", f.display()));
        if let Err(errs) = validate(&run.spec) {
            panic!(
                "{} is invalid: {}",
                f.display(),
                benchrun_api::validate::describe(&errs)
            );
        }
        if let Err(e) = run.validate_cel() {
            panic!("{} fails the CRD's CEL rules: {e:?}", f.display());
        }
    }
}

/// Every `description` in `v`, with the path of the schema it belongs to.
fn descriptions(v: &serde_json::Value, path: &str, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                match x.as_str() {
                    Some(d) if k == "description" => out.push((path.to_string(), d.to_string())),
                    _ => descriptions(x, &format!("{path}.{k}"), out),
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                descriptions(x, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn kubectl_explain_shows_no_line_break_inside_a_sentence() {
    let crd = serde_json::to_value(benchrun_api::crd()).unwrap();
    let mut all = Vec::new();
    descriptions(&crd, "", &mut all);
    assert!(all.len() > 100, "only {} descriptions found", all.len());
    let broken: Vec<&(String, String)> = all
        .iter()
        .filter(|(_, d)| !benchrun_api::reflow::breaks_only_between_blocks(d))
        .collect();
    assert!(
        broken.is_empty(),
        "{} descriptions break inside a paragraph, e.g. {:?}",
        broken.len(),
        broken.first()
    );
    // The field the issue found broken after "the measured" and "e.g.".
    let ramp = all
        .iter()
        .find(|(p, _)| p.ends_with("load.properties.rampUp"))
        .expect("spec.load.rampUp has a description");
    assert!(
        ramp.1.contains("the measured window, e.g. `\"10s\"`"),
        "{}",
        ramp.1
    );
}

/// The ```yaml blocks of `file` that hold a whole BenchmarkRun (a top-level
/// `kind: BenchmarkRun`), with
/// the line each begins on; a block marked ```yaml sketch (an outline of the fields) is not
/// a run.
fn yaml_runs_in(file: &str) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let mut out = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut block, line.trim_start()) {
            (None, l) if l.starts_with("```yaml sketch") => block = Some((0, String::new())),
            (None, l) if l.starts_with("```yaml") => block = Some((i + 2, String::new())),
            (Some(_), l) if l.starts_with("```") => {
                let (at, yaml) = block.take().unwrap();
                if at > 0 && yaml.lines().any(|l| l.trim_end() == "kind: BenchmarkRun") {
                    out.push((at, yaml));
                }
            }
            (Some((_, yaml)), _) => {
                yaml.push_str(line);
                yaml.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// What a reader copies from the README and the guides is a valid run: every BenchmarkRun in
/// a ```yaml block of README.md and docs/ parses, validates and passes the CEL rules (on the
/// cluster, `make readme-check` applies the README's quick start as written).
#[test]
fn every_run_in_the_readme_and_the_docs_parses_validates_and_passes_cel() {
    let mut files = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| format!("docs/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut seen = 0;
    for f in &files {
        for (line, yaml) in yaml_runs_in(f) {
            seen += 1;
            let at = format!("{f}:{line}");
            let run: BenchmarkRun =
                serde_yaml::from_str(&yaml).unwrap_or_else(|e| panic!("{at} does not parse: {e}"));
            if let Err(errs) = validate(&run.spec) {
                panic!(
                    "{at} is invalid: {}",
                    benchrun_api::validate::describe(&errs)
                );
            }
            if let Err(e) = run.validate_cel() {
                panic!("{at} fails the CRD's CEL rules: {e:?}");
            }
        }
    }
    assert!(
        yaml_runs_in("README.md").len() == 1,
        "README.md's quick start holds one run"
    );
    assert!(seen >= 1, "no run in README.md and docs/");
}

#[test]
fn every_schedule_example_parses_and_its_run_template_validates() {
    let dir = repo().join("examples/schedules");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("examples/schedules/ exists") {
        let path = e.expect("readable entry").path();
        let text = std::fs::read_to_string(&path).expect("readable example");
        let s: benchrun_api::schedule::BenchmarkSchedule =
            serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // serde skips unknown fields; the apiserver's strict decoding refuses them.
        let written: serde_json::Value = serde_yaml::from_str(&text).expect("YAML");
        let read = serde_json::to_value(&s).expect("serializes");
        if let Some(field) = unknown_field(&written, &read, "") {
            panic!("{}: unknown field {field}", path.display());
        }
        if let Err(errors) = validate(&s.spec.run_template.spec) {
            panic!("{}: runTemplate.spec: {errors:?}", path.display());
        }
        n += 1;
    }
    assert!(n >= 1, "no schedule example in {}", dir.display());
}

/// The first field of `written` that `read` (the same object through the Rust types) lacks.
fn unknown_field(
    written: &serde_json::Value,
    read: &serde_json::Value,
    at: &str,
) -> Option<String> {
    let (Some(w), Some(r)) = (written.as_object(), read.as_object()) else {
        return None;
    };
    w.iter().find_map(|(k, v)| match r.get(k) {
        None => Some(format!("{at}.{k}")),
        Some(rv) => unknown_field(v, rv, &format!("{at}.{k}")),
    })
}
