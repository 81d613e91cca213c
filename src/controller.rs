//! The kube-runtime wiring: watch BenchmarkRuns and their children, and reconcile each run as
//! observe ([`crate::observe`]) → plan ([`crate::plan`], pure) → apply (server-side apply,
//! forced, field manager [`names::MANAGER`], in the planner's order; a measuring-slot grant
//! is taken in memory, atomically, see [`Slots::take`]) → status (SSA on the status
//! subresource, only when it changed) → events.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use benchrun_api::{validate, BenchmarkRun, BenchmarkRunStatus, Reason, ValidatedRun};
use futures::{FutureExt as _, StreamExt};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod, Service};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::{Action as Requeue, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::builders::{self, Owner};
use crate::caches::Children;
pub use crate::context::{Config, Context};
use crate::error::{self, Class, Error, Result};
use crate::logtext;
use crate::names::{self, label, role, MANAGER};
use crate::observe::observe;
use crate::ownership;
use crate::plan::{self, Action, Decision, Note};
use crate::prometheus_clients::PrometheusClients;
use crate::slots::{self, RunView, Slots};
use crate::telemetry::Metrics;

/// Runs the controller until a termination signal.
pub async fn run(client: Client, config: Config, metrics: Arc<Metrics>) {
    let runs: Api<BenchmarkRun> = match &config.namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    fn children<K>(client: &Client, ns: &Option<String>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
    {
        match ns {
            Some(ns) => Api::namespaced(client.clone(), ns),
            None => Api::all(client.clone()),
        }
    }
    let owned = watcher::Config::default().labels(names::MANAGED_SELECTOR);
    let ns = &config.namespace;
    // The children's watches fill the caches observation reads and wake the runs they belong
    // to; nodes are cached by a cluster-wide operator only (a namespaced one may not list them),
    // and only when it may read them, found once here: a reconcile never waits for a node
    // cache that cannot come.
    let nodes = match ns {
        None => crate::observe::nodes::probe(&client).await.watch(),
        Some(_) => false,
    };
    let (caches, writers) = Children::new(nodes);
    fn cached<K>(
        writer: reflector::store::Writer<K>,
        api: Api<K>,
        config: watcher::Config,
    ) -> impl futures::Stream<Item = Result<K, watcher::Error>> + Send + 'static
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
    {
        let objects = watcher(api, config)
            .default_backoff()
            .modify(crate::caches::strip::<K>);
        reflector::reflector(writer, objects).touched_objects()
    }
    let deployments = cached(writers.deployments, children(&client, ns), owned.clone());
    let services = cached(writers.services, children(&client, ns), owned.clone());
    let jobs = cached(writers.jobs, children(&client, ns), owned.clone());
    let configmaps = cached(writers.configmaps, children(&client, ns), owned.clone());
    let pods = cached(writers.pods, children::<Pod>(&client, ns), owned);
    if let Some(w) = writers.nodes {
        let nodes = cached(
            w,
            Api::<Node>::all(client.clone()),
            watcher::Config::default(),
        );
        tokio::spawn(nodes.for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "nodes watch failed; retrying with backoff");
            }
        }));
    }
    // The runs cache too keeps no field owners (a run's status is rewritten often).
    let (store, writer) = reflector::store();
    // As `Controller::new` watches them (no backoff; applied objects), the fields stripped.
    let runs_stream = watcher(runs, watcher::Config::default())
        .modify(crate::caches::strip::<BenchmarkRun>)
        .reflect(writer)
        .applied_objects();
    let controller = Controller::for_stream(runs_stream, store.clone());
    let reporter = Reporter {
        controller: MANAGER.into(),
        instance: std::env::var("POD_NAME").ok(),
    };
    let ctx = Arc::new(Context {
        client: client.clone(),
        slots: Slots::new(config.max_measuring_runs),
        recorder: Recorder::new(client.clone(), reporter),
        store: store.clone(),
        children: caches,
        metrics: metrics.clone(),
        prometheus: PrometheusClients::new(),
        failures: Mutex::default(),
        config: config.clone(),
    });
    tokio::spawn(async move {
        // The store's readiness future wakes only its latest poller (the controller's), so poll
        // it again every second instead of waiting once.
        loop {
            match tokio::time::timeout(Duration::from_secs(1), store.wait_until_ready()).await {
                Ok(Ok(())) => {
                    metrics.set_ready();
                    // Only now: a cache still listing would make the gauges of the runs not
                    // yet listed vanish for a scrape.
                    metrics.export_runs(store);
                    tracing::info!("cache synced; ready");
                    return;
                }
                Ok(Err(_)) => return,
                Err(_) => continue,
            }
        }
    });
    let (wake, woken) = futures::channel::mpsc::unbounded();
    tokio::spawn(wake_waiting_runs(ctx.clone(), wake));
    // BenchmarkSchedules read their runs from this controller's cache.
    let schedules = crate::schedules::run(client.clone(), ns.clone(), ctx.store.clone());
    let runs = controller
        .reconcile_on(woken)
        .owns_stream(deployments)
        .owns_stream(services)
        .owns_stream(jobs)
        .owns_stream(configmaps)
        // A load pod that ended wakes its run at once: the Job controller marks the Job
        // complete up to a second later (it batches its syncs).
        .watches_stream(pods, |pod: Pod| {
            if pod.labels().get(label::ROLE).map(String::as_str) != Some(role::LOAD) {
                return None;
            }
            let run = pod.annotations().get(names::RUN_NAME)?.clone();
            Some(ObjectRef::new(&run).within(&pod.namespace()?))
        })
        .shutdown_on_signal()
        .run(reconcile, error_policy, ctx)
        .for_each(|res| async move {
            match res {
                Ok((obj, _)) => tracing::debug!(run = %obj, "reconciled"),
                Err(e) => {
                    let error = e.to_string();
                    let error = logtext::cap(&error, logtext::LOG_MAX);
                    tracing::warn!(%error, "reconcile failed")
                }
            }
        });
    futures::future::join(runs, schedules).await;
}

