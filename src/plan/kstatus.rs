//! The conditions GitOps tools read, in the form of the kstatus conventions
//! (sigs.k8s.io/cli-utils `pkg/kstatus`, used by Flux's `wait`, kpt and Config Sync):
//! `Reconciling=True` while work remains makes a run `InProgress`, `Stalled=True` makes a failed
//! run `Failed`, and with neither `True` a run whose `status.observedGeneration` matches its
//! generation is `Current`. `Ready` is what `kubectl wait --for=condition=Ready` waits for.
//!
//! Pure: derived from the phase and the run's other conditions on every status the planner
//! writes; the existing conditions are kept as they are.

use benchrun_api::{BenchmarkRunStatus, ConditionType, Phase, Reason};
use jiff::Timestamp;

use super::set_condition;

/// The kstatus conditions of `status` as (type, status, reason, message), in the order they
/// are written: `Ready`, `Reconciling`, `Stalled`. Never both `Reconciling` and `Stalled`
/// `True` (kstatus takes the first it finds).
pub fn kstatus_conditions(
    status: &BenchmarkRunStatus,
) -> [(ConditionType, bool, Reason, String); 3] {
    let message_of = |t: ConditionType| {
        status
            .conditions
            .iter()
            .find(|c| c.type_ == t.as_str())
            .map(|c| c.message.clone())
            .unwrap_or_default()
    };
    let progress = status.progress.as_deref().unwrap_or("0/?");
    match status.phase {
        None | Some(Phase::Pending) => {
            let m = "the run has not been started yet".to_string();
            [
                (ConditionType::Ready, false, Reason::NotStarted, m.clone()),
                (ConditionType::Reconciling, true, Reason::NotStarted, m),
                (
                    ConditionType::Stalled,
                    false,
                    Reason::NotStalled,
                    String::new(),
                ),
            ]
        }
        Some(Phase::Queued) => {
            let m = message_of(ConditionType::Running);
            [
                (ConditionType::Ready, false, Reason::Queued, m.clone()),
                (ConditionType::Reconciling, true, Reason::Queued, m),
                (
                    ConditionType::Stalled,
                    false,
                    Reason::NotStalled,
                    String::new(),
                ),
            ]
        }
        Some(Phase::Running) => {
            let m = format!("{progress} measurements done");
            [
                (ConditionType::Ready, false, Reason::Measuring, m.clone()),
                (ConditionType::Reconciling, true, Reason::Measuring, m),
                (
                    ConditionType::Stalled,
                    false,
                    Reason::NotStalled,
                    String::new(),
                ),
            ]
        }
        Some(Phase::Succeeded) => {
            let m = message_of(ConditionType::Succeeded);
            [
                (ConditionType::Ready, true, Reason::Succeeded, m.clone()),
                (ConditionType::Reconciling, false, Reason::Completed, m),
                (
                    ConditionType::Stalled,
                    false,
                    Reason::NotStalled,
                    String::new(),
                ),
            ]
        }
        Some(Phase::Failed) => {
            let m = message_of(ConditionType::Failed);
            [
                (ConditionType::Ready, false, Reason::Failed, m.clone()),
                (ConditionType::Reconciling, false, Reason::Failed, m.clone()),
                (ConditionType::Stalled, true, Reason::Failed, m),
            ]
        }
    }
}

