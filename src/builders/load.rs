//! The load Job of one measurement: `load_pods` indexed pods running `benchrun-load`.

use std::collections::BTreeMap;

use benchrun_api::units::format_duration;
use benchrun_api::validate::PodSecurity;
use benchrun_api::validate::{Limit, Warmup};
use benchrun_api::{Cell, ValidatedRun};
use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, EnvVarSource, ObjectFieldSelector, PodAffinityTerm,
    PodAntiAffinity, PodSecurityContext, PodSpec, PodTemplateSpec, SecurityContext,
    WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::security::{container_security_context, pod_security_context, LOAD_USER};
use super::{target::requirements, Owner};
use crate::kills::{self, RestartBaseline};
use crate::names::{self, role};

/// Name of the load container in every load pod.
pub const LOAD_CONTAINER: &str = "load";

/// Operator-level settings of the load pods.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadSettings {
    /// Image of the load generator.
    pub image: String,
    /// Its pull policy.
    pub pull_policy: String,
}

/// Environment variable from which `benchrun-load` reads the node it runs on.
pub const NODE_NAME_ENV: &str = "BENCHRUN_NODE_NAME";

/// The pod's node through the Downward API, so the load result itself says where the load
/// ran, even when its pod is gone before the operator sees it.
fn node_name_env() -> EnvVar {
    EnvVar {
        name: NODE_NAME_ENV.into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: "spec.nodeName".into(),
                ..ObjectFieldSelector::default()
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

/// Shares `total` over `pods`, never below one.
fn share(total: i64, pods: i32) -> i64 {
    (total / i64::from(pods.max(1))).max(1)
}

/// Header that lets the target count the requests of one measurement by itself.
pub(crate) fn cell_header(run: &str, cell: usize, repeat: usize) -> String {
    format!("X-Benchrun-Cell: {run}/{cell}/{repeat}")
}

/// The seed of a measurement's template values when the spec gives none: 64-bit FNV-1a
/// ([`crate::hash`]) of the run's name, cell and repeat, so the same run draws the same values
/// again, on any build.
pub(crate) fn measurement_seed(run: &str, cell: usize, repeat: usize) -> u64 {
    crate::hash::fnv1a(format!("{run}/{cell}/{repeat}").bytes())
}

/// Command-line arguments of one load pod. Connections, requests and rate are divided evenly
/// over the pods (validation guarantees at least one connection per pod).
pub(crate) fn load_args(
    run_name: &str,
    run: &ValidatedRun,
    cell: &Cell,
    repeat: usize,
    cluster_ip: &str,
) -> Vec<String> {
    let target = &run.targets[cell.target];
    let scenario = &run.scenarios[cell.scenario];
    let pods = run.load_pods;
    let mut args = vec![
        "-c".to_string(),
        share(i64::from(cell.connections), pods).to_string(),
    ];
    // The cell's own count (a matrix.requests value or an include entry's) when it has one.
    match (cell.requests, run.limit) {
        (Some(n), _) | (None, Limit::Requests(n)) => {
            args.extend(["-n".into(), share(n, pods).to_string()])
        }
        (None, Limit::Duration(d)) => args.extend(["-d".into(), format_duration(d)]),
    }
    if let Some(rate) = cell.rate {
        let per_pod = rate as f64 / f64::from(pods.max(1));
        args.extend(["--rate".into(), format!("{per_pod}")]);
    }
    match run.warmup {
        Warmup::None => {}
        Warmup::Duration(d) => args.extend(["--warmup".into(), format_duration(d)]),
        Warmup::Requests(n) => args.extend(["--warmup".into(), share(n, pods).to_string()]),
        Warmup::UntilSteady { min, max } => {
            if !min.is_zero() {
                args.extend(["--warmup".into(), format_duration(min)]);
            }
            args.extend(["--warmup-until-steady".into(), format_duration(max)]);
        }
    }
    args.extend(["--timeout".into(), format_duration(run.timeout)]);
    if !cell.keep_alive {
        args.push("--no-keepalive".into());
    }
    if let Some(r) = run.ramp_up {
        args.push(format!("--ramp-up={}", format_duration(r)));
    }
    if let Some(t) = run.think_time {
        args.push(format!("--think-time={}", format_duration(t)));
    }
    args.extend(["-H".into(), cell_header(run_name, cell.index, repeat)]);
    // `--flag=value`: a value that starts with '-' (a body "-1", a header "-X: 1") would
    // otherwise be read as a flag and fail the load pod.
    for (k, v) in &scenario.headers {
        args.push(format!("--header={k}: {v}"));
    }
    args.push(format!("--method={}", scenario.method));
    if let Some(body) = &scenario.body {
        args.push(format!("--body={body}"));
    }
    if !scenario.values.is_empty() {
        for (name, spec) in &scenario.values {
            let json = serde_json::to_string(spec).expect("a value spec serializes");
            args.push(format!("--value={name}={json}"));
        }
        let seed = run
            .seed
            .unwrap_or_else(|| measurement_seed(run_name, cell.index, repeat));
        // Every pod gets the same seed; JOB_COMPLETION_INDEX numbers them.
        args.push(format!("--seed={seed}"));
    }
    // Always: the Job's completion index is in every pod's environment.
    args.push(format!("--instances={pods}"));
    // One event-loop thread per CPU of the limit: more threads than cores only adds
    // context switches to the generator's own cost.
    let threads = ((run.load_resources.cpu_millis + 999) / 1000).max(1);
    args.extend(["-t".into(), threads.to_string()]);
    args.extend(["--output".into(), "json".into()]);
    args.push(format!(
        "http://{cluster_ip}:{}{}",
        target.port, scenario.path
    ));
    args
}

/// Load pods meet the `restricted` Pod Security Standard and run as the non-root user of the
/// project's images, whatever user a replacement load image declares.
fn load_pod_security() -> PodSecurityContext {
    PodSecurityContext {
        run_as_user: Some(LOAD_USER),
        run_as_group: Some(LOAD_USER),
        ..pod_security_context(PodSecurity::Restricted, None)
    }
}

/// The restricted container settings, plus a read-only root: the generator writes only to
/// stdout.
fn load_container_security() -> Option<SecurityContext> {
    container_security_context(PodSecurity::Restricted).map(|c| SecurityContext {
        read_only_root_filesystem: Some(true),
        ..c
    })
}

fn anti_affinity(
    weight: i32,
    labels: std::collections::BTreeMap<String, String>,
) -> WeightedPodAffinityTerm {
    WeightedPodAffinityTerm {
        weight,
        pod_affinity_term: PodAffinityTerm {
            label_selector: Some(LabelSelector {
                match_labels: Some(labels),
                ..LabelSelector::default()
            }),
            topology_key: "kubernetes.io/hostname".into(),
            ..PodAffinityTerm::default()
        },
    }
}

/// The Job of one measurement. It runs once (`backoffLimit: 0`): a retried measurement would
/// not be the same measurement. The target's container restarts at creation, in total and per
/// pod, are kept in annotations, so restarts and OOM kills during the measurement survive an
/// operator restart. Its deadline is the expected warm-up plus load time plus
/// `timeouts.loadGrace`, plus the wait until `start_at_ms` (at least [`crate::plan::START_LEAD`])
/// when its pods are told when to begin; that agreed start is kept in an annotation too.
/// `now_ms` is the time of creation. Load pods run on nodes matching `node_selector` (the
/// planner's [`crate::plan::placement`]) and prefer nodes without target pods and without
/// each other.
#[allow(clippy::too_many_arguments)] // what one measurement's Job is made of
pub fn build_load_job(
    owner: &Owner,
    run: &ValidatedRun,
    cell: &Cell,
    repeat: usize,
    cluster_ip: &str,
    restarts_baseline: &RestartBaseline,
    start_at_ms: Option<i64>,
    now_ms: i64,
    node_selector: &BTreeMap<String, String>,
    settings: &LoadSettings,
) -> Job {
    let name = names::job_name(&owner.name, cell.index, repeat);
    let labels = names::measurement_labels(&owner.name, role::LOAD, cell.index, repeat);
    let mut target_pods = names::common_labels(&owner.name, role::TARGET);
    target_pods.remove(names::label::MANAGED_BY);
    target_pods.remove(names::label::PART_OF);
    let res = &run.load_resources;
    let lead = start_at_ms.map_or(0, |t| {
        let wait = u64::try_from(t.saturating_sub(now_ms)).unwrap_or(0);
        crate::plan::START_LEAD.as_secs().max(wait.div_ceil(1000))
    });
    let deadline =
        (run.expected_load_time() + run.load_grace).as_secs().max(1) as i64 + lead as i64;
    let mut args = load_args(&owner.name, run, cell, repeat, cluster_ip);
    if let Some(t) = start_at_ms {
        // Before the URL, which stays last.
        args.insert(args.len() - 1, format!("--start-at={t}"));
    }
    let container = Container {
        name: LOAD_CONTAINER.into(),
        image: Some(settings.image.clone()),
        image_pull_policy: Some(settings.pull_policy.clone()),
        args: Some(args),
        env: Some(vec![node_name_env()]),
        resources: Some(requirements(
            &res.cpu,
            &res.memory,
            &res.cpu_request,
            &res.memory_request,
        )),
        security_context: load_container_security(),
        ..Container::default()
    };
    let mut metadata = owner.meta(name, labels.clone());
    let mut annotations = std::collections::BTreeMap::from([
        (
            names::RESTARTS_BASELINE.to_string(),
            restarts_baseline.total.to_string(),
        ),
        (
            names::RESTARTS_BASELINE_PODS.to_string(),
            kills::format_by_pod(&restarts_baseline.by_pod),
        ),
    ]);
    if let Some(t) = start_at_ms {
        annotations.insert(names::START_AT.to_string(), t.to_string());
    }
    metadata.annotations = Some(annotations);
    Job {
        metadata,
        spec: Some(JobSpec {
            backoff_limit: Some(0),
            completion_mode: Some("Indexed".into()),
            completions: Some(run.load_pods),
            parallelism: Some(run.load_pods),
            active_deadline_seconds: Some(deadline),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels.clone()),
                    annotations: Some(std::collections::BTreeMap::from([(
                        names::RUN_NAME.to_string(),
                        owner.name.clone(),
                    )])),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    restart_policy: Some("Never".into()),
                    automount_service_account_token: Some(false),
                    security_context: Some(load_pod_security()),
                    termination_grace_period_seconds: Some(5),
                    node_selector: (!node_selector.is_empty()).then(|| node_selector.clone()),
                    affinity: Some(Affinity {
                        pod_anti_affinity: Some(PodAntiAffinity {
                            preferred_during_scheduling_ignored_during_execution: Some(vec![
                                anti_affinity(100, target_pods),
                                anti_affinity(50, labels),
                            ]),
                            ..PodAntiAffinity::default()
                        }),
                        ..Affinity::default()
                    }),
                    ..PodSpec::default()
                }),
            },
            ..JobSpec::default()
        }),
        ..Job::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builders::fixtures::{owner, run as validated, DEMO};

    fn settings() -> LoadSettings {
        LoadSettings {
            image: "benchrun.local/benchrun-load:0.1.0".into(),
            pull_policy: "IfNotPresent".into(),
        }
    }

    /// The load Job of `run`'s cell `cell`, repeat `repeat`, against `ip`.
    fn job_of(run: &ValidatedRun, cell: usize, repeat: usize, ip: &str) -> Job {
        let baseline = RestartBaseline::default();
        build_load_job(
            &owner(),
            run,
            &run.cells[cell],
            repeat,
            ip,
            &baseline,
            None,
            0,
            &Default::default(),
            &settings(),
        )
    }

    fn args_of(job: &Job) -> Vec<String> {
        job.spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0]
            .args
            .clone()
            .unwrap()
    }

    fn value_after(args: &[String], flag: &str) -> Option<String> {
        args.iter()
            .position(|a| a == flag)
            .map(|i| args[i + 1].clone())
    }

    #[test]
    fn job_runs_once_indexed_over_the_load_pods_with_a_deadline() {
        let run = validated(DEMO);
        let job = job_of(&run, 1, 1, "10.0.0.7");
        assert_eq!(
            job.metadata.name.as_deref(),
            Some(names::job_name("demo", 1, 1).as_str())
        );
        let spec = job.spec.clone().unwrap();
        assert_eq!(spec.backoff_limit, Some(0));
        assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
        assert_eq!(spec.completions, Some(2));
        assert_eq!(spec.parallelism, Some(2));
        // 3 s warm-up + 10 s load + 2 min grace.
        assert_eq!(spec.active_deadline_seconds, Some(133));
        let pod = spec.template.spec.unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("Never"));
        let c = &pod.containers[0];
        assert_eq!(
            c.image.as_deref(),
            Some("benchrun.local/benchrun-load:0.1.0")
        );
        let r = c.resources.clone().unwrap();
        assert_eq!(r.limits.unwrap()["cpu"].0, "1500m");
    }

    #[test]
    fn load_pods_meet_the_restricted_standard_without_api_credentials() {
        let run = validated(DEMO);
        let pod = job_of(&run, 0, 0, "10.0.0.7")
            .spec
            .unwrap()
            .template
            .spec
            .unwrap();
        assert_eq!(pod.automount_service_account_token, Some(false));
        let sc = pod.security_context.unwrap();
        assert_eq!(sc.run_as_non_root, Some(true));
        assert_eq!(sc.run_as_user, Some(65532));
        assert_eq!(sc.run_as_group, Some(65532));
        assert_eq!(sc.seccomp_profile.unwrap().type_, "RuntimeDefault");
        let c = pod.containers[0].security_context.clone().unwrap();
        assert_eq!(c.allow_privilege_escalation, Some(false));
        assert_eq!(c.capabilities.unwrap().drop, Some(vec!["ALL".to_string()]));
        assert_eq!(c.read_only_root_filesystem, Some(true));
    }

    #[test]
    fn restart_baselines_are_kept_in_total_and_per_pod() {
        let run = validated(DEMO);
        let baseline = RestartBaseline {
            total: 3,
            by_pod: [("web-a".to_string(), 1), ("web-b".to_string(), 2)].into(),
        };
        let job = build_load_job(
            &owner(),
            &run,
            &run.cells[0],
            0,
            "10.96.0.10",
            &baseline,
            None,
            0,
            &Default::default(),
            &settings(),
        );
        let pod_notes = job
            .spec
            .as_ref()
            .unwrap()
            .template
            .metadata
            .clone()
            .unwrap();
        let notes = job.metadata.annotations.unwrap();
        assert_eq!(notes[names::RESTARTS_BASELINE], "3");
        assert_eq!(notes[names::RESTARTS_BASELINE_PODS], "web-a=1,web-b=2");
        // The pods name their run in full, for the watch that wakes it when they end.
        assert_eq!(
            pod_notes.annotations.unwrap()[names::RUN_NAME],
            owner().name
        );
    }

    #[test]
    fn load_pods_run_where_the_planner_places_them_and_still_avoid_targets() {
        let run = validated(DEMO);
        let on = BTreeMap::from([("benchrun.dev/role".to_string(), "load".to_string())]);
        let job = build_load_job(
            &owner(),
            &run,
            &run.cells[0],
            0,
            "10.96.0.10",
            &RestartBaseline::default(),
            None,
            0,
            &on,
            &settings(),
        );
        let pod = job.spec.unwrap().template.spec.unwrap();
        assert_eq!(pod.node_selector, Some(on));
        assert!(pod.affinity.unwrap().pod_anti_affinity.is_some());
        let anywhere = job_of(&run, 0, 0, "10.96.0.10");
        assert_eq!(
            anywhere.spec.unwrap().template.spec.unwrap().node_selector,
            None
        );
    }

    #[test]
    fn load_pods_learn_their_node_from_the_downward_api() {
        let job = job_of(&validated(DEMO), 0, 0, "10.96.0.10");
        let pod = job.spec.unwrap().template.spec.unwrap();
        let env = pod.containers[0].env.clone().unwrap();
        let node = env.iter().find(|e| e.name == NODE_NAME_ENV).unwrap();
        assert_eq!(node.value, None);
        let field = node.value_from.clone().unwrap().field_ref.unwrap();
        assert_eq!(field.field_path, "spec.nodeName");
    }

    #[test]
    fn connections_are_split_over_pods_and_threads_follow_the_cpu_limit() {
        let run = validated(DEMO);
        let job = job_of(&run, 1, 0, "10.0.0.7");
        let args = args_of(&job);
        assert_eq!(value_after(&args, "-c").as_deref(), Some("8"));
        assert_eq!(value_after(&args, "-d").as_deref(), Some("10s"));
        assert_eq!(value_after(&args, "--warmup").as_deref(), Some("3s"));
        assert_eq!(value_after(&args, "--timeout").as_deref(), Some("10s"));
        assert_eq!(value_after(&args, "-t").as_deref(), Some("2"));
        assert_eq!(value_after(&args, "--output").as_deref(), Some("json"));
        assert!(!args.contains(&"--no-keepalive".to_string()));
    }

    #[test]
    fn requests_go_to_the_cluster_ip_with_the_cell_header() {
        let run = validated(DEMO);
        let job = job_of(&run, 3, 1, "10.0.0.7");
        let args = args_of(&job);
        assert_eq!(args.last().unwrap(), "http://10.0.0.7:3000/hello");
        assert!(args.contains(&"X-Benchrun-Cell: demo/3/1".to_string()));
        assert!(args.contains(&"--header=Accept: application/json".to_string()));
        assert!(args.contains(&"--method=GET".to_string()));
    }

    #[test]
    fn request_counts_rates_and_keepalive_off_are_passed_per_pod() {
        let spec = DEMO.replace(
            "  duration: 10s\n",
            "  duration: 10s\n  rate: 1000\n  keepAlive: false\n",
        );
        let args = args_of(&job_of(&validated(&spec), 0, 0, "10.96.0.10"));
        assert_eq!(value_after(&args, "--rate").as_deref(), Some("500"));
        assert!(args.contains(&"--no-keepalive".to_string()));

        let spec = DEMO
            .replace("  duration: 10s\n", "  requests: 10000\n")
            .replace("  warmup: 3s\n", "  warmupRequests: 100\n");
        let args = args_of(&job_of(&validated(&spec), 0, 0, "10.96.0.10"));
        assert_eq!(value_after(&args, "-n").as_deref(), Some("5000"));
        assert_eq!(value_after(&args, "--warmup").as_deref(), Some("50"));
        assert!(value_after(&args, "-d").is_none());
    }

    #[test]
    fn ramp_up_and_think_time_are_passed_and_lengthen_the_deadline() {
        let spec = DEMO.replace(
            "  pods: 2\n",
            "  pods: 2\n  rampUp: 10s\n  thinkTime: 250ms\n",
        );
        let run = validated(&spec);
        let job = job_of(&run, 0, 0, "10.96.0.10");
        let args = args_of(&job);
        assert!(args.contains(&"--ramp-up=10s".to_string()), "{args:?}");
        assert!(args.contains(&"--think-time=250ms".to_string()), "{args:?}");
        let plain = job_of(&validated(DEMO), 0, 0, "10.96.0.10");
        let deadline = |j: &Job| j.spec.as_ref().unwrap().active_deadline_seconds.unwrap();
        assert_eq!(deadline(&job) - deadline(&plain), 10);
        // A request count with think time: 1000 requests over the fewest connections (4, two
        // pods of 2) pause 250 ms about 250 times each, beyond the 300 s allowance.
        let counted = validated(
            &spec
                .replace("  duration: 10s\n", "  requests: 4000\n")
                .replace("  thinkTime: 250ms\n", "  thinkTime: 1s\n"),
        );
        assert_eq!(counted.expected_load_time().as_secs(), 10 + 3 + 1001);
    }

    #[test]
    fn a_warmup_until_steady_passes_its_cap_and_least_and_its_cap_bounds_the_deadline() {
        let spec = DEMO.replace("  pods: 2\n", "").replace(
            "  warmup: 3s\n",
            "  warmup: 3s\n  warmupUntilSteady: {max: 2m}\n",
        );
        let run = validated(&spec);
        let args = args_of(&job_of(&run, 0, 0, "10.96.0.10"));
        assert_eq!(value_after(&args, "--warmup").as_deref(), Some("3s"));
        assert_eq!(
            value_after(&args, "--warmup-until-steady").as_deref(),
            Some("2m")
        );
        // The cap and the requests then in flight, then the window.
        assert_eq!(run.expected_load_time().as_secs(), 120 + 10 + 10);
        let spec = spec.replace("  warmup: 3s\n", "");
        let args = args_of(&job_of(&validated(&spec), 0, 0, "10.96.0.10"));
        assert_eq!(value_after(&args, "--warmup"), None);
        assert_eq!(
            value_after(&args, "--warmup-until-steady").as_deref(),
            Some("2m")
        );
    }

    #[test]
    fn the_seed_is_what_the_hand_written_hash_gave() {
        // Computed with the function `crate::hash` replaced: runs draw the same values.
        assert_eq!(measurement_seed("demo", 3, 1), 15_768_256_568_480_466_860);
    }

    #[test]
    fn template_values_go_to_every_pod_with_one_seed_and_the_pod_count() {
        let spec = DEMO.replace(
            "path: /hello, headers",
            "path: '/doc/{{id}}', values: {id: {random: {min: 1, max: 10000}}, \
             c: {pick: ['a,b', c]}}, body: '{{c}}', headers",
        );
        let run = validated(&spec);
        let args = args_of(&job_of(&run, 1, 0, "10.96.0.10"));
        assert!(args.contains(&r#"--value=id={"random":{"min":1,"max":10000}}"#.to_string()));
        assert!(args.contains(&r#"--value=c={"pick":["a,b","c"]}"#.to_string()));
        assert_eq!(args.last().unwrap(), "http://10.96.0.10:3000/doc/{{id}}");
        assert!(args.contains(&"--instances=2".to_string()), "{args:?}");
        // No seed in the spec: one per measurement, the same on every build.
        let seed = format!("--seed={}", measurement_seed("demo", 1, 0));
        assert!(args.contains(&seed), "{args:?}");
        assert_ne!(
            measurement_seed("demo", 1, 0),
            measurement_seed("demo", 1, 1)
        );
        let fixed = validated(&spec.replace("  pods: 2\n", "  pods: 2\n  seed: 7\n"));
        for (cell, repeat) in [(0, 0), (3, 1)] {
            let args = args_of(&job_of(&fixed, cell, repeat, "10.96.0.10"));
            assert!(args.contains(&"--seed=7".to_string()), "{args:?}");
        }
        // Without values, no seed or value; the instance count always (the load generator
        // reads the Job's completion index from the environment either way).
        let plain = args_of(&job_of(&validated(DEMO), 0, 0, "10.96.0.10"));
        assert!(!plain
            .iter()
            .any(|a| a.starts_with("--seed") || a.starts_with("--value")));
        assert!(plain.contains(&"--instances=2".to_string()), "{plain:?}");
    }

    #[test]
    fn several_load_pods_get_one_start_time_and_the_deadline_its_lead() {
        let run = validated(DEMO);
        let baseline = RestartBaseline::default();
        let job = |start| {
            build_load_job(
                &owner(),
                &run,
                &run.cells[0],
                0,
                "10.96.0.10",
                &baseline,
                start,
                1_700_000_000_000,
                &Default::default(),
                &settings(),
            )
        };
        let (plain, together) = (job(None), job(Some(1_700_000_005_000)));
        // Created ahead of its turn (the next measurement, while this one runs): the wait
        // counts towards the deadline, and the agreed start is kept for the planner.
        let ahead = job(Some(1_700_000_030_000));
        let args = args_of(&together);
        assert!(
            args.contains(&"--start-at=1700000005000".to_string()),
            "{args:?}"
        );
        assert!(
            args.last().unwrap().starts_with("http://"),
            "the URL stays last: {args:?}"
        );
        assert!(!args_of(&plain).iter().any(|a| a.starts_with("--start-at")));
        let deadline = |j: &Job| j.spec.as_ref().unwrap().active_deadline_seconds.unwrap();
        assert_eq!(deadline(&together) - deadline(&plain), 5);
        assert_eq!(deadline(&ahead) - deadline(&plain), 30);
        let start_of = |j: &Job| {
            j.metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(names::START_AT).cloned())
        };
        assert_eq!(start_of(&ahead).as_deref(), Some("1700000030000"));
        assert_eq!(start_of(&plain), None);
    }

    #[test]
    fn each_cell_runs_its_own_request_count_and_keep_alive() {
        // Cells: c=4 with n=1000 and keep-alive, c=16 with n=100000 and without.
        let spec = DEMO
            .replace("  duration: 10s\n", "  requests: 1000\n")
            .replace(
                "  connections: [4, 16]\n",
                "  connections: [4, 16]\n  include:\n    - {connections: 16, requests: 100000, keepAlive: false}\n",
            );
        let run = validated(&spec);
        let args = args_of(&job_of(&run, 0, 0, "10.96.0.10"));
        assert_eq!(value_after(&args, "-n").as_deref(), Some("500"));
        assert!(!args.contains(&"--no-keepalive".to_string()));
        let args = args_of(&job_of(&run, 1, 0, "10.96.0.10"));
        assert_eq!(value_after(&args, "-c").as_deref(), Some("8"));
        assert_eq!(value_after(&args, "-n").as_deref(), Some("50000"));
        assert!(args.contains(&"--no-keepalive".to_string()));
    }

    #[test]
    fn load_pods_prefer_nodes_without_targets_or_each_other() {
        let run = validated(DEMO);
        let job = job_of(&run, 0, 0, "10.96.0.10");
        let terms = job
            .spec
            .unwrap()
            .template
            .spec
            .unwrap()
            .affinity
            .unwrap()
            .pod_anti_affinity
            .unwrap()
            .preferred_during_scheduling_ignored_during_execution
            .unwrap();
        assert_eq!(terms.len(), 2);
        let targets = terms[0]
            .pod_affinity_term
            .label_selector
            .clone()
            .unwrap()
            .match_labels
            .unwrap();
        assert_eq!(targets[names::label::ROLE], "target");
        assert_eq!(targets[names::label::RUN], "demo");
        assert_eq!(
            terms[0].pod_affinity_term.topology_key,
            "kubernetes.io/hostname"
        );
        let peers = terms[1]
            .pod_affinity_term
            .label_selector
            .clone()
            .unwrap()
            .match_labels
            .unwrap();
        assert_eq!(peers[names::label::ROLE], "load");
        assert_eq!(peers[names::label::CELL], "0");
    }
}