/// How often the runs cache is checked for a slot that was let go.
const WAKE_CHECK: Duration = Duration::from_secs(1);

/// Wakes the runs next in line for a measuring slot as soon as one is free (its holder
/// finished, was deleted, or its grant lapsed; or the run next in line went away), from the
/// runs cache alone: only the runs whose turn came ([`slots::to_wake`]), so a hand-over costs
/// a reconcile per freed slot, not one per queued run. Queued runs are not polled
/// ([`crate::plan::QUEUED_RECHECK`] is a safety net), and this reads nothing from the apiserver.
async fn wake_waiting_runs(
    ctx: Arc<Context>,
    wake: futures::channel::mpsc::UnboundedSender<ObjectRef<BenchmarkRun>>,
) {
    let mut before = std::collections::BTreeSet::new();
    loop {
        tokio::time::sleep(WAKE_CHECK).await;
        if ctx.store.wait_until_ready().now_or_never().is_none() {
            continue;
        }
        let all: Vec<RunView> = ctx.store.state().iter().map(|r| RunView::of(r)).collect();
        let holders = slots::holders(&all, &ctx.slots.granted());
        let now = slots::next_in_line(ctx.slots.max(), &all, &holders);
        for key in slots::to_wake(&before, &now) {
            let Some((ns, name)) = key.split_once('/') else {
                continue;
            };
            tracing::debug!(run = %key, "a measuring slot is free for it; waking");
            if wake
                .unbounded_send(ObjectRef::new(name).within(ns))
                .is_err()
            {
                return;
            }
        }
        before = now;
    }
}

