//! How far each target configuration scales: a Universal Scalability Law fit over the
//! connections a run swept (closed model), or the highest swept rate that met the SLOs (open
//! model). Pure: results in, [`Capacity`] entries out.
//!
//! The fit is the `usl` crate's least-squares fit of `X(N) = λN / (1 + σ(N−1) + κN(N−1))`;
//! this module decides which measurements may enter it and what the coefficients say.

use std::collections::BTreeMap;
use std::panic;

use benchrun_api::validate::SloPlan;
use benchrun_api::{
    Capacity, CellResult, Coordinates, SloVerdict, UslFit, ValidatedRun, WarningCode,
};

use crate::num::round;
use crate::results::headline_eligible;

/// `model` of a closed-model entry.
pub const USL: &str = "USL";
/// `model` of an open-model entry.
pub const SLO: &str = "SLO";

/// Fewest measurements the fit takes (the `usl` crate's own minimum).
pub const MIN_POINTS: usize = usl::MIN_MEASUREMENTS;
/// Fewest distinct connection counts: the fit has three coefficients.
pub const MIN_LEVELS: usize = 3;

/// The capacity entries of a run: one per configuration whose load the run sweeps (two or more
/// connection counts without a rate, or two or more rates), in matrix order. Runs that sweep
/// neither get none.
pub fn capacity(run: &ValidatedRun, results: &[CellResult]) -> Vec<Capacity> {
    let m = &run.matrix;
    let mut closed: Vec<(Key, Vec<&CellResult>)> = Vec::new();
    let mut open: Vec<(Key, Vec<&CellResult>)> = Vec::new();
    for r in results {
        let (groups, key) = match r.coordinates.rate {
            None if m.connections.len() >= 2 => (&mut closed, Key::closed(&r.coordinates)),
            Some(_) if m.rate.len() >= 2 => (&mut open, Key::open(&r.coordinates)),
            _ => continue,
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    let slo = run.slo.as_ref();
    let closed = closed.into_iter().map(|(k, rs)| usl_entry(k, &rs, slo));
    let open = open.into_iter().map(|(k, rs)| slo_entry(k, &rs, slo));
    closed.chain(open).collect()
}

/// What a configuration is: the coordinates without the load axis the entry is about.
#[derive(Clone, Debug, PartialEq)]
struct Key(Coordinates);

impl Key {
    fn closed(c: &Coordinates) -> Key {
        // A request count bounds the window like a duration: cells of one connections sweep
        // may be paired with different counts and still belong to one curve.
        Key(Coordinates {
            connections: 0,
            rate: None,
            requests: None,
            ..c.clone()
        })
    }

    fn open(c: &Coordinates) -> Key {
        Key(Coordinates {
            rate: None,
            ..c.clone()
        })
    }

    fn entry(self, model: &str, open: bool) -> Capacity {
        let c = self.0;
        Capacity {
            target: c.target,
            scenario: c.scenario,
            cpu: c.cpu,
            memory: c.memory,
            replicas: c.replicas,
            connections: open.then_some(c.connections),
            keep_alive: c.keep_alive,
            model: model.to_string(),
            ..Capacity::default()
        }
    }
}

/// Splits measurements into those a capacity figure may rest on and a note of the rest:
/// failed measurements have no figures, one whose errors exceed the SLO's error rate or 50 %
/// measured failures ([`headline_eligible`]), and a generator-bound one measured the generator,
/// as does an open-model one that missed its SLOs with connections that could not carry its
/// rate ([`crate::results::wire::connection_bound`], judged against the group's measurements).
fn usable<'a>(
    results: &[&'a CellResult],
    slo: Option<&SloPlan>,
) -> (Vec<&'a CellResult>, Option<String>) {
    let mut left_out: Vec<String> = Vec::new();
    let mut kept = Vec::new();
    for r in results {
        if let Err(why) = headline_eligible(r, slo) {
            left_out.push(why.label());
        } else if r
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::GeneratorBound)
        {
            left_out.push("generator-bound".into());
        } else if r.slo != Some(SloVerdict::Met)
            && crate::results::wire::connection_bound(r, results).is_some()
        {
            left_out.push("connection-bound".into());
        } else {
            kept.push(*r);
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for why in &left_out {
        *counts.entry(why.as_str()).or_default() += 1;
    }
    let note = (!counts.is_empty()).then(|| {
        let parts: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
        parts.join(", ")
    });
    (kept, note)
}

fn usl_entry(key: Key, results: &[&CellResult], slo: Option<&SloPlan>) -> Capacity {
    let mut entry = key.entry(USL, false);
    let (kept, excluded) = usable(results, slo);
    entry.excluded = excluded;
    entry.points = kept.len() as i32;
    let points: Vec<(u32, f64)> = kept
        .iter()
        .filter_map(|r| Some((r.coordinates.connections.max(0) as u32, r.throughput?)))
        .collect();
    match fit(&points) {
        Ok(f) => entry.fit = Some(f),
        Err(why) => entry.refused = Some(why),
    }
    entry.saturation = saturation(&kept);
    entry
}

/// How much throughput may still grow past the knee for the levels to count as a plateau
/// (35 %: on a busy node two measurements of one capacity differ by 20 % and more).
pub const PLATEAU_GAIN: f64 = 0.35;

/// Where a closed-model connections sweep stopped gaining throughput (see
/// [`Capacity::saturation`]): per connection count the mean throughput and mean latency of its
/// measurements. The knee is the lowest count past which no count's throughput is more than
/// [`PLATEAU_GAIN`] above its own (falling counts included: a retrograde curve queues as well).
/// Flagged when the last count is at least twice the knee's, the connections grew at least
/// twice as much as the throughput, and mean latency grew at least half as fast as the
/// connections (which a closed model without think time implies: N = X·R).
pub fn saturation(results: &[&CellResult]) -> Option<String> {
    let mut sums: BTreeMap<i32, (f64, f64, f64)> = BTreeMap::new();
    for r in results {
        let (Some(x), Some(l)) = (r.throughput, r.latency_ms.as_ref()) else {
            continue;
        };
        let s = sums.entry(r.coordinates.connections).or_default();
        *s = (s.0 + x, s.1 + l.mean, s.2 + 1.0);
    }
    let levels: Vec<(i32, f64, f64)> = sums
        .into_iter()
        .filter(|(n, (x, _, _))| *n > 0 && *x > 0.0)
        .map(|(n, (x, l, k))| (n, x / k, l / k))
        .collect();
    let knee = (0..levels.len()).find(|&i| {
        levels[i + 1..]
            .iter()
            .all(|l| l.1 <= (1.0 + PLATEAU_GAIN) * levels[i].1)
    })?;
    let plateau = &levels[knee..];
    let (first, last) = (plateau.first()?, plateau.last()?);
    let low = plateau.iter().map(|l| l.1).fold(f64::INFINITY, f64::min);
    let high = plateau.iter().map(|l| l.1).fold(0.0, f64::max);
    let more_connections = f64::from(last.0) / f64::from(first.0);
    let more_throughput = high / first.1;
    let more_latency = last.2 / first.2;
    if more_connections < 2.0
        || more_connections < 2.0 * more_throughput
        || !more_latency.is_finite()
        || more_latency < 0.5 * more_connections
    {
        return None;
    }
    Some(format!(
        "from {} to {} connections throughput stayed at {:.0}-{:.0} req/s while mean latency grew from {} to {} ms (x{:.1} for x{:.1} connections): past {} connections requests only queue (Little's law N = X·R), so this configuration's capacity is about {:.0} req/s and more connections add only latency",
        first.0,
        last.0,
        low,
        high,
        round(first.2, 3),
        round(last.2, 3),
        more_latency,
        more_connections,
        first.0,
        high
    ))
}

/// Fits the Universal Scalability Law to (connections, throughput) points, or says why not.
pub fn fit(points: &[(u32, f64)]) -> Result<UslFit, String> {
    let mut levels: Vec<u32> = points.iter().map(|p| p.0).collect();
    levels.sort_unstable();
    levels.dedup();
    if points.len() < MIN_POINTS || levels.len() < MIN_LEVELS {
        return Err(format!(
            "{} usable measurements at {} connection counts: the fit needs at least {MIN_POINTS} over at least {MIN_LEVELS} connection counts (sweep more matrix.connections values, or add repeats)",
            points.len(),
            levels.len()
        ));
    }
    if points
        .iter()
        .any(|&(n, x)| n == 0 || !(x.is_finite() && x > 0.0))
    {
        return Err("a measurement has no throughput or no connections to fit".into());
    }
    let measurements: Vec<usl::Measurement> = points
        .iter()
        .map(|&(n, x)| usl::Measurement::concurrency_and_throughput(n, x))
        .collect();
    // The crate panics when its solver fails; that is a refusal here, not a crash.
    let model = panic::catch_unwind(|| usl::Model::build(&measurements))
        .map_err(|_| "the least-squares fit did not converge on these points".to_string())?;
    let (sigma, kappa, lambda) = (model.sigma, model.kappa, model.lambda);
    if !(sigma.is_finite() && kappa.is_finite() && lambda.is_finite() && lambda > 0.0) {
        return Err(format!(
            "the fit gave no usable coefficients (σ={sigma}, κ={kappa}, λ={lambda})"
        ));
    }
    let unrounded = UslFit {
        contention: sigma,
        coherency: kappa,
        throughput_at_one: lambda,
        ..UslFit::default()
    };
    let at = |n: f64| unrounded.throughput(n);
    let peak = peak_connections(sigma, kappa).map(|n| (n, at(n as f64)));
    Ok(UslFit {
        contention: round(sigma, 6),
        coherency: round(kappa, 9),
        throughput_at_one: round(lambda, 3),
        peak_connections: peak.map(|p| p.0),
        peak_throughput: peak.map(|p| round(p.1, 1)),
        r_squared: round(r_squared(points, at), 4),
    })
}

/// The whole number of connections at which `λN / (1 + σ(N−1) + κN(N−1))` is highest:
/// `√((1−σ)/κ)` rounded to the better neighbour; `None` without a retrograde region (κ ≤ 0 or
/// σ ≥ 1).
fn peak_connections(sigma: f64, kappa: f64) -> Option<i64> {
    if kappa <= 0.0 || sigma >= 1.0 {
        return None;
    }
    let n = ((1.0 - sigma) / kappa).sqrt();
    if !n.is_finite() || n > i32::MAX as f64 {
        return None;
    }
    let denominator = |n: f64| (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)) / n;
    let (lo, hi) = (n.floor().max(1.0), n.ceil().max(1.0));
    Some(if denominator(lo) <= denominator(hi) {
        lo
    } else {
        hi
    } as i64)
}

/// 1 − SS_res / SS_tot of `model` over the points (1 when every point lies on the curve).
fn r_squared(points: &[(u32, f64)], model: impl Fn(f64) -> f64) -> f64 {
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let ss_tot: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let ss_res: f64 = points
        .iter()
        .map(|&(n, x)| (x - model(f64::from(n))).powi(2))
        .sum();
    if ss_tot == 0.0 {
        return if ss_res == 0.0 { 1.0 } else { 0.0 };
    }
    1.0 - ss_res / ss_tot
}

fn slo_entry(key: Key, results: &[&CellResult], slo: Option<&SloPlan>) -> Capacity {
    let mut entry = key.entry(SLO, true);
    let (kept, excluded) = usable(results, slo);
    entry.excluded = excluded;
    entry.points = kept.len() as i32;
    if slo.is_none() {
        entry.refused = Some(
            "the run has no spec.slo to judge the swept rates against: add one (e.g. p99) to get the highest rate that meets it".into(),
        );
        return entry;
    }
    // A rate with a failed measurement, or one of mostly errors, did not meet the SLOs
    // whatever its other repeats did.
    let failed_rates: Vec<i64> = results
        .iter()
        .filter(|r| headline_eligible(r, slo).is_err())
        .filter_map(|r| r.coordinates.rate)
        .collect();
    let mut verdicts: BTreeMap<i64, bool> = BTreeMap::new();
    for r in &kept {
        let Some(rate) = r.coordinates.rate else {
            continue;
        };
        let met = r.slo == Some(SloVerdict::Met) && !failed_rates.contains(&rate);
        *verdicts.entry(rate).or_insert(true) &= met;
    }
    entry.max_rate_meeting_slo = verdicts
        .iter()
        .rev()
        .find(|(_, met)| **met)
        .map(|(rate, _)| *rate);
    if entry.max_rate_meeting_slo.is_none() {
        entry.refused = Some(if verdicts.is_empty() {
            "no usable measurement yet".into()
        } else {
            "no swept rate met the SLOs: sweep lower rates".into()
        });
    }
    entry
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;
