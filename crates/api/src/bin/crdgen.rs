//! Prints the BenchmarkRun CustomResourceDefinition as YAML (`crds/benchmarkrun.yaml` is this
//! output; `make crds` regenerates it and a test fails when the committed copy is stale).

fn main() {
    print!("{}", benchrun_api::crd_yaml());
}
