//! The run's comparisons (`status.comparisons[]`) with their intervals and verdicts, as a
//! table for `show` and `report` and as ratios with intervals across runs for `compare`.
//!
//! Pure.

use benchrun_api::compare::{self, format_ratio, RatioEstimate};
use benchrun_api::validate::DEFAULT_BASELINE_TOLERANCE;
use benchrun_api::{
    CellResult, CompareAxis, Comparison, ComparisonKind, ComparisonVerdict, Coordinates,
};

use crate::num::{self, NONE};
use crate::table::{Align, Table};

/// A ratio with its interval and verdict, `1.21× [1.12–1.30] Faster`, or `-`.
pub fn estimate(r: Option<&RatioEstimate>) -> String {
    r.map_or_else(
        || NONE.into(),
        |r| format!("{} {}", format_ratio(r), r.verdict),
    )
}

/// The coordinates a comparison holds fixed, in one cell: `hello cpu=1 c=10` (with the target
/// first when the comparison is not between targets).
fn fixed(c: &Comparison) -> String {
    let k = &c.coordinates;
    let along = c.along();
    let mut parts = Vec::new();
    if matches!(c.against, ComparisonKind::Scenario | ComparisonKind::Axis) {
        parts.push(k.target.clone());
    }
    if along != Some(CompareAxis::Scenario) {
        parts.push(k.scenario.clone());
    }
    if along != Some(CompareAxis::Cpu) {
        parts.push(format!("cpu={}", k.cpu));
    }
    if along != Some(CompareAxis::Memory) {
        parts.push(format!("mem={}", k.memory));
    }
    if along != Some(CompareAxis::Connections) {
        parts.push(format!("c={}", k.connections));
    }
    if k.replicas != 1 && along != Some(CompareAxis::Replicas) {
        parts.push(format!("replicas={}", k.replicas));
    }
    if let Some(rate) = k.rate {
        parts.push(format!("rate={rate}"));
    }
    parts.join(" ")
}

/// The answers of the run's own comparisons, one sentence each, in the order of the status
/// (the axis `spec.compare.along` names first): `compute at 500m: 2.02× [1.95–2.10] the
/// throughput of 250m (Faster)`. What else varies among `results` (the target, the scenario,
/// other swept axes) is named beside the subject; at most `max` lines, then how many more.
pub fn answer_lines(comparisons: &[Comparison], results: &[CellResult], max: usize) -> Vec<String> {
    let within: Vec<&Comparison> = comparisons
        .iter()
        .filter(|c| c.against != ComparisonKind::Baseline)
        .collect();
    let mut out: Vec<String> = within
        .iter()
        .take(max)
        .map(|c| sentence(c, results))
        .collect();
    if within.len() > max {
        out.push(format!(
            "… and {} more (Comparisons below)",
            within.len() - max
        ));
    }
    out
}

/// One comparison as a sentence ([`answer_lines`]).
pub fn sentence(c: &Comparison, results: &[CellResult]) -> String {
    let Some(axis) = c.along() else {
        return format!("{}/{}: {}", c.candidate, c.reference, figure(c));
    };
    let varies = |a: CompareAxis| {
        let mut v: Vec<String> = results.iter().map(|r| a.value(&r.coordinates)).collect();
        v.sort();
        v.dedup();
        v.len() >= 2
    };
    let k = &c.coordinates;
    let mut about: Vec<String> = Vec::new();
    for a in CompareAxis::ALL.iter().copied().filter(|a| *a != axis) {
        let always = match axis {
            CompareAxis::Scenario => a == CompareAxis::Target,
            _ => a == CompareAxis::Scenario,
        };
        if !(always || varies(a)) {
            continue;
        }
        let v = a.value(k);
        about.push(match a {
            CompareAxis::Target | CompareAxis::Scenario => v,
            CompareAxis::Cpu => format!("cpu={v}"),
            CompareAxis::Memory => format!("mem={v}"),
            _ => a.show(&v),
        });
    }
    let about = about.join(" ");
    let (cand, refr) = (axis.show(&c.candidate), axis.show(&c.reference));
    let head = match axis {
        CompareAxis::Target | CompareAxis::Scenario => format!("{cand} ({about})"),
        _ => format!("{about} at {cand}"),
    };
    if c.verdict == ComparisonVerdict::NotCompared {
        let why = c.reason.as_deref().unwrap_or("not compared");
        return format!("{head}: {why}, against {refr}");
    }
    let figure = match (&c.throughput, c.ratio) {
        (Some(t), _) => format_ratio(t),
        (None, Some(r)) => format!("{r:.2}× (no interval)"),
        (None, None) => NONE.into(),
    };
    format!("{head}: {figure} the throughput of {refr} ({})", c.verdict)
}

/// A comparison's throughput figure and verdict, `1.21× [1.12–1.30] Faster`.
fn figure(c: &Comparison) -> String {
    match (&c.throughput, c.ratio) {
        (Some(_), _) => estimate(c.throughput.as_ref()),
        (None, Some(r)) => format!("{r:.2}× (no interval) {}", c.verdict),
        (None, None) => c.verdict.to_string(),
    }
}

