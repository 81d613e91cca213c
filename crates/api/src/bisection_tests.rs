//! Tests for the search against synthetic services.

use super::*;

const CAPACITY: Direction = Direction::HighestPassing;
const DEMAND: Direction = Direction::LowestPassing;

/// Real-valued bounds.
fn real(min: f64, max: f64, precision: f64) -> Bounds {
    Bounds {
        min,
        max,
        precision,
        integer: false,
        whole_values: false,
    }
}

/// Integer bounds (replicas).
fn whole(min: f64, max: f64) -> Bounds {
    Bounds {
        min,
        max,
        precision: 0.05,
        integer: true,
        whole_values: false,
    }
}

/// Runs a search to the end against a service, checking every requested value lies within the
/// bounds and the count never exceeds the worst case; returns the answer and the history.
fn run(
    direction: Direction,
    bounds: &Bounds,
    mut service: impl FnMut(f64) -> Verdict,
) -> (Answer, Vec<Measurement>) {
    let limit = worst_case(bounds) as usize;
    let mut history = Vec::new();
    loop {
        match next(direction, bounds, &history) {
            Step::Measure(value) => {
                assert!(
                    history.len() < limit,
                    "over worst case {limit}: {history:?}"
                );
                assert!(
                    bounds.min <= value && value <= bounds.max,
                    "{value} out of {bounds:?}"
                );
                history.push(Measurement {
                    value,
                    verdict: service(value),
                });
            }
            Step::Done(answer) => return (answer, history),
        }
    }
}