async fn reconcile(run: Arc<BenchmarkRun>, ctx: Arc<Context>) -> Result<Requeue> {
    let started = Instant::now();
    let result = reconcile_inner(&run, &ctx).await;
    ctx.metrics.reconciled(started.elapsed());
    let key = slots::key(&run);
    match &result {
        Ok(_) => {
            lock(&ctx.failures).remove(&key);
        }
        Err(e) => {
            // error_policy counts this failure after us.
            let n = lock(&ctx.failures).get(&key).copied().unwrap_or(0) + 1;
            if error::announce(n) {
                let note = Note {
                    warning: true,
                    reason: Reason::RetryingAfterError,
                    message: format!("{e}; retrying with backoff (failure {n} in a row)"),
                };
                publish(&ctx, &run, std::slice::from_ref(&note)).await;
            }
        }
    }
    result
}

async fn reconcile_inner(run: &BenchmarkRun, ctx: &Context) -> Result<Requeue> {
    if run.metadata.deletion_timestamp.is_some() {
        return Ok(Requeue::await_change());
    }
    let owner = Owner::of(run).ok_or(Error::MissingField("namespace or uid"))?;
    let status = run.status.clone().unwrap_or_default();
    let now = Timestamp::now();
    let generation = run.metadata.generation;
    // The allow-lists are checked before anything is observed, so a refused run makes the
    // operator send no request to the Prometheus it names. A finished run is past them.
    let refused = match plan::is_finished(&status) {
        true => Ok(()),
        false => ctx.config.policy.check(&run.spec),
    };
    let v = match (validate(&run.spec), refused) {
        (Err(errors), _) => {
            let decision = plan::plan_invalid(&status, &errors, generation, now);
            return conclude(ctx, run, &owner, &status, decision).await;
        }
        (Ok(_), Err(errors)) => {
            let decision = plan::plan_not_allowed(&status, &errors, generation, now);
            return conclude(ctx, run, &owner, &status, decision).await;
        }
        (Ok(v), Ok(())) => v,
    };
    // With `spec.search`, the cells the search has made so far and the one it measures next.
    let v = crate::search::extend(&v, &status).into_owned();
    let slot = crate::observe::slot(ctx, run, &status).await;
    let reads = plan::reads(&v, &owner.name, &status, &slot, now);
    let mut observed = observe(ctx, &owner, generation, slot, &reads).await?;
    observed.retrying = lock(&ctx.failures).contains_key(&slots::key(run));
    let mut decision = plan::plan(&v, &status, &observed, now);
    match apply(ctx, &owner, &v, &decision.actions).await? {
        Applied::All => {}
        Applied::RunDeleted => return Ok(Requeue::await_change()),
        Applied::Refused(refusal, _) => {
            let message = logtext::cap(&refusal.message, logtext::LOG_MAX);
            tracing::warn!(run = %owner.name, child = %refusal.child, %message, "apply refused");
            decision = plan::plan_refused(&v, &status, &observed, &refusal, now);
            match apply(ctx, &owner, &v, &decision.actions).await? {
                Applied::All => {}
                Applied::RunDeleted => return Ok(Requeue::await_change()),
                // The follow-up only deletes, so this does not happen; retry if it does.
                Applied::Refused(_, e) => return Err(*e),
            }
        }
    }
    conclude(ctx, run, &owner, &status, decision).await
}

/// Patches the status when it changed, counts new results and records the decision's events.
async fn conclude(
    ctx: &Context,
    run: &BenchmarkRun,
    owner: &Owner,
    status: &BenchmarkRunStatus,
    decision: Decision,
) -> Result<Requeue> {
    if decision.status != *status {
        patch_status(ctx, owner, &decision).await?;
        for r in decision.status.results.iter().skip(status.results.len()) {
            ctx.metrics.measured(r.outcome.as_str());
        }
    }
    publish(ctx, run, &decision.notes).await;
    Ok(match decision.requeue {
        Some(d) => Requeue::requeue(d),
        None => Requeue::await_change(),
    })
}