/// One row per comparison: what against what, where, the repeats, the throughput and p99
/// ratios with their 95 % intervals and verdicts, the spread, the error rates, the power and
/// the overall verdict.
pub fn comparisons_table(comparisons: &[Comparison]) -> Table {
    use Align::{Left as L, Right as R};
    let mut t = Table::new(&[
        ("AGAINST", L),
        ("CANDIDATE/REFERENCE", L),
        ("AT", L),
        ("REPEATS", R),
        ("THROUGHPUT (95% CI)", L),
        ("P99 (95% CI)", L),
        ("SPREAD CV", L),
        ("ERRORS", L),
        ("POWER", R),
        ("VERDICT", L),
    ]);
    for c in comparisons {
        let throughput = match (&c.throughput, c.ratio) {
            (Some(_), _) => estimate(c.throughput.as_ref()),
            (None, Some(r)) => format!("{r:.2}× (no interval)"),
            (None, None) => NONE.into(),
        };
        let spread = c.spread.as_ref().map_or_else(
            || NONE.into(),
            |s| {
                format!(
                    "{:.1}% vs {:.1}%{}",
                    s.candidate_cv * 100.0,
                    s.reference_cv * 100.0,
                    if s.increased { " grew" } else { "" }
                )
            },
        );
        let errors = c.errors.as_ref().map_or_else(
            || NONE.into(),
            |e| {
                format!(
                    "{} vs {} p={}",
                    pct(e.candidate_rate),
                    pct(e.reference_rate),
                    e.p_value
                )
            },
        );
        let power = c.power.as_ref().map_or_else(
            || NONE.into(),
            |p| format!("{:.0}% (n={})", p.power * 100.0, p.repeats_needed),
        );
        t.push(vec![
            // Along an axis, which one: `Axis cpu`.
            c.axis
                .map_or_else(|| c.against.to_string(), |a| format!("{} {a}", c.against)),
            format!("{}/{}", c.candidate, c.reference),
            fixed(c),
            format!("{}/{}", c.candidate_repeats, c.reference_repeats),
            throughput,
            estimate(c.p99.as_ref()),
            spread,
            errors,
            power,
            format!("{} ±{:.0}%", c.verdict, c.tolerance * 100.0),
        ]);
    }
    t
}

fn pct(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p == 0.0 || p >= 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.3}%")
    }
}

/// Lines under `show`: the comparisons that say more than the table (why a figure is missing).
pub fn reason_lines(comparisons: &[Comparison]) -> Vec<String> {
    comparisons
        .iter()
        .filter_map(|c| {
            let why = c.reason.as_ref()?;
            Some(format!(
                "{}/{} {}: {why}",
                c.candidate,
                c.reference,
                fixed(c)
            ))
        })
        .collect()
}

