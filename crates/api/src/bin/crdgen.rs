//! Prints a CustomResourceDefinition as YAML, or with `--markdown` its API reference:
//! BenchmarkRun by default (`crds/benchmarkrun.yaml`, `docs/api.md`), BenchmarkSchedule with
//! `--schedule` (`crds/benchmarkschedule.yaml`, `docs/api-schedule.md`). `make crds`
//! regenerates all four; tests fail when the committed copies are stale.

fn main() {
    let markdown = std::env::args().any(|a| a == "--markdown");
    let schedule = std::env::args().any(|a| a == "--schedule");
    let text = match (schedule, markdown) {
        (false, false) => benchrun_api::crd_yaml(),
        (false, true) => benchrun_api::api_markdown(),
        (true, false) => benchrun_api::schedule_crd_yaml(),
        (true, true) => benchrun_api::schedule_api_markdown(),
    };
    print!("{text}");
}