/// Transient errors retry with a per-run exponential backoff (5 s doubling, at most 5 min).
/// Refused applies never get here: the reconcile fails their cell instead (see [`error`]).
fn error_policy(run: Arc<BenchmarkRun>, error: &Error, ctx: Arc<Context>) -> Requeue {
    ctx.metrics.failed(error.metric_label());
    let mut failures = lock(&ctx.failures);
    let n = failures.entry(slots::key(&run)).or_insert(0);
    *n = n.saturating_add(1);
    let delay = Duration::from_secs((5u64 << (*n - 1).min(6)).min(300));
    let error = error.to_string();
    let error = logtext::cap(&error, logtext::LOG_MAX);
    tracing::warn!(run = %slots::key(&run), %error, retry_in = ?delay, "reconcile failed");
    Requeue::requeue(delay)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Server-side apply of `obj`; with `uid`, only to the object of that uid (the apiserver
/// refuses the apply if the name now holds another object, or none).
async fn ssa<K>(api: &Api<K>, obj: &K, uid: Option<String>, kind: &'static str) -> Result<()>
where
    K: Resource + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = obj.meta().name.clone().unwrap_or_default();
    let mut obj = obj.clone();
    obj.meta_mut().uid = uid;
    api.patch(
        &name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&obj),
    )
    .await
    .map_err(|source| Error::ApplyFailed { kind, name, source })?;
    Ok(())
}

/// Who holds the name of child `name` ([`ownership::claim`]): the watch cache answers when it
/// holds the run's own child; otherwise (a name not yet written, or held by an object the
/// cache does not hold or that is not the run's) the apiserver is asked.
async fn claim<K>(
    api: &Api<K>,
    cached: &Store<K>,
    owner: &Owner,
    name: &str,
    kind: &'static str,
) -> Result<ownership::Claim>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + 'static,
{
    let uid = &owner.reference.uid;
    if let Some(o) = crate::caches::get(cached, &owner.namespace, name) {
        if ownership::is_ours(o.meta(), uid) {
            return Ok(ownership::Claim::Ours(o.meta().uid.clone()));
        }
    }
    let live = api
        .get_opt(name)
        .await
        .map_err(|source| Error::ObserveFailed {
            what: format!("{kind} {name}"),
            source,
        })?;
    Ok(ownership::claim(live.as_ref().map(|o| o.meta()), uid))
}

/// Whether a child the run already owns is applied again ([`write`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Again {
    /// Applied again with the run's own uid as the precondition (Deployments, Services,
    /// ConfigMaps: their desired state may change).
    Apply,
    /// Left as it is (Jobs): a Job's pod template is immutable and carries what was decided
    /// when it was made (the agreed start time, the restart counts), so a reconcile that did
    /// not see it (a lagging cache, a status write that lost a race) must not apply it again
    /// with new values, which the apiserver would refuse (422) and the planner would take as a
    /// failed measurement.
    Never,
}

/// Writes child `obj` (server-side apply, forced) when its name is free; when the run's own
/// child holds it (in the cache, or at the apiserver when the cache does not hold it yet),
/// applies it again or leaves it, as `again` says; when another object holds the name, writes
/// nothing and fails with [`Error::NotOwned`].
async fn write<K>(
    api: &Api<K>,
    cached: &Store<K>,
    owner: &Owner,
    obj: &K,
    kind: &'static str,
    again: Again,
) -> Result<()>
where
    K: Resource<DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + std::fmt::Debug
        + 'static,
{
    let name = obj.meta().name.clone().unwrap_or_default();
    match claim(api, cached, owner, &name, kind).await? {
        ownership::Claim::Free => ssa(api, obj, None, kind).await,
        ownership::Claim::Ours(uid) if again == Again::Apply => ssa(api, obj, uid, kind).await,
        ownership::Claim::Ours(_) => {
            tracing::debug!(run = %owner.name, %kind, %name, "exists already; not applied again");
            Ok(())
        }
        ownership::Claim::Foreign(who) => Err(Error::NotOwned {
            kind,
            name,
            owner: who,
        }),
    }
}

