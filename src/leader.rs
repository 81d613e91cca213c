//! Leader election among operator replicas (I/O edge; the decisions are in [`crate::lease`]).
//!
//! The replicas compete for one `coordination.k8s.io/v1` Lease in the operator's namespace.
//! Every write is a `replace` carrying the `resourceVersion` that was read (optimistic
//! concurrency), so two replicas can never both take the lease. Only the leader runs the
//! controller ([`lead`]); a standby reads the lease every retry period and takes it when it is
//! released (graceful shutdown of the leader) or has expired (the leader died). A leader that
//! cannot renew for [`Timing::renew_deadline`] returns [`LeaseLost`] and the process exits, so it
//! stops reconciling before a standby may take over.
//!
//! Why not a crate: `kube-lease-manager` (the one maintained crate built on kube 5) keeps
//! reporting leadership while the apiserver is unreachable, and its standbys sleep until the
//! old expiry instead of noticing a released lease.

use std::future::Future;
use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::lease::{self, Timing, Verdict};
use crate::telemetry::{Metrics, Role};

/// Leader election flags of the operator.
#[derive(clap::Args, Clone, Debug)]
pub struct LeaseArgs {
    /// Name of the Lease the replicas elect their leader on (RBAC grants this name only).
    #[arg(
        long = "lease-name",
        env = "BENCHRUN_LEASE_NAME",
        default_value = "benchrun-operator"
    )]
    pub name: String,
    /// Namespace of the Lease (default: the operator's own, from its service account, or the
    /// kubeconfig's namespace).
    #[arg(long = "lease-namespace", env = "BENCHRUN_LEASE_NAMESPACE")]
    pub namespace: Option<String>,
    /// Seconds a lease stays valid after its holder last renewed it.
    #[arg(
        long = "lease-duration-seconds",
        env = "BENCHRUN_LEASE_DURATION_SECONDS",
        default_value_t = 15
    )]
    pub duration_seconds: u64,
    /// Seconds between the leader's renewals.
    #[arg(
        long = "lease-renew-seconds",
        env = "BENCHRUN_LEASE_RENEW_SECONDS",
        default_value_t = 5
    )]
    pub renew_seconds: u64,
    /// Seconds between a standby's reads of the lease (and a leader's retries of a failed
    /// renewal).
    #[arg(
        long = "lease-retry-seconds",
        env = "BENCHRUN_LEASE_RETRY_SECONDS",
        default_value_t = 2
    )]
    pub retry_seconds: u64,
    /// This replica's name in the lease, usually its pod name (default: the host name); a
    /// random suffix per process is added.
    #[arg(long = "leader-identity", env = "POD_NAME")]
    pub identity: Option<String>,
}

impl LeaseArgs {
    /// The election settings; the namespace defaults to the client's.
    pub fn settings(&self, client: &Client) -> Result<Settings, String> {
        let timing = Timing::new(
            Duration::from_secs(self.duration_seconds),
            Duration::from_secs(self.renew_seconds),
            Duration::from_secs(self.retry_seconds),
        )?;
        let pod = self
            .identity
            .clone()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "benchrun-operator".into());
        let random = std::collections::hash_map::RandomState::new().hash_one(Instant::now());
        Ok(Settings {
            name: self.name.clone(),
            namespace: self
                .namespace
                .clone()
                .unwrap_or_else(|| client.default_namespace().to_string()),
            identity: lease::identity(&pod, random),
            timing,
        })
    }
}

/// Where and how to elect the leader.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Name of the Lease.
    pub name: String,
    /// Namespace of the Lease.
    pub namespace: String,
    /// This process's identity (`holderIdentity` while it leads).
    pub identity: String,
    /// Lease duration, renew and retry periods.
    pub timing: Timing,
}

/// The leader could not keep its lease; it must stop reconciling.
#[derive(Debug, thiserror::Error)]
#[error("lost the leader lease {lease}: {reason}")]
pub struct LeaseLost {
    /// `namespace/name` of the Lease.
    pub lease: String,
    /// What happened.
    pub reason: String,
}

/// The outcome of one read-decide-write round.
#[derive(Debug, PartialEq, Eq)]
enum Attempt {
    Leading,
    Standby {
        holder: String,
    },
    /// Someone wrote the lease between our read and our write.
    Conflict,
}

/// One replica's side of the election.
pub struct Elector {
    api: Api<Lease>,
    settings: Settings,
    /// The lease spec as last read, and since when it looked so (local clock).
    observed: Option<(LeaseSpec, Instant)>,
}

impl Elector {
    /// An elector for `settings` (no request yet).
    pub fn new(client: Client, settings: Settings) -> Self {
        Self {
            api: Api::namespaced(client, &settings.namespace),
            settings,
            observed: None,
        }
    }

    /// This process's identity in the lease.
    pub fn identity(&self) -> &str {
        &self.settings.identity
    }

    fn lease_key(&self) -> String {
        format!("{}/{}", self.settings.namespace, self.settings.name)
    }

