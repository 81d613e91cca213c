//! `watch`: the progress line refreshed while a run measures, and when to stop.
//!
//! Pure: the clock is an argument.

use benchrun_api::{expand, BenchmarkRun, Coordinates, Phase};
use jiff::Timestamp;

use crate::num;

/// Whether the run has reached a phase it never leaves.
pub fn finished(run: &BenchmarkRun) -> bool {
    matches!(
        run.status.as_ref().and_then(|s| s.phase),
        Some(Phase::Succeeded | Phase::Failed)
    )
}

/// `5m04s`-style duration for a stage that started at `since`.
fn elapsed(since: Timestamp, now: Timestamp) -> String {
    let s = (now.as_second() - since.as_second()).max(0);
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// One line: phase, progress, and the measurement in progress with its coordinates and stage,
/// e.g. `Running 1/4  cell 1 express/hello cpu=1 mem=1Gi replicas=1 c=100: Loading for 25s`.
pub fn progress_line(run: &BenchmarkRun, now: Timestamp) -> String {
    let status = run.status.clone().unwrap_or_default();
    let mut line = format!(
        "{} {}",
        status.phase.unwrap_or(Phase::Pending),
        status.progress.as_deref().unwrap_or("0/?")
    );
    if let Some(cur) = &status.current {
        line.push_str(&format!("  cell {}", cur.cell));
        let cells = expand(&run.spec);
        let cell = usize::try_from(cur.cell).ok().and_then(|i| cells.get(i));
        if let Some(c) = cell {
            let name = |n: Option<&str>| n.unwrap_or("?").to_string();
            let coords = Coordinates {
                target: name(run.spec.targets.get(c.target).map(|t| t.name.as_str())),
                scenario: name(run.spec.scenarios.get(c.scenario).map(|s| s.name.as_str())),
                cpu: c.cpu.clone(),
                memory: c.memory.clone(),
                replicas: c.replicas,
                connections: c.connections,
                rate: c.rate,
                requests: c.requests,
                keep_alive: Coordinates::keep_alive_field(c.keep_alive),
            };
            line.push(' ');
            line.push_str(&num::coordinates(&coords));
        }
        if let Some(u) = &run.spec.repeats_until {
            // The rounds of repeatsUntil: at least `repeats`, at most `maxRepeats`.
            line.push_str(&format!(
                " repeat {}/{}–{}",
                cur.repeat + 1,
                run.spec.repeats,
                u.max_repeats
            ));
        } else if run.spec.repeats > 1 {
            line.push_str(&format!(" repeat {}/{}", cur.repeat + 1, run.spec.repeats));
        }
        line.push_str(&format!(
            ": {} for {}",
            cur.stage,
            elapsed(cur.since.0, now)
        ));
    }
    line
}

/// The progress line without its ticking `for 25s` suffix: what decides, when output is not a
/// terminal, whether a new line is worth printing.
pub fn without_elapsed(line: &str) -> &str {
    line.rsplit_once(" for ").map_or(line, |(head, _)| head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use benchrun_api::BenchmarkRunSpec;

    fn run(status: benchrun_api::BenchmarkRunStatus) -> BenchmarkRun {
        let spec: BenchmarkRunSpec = serde_json::from_value(serde_json::json!({
            "targets": [
                {"name": "express", "image": "express:1", "port": 3000},
                {"name": "spring", "image": "spring:3.2", "port": 8080}
            ],
            "scenarios": [{"name": "hello", "path": "/hello"}],
            "resources": {"cpu": "1", "memory": "1Gi"},
            "load": {"connections": 10, "duration": "30s"},
            "matrix": {"connections": [10, 100]}
        }))
        .unwrap();
        let mut r = BenchmarkRun::new("demo", spec);
        r.status = Some(status);
        r
    }

    #[test]
    fn progress_line_names_the_current_cell_and_its_stage() {
        let now = "2026-11-30T10:03:05Z".parse().unwrap();
        let r = run(fixtures::running_status());
        assert_eq!(
            progress_line(&r, now),
            "Running 1/4  cell 1 express/hello cpu=1 mem=1Gi replicas=1 c=100: Loading for 1m05s"
        );
        assert!(!finished(&r));
        assert_eq!(
            without_elapsed(&progress_line(&r, now)),
            "Running 1/4  cell 1 express/hello cpu=1 mem=1Gi replicas=1 c=100: Loading"
        );
    }

    #[test]
    fn a_succeeded_run_is_finished_and_has_no_current_cell() {
        let r = run(fixtures::status());
        assert_eq!(progress_line(&r, Timestamp::UNIX_EPOCH), "Succeeded 4/4");
        assert!(finished(&r));
    }
}
