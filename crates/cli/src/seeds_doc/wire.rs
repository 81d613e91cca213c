//! "What the wire saw" for a seed whose claims are about connect times (seed 5): per target and
//! repeat, the maximum connect time beside the generator's SYN retransmits and the connects
//! that took one of the kernel's retransmission steps (1 s, 3 s, ...), and one generated line
//! saying in how many repeats with a connect-time tail the SYN retransmits account for it.

use std::fmt::Write as _;

use benchrun_api::{BenchmarkRun, CellResult, Outcome};

/// A connect at least this long (ms) is a tail a SYN retransmit can explain: the kernel's
/// first retransmission timeout is 1 s; 900 leaves room for a histogram bucket's rounding.
const TAIL_MS: f64 = 900.0;

/// The rows of the wire table: one per measured repeat, in the run's order of targets.
fn rows(run: &BenchmarkRun) -> Vec<&CellResult> {
    let Some(status) = run.status.as_ref() else {
        return Vec::new();
    };
    let mut rows: Vec<&CellResult> = status
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Measured)
        .collect();
    rows.sort_by_key(|r| (r.cell, r.repeat));
    rows
}

/// Whether a repeat's maximum connect time reaches a retransmission step, and whether the
/// generator counted a SYN retransmit in it.
fn tail_and_retransmits(r: &CellResult) -> (bool, bool) {
    let tail = r
        .connect_times_ms
        .as_ref()
        .is_some_and(|c| c.max >= TAIL_MS);
    let syn = r.tcp.as_ref().is_some_and(|t| t.syn_retransmits > 0);
    (tail, syn)
}

/// Writes the wire section of a seed's run (nothing when the run has no TCP counters).
pub fn section(out: &mut String, run: &BenchmarkRun) {
    let rows = rows(run);
    if !rows.iter().any(|r| r.tcp.is_some()) {
        return;
    }
    out.push_str("**What the wire saw** (the load pods' kernel counters over each window):\n\n");
    out.push_str("| target | repeat | connects | max connect ms | SYN retransmits | connects at 1 s / 3 s / 7 s | failed connects | resets |\n|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        let tcp = r.tcp.as_ref();
        let steps = |s: i64| {
            tcp.and_then(|t| {
                t.connects_at_retransmit_steps
                    .iter()
                    .find(|x| x.seconds == s)
            })
            .map_or(0, |x| x.connects)
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} / {} / {} | {} | {} |",
            r.coordinates.target,
            r.repeat + 1,
            tcp.map_or("-".into(), |t| t.connections_opened.to_string()),
            r.connect_times_ms
                .as_ref()
                .map_or("-".into(), |c| format!("{:.0}", c.max)),
            tcp.map_or("-".into(), |t| t.syn_retransmits.to_string()),
            steps(1),
            steps(3),
            steps(7),
            tcp.map_or("-".into(), |t| t.failed_connection_attempts.to_string()),
            tcp.map_or("-".into(), |t| t.resets_while_established.to_string()),
        );
    }
    out.push('\n');
    let _ = writeln!(out, "{}\n", reading(&rows));
}

/// The generated reading: in how many repeats with a connect of a second or more the generator
/// saw SYN retransmits, and whether any repeat had retransmits without such a tail.
fn reading(rows: &[&CellResult]) -> String {
    let judged: Vec<(bool, bool)> = rows.iter().map(|r| tail_and_retransmits(r)).collect();
    let tails = judged.iter().filter(|(t, _)| *t).count();
    let explained = judged.iter().filter(|(t, s)| *t && *s).count();
    let quiet_syn = judged.iter().filter(|(t, s)| !*t && *s).count();
    if tails == 0 {
        return format!(
            "No repeat had a connect of {:.0} ms or more, so there is no connect-time tail for SYN retransmits to explain; {quiet_syn} repeat(s) counted SYN retransmits anyway.",
            TAIL_MS
        );
    }
    format!(
        "Of the {tails} repeat(s) whose longest connect took {:.0} ms or more (the kernel's first SYN retransmission comes after 1 s), {explained} had SYN retransmits counted by the generator: {}; {quiet_syn} repeat(s) without such a tail counted SYN retransmits.",
        TAIL_MS,
        if explained == tails {
            "in every one, a SYN dropped at the target's full accept queue and sent again accounts for the tail"
        } else if explained == 0 {
            "in none, so the tail is not the accept queue's"
        } else {
            "in the others the tail has another cause"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchrun_api::status::{ConnectTimes, TcpCounters};

    fn repeat(max_connect: f64, syn: i64) -> CellResult {
        CellResult {
            outcome: Outcome::Measured,
            connect_times_ms: Some(ConnectTimes {
                max: max_connect,
                ..Default::default()
            }),
            tcp: Some(TcpCounters {
                syn_retransmits: syn,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn tails_with_retransmits_are_accounted_for_and_tails_without_are_not() {
        let (a, b, c) = (repeat(1040.0, 12), repeat(1010.0, 3), repeat(30.0, 0));
        let all = reading(&[&a, &b, &c]);
        assert!(
            all.contains("Of the 2 repeat(s)") && all.contains("2 had SYN"),
            "{all}"
        );
        assert!(all.contains("in every one"), "{all}");
        let d = repeat(1500.0, 0);
        let none = reading(&[&d]);
        assert!(
            none.contains("1 repeat(s)") && none.contains("in none"),
            "{none}"
        );
        let quiet = reading(&[&c]);
        assert!(quiet.starts_with("No repeat had a connect"), "{quiet}");
    }
}