    async fn attempt(&mut self) -> Result<Attempt, kube::Error> {
        let me = self.settings.identity.clone();
        let timing = self.settings.timing;
        let Some(current) = self.api.get_opt(&self.settings.name).await? else {
            let spec = lease::claim(&me, &LeaseSpec::default(), Timestamp::now(), &timing);
            let new = Lease {
                metadata: ObjectMeta {
                    name: Some(self.settings.name.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(spec),
            };
            return match self.api.create(&PostParams::default(), &new).await {
                Ok(_) => Ok(Attempt::Leading),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(Attempt::Conflict),
                Err(e) => Err(e),
            };
        };
        let now = Instant::now();
        let spec = current.spec.clone().unwrap_or_default();
        let since = lease::observed_since(self.observed.as_ref(), &spec, now);
        self.observed = Some((spec.clone(), since));
        if let Verdict::Wait { holder } = lease::decide(&me, &spec, since, now, &timing) {
            return Ok(Attempt::Standby { holder });
        }
        let mut next = current;
        next.spec = Some(lease::claim(&me, &spec, Timestamp::now(), &timing));
        match self
            .api
            .replace(&self.settings.name, &PostParams::default(), &next)
            .await
        {
            Ok(_) => Ok(Attempt::Leading),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(Attempt::Conflict),
            Err(e) => Err(e),
        }
    }

    /// One round bounded by the retry period, so a hanging apiserver cannot stall the loops.
    async fn bounded_attempt(&mut self) -> Result<Attempt, String> {
        let limit = self.settings.timing.retry;
        match tokio::time::timeout(limit, self.attempt()).await {
            Ok(Ok(a)) => Ok(a),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer from the apiserver within {limit:?}")),
        }
    }

    /// Waits until this replica holds the lease, reporting `Standby` meanwhile.
    pub async fn acquire(&mut self, metrics: &Metrics) {
        let mut last_holder = None;
        loop {
            match self.bounded_attempt().await {
                Ok(Attempt::Leading) => {
                    tracing::info!(lease = %self.lease_key(), identity = %self.settings.identity, "acquired the lease: leading");
                    return;
                }
                Ok(Attempt::Standby { holder }) => {
                    metrics.set_role(Role::Standby);
                    if last_holder.as_ref() != Some(&holder) {
                        tracing::info!(lease = %self.lease_key(), %holder, "standing by");
                        last_holder = Some(holder);
                    }
                }
                Ok(Attempt::Conflict) => tracing::debug!("another replica wrote the lease first"),
                Err(e) => {
                    tracing::warn!(lease = %self.lease_key(), error = %e, "failed to read or take the lease")
                }
            }
            tokio::time::sleep(self.settings.timing.retry).await;
        }
    }

    /// Renews the lease every renew period while leading; returns when it is lost: taken by
    /// another replica, or not renewed within the renew deadline.
    pub async fn hold(&mut self) -> LeaseLost {
        let timing = self.settings.timing;
        let mut renewed = Instant::now();
        let mut wait = timing.renew;
        loop {
            tokio::time::sleep(wait).await;
            let started = Instant::now();
            match self.bounded_attempt().await {
                Ok(Attempt::Leading) => {
                    renewed = started;
                    wait = timing.renew;
                    continue;
                }
                Ok(Attempt::Standby { holder }) => {
                    return self.lost(format!("{holder} holds it now"));
                }
                Ok(Attempt::Conflict) => tracing::warn!("the lease changed while renewing it"),
                Err(e) => {
                    tracing::warn!(lease = %self.lease_key(), error = %e, "failed to renew the lease")
                }
            }
            if lease::lost(renewed, Instant::now(), &timing) {
                return self.lost(format!(
                    "not renewed for {:?} (deadline {:?})",
                    renewed.elapsed(),
                    timing.renew_deadline()
                ));
            }
            wait = timing.retry;
        }
    }

    fn lost(&self, reason: String) -> LeaseLost {
        LeaseLost {
            lease: self.lease_key(),
            reason,
        }
    }

    /// Gives the lease up (graceful shutdown), so a standby takes over at its next read
    /// instead of after the lease duration. Best effort: on failure the lease expires.
    pub async fn release(&mut self) {
        let me = self.settings.identity.clone();
        let api = self.api.clone();
        let name = self.settings.name.clone();
        let step = async move {
            let mut current = api.get(&name).await?;
            let Some(spec) = lease::release(&me, &current.spec.clone().unwrap_or_default()) else {
                return Ok::<bool, kube::Error>(false);
            };
            current.spec = Some(spec);
            api.replace(&name, &PostParams::default(), &current).await?;
            Ok(true)
        };
        match tokio::time::timeout(self.settings.timing.renew, step).await {
            Ok(Ok(true)) => tracing::info!(lease = %self.lease_key(), "released the lease"),
            Ok(Ok(false)) => {
                tracing::info!(lease = %self.lease_key(), "the lease was no longer ours")
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "failed to release the lease; it will expire"),
            Err(_) => tracing::warn!("releasing the lease timed out; it will expire"),
        }
    }
}

/// Runs `work` (the controller) only while this replica leads. Waits as a standby until it
/// holds the lease, or returns `Ok` when `shutdown` fires first. Then runs `work` until it
/// returns (graceful shutdown: the lease is released) or the lease is lost (`Err`: the caller
/// must exit, which stops `work`, so it does not reconcile beside the new leader).
pub async fn lead<W>(
    mut elector: Elector,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()>,
    work: impl FnOnce() -> W,
) -> Result<(), LeaseLost>
where
    W: Future<Output = ()>,
{
    tracing::info!(lease = %elector.lease_key(), identity = %elector.identity(), "electing a leader");
    tokio::select! {
        () = elector.acquire(&metrics) => {}
        () = shutdown => {
            tracing::info!("shutting down while standing by");
            return Ok(());
        }
    }
    metrics.set_role(Role::Leader);
    let outcome = tokio::select! {
        () = work() => Ok(()),
        lost = elector.hold() => Err(lost),
    };
    match outcome {
        Ok(()) => {
            elector.release().await;
            metrics.set_role(Role::Standby);
            Ok(())
        }
        Err(lost) => {
            metrics.set_role(Role::Starting);
            Err(lost)
        }
    }
}
