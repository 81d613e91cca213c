//! `spec.services`: the backing services, parsed into what their Deployments, Services and
//! seeding Jobs are built from.

use std::time::Duration;

use k8s_openapi::api::core::v1::EnvVar;

use super::field::{check_env, check_image, check_name, err, unique, FieldError};
use super::resources::{resources, ResourcePlan};
use super::targets::{pod_security, PodSecurity};
use crate::services::{BackingService, SeedStep, DEFAULT_SEED_TIMEOUT, MAX_SERVICES};

/// Longest `seed.timeout`.
const MAX_SEED_TIMEOUT: Duration = Duration::from_secs(3600);

/// A backing service, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct ServicePlan {
    /// Name, a DNS label unique in the run; it names the address variables.
    pub name: String,
    /// Container image.
    pub image: String,
    /// TCP port the container serves on.
    pub port: i32,
    /// Entrypoint override (empty: the image's).
    pub command: Vec<String>,
    /// Arguments to the entrypoint.
    pub args: Vec<String>,
    /// The container's own environment variables.
    pub env: Vec<EnvVar>,
    /// HTTP path of the readiness probe (`None`: a TCP connect to `port`).
    pub readiness_path: Option<String>,
    /// Image pull policy of the service and its seeding Job (`None`: the operator's setting).
    pub image_pull_policy: Option<String>,
    /// User id the container runs as, overriding the image's.
    pub run_as_user: Option<i64>,
    /// Resources of its pod.
    pub resources: ResourcePlan,
    /// Pod Security Standard of its pod and seeding Job.
    pub pod_security: PodSecurity,
    /// Deadline of its seeding Job (when it has one).
    pub seed_timeout: Duration,
    /// Its seeding step, if any.
    pub seed: Option<SeedPlan>,
}

/// The seeding step of a backing service, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedPlan {
    /// Image of the seeding container (the service's own unless `seed.image` is set).
    pub image: String,
    /// Entrypoint override (empty: the image's).
    pub command: Vec<String>,
    /// Arguments to the entrypoint.
    pub args: Vec<String>,
    /// The container's own environment variables (after the address variables).
    pub env: Vec<EnvVar>,
}

/// Checks `spec.services` and parses each entry.
pub(crate) fn parse(services: &[BackingService], e: &mut Vec<FieldError>) -> Vec<ServicePlan> {
    if services.len() > MAX_SERVICES {
        e.push(err(
            "spec.services",
            format!(
                "{} services: at most {MAX_SERVICES} may be declared; run the others outside the run and pass their address in targets[].env",
                services.len()
            ),
        ));
    }
    unique("spec.services", services.iter().map(|s| s.name.as_str()), e);
    services
        .iter()
        .enumerate()
        .map(|(i, s)| service(i, s, e))
        .collect()
}

/// Service `i`: its name, image, port, resources, security and seeding step.
fn service(i: usize, s: &BackingService, e: &mut Vec<FieldError>) -> ServicePlan {
    let field = format!("spec.services[{i}]");
    check_name(format!("{field}.name"), &s.name, e);
    check_image(format!("{field}.image"), &s.image, e);
    check_env(&format!("{field}.env"), &s.env, e);
    if let Some(seed) = &s.seed {
        check_env(&format!("{field}.seed.env"), &seed.env, e);
    }
    if !(1..=65535).contains(&s.port) {
        e.push(err(
            format!("{field}.port"),
            format!("{} is not a TCP port: use 1 to 65535", s.port),
        ));
    }
    let resources = resources(&format!("{field}.resources"), &s.resources, e);
    let pod_security = pod_security(&field, s.pod_security.as_deref(), s.run_as_user, e);
    let seed_timeout = seed_timeout(&field, s.seed.as_ref(), e);
    if let Some(seed) = &s.seed {
        if seed.image.is_none() && seed.command.is_empty() && seed.args.is_empty() {
            e.push(err(
                format!("{field}.seed"),
                "set command or args (what to run), and image unless the service's own image has the tool",
            ));
        }
    }
    ServicePlan {
        name: s.name.clone(),
        image: s.image.clone(),
        port: s.port,
        command: s.command.clone(),
        args: s.args.clone(),
        env: s.env.clone(),
        readiness_path: s.readiness_path.clone(),
        image_pull_policy: s.image_pull_policy.clone(),
        run_as_user: s.run_as_user,
        resources,
        pod_security,
        seed_timeout,
        seed: s.seed.as_ref().map(|seed| SeedPlan {
            image: seed.image.clone().unwrap_or_else(|| s.image.clone()),
            command: seed.command.clone(),
            args: seed.args.clone(),
            env: seed.env.clone(),
        }),
    }
}

