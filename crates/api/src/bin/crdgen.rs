//! Prints the BenchmarkRun CustomResourceDefinition as YAML (`crds/benchmarkrun.yaml` is this
//! output), or with `--markdown` the API reference (`docs/api.md`). `make crds` regenerates
//! both; tests fail when the committed copies are stale.

fn main() {
    if std::env::args().any(|a| a == "--markdown") {
        print!("{}", benchrun_api::api_markdown());
    } else {
        print!("{}", benchrun_api::crd_yaml());
    }
}
