//! The planner's steps for backing services (`spec.services`): deployed and seeded before any
//! target, then kept until the run is cleaned up (see [`super`] for the contract).

use std::time::Duration;

use benchrun_api::{CurrentMeasurement, Reason, ServiceAddress};

use super::{has_result, placement, Action, Planner};
use crate::observed::SeedObserved;
use crate::results;

/// The backing services, once all are ready and seeded.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct ServicesUp {
    /// Their addresses, in the order of `spec.services`.
    pub addresses: Vec<ServiceAddress>,
    /// When the last of them became ready or finished seeding (ms since the epoch): the
    /// target's readiness timeout counts from here, not from a wait spent on the services.
    pub settled_ms: Option<i64>,
}

impl Planner<'_> {
    /// Applies the backing services and starts their seeding Jobs. `Some` once every service
    /// is ready and seeded (at once for a run without services); `None` while waiting, or after
    /// failing every remaining measurement because a service cannot come up or its seeding
    /// failed.
    pub(super) fn services_up(&mut self, cur: &CurrentMeasurement) -> Option<ServicesUp> {
        let specs = &self.run.services;
        if specs.is_empty() {
            return Some(ServicesUp::default());
        }
        let waited = self.elapsed(&cur.since);
        let mut up = ServicesUp::default();
        for s in specs {
            let o = self.obs.services.iter().find(|o| o.name == s.name);
            match o.and_then(|o| o.cluster_ip.clone().filter(|_| o.state.ready)) {
                Some(host) => {
                    up.settled_ms = up.settled_ms.max(o.and_then(|o| o.state.ready_since_ms));
                    up.addresses.push(ServiceAddress {
                        name: s.name.clone(),
                        host,
                        port: s.port,
                    });
                }
                None => {
                    let state = o.map(|o| o.state.clone()).unwrap_or_default();
                    if state.fatal || waited >= self.run.ready_timeout {
                        let problem = state
                            .problem
                            .unwrap_or_else(|| "its pod never became ready".into());
                        let reason = format!(
                            "backing service {} not ready after {}: {problem}",
                            s.name,
                            benchrun_api::units::format_duration(Duration::from_secs(
                                waited.as_secs()
                            ))
                        );
                        self.fail_remaining(reason);
                        return None;
                    }
                }
            }
        }
        if up.addresses.len() < specs.len() {
            self.actions.push(Action::ApplyServices {
                node_selector: placement::service_selector(self.run, self.obs.node_roles),
            });
            self.after(Duration::from_secs(2));
            return None;
        }
        let mut seeds = Vec::new();
        let mut seeding = false;
        for (i, s) in specs.iter().enumerate().filter(|(_, s)| s.seed.is_some()) {
            let seed = self
                .obs
                .services
                .iter()
                .find(|o| o.name == s.name)
                .map(|o| o.seed.clone())
                .unwrap_or_default();
            match seed {
                SeedObserved::Absent => {
                    seeds.push(Action::CreateSeedJob {
                        service: i,
                        addresses: up.addresses.clone(),
                    });
                    let job = crate::names::seed_job_name(&self.obs.run_name, &s.name);
                    self.note(
                        false,
                        Reason::Seeding,
                        format!("backing service {}: seeding Job {job}", s.name),
                    );
                    seeding = true;
                }
                SeedObserved::Running => seeding = true,
                SeedObserved::Succeeded(at) => up.settled_ms = up.settled_ms.max(at),
                SeedObserved::Failed(why) => {
                    let reason = format!("seeding backing service {} failed: {why}", s.name);
                    self.fail_remaining(reason);
                    return None;
                }
            }
        }
        self.actions.push(Action::ApplyServices {
            node_selector: placement::service_selector(self.run, self.obs.node_roles),
        });
        self.actions.extend(seeds);
        if seeding {
            self.after(Duration::from_secs(2));
            return None;
        }
        Some(up)
    }

    /// The longest the backing services may take to come up and be seeded before the target
    /// is deployed: nothing without services, else the ready timeout plus the seeding Jobs'
    /// timeouts added up.
    pub(super) fn services_time(&self) -> Duration {
        if self.run.services.is_empty() {
            return Duration::ZERO;
        }
        let seeding: Duration = self
            .run
            .services
            .iter()
            .filter(|s| s.seed.is_some())
            .map(|s| s.seed_timeout)
            .sum();
        self.run.ready_timeout + seeding
    }

    /// Nothing can be measured any more (a backing service is missing): every measurement
    /// without a result fails with `reason` at once.
    pub(super) fn fail_remaining(&mut self, reason: String) {
        let mut failed = Vec::new();
        for (i, r) in super::measurement_order(self.run, &self.status) {
            if !has_result(&self.status.results, i, r) {
                let Some(c) = self.run.cells.get(i) else {
                    continue;
                };
                failed.push(results::failed_result(self.run, c, r, reason.clone()));
            }
        }
        self.note(
            true,
            Reason::MeasurementFailed,
            format!("all {} remaining measurements: {reason}", failed.len()),
        );
        self.record(failed);
    }
}