/// `seed.timeout` between 1s and 1h ([`DEFAULT_SEED_TIMEOUT`] when absent).
fn seed_timeout(field: &str, seed: Option<&SeedStep>, e: &mut Vec<FieldError>) -> Duration {
    let Some(text) = seed.and_then(|s| s.timeout.as_deref()) else {
        return DEFAULT_SEED_TIMEOUT;
    };
    match crate::units::duration(text) {
        Ok(d) if (Duration::from_secs(1)..=MAX_SEED_TIMEOUT).contains(&d) => d,
        Ok(_) => {
            e.push(err(
                format!("{field}.seed.timeout"),
                format!("{text:?} must be between 1s and 1h, e.g. \"5m\""),
            ));
            DEFAULT_SEED_TIMEOUT
        }
        Err(x) => {
            e.push(err(format!("{field}.seed.timeout"), x));
            DEFAULT_SEED_TIMEOUT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::default_service_resources;

    fn service(name: &str) -> BackingService {
        serde_yaml::from_str(&format!("{{name: {name}, image: 'store:1'}}")).unwrap()
    }

    #[test]
    fn defaults_are_port_8080_250m_and_256mi() {
        let s = service("db");
        assert_eq!(s.port, 8080);
        assert_eq!(s.resources, default_service_resources());
        let mut e = Vec::new();
        let plans = parse(&[s], &mut e);
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(plans[0].resources.cpu_millis, 250);
        assert_eq!(plans[0].seed_timeout, DEFAULT_SEED_TIMEOUT);
    }

    #[test]
    fn a_seed_runs_the_services_image_unless_it_names_its_own() {
        let mut s = service("db");
        s.seed = Some(SeedStep {
            args: vec!["load".into()],
            ..SeedStep::default()
        });
        let mut e = Vec::new();
        let seed = parse(&[s.clone()], &mut e)[0].seed.clone().unwrap();
        assert_eq!(
            (seed.image.as_str(), seed.args[0].as_str()),
            ("store:1", "load")
        );
        s.seed.as_mut().unwrap().image = Some("loader:2".into());
        assert_eq!(
            parse(&[s], &mut e)[0].seed.as_ref().unwrap().image,
            "loader:2"
        );
        assert!(e.is_empty(), "{e:?}");
    }

    #[test]
    fn bad_entries_are_refused_with_their_field() {
        let mut a = service("db");
        a.seed = Some(SeedStep {
            timeout: Some("2h".into()),
            ..SeedStep::default()
        });
        a.resources.memory = "lots".into();
        let mut b = service("db");
        b.name = "DB_2".into();
        b.port = 0;
        b.run_as_user = Some(0);
        a.env = serde_json::from_str(r#"[{"name": "BENCHRUN_X", "value": "1"}]"#).unwrap();
        a.seed.as_mut().unwrap().env = a.env.clone();
        let mut e = Vec::new();
        parse(&[a, b.clone(), b.clone(), b.clone(), b], &mut e);
        let fields: Vec<&str> = e.iter().map(|x| x.field.as_str()).collect();
        for f in [
            "spec.services",
            "spec.services[0].seed.timeout",
            "spec.services[0].seed",
            "spec.services[0].resources.memory",
            "spec.services[0].env[0].name",
            "spec.services[0].seed.env[0].name",
            "spec.services[1].name",
            "spec.services[1].port",
            "spec.services[1].runAsUser",
        ] {
            assert!(fields.contains(&f), "{f} missing from {fields:?}");
        }
        assert!(e.iter().any(|x| x.message.contains("at most 4")), "{e:?}");
        assert!(e.iter().any(|x| x.message.contains("twice")), "{e:?}");
    }
}
