//! How many deployments a side's repeats ran on, counted from what each measurement recorded
//! (`status.results[].targetPods`), and what a comparison may conclude from them. Pure.
//!
//! **Why it matters.** Two deployments of the same image with the same settings differ: which
//! node and which CPU the pod lands on, its neighbours, JIT and allocator luck at start. That
//! deployment-to-deployment variance is what the next run (or the next release) will differ
//! by, so it belongs in the interval. Repeats measured on one deployment (`repeatOrder:
//! Sequential`, or a baseline run measured that way) see only the window-to-window noise of
//! those pods: their interval leaves the deployment variance out, and with a deployment effect
//! of a few percent it covers the truth far less often than it says (docs/metrics.md, Repeats
//! and deployments, with the simulated figures). A side needs repeats on at least
//! [`MIN_DEPLOYMENTS`] distinct deployments for a comparison to say `Faster`, `Slower` or
//! `Equivalent`; otherwise the comparison keeps its interval (labelled) and is
//! `Inconclusive` with [`shared_reason`].

use crate::CellResult;

/// Distinct deployments a side needs for a verdict on its repeats.
pub const MIN_DEPLOYMENTS: usize = 2;

/// The distinct deployments among `repeats` (measured ones): repeats whose recorded target pods
/// overlap ran on the same deployment. Repeats that recorded no pods (written by an older
/// operator) cannot be told apart, so together they count as one deployment. 0 without
/// repeats.
pub fn distinct(repeats: &[&CellResult]) -> usize {
    // Union of the repeats that share a pod, as groups of pod names.
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut unrecorded = false;
    for r in repeats {
        if r.target_pods.is_empty() {
            unrecorded = true;
            continue;
        }
        let pods: Vec<&str> = r.target_pods.iter().map(String::as_str).collect();
        let (joined, mut rest): (Vec<Vec<&str>>, Vec<Vec<&str>>) = groups
            .into_iter()
            .partition(|g| g.iter().any(|p| pods.contains(p)));
        let mut merged: Vec<&str> = joined.into_iter().flatten().chain(pods).collect();
        merged.sort_unstable();
        merged.dedup();
        rest.push(merged);
        groups = rest;
    }
    groups.len() + usize::from(unrecorded)
}

/// Whether some of `repeats` recorded no target pods (an older operator's results).
pub fn unrecorded(repeats: &[&CellResult]) -> bool {
    repeats.iter().any(|r| r.target_pods.is_empty())
}