/// Deletes object `o` (which must be the run's own, see [`ownership::is_ours`]) only if its
/// name still holds it: its uid is the apiserver's precondition.
async fn delete_own<K>(api: &Api<K>, o: &K, dp: &DeleteParams, kind: &'static str) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut dp = dp.clone();
    dp.preconditions = Some(kube::api::Preconditions {
        uid: o.meta().uid.clone(),
        resource_version: None,
    });
    delete(api, &o.name_any(), &dp, kind).await
}

async fn delete<K>(api: &Api<K>, name: &str, dp: &DeleteParams, kind: &'static str) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, dp).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(source) => Err(Error::DeleteFailed {
            kind,
            name: name.into(),
            source,
        }),
    }
}

/// How far [`apply`] got.
enum Applied {
    /// Every action was carried out.
    All,
    /// The run itself was deleted.
    RunDeleted,
    /// The apiserver refused a child (the remaining actions were not attempted).
    Refused(plan::Refusal, Box<Error>),
}

/// Carries out the planner's actions in order. A refused apply of a child stops there and is
/// returned for the planner to decide on; any other failure is an error (retried).
async fn apply(
    ctx: &Context,
    owner: &Owner,
    v: &ValidatedRun,
    actions: &[Action],
) -> Result<Applied> {
    for action in actions {
        tracing::info!(run = %owner.name, action = %action.describe(&owner.name), "apply");
        match apply_one(ctx, owner, v, action).await {
            Ok(true) => return Ok(Applied::RunDeleted),
            Ok(false) => {}
            Err(e) => {
                return match refusal(action, &e) {
                    Some(r) => Ok(Applied::Refused(r, Box::new(e))),
                    None => Err(e),
                }
            }
        }
    }
    Ok(Applied::All)
}

/// The refusal in `e`, when it is an apply the apiserver refused (see [`error::classify`]) or
/// one the operator refused itself, the child's name being held by another object.
fn refusal(action: &Action, e: &Error) -> Option<plan::Refusal> {
    if let Error::NotOwned { kind, name, .. } = e {
        return Some(plan::Refusal {
            action: action.clone(),
            child: format!("{kind} {name}"),
            code: 409,
            message: e.to_string(),
            foreign: true,
        });
    }
    let Error::ApplyFailed { kind, name, source } = e else {
        return None;
    };
    match error::classify(source) {
        Class::Refused(code, message) => Some(plan::Refusal {
            action: action.clone(),
            child: format!("{kind} {name}"),
            code,
            message,
            foreign: false,
        }),
        Class::Transient => None,
    }
}