/// Writes [`kstatus_conditions`] into `status` (transition times kept while unchanged).
pub fn set_kstatus_conditions(
    status: &mut BenchmarkRunStatus,
    now: Timestamp,
    generation: Option<i64>,
) {
    for (t, ok, reason, message) in kstatus_conditions(status) {
        set_condition(
            &mut status.conditions,
            t,
            ok,
            reason,
            message,
            now,
            generation,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

    fn status(phase: Option<Phase>) -> BenchmarkRunStatus {
        BenchmarkRunStatus {
            phase,
            progress: Some("3/8".into()),
            ..Default::default()
        }
    }

    /// (type, status, reason) of each condition, as kstatus reads them.
    fn read(s: &BenchmarkRunStatus) -> Vec<(String, String, String)> {
        s.conditions
            .iter()
            .map(|c| (c.type_.clone(), c.status.clone(), c.reason.clone()))
            .collect()
    }

    fn written(mut s: BenchmarkRunStatus) -> Vec<(String, String, String)> {
        set_kstatus_conditions(&mut s, Timestamp::UNIX_EPOCH, Some(2));
        read(&s)
    }

    fn triple(t: &str, st: &str, r: &str) -> (String, String, String) {
        (t.into(), st.into(), r.into())
    }

    #[test]
    fn a_run_not_yet_started_is_reconciling_and_not_ready() {
        assert_eq!(
            written(status(None)),
            [
                triple("Ready", "False", "NotStarted"),
                triple("Reconciling", "True", "NotStarted"),
                triple("Stalled", "False", "NotStalled"),
            ]
        );
    }

    #[test]
    fn a_queued_run_is_reconciling_with_the_queue_message() {
        let mut s = status(Some(Phase::Queued));
        s.conditions.push(Condition {
            type_: "Running".into(),
            status: "False".into(),
            reason: "Queued".into(),
            message: "waiting for a measuring slot, held by ns/other".into(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                Timestamp::UNIX_EPOCH,
            ),
            observed_generation: None,
        });
        let k = kstatus_conditions(&s);
        assert_eq!(
            (k[0].0, k[0].1, k[0].2),
            (ConditionType::Ready, false, Reason::Queued)
        );
        assert_eq!((k[1].0, k[1].1), (ConditionType::Reconciling, true));
        assert!(k[1].3.contains("held by ns/other"), "{}", k[1].3);
        assert!(!k[2].1);
    }

    #[test]
    fn a_running_run_is_reconciling_with_its_progress() {
        let k = kstatus_conditions(&status(Some(Phase::Running)));
        assert_eq!((k[0].1, k[0].2), (false, Reason::Measuring));
        assert_eq!((k[1].1, k[1].3.as_str()), (true, "3/8 measurements done"));
        assert!(!k[2].1);
    }

    #[test]
    fn a_succeeded_run_is_ready_and_neither_reconciling_nor_stalled() {
        assert_eq!(
            written(status(Some(Phase::Succeeded))),
            [
                triple("Ready", "True", "Succeeded"),
                triple("Reconciling", "False", "Completed"),
                triple("Stalled", "False", "NotStalled"),
            ]
        );
    }

    #[test]
    fn a_failed_run_is_stalled_and_not_ready() {
        assert_eq!(
            written(status(Some(Phase::Failed))),
            [
                triple("Ready", "False", "Failed"),
                triple("Reconciling", "False", "Failed"),
                triple("Stalled", "True", "Failed"),
            ]
        );
    }

    #[test]
    fn reconciling_and_stalled_are_never_both_true() {
        for p in [
            None,
            Some(Phase::Pending),
            Some(Phase::Queued),
            Some(Phase::Running),
            Some(Phase::Succeeded),
            Some(Phase::Failed),
        ] {
            let k = kstatus_conditions(&status(p));
            assert!(!(k[1].1 && k[2].1), "{p:?}");
            assert_eq!(k[0].1, p == Some(Phase::Succeeded), "{p:?}");
        }
    }

    #[test]
    fn existing_conditions_stay_and_transition_times_hold_while_unchanged() {
        let mut s = status(Some(Phase::Running));
        s.conditions.push(Condition {
            type_: "Accepted".into(),
            status: "True".into(),
            reason: "Valid".into(),
            message: String::new(),
            last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                Timestamp::UNIX_EPOCH,
            ),
            observed_generation: Some(1),
        });
        set_kstatus_conditions(&mut s, Timestamp::UNIX_EPOCH, Some(1));
        let later = Timestamp::from_second(60).unwrap();
        set_kstatus_conditions(&mut s, later, Some(1));
        assert_eq!(s.conditions[0].type_, "Accepted");
        assert_eq!(s.conditions.len(), 4);
        assert!(s
            .conditions
            .iter()
            .all(|c| c.last_transition_time.0 == Timestamp::UNIX_EPOCH));
        s.phase = Some(Phase::Succeeded);
        set_kstatus_conditions(&mut s, later, Some(1));
        let ready = s.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.last_transition_time.0),
            ("True", later)
        );
    }
}