/// Why a comparison of a candidate on `candidate` distinct deployments against a reference on
/// `reference` cannot give a verdict from its repeats: a side below [`MIN_DEPLOYMENTS`].
/// `unrecorded` names the sides whose repeats did not record their pods. `None` when both sides
/// have enough.
pub fn shared_reason(
    (candidate, reference): (usize, usize),
    (candidate_unrecorded, reference_unrecorded): (bool, bool),
) -> Option<String> {
    let short = |n: usize| n < MIN_DEPLOYMENTS;
    let sides = match (short(candidate), short(reference)) {
        (false, false) => return None,
        (true, true) => "either side",
        (true, false) => "the candidate",
        (false, true) => "the reference",
    };
    let unrecorded = match (
        candidate_unrecorded && short(candidate),
        reference_unrecorded && short(reference),
    ) {
        (false, false) => "",
        (true, false) => " (the candidate's repeats record no target pods: an older operator's)",
        (false, true) => " (the reference's repeats record no target pods: an older operator's)",
        (true, true) => " (their repeats record no target pods: an older operator's)",
    };
    Some(format!(
        "repeats shared one deployment on {sides}{unrecorded}: the interval leaves out deployment-to-deployment variance, so it is shown but gives no verdict; set repeatOrder Interleaved (the default for a run that compares) for a fresh deployment per repeat"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(pods: &[&str]) -> CellResult {
        CellResult {
            target_pods: pods.iter().map(|p| p.to_string()).collect(),
            ..CellResult::default()
        }
    }

    #[test]
    fn repeats_on_the_same_pods_count_once_and_fresh_pods_each_count() {
        let (a, b, c) = (on(&["a-1"]), on(&["b-1"]), on(&["c-1"]));
        assert_eq!(distinct(&[&a, &a, &a]), 1);
        assert_eq!(distinct(&[&a, &b, &c]), 3);
        assert_eq!(distinct(&[]), 0);
        // Replicas: one shared pod is one deployment, also when found through a third.
        let (ab, bc) = (on(&["a-1", "a-2"]), on(&["a-2", "z-9"]));
        assert_eq!(distinct(&[&a, &ab, &bc, &c]), 2);
        let (x, y, xy) = (on(&["x"]), on(&["y"]), on(&["x", "y"]));
        assert_eq!(distinct(&[&x, &y, &xy]), 1, "joined through the third");
    }

    #[test]
    fn unrecorded_repeats_count_as_one_deployment() {
        let old = CellResult::default();
        assert_eq!(distinct(&[&old, &old, &old]), 1);
        assert!(unrecorded(&[&old]));
        let a = on(&["a"]);
        assert_eq!(distinct(&[&a, &old]), 2);
        assert!(!unrecorded(&[&a]));
    }

    /// A standard normal draw (Box–Muller).
    fn normal(rng: &mut fastrand::Rng) -> f64 {
        let (u, v) = (rng.f64().max(1e-300), rng.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// Simulated A/A experiments: two sides with the same true throughput, `n` repeats a side,
    /// a random effect per deployment (sd `deployment` on the log scale) and window noise (sd
    /// `window`); each repeat on its own deployment (`fresh`, the default design) or all of a
    /// side's repeats on one. Returns the share of 95 % intervals that cover the true ratio 1
    /// and the share of verdicts `Faster`/`Slower` (false, the truth is equal).
    fn simulate(fresh: bool, n: usize, deployment: f64, window: f64, seed: u64) -> (f64, f64) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let experiments = 4000;
        let (mut covered, mut false_verdicts) = (0, 0);
        for _ in 0..experiments {
            let side = |rng: &mut fastrand::Rng| -> Vec<f64> {
                let shared = deployment * normal(rng);
                (0..n)
                    .map(|_| {
                        let u = if fresh {
                            deployment * normal(rng)
                        } else {
                            shared
                        };
                        (7.0 + u + window * normal(rng)).exp()
                    })
                    .collect()
            };
            let (a, b) = (side(&mut rng), side(&mut rng));
            let est = crate::compare::compare_repeats(&b, &a, 0.05, true).unwrap();
            covered += usize::from(est.low <= 1.0 && 1.0 <= est.high);
            false_verdicts += usize::from(matches!(
                est.verdict,
                crate::compare::ComparisonVerdict::Faster
                    | crate::compare::ComparisonVerdict::Slower
            ));
        }
        (
            covered as f64 / experiments as f64,
            false_verdicts as f64 / experiments as f64,
        )
    }

    /// The reason for the default (docs/metrics.md, Repeats and deployments: its table is this
    /// test's, checked by it and rewritten by `make metrics-doc`): with a per-deployment effect of 2–5 % and 1 % window noise, fresh deployments per
    /// repeat keep the 95 % interval's coverage at 93–97 %, while one deployment a side covers
    /// the truth in well under two thirds of experiments and calls identical builds `Faster`
    /// or `Slower` often.
    #[test]
    fn fresh_deployments_per_repeat_keep_the_coverage_one_deployment_a_side_does_not() {
        let mut table = String::from(
            "| repeats | deployment effect | coverage of the 95 % interval, fresh deployment per repeat | false Faster/Slower | coverage, one deployment a side | false Faster/Slower |\n|---|---|---|---|---|---|\n",
        );
        for (i, (n, deployment)) in [(3, 0.02), (5, 0.02), (3, 0.05), (5, 0.05), (10, 0.05)]
            .into_iter()
            .enumerate()
        {
            let seed = 52 + i as u64;
            let (cover, wrong) = simulate(true, n, deployment, 0.01, seed);
            let (cover_one, wrong_one) = simulate(false, n, deployment, 0.01, seed);
            table += &format!(
                "| {n} | {:.0} % | {:.1} % | {:.1} % | {:.1} % | {:.1} % |\n",
                deployment * 100.0,
                cover * 100.0,
                wrong * 100.0,
                cover_one * 100.0,
                wrong_one * 100.0
            );
            assert!(
                (0.93..=0.97).contains(&cover),
                "fresh, {n} repeats, {deployment}: {cover}"
            );
            assert!(wrong <= 0.03, "fresh, {n} repeats, {deployment}: {wrong}");
            assert!(
                cover_one < 0.65,
                "one deployment, {n} repeats, {deployment}: {cover_one}"
            );
            if deployment >= 0.05 {
                assert!(
                    wrong_one > 0.15,
                    "one deployment, {n}, {deployment}: {wrong_one}"
                );
            }
        }
        println!("{table}");
        benchrun_docblock::check("docs/metrics.md", "deployments-coverage", &table);
    }

    #[test]
    fn a_side_on_one_deployment_is_named_in_the_reason() {
        assert_eq!(shared_reason((3, 2), (false, false)), None);
        let why = shared_reason((3, 1), (false, false)).unwrap();
        assert!(
            why.starts_with("repeats shared one deployment on the reference:"),
            "{why}"
        );
        assert!(why.contains("set repeatOrder Interleaved"), "{why}");
        let old = shared_reason((1, 1), (false, true)).unwrap();
        assert!(
            old.contains("either side")
                && old.contains("the reference's repeats record no target pods"),
            "{old}"
        );
    }
}