/// A service that meets the SLOs exactly on the passing side of `boundary`.
fn sharp(direction: Direction, boundary: f64) -> impl Fn(f64) -> Verdict {
    move |x| {
        let passes = match direction {
            Direction::HighestPassing => x <= boundary,
            Direction::LowestPassing => x >= boundary,
        };
        if passes {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

/// Whether an answer brackets `boundary` in the given direction.
fn brackets(direction: Direction, answer: &Answer, boundary: f64) -> bool {
    match (answer.passing, answer.failing, direction) {
        (Some(p), Some(f), Direction::HighestPassing) => p <= boundary && boundary <= f,
        (Some(p), Some(f), Direction::LowestPassing) => f <= boundary && boundary <= p,
        _ => false,
    }
}

/// Whether passing and failing are within the precision (adjacent for integers).
fn within_precision(bounds: &Bounds, answer: &Answer) -> bool {
    match (answer.passing, answer.failing) {
        (Some(p), Some(f)) if bounds.integer => (p - f).abs() <= 1.0,
        (Some(p), Some(f)) => p.max(f) / p.min(f) - 1.0 <= bounds.precision + 1e-9,
        _ => false,
    }
}

/// Log-spaced values strictly inside `(min, max)`.
fn sweep(min: f64, max: f64, count: usize) -> impl Iterator<Item = f64> {
    let span = (max / min).ln();
    (1..=count).map(move |i| min * (span * i as f64 / (count + 1) as f64).exp())
}

#[test]
fn sharp_boundary_is_bracketed_within_precision() {
    let cases = [
        real(10.0, 10_000.0, 0.05),
        real(50.0, 5_000.0, 0.01),
        real(100.0, 4_000.0, 0.2),
        real(0.5, 3.0, 0.05),
        real(100.0, 104.0, 0.05),
    ];
    for bounds in &cases {
        for direction in [CAPACITY, DEMAND] {
            for boundary in sweep(bounds.min, bounds.max, 400) {
                let (answer, history) = run(direction, bounds, sharp(direction, boundary));
                assert_eq!(
                    answer.outcome,
                    Outcome::Bracketed,
                    "{bounds:?} {boundary}: {answer:?}"
                );
                assert!(
                    brackets(direction, &answer, boundary),
                    "{boundary}: {answer:?}"
                );
                assert!(within_precision(bounds, &answer), "{bounds:?}: {answer:?}");
                assert!(history.len() <= worst_case(bounds) as usize);
            }
        }
    }
}

/// Whole-number values (rates, millicores): every value asked for is a whole number, the
/// boundary is still bracketed, within the precision or at adjacent whole numbers where
/// rounding leaves nothing between, and never beyond the worst case.
#[test]
fn whole_values_are_asked_for_and_still_bracket() {
    for (min, max, precision) in [
        (20.0, 3000.0, 0.05),
        (10.0, 10_000.0, 0.2),
        (10.0, 40.0, 0.05),
        (100.0, 800.0, 0.05),
    ] {
        let bounds = Bounds {
            whole_values: true,
            ..real(min, max, precision)
        };
        for direction in [CAPACITY, DEMAND] {
            for boundary in sweep(min, max, 300) {
                let (answer, history) = run(direction, &bounds, sharp(direction, boundary));
                assert!(
                    history.iter().all(|m| m.value == m.value.round()),
                    "{history:?}"
                );
                assert_eq!(answer.outcome, Outcome::Bracketed, "{boundary}: {answer:?}");
                assert!(
                    brackets(direction, &answer, boundary),
                    "{boundary}: {answer:?}"
                );
                let (p, f) = (answer.passing.unwrap(), answer.failing.unwrap());
                let (lo, hi) = if p < f { (p, f) } else { (f, p) };
                assert!(
                    hi / lo - 1.0 <= precision + 1e-9 || hi - lo <= 1.0,
                    "{answer:?}"
                );
            }
        }
    }
}

#[test]
fn sharp_boundary_with_integer_values() {
    for bounds in [
        whole(1.0, 64.0),
        whole(1.0, 2.0),
        whole(2.0, 17.0),
        whole(0.5, 100.5),
    ] {
        let (low, high) = (bounds.min.ceil(), bounds.max.floor());
        for direction in [CAPACITY, DEMAND] {
            // Boundaries between every pair of neighbouring integers.
            let mut boundary = low + 0.5;
            while boundary < high {
                let (answer, history) = run(direction, &bounds, sharp(direction, boundary));
                assert_eq!(answer.outcome, Outcome::Bracketed, "{boundary}: {answer:?}");
                assert!(
                    brackets(direction, &answer, boundary),
                    "{boundary}: {answer:?}"
                );
                assert!(within_precision(&bounds, &answer), "{answer:?}");
                for m in &history {
                    assert_eq!(m.value, m.value.round(), "{m:?} is not whole");
                }
                boundary += 1.0;
            }
        }
    }
}

#[test]
fn bisection_values_are_rounded() {
    let bounds = real(10.0, 10_000.0, 0.05);
    let (_, history) = run(CAPACITY, &bounds, sharp(CAPACITY, 1234.5));
    for m in &history {
        let digits = format!("{}", m.value)
            .trim_matches(['0', '.'])
            .replace('.', "")
            .len();
        assert!(
            digits <= 3,
            "{} has more than 3 significant figures",
            m.value
        );
    }
}

/// An end that would end the search is confirmed (issue 52: one cold first cell ended a
/// search): the near end fails three times before `NeverPasses`.
#[test]
fn never_passes_after_three_failures_of_the_near_end() {
    let bounds = real(10.0, 10_000.0, 0.05);
    for direction in [CAPACITY, DEMAND] {
        let (answer, history) = run(direction, &bounds, |_| Verdict::Fail);
        assert_eq!(answer.outcome, Outcome::NeverPasses);
        assert_eq!(history.len(), CONFIRMATIONS as usize);
        let near = if direction == CAPACITY {
            bounds.min
        } else {
            bounds.max
        };
        assert!(history.iter().all(|m| m.value == near));
        assert_eq!(answer.passing, None);
    }
}

#[test]
fn always_passes_after_the_far_end_passed_three_times() {
    let bounds = real(10.0, 10_000.0, 0.05);
    for direction in [CAPACITY, DEMAND] {
        let (answer, history) = run(direction, &bounds, |_| Verdict::Pass);
        assert_eq!(answer.outcome, Outcome::AlwaysPasses);
        assert_eq!(history.len(), 1 + CONFIRMATIONS as usize);
        let far = if direction == CAPACITY {
            bounds.max
        } else {
            bounds.min
        };
        assert_eq!(answer.passing, Some(far));
    }
}

/// A cold first measurement of the near end fails, the next ones pass: the search goes on
/// (the end is mixed, which for the near end means it cannot be the answer) instead of
/// reporting `NeverPasses` from one cold cell. The far end that passes once and then fails is
/// searched below, not reported as `AlwaysPasses`.
#[test]
fn one_cold_end_measurement_does_not_decide_the_search() {
    let bounds = real(10.0, 10_000.0, 0.05);
    let near = [Measurement {
        value: 10.0,
        verdict: Verdict::Fail,
    }];
    assert_eq!(next(CAPACITY, &bounds, &near), Step::Measure(10.0));
    let far = [
        Measurement {
            value: 10.0,
            verdict: Verdict::Pass,
        },
        Measurement {
            value: 10_000.0,
            verdict: Verdict::Pass,
        },
    ];
    assert_eq!(next(CAPACITY, &bounds, &far), Step::Measure(10_000.0));
    let mut far_mixed = far.to_vec();
    far_mixed.push(Measurement {
        value: 10_000.0,
        verdict: Verdict::Fail,
    });
    match next(CAPACITY, &bounds, &far_mixed) {
        Step::Measure(x) => assert!(x > 10.0 && x < 10_000.0, "{x}"),
        other => panic!("{other:?}"),
    }
}

/// A bracket left wider than the precision by inconsistent results says so, with its width;
/// one within the precision says nothing of the kind.
#[test]
fn a_bracket_wider_than_asked_says_how_wide_and_why() {
    let bounds = real(100.0, 1000.0, 0.05);
    // Passes below 250, fails from 400 on, and between them flips at every measurement.
    let mut calls = 0;
    let service = move |x: f64| {
        calls += 1;
        if x < 250.0 || (x < 400.0 && calls % 2 == 0) {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    };
    let (answer, _) = run(CAPACITY, &bounds, service);
    let (p, f) = (answer.passing.unwrap(), answer.failing.unwrap());
    assert!(f / p - 1.0 > 0.05, "{answer:?}");
    assert!(
        answer
            .line
            .contains("wide, not the 5.0% asked: results within the noise"),
        "{}",
        answer.line
    );
    let (sharp_answer, _) = run(CAPACITY, &bounds, sharp(CAPACITY, 321.0));
    assert_eq!(sharp_answer.outcome, Outcome::Bracketed);
    assert!(
        !sharp_answer.line.contains("asked"),
        "{}",
        sharp_answer.line
    );
}

#[test]
fn one_unusable_measurement_is_retried() {
    let bounds = real(10.0, 10_000.0, 0.05);
    for direction in [CAPACITY, DEMAND] {
        let boundary = 777.0;
        let mut seen: Vec<f64> = Vec::new();
        let service = sharp(direction, boundary);
        // The first measurement of every value is unusable, the rest are exact.
        let (answer, history) = run(direction, &bounds, |x| {
            if seen.contains(&x) {
                service(x)
            } else {
                seen.push(x);
                Verdict::Unusable("load generator saturated".into())
            }
        });
        assert_eq!(answer.outcome, Outcome::Bracketed, "{answer:?}");
        assert!(brackets(direction, &answer, boundary));
        assert!(within_precision(&bounds, &answer));
        let (clean, _) = run(direction, &bounds, sharp(direction, boundary));
        assert_eq!(
            (answer.passing, answer.failing),
            (clean.passing, clean.failing)
        );
        assert!(history.windows(2).any(|w| w[0].value == w[1].value));
    }
}

#[test]
fn always_unusable_stops_naming_the_value_and_reason() {
    let bounds = real(10.0, 10_000.0, 0.05);
    for direction in [CAPACITY, DEMAND] {
        let (answer, history) = run(direction, &bounds, |_| {
            Verdict::Unusable("OOMKilled".into())
        });
        assert_eq!(answer.outcome, Outcome::Unusable);
        assert_eq!(history.len(), 2);
        assert!(answer.line.contains("OOMKilled"), "{}", answer.line);
        assert!(
            answer.line.contains(&format!("{}", history[0].value)),
            "{}",
            answer.line
        );
    }
}

#[test]
fn unmeasurable_far_values_are_bisected_around() {
    // The load generator cannot offer more than 3000 req/s.
    let bounds = real(10.0, 10_000.0, 0.05);
    let limited = |boundary: f64| {
        move |x: f64| {
            if x > 3000.0 {
                Verdict::Unusable("load generator is the bottleneck".into())
            } else {
                sharp(CAPACITY, boundary)(x)
            }
        }
    };
    let (answer, _) = run(CAPACITY, &bounds, limited(1000.0));
    assert_eq!(answer.outcome, Outcome::Bracketed, "{answer:?}");
    assert!(brackets(CAPACITY, &answer, 1000.0));
    assert!(within_precision(&bounds, &answer));
    // The boundary lies beyond what can be measured.
    let (answer, _) = run(CAPACITY, &bounds, limited(5000.0));
    assert_eq!(answer.outcome, Outcome::Unusable, "{answer:?}");
    let passing = answer.passing.unwrap_or_default();
    assert!((3000.0 / 1.05..=3000.0).contains(&passing), "{answer:?}");
    assert!(answer.line.contains("bottleneck"), "{}", answer.line);
}

/// A standard normal sample (Box-Muller).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u1 = 1.0 - rng.f64();
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// How the measured figure (such as p99 latency) depends on the searched value, relative to
/// the SLO threshold, which it reaches exactly at the true boundary.
#[derive(Clone, Copy, Debug)]
enum Model {
    /// Queueing latency 1 / (1 − utilisation), the SLO met up to 80 % utilisation: near the
    /// boundary a 1 % change of load moves latency by about 4 %.
    Queue,
    /// (load)^e: a 1 % change of load moves the figure by e %.
    Power(f64),
}

/// The figure relative to the SLO threshold at `x`, before noise; load is relative to the
/// boundary (rate / boundary for capacity, boundary / resource for demand).
fn figure(model: Model, direction: Direction, boundary: f64, x: f64) -> f64 {
    let load = match direction {
        Direction::HighestPassing => x / boundary,
        Direction::LowestPassing => boundary / x,
    };
    match model {
        Model::Queue => {
            let utilisation = 0.8 * load;
            if utilisation >= 1.0 {
                f64::INFINITY
            } else {
                0.2 / (1.0 - utilisation)
            }
        }
        Model::Power(e) => load.powf(e),
    }
}

/// Runs seeded trials against a service whose figure has multiplicative noise N(0, sigma),
/// the boundary log-uniform in the middle of the range; returns the fraction bracketed and the
/// mean and largest measurement counts.
fn noisy_trials(
    direction: Direction,
    bounds: &Bounds,
    model: Model,
    sigma: f64,
    trials: u64,
) -> (f64, f64, usize) {
    let (mut bracketed, mut total, mut most) = (0, 0, 0);
    for seed in 0..trials {
        let mut rng = fastrand::Rng::with_seed(seed);
        let span = (bounds.max / bounds.min).ln();
        let boundary = bounds.min * (span * (0.05 + 0.9 * rng.f64())).exp();
        let service = |x: f64| {
            let noise = 1.0 + sigma * normal(&mut rng);
            if figure(model, direction, boundary, x) * noise <= 1.0 {
                Verdict::Pass
            } else {
                Verdict::Fail
            }
        };
        let (answer, history) = run(direction, bounds, service);
        total += history.len();
        most = most.max(history.len());
        if answer.outcome == Outcome::Bracketed && brackets(direction, &answer, boundary) {
            bracketed += 1;
        }
    }
    (
        bracketed as f64 / trials as f64,
        total as f64 / trials as f64,
        most,
    )
}

#[test]
fn noisy_service_is_bracketed_in_95_percent_of_trials() {
    // Operator defaults: 5 % precision; 3 % run-to-run noise on the SLO figure.
    let bounds = real(10.0, 10_000.0, 0.05);
    let trials = 2000;
    for direction in [CAPACITY, DEMAND] {
        let (rate, mean, most) = noisy_trials(direction, &bounds, Model::Queue, 0.03, trials);
        println!(
            "noisy {direction:?}, queueing latency, sigma 3 %: {:.1} % of {trials} trials \
             bracketed; {mean:.1} measurements on average, at most {most} (worst case {})",
            rate * 100.0,
            worst_case(&bounds)
        );
        assert!(rate >= 0.95, "only {:.1} % bracketed", rate * 100.0);
    }
    // For comparison, figures with constant elasticity (not asserted).
    for e in [1.0, 2.0, 4.0] {
        let (rate, mean, _) = noisy_trials(CAPACITY, &bounds, Model::Power(e), 0.03, trials);
        println!(
            "noisy capacity, figure ∝ load^{e}, sigma 3 %: {:.1} % bracketed, {mean:.1} measurements",
            rate * 100.0
        );
    }
}

/// Adversarial verdicts: each measurement passes, fails or is unusable at random.
fn random_service(rng: &mut fastrand::Rng, pass: f64, unusable: f64) -> impl FnMut(f64) -> Verdict {
    let mut rng = rng.fork();
    move |_| {
        let roll = rng.f64();
        if roll < unusable {
            Verdict::Unusable("random".into())
        } else if roll < unusable + (1.0 - unusable) * pass {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

#[test]
fn random_verdicts_never_exceed_worst_case() {
    let mut rng = fastrand::Rng::with_seed(7);
    let cases = [
        real(10.0, 10_000.0, 0.05),
        real(1.0, 1e6, 0.01),
        real(100.0, 200.0, 0.1),
        real(5.0, 5.0, 0.05),
        whole(1.0, 50.0),
        whole(3.0, 3.0),
        whole(1.0, 2.0),
    ];
    let mut most = vec![0usize; cases.len()];
    for _ in 0..4000 {
        for (i, bounds) in cases.iter().enumerate() {
            let direction = if rng.bool() { CAPACITY } else { DEMAND };
            let pass = rng.f64();
            let unusable = [0.0, 0.1, 0.4, 0.9][rng.usize(..4)];
            let (answer, history) =
                run(direction, bounds, random_service(&mut rng, pass, unusable));
            most[i] = most[i].max(history.len());
            assert!(!answer.line.is_empty());
        }
    }
    for (bounds, most) in cases.iter().zip(most) {
        println!(
            "{bounds:?}: at most {most} measurements, worst case {}",
            worst_case(bounds)
        );
    }
}

#[test]
fn noisy_adversary_near_the_boundary_never_exceeds_worst_case() {
    // Coin-flip verdicts within 20 % of the boundary maximise mixed results.
    let bounds = real(10.0, 10_000.0, 0.05);
    let mut most = 0;
    for seed in 0..20_000 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let direction = if rng.bool() { CAPACITY } else { DEMAND };
        let boundary = 10.0 * 1000f64.powf(rng.f64());
        let unusable = [0.0, 0.2][rng.usize(..2)];
        let exact = sharp(direction, boundary);
        let service = |x: f64| {
            if rng.f64() < unusable {
                Verdict::Unusable("random".into())
            } else if (x / boundary).ln().abs() < 0.2 {
                if rng.bool() {
                    Verdict::Pass
                } else {
                    Verdict::Fail
                }
            } else {
                exact(x)
            }
        };
        let (_, history) = run(direction, &bounds, service);
        most = most.max(history.len());
    }
    println!(
        "coin flips near the boundary: at most {most}, worst case {}",
        worst_case(&bounds)
    );
}

/// Explores every verdict sequence, returning the longest search and the number of searches.
fn explore(direction: Direction, bounds: &Bounds, history: &mut Vec<Measurement>) -> (usize, u64) {
    match next(direction, bounds, history) {
        Step::Done(_) => (history.len(), 1),
        Step::Measure(value) => {
            assert!(history.len() < worst_case(bounds) as usize, "{history:?}");
            let (mut longest, mut searches) = (0, 0);
            for verdict in [Verdict::Pass, Verdict::Fail, Verdict::Unusable("x".into())] {
                history.push(Measurement { value, verdict });
                let (l, s) = explore(direction, bounds, history);
                history.pop();
                longest = longest.max(l);
                searches += s;
            }
            (longest, searches)
        }
    }
}

#[test]
fn every_verdict_sequence_stays_within_worst_case() {
    for bounds in [whole(1.0, 4.0), whole(1.0, 6.0), real(100.0, 112.0, 0.05)] {
        for direction in [CAPACITY, DEMAND] {
            let (longest, searches) = explore(direction, &bounds, &mut Vec::new());
            println!(
                "{bounds:?} {direction:?}: {searches} sequences, longest {longest}, worst case {}",
                worst_case(&bounds)
            );
        }
    }
}

#[test]
fn foreign_histories_do_not_panic() {
    let mut rng = fastrand::Rng::with_seed(11);
    let bounds = real(10.0, 1000.0, 0.05);
    for _ in 0..5000 {
        let direction = if rng.bool() { CAPACITY } else { DEMAND };
        let history: Vec<Measurement> = (0..rng.usize(..30))
            .map(|_| Measurement {
                value: [5.0, 10.0, 1000.0, f64::NAN, 10.0 + 990.0 * rng.f64()][rng.usize(..5)],
                verdict: [Verdict::Pass, Verdict::Fail, Verdict::Unusable("?".into())]
                    [rng.usize(..3)]
                .clone(),
            })
            .collect();
        if let Step::Measure(value) = next(direction, &bounds, &history) {
            assert!((bounds.min..=bounds.max).contains(&value));
        }
    }
}

#[test]
fn invalid_bounds_are_refused() {
    for bounds in [
        real(0.0, 100.0, 0.05),
        real(100.0, 10.0, 0.05),
        real(10.0, 100.0, 0.0),
        real(10.0, f64::INFINITY, 0.05),
        whole(2.2, 2.8),
    ] {
        assert!(bounds.validate().is_err(), "{bounds:?}");
        assert_eq!(worst_case(&bounds), 0);
        match next(CAPACITY, &bounds, &[]) {
            Step::Done(answer) => assert_eq!(answer.outcome, Outcome::Unusable),
            step => panic!("{bounds:?} gave {step:?}"),
        }
    }
}

#[test]
fn next_is_pure() {
    let bounds = real(10.0, 10_000.0, 0.05);
    let (_, history) = run(DEMAND, &bounds, sharp(DEMAND, 321.0));
    for k in 0..=history.len() {
        assert_eq!(
            next(DEMAND, &bounds, &history[..k]),
            next(DEMAND, &bounds, &history[..k])
        );
    }
}