/// Carries out one action. Returns true when the run itself was deleted.
async fn apply_one(
    ctx: &Context,
    owner: &Owner,
    v: &ValidatedRun,
    action: &Action,
) -> Result<bool> {
    let ns = &owner.namespace;
    let c = &ctx.client;
    let k = &ctx.children;
    match action {
        Action::ApplyTarget {
            cell,
            round,
            services,
            node_selector,
        } => {
            let cell = &v.cells[*cell];
            let pull = &ctx.config.image_pull_policy;
            let d = builders::build_target_deployment(
                owner,
                v,
                cell,
                *round,
                services,
                node_selector,
                pull,
            );
            let deployments = Api::<Deployment>::namespaced(c.clone(), ns);
            write(
                &deployments,
                &k.deployments,
                owner,
                &d,
                "Deployment",
                Again::Apply,
            )
            .await?;
            let s = builders::build_target_service(owner, v, cell, *round);
            let services = Api::<Service>::namespaced(c.clone(), ns);
            write(&services, &k.services, owner, &s, "Service", Again::Apply).await?;
        }
        Action::DeleteTargets { except } => delete_targets(ctx, owner, except.as_ref()).await?,
        Action::ApplyServices { node_selector } => {
            let pull = &ctx.config.image_pull_policy;
            let deployments = Api::<Deployment>::namespaced(c.clone(), ns);
            let services = Api::<Service>::namespaced(c.clone(), ns);
            for i in 0..v.services.len() {
                let d = builders::build_service_deployment(owner, v, i, node_selector, pull);
                write(
                    &deployments,
                    &k.deployments,
                    owner,
                    &d,
                    "Deployment",
                    Again::Apply,
                )
                .await?;
                let s = builders::build_service_service(owner, v, i);
                write(&services, &k.services, owner, &s, "Service", Again::Apply).await?;
            }
        }
        Action::CreateSeedJob { service, addresses } => {
            let pull = &ctx.config.image_pull_policy;
            let job = builders::build_seed_job(owner, v, *service, addresses, pull);
            write(
                &Api::namespaced(c.clone(), ns),
                &k.jobs,
                owner,
                &job,
                "Job",
                Again::Never,
            )
            .await?;
        }
        Action::DeleteServices => delete_services(ctx, owner).await?,
        Action::CreateJob {
            cell,
            repeat,
            cluster_ip,
            restarts_baseline,
            start_at_ms,
            node_selector,
        } => {
            let job = builders::build_load_job(
                owner,
                v,
                &v.cells[*cell],
                *repeat,
                cluster_ip,
                restarts_baseline,
                *start_at_ms,
                jiff::Timestamp::now().as_millisecond(),
                node_selector,
                &ctx.config.load,
            );
            write(
                &Api::namespaced(c.clone(), ns),
                &k.jobs,
                owner,
                &job,
                "Job",
                Again::Never,
            )
            .await?;
        }
        Action::DeleteJobs(jobs) => {
            let api = Api::<Job>::namespaced(c.clone(), ns);
            for j in jobs {
                // Only the run's own Job of that name, as the cache holds it.
                match crate::caches::get(&k.jobs, ns, j) {
                    Some(o) if ownership::is_ours(o.meta(), &owner.reference.uid) => {
                        delete_own(&api, &*o, &DeleteParams::background(), "Job").await?
                    }
                    _ => {
                        tracing::debug!(run = %owner.name, job = %j, "not this run's Job; not deleted")
                    }
                }
            }
        }
        Action::StoreDetail { cell, repeat, json } => {
            let cm = builders::build_detail_configmap(owner, *cell, *repeat, json.clone());
            let api = Api::<ConfigMap>::namespaced(c.clone(), ns);
            write(&api, &k.configmaps, owner, &cm, "ConfigMap", Again::Apply).await?;
        }
        Action::TakeSlot => take_slot(ctx, owner),
        Action::DeleteRun => {
            let api = Api::<BenchmarkRun>::namespaced(c.clone(), ns);
            delete(
                &api,
                &owner.name,
                &DeleteParams::background(),
                "BenchmarkRun",
            )
            .await?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Grants the run a measuring slot if the slot decision, made again under the queue's lock
/// against every run as the cache has it now, still says so (see [`Slots::take`]). A refused
/// take does nothing: the next reconcile observes the run waiting.
fn take_slot(ctx: &Context, owner: &Owner) {
    let me = slots::key_of(&owner.namespace, &owner.name);
    let runs: Vec<RunView> = ctx.store.state().iter().map(|r| RunView::of(r)).collect();
    if !ctx.slots.take(&me, &runs) {
        tracing::info!(run = %me, "the measuring slot went to another run meanwhile; waiting");
    }
}

/// Deletes this run's target Deployments and Services, except configuration `except`.
async fn delete_targets(ctx: &Context, owner: &Owner, except: Option<&String>) -> Result<()> {
    let (c, k, ns) = (&ctx.client, &ctx.children, &owner.namespace);
    let sel = names::common_labels(&owner.name, role::TARGET);
    let keep = |labels: &std::collections::BTreeMap<String, String>| {
        except.is_some() && labels.get(label::CONFIG) == except
    };
    // Foreground: the Deployment stays until its pods are gone, so the next configuration is
    // not measured beside them.
    let deployments = Api::<Deployment>::namespaced(c.clone(), ns);
    let fg = DeleteParams::foreground();
    delete_unkept(
        &deployments,
        &k.deployments,
        owner,
        &sel,
        keep,
        &fg,
        "Deployment",
    )
    .await?;
    let services = Api::<Service>::namespaced(c.clone(), ns);
    let dp = DeleteParams::default();
    delete_unkept(&services, &k.services, owner, &sel, keep, &dp, "Service").await
}

/// Deletes this run's backing services (Deployments and Services) and seeding Jobs.
async fn delete_services(ctx: &Context, owner: &Owner) -> Result<()> {
    let (c, k, ns) = (&ctx.client, &ctx.children, &owner.namespace);
    let sel = names::common_labels(&owner.name, role::SERVICE);
    let seeds = names::common_labels(&owner.name, role::SEED);
    let all = |_: &std::collections::BTreeMap<String, String>| false;
    let bg = DeleteParams::background();
    let jobs = Api::<Job>::namespaced(c.clone(), ns);
    delete_unkept(&jobs, &k.jobs, owner, &seeds, all, &bg, "Job").await?;
    let deployments = Api::<Deployment>::namespaced(c.clone(), ns);
    delete_unkept(
        &deployments,
        &k.deployments,
        owner,
        &sel,
        all,
        &bg,
        "Deployment",
    )
    .await?;
    let services = Api::<Service>::namespaced(c.clone(), ns);
    let dp = DeleteParams::default();
    delete_unkept(&services, &k.services, owner, &sel, all, &dp, "Service").await
}

/// Deletes the run's own objects (its controller owner reference, [`ownership::is_ours`])
/// carrying the labels `selector` (as the watch cache `cached` holds them) whose labels `keep`
/// does not keep, each only if its name still holds it (uid precondition). Objects that merely
/// carry the labels are left alone.
async fn delete_unkept<K>(
    api: &Api<K>,
    cached: &Store<K>,
    owner: &Owner,
    selector: &std::collections::BTreeMap<String, String>,
    keep: impl Fn(&std::collections::BTreeMap<String, String>) -> bool,
    dp: &DeleteParams,
    kind: &'static str,
) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug + 'static,
{
    for o in crate::caches::owned(cached, &owner.namespace, selector, &owner.reference.uid) {
        if !keep(o.labels()) {
            delete_own(api, &*o, dp, kind).await?;
        }
    }
    Ok(())
}

async fn patch_status(ctx: &Context, owner: &Owner, d: &Decision) -> Result<()> {
    let api = Api::<BenchmarkRun>::namespaced(ctx.client.clone(), &owner.namespace);
    let body = serde_json::json!({
        "apiVersion": "benchrun.dev/v1alpha1",
        "kind": "BenchmarkRun",
        "status": d.status,
    });
    api.patch_status(
        &owner.name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map_err(|source| Error::StatusFailed {
        name: owner.name.clone(),
        source,
    })?;
    Ok(())
}

/// Events are best effort: a failure to record one is logged, not retried.
async fn publish(ctx: &Context, run: &BenchmarkRun, notes: &[Note]) {
    let reference = run.object_ref(&());
    for n in notes {
        let ev = Event {
            type_: if n.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: n.reason.into(),
            note: Some(logtext::cap(&n.message, logtext::EVENT_MAX).into_owned()),
            action: n.reason.into(),
            secondary: None,
        };
        if let Err(e) = ctx.recorder.publish(&ev, &reference).await {
            let error = e.to_string();
            let error = logtext::cap(&error, logtext::LOG_MAX);
            tracing::warn!(%error, reason = n.reason.as_str(), "failed to publish an event");
        }
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