/// Throughput of run `other` against run `first` at these coordinates over their measured
/// repeats, with the 95 % interval and the verdict at 5 %: the `compare` command's interval
/// column. `-` with fewer than 2 repeats on a side; `not compared: …` with the reason when a
/// side is unhealthy ([`num::not_comparable`]).
pub fn across_runs(first: &[CellResult], other: &[CellResult], at: &Coordinates) -> String {
    // A side that failed, was OOM-killed, generator-bound or mostly errors is not compared.
    if let Some(why) = num::not_comparable(first, at) {
        return format!("not compared: the first run's {why}");
    }
    if let Some(why) = num::not_comparable(other, at) {
        return format!("not compared: {why}");
    }
    let tp = |rs: &[CellResult]| -> Vec<f64> {
        num::measured_repeats(rs, at)
            .iter()
            .filter_map(|r| r.throughput)
            .collect()
    };
    let mut ratio =
        compare::compare_repeats(&tp(other), &tp(first), DEFAULT_BASELINE_TOLERANCE, true);
    // Repeats on one deployment a side leave out the deployment-to-deployment variance: the
    // interval is shown, the verdict is not given (as within a run and against a baseline).
    let (o, f) = (
        num::measured_repeats(other, at),
        num::measured_repeats(first, at),
    );
    let shared = benchrun_api::deployments::shared_reason(
        (
            benchrun_api::deployments::distinct(&o),
            benchrun_api::deployments::distinct(&f),
        ),
        (
            benchrun_api::deployments::unrecorded(&o),
            benchrun_api::deployments::unrecorded(&f),
        ),
    );
    if let (Some(r), Some(_)) = (ratio.as_mut(), &shared) {
        r.verdict = benchrun_api::ComparisonVerdict::Inconclusive;
    }
    let mut shown = estimate(ratio.as_ref());
    if let (Some(_), Some(_)) = (&ratio, &shared) {
        shown += " (one deployment a side: no verdict)";
    }
    let envs = |rs| -> Vec<&benchrun_api::environment::Environment> {
        num::measured_repeats(rs, at)
            .into_iter()
            .filter_map(|r| r.environment.as_ref())
            .collect()
    };
    let diff = benchrun_api::environment::differences(&envs(other), &envs(first));
    if diff.is_empty() {
        shown
    } else {
        format!("{shown} (environments differ: {})", diff.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn comparisons_render_with_intervals_verdicts_and_power() {
        let status = fixtures::compared();
        let mut out = Vec::new();
        comparisons_table(&status.comparisons)
            .write_text(&mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("spring/express"), "{text}");
        assert!(text.contains("1.21× [1.12–1.30] Faster"), "{text}");
        assert!(text.contains("Faster ±5%"), "{text}");
        assert!(text.contains("3/3"), "{text}");
        assert!(text.contains("94% (n=3)"), "{text}");
        assert!(text.contains("0.500% vs 0.0% p=0.001"), "{text}");
        assert_eq!(reason_lines(&status.comparisons), Vec::<String>::new());
    }

    #[test]
    fn an_axis_comparison_reads_as_the_answer_to_its_question() {
        let mut status = fixtures::compared();
        let mut c = status.comparisons[0].clone();
        c.against = ComparisonKind::Axis;
        c.axis = Some(CompareAxis::Cpu);
        (c.candidate, c.reference) = ("500m".into(), "250m".into());
        c.coordinates.scenario = "compute".into();
        c.coordinates.cpu = "500m".into();
        status.comparisons.insert(0, c);
        let lines = answer_lines(&status.comparisons, &status.results, 1);
        // The fixture's results vary the target and the connections: both are named.
        let c = &status.comparisons[0].coordinates;
        assert_eq!(
            lines[0],
            format!(
                "{} compute {} connections at 500m: 1.21× [1.12–1.30] the throughput of 250m (Faster)",
                c.target, c.connections
            )
        );
        assert_eq!(lines[1], "… and 1 more (Comparisons below)");
        // Nothing else varies: the scenario alone says what was measured.
        let one: Vec<CellResult> = status.results[..1].to_vec();
        assert_eq!(
            sentence(&status.comparisons[0], &one),
            "compute at 500m: 1.21× [1.12–1.30] the throughput of 250m (Faster)"
        );
        let spring = &status.comparisons[1];
        assert_eq!(
            sentence(spring, &one),
            format!(
                "spring ({}): 1.21× [1.12–1.30] the throughput of express (Faster)",
                spring.coordinates.scenario
            )
        );
    }

    #[test]
    fn compare_across_runs_says_when_the_environments_differ() {
        use benchrun_api::environment::{Environment, NodeEnvironment};
        let on = |kernel: &str, repeat: i32, throughput: f64| CellResult {
            repeat,
            throughput: Some(throughput),
            environment: Some(Environment {
                nodes: vec![NodeEnvironment {
                    name: "n".into(),
                    role: "Target".into(),
                    kernel: kernel.into(),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..fixtures::results()[0].clone()
        };
        let first = [on("6.1", 0, 4000.0), on("6.1", 1, 4100.0)];
        let other = [on("6.2", 0, 4050.0), on("6.2", 1, 4080.0)];
        let at = first[0].coordinates.clone();
        let shown = across_runs(&first, &other, &at);
        assert!(
            shown.ends_with("(environments differ: target kernel 6.2 vs 6.1)"),
            "{shown}"
        );
        assert!(!across_runs(&first, &first, &at).contains("environments"));
    }

    #[test]
    fn compare_across_runs_gives_an_interval_from_two_repeats_on() {
        let mut first = fixtures::results();
        let mut again = first[0].clone();
        again.repeat = 1;
        again.throughput = Some(4140.0);
        first.push(again);
        let at = first[0].coordinates.clone();
        let other: Vec<CellResult> = first
            .iter()
            .map(|r| CellResult {
                throughput: r.throughput.map(|t| t * 2.0),
                ..r.clone()
            })
            .collect();
        // Both repeats of a side on one deployment (or recording no pods): the interval, no
        // verdict.
        assert_eq!(
            across_runs(&first, &other, &at),
            "2.00× [1.94–2.06] Inconclusive (one deployment a side: no verdict)"
        );
        // Each repeat on its own deployment. Logs 1 % apart on each side, 2 degrees of
        // freedom: t = 4.30.
        for (i, r) in first.iter_mut().enumerate() {
            r.target_pods = vec![format!("first-{i}")];
        }
        let other: Vec<CellResult> = first
            .iter()
            .enumerate()
            .map(|(i, r)| CellResult {
                throughput: r.throughput.map(|t| t * 2.0),
                target_pods: vec![format!("other-{i}")],
                ..r.clone()
            })
            .collect();
        assert_eq!(across_runs(&first, &other, &at), "2.00× [1.94–2.06] Faster");
        assert_eq!(across_runs(&first[..1], &other, &at), NONE);
    }
}
