//! `spec.scenarios`: the HTTP requests to measure, parsed into what the load pods are given.

use std::collections::BTreeMap;

use benchrun_wire::ValueSpec;

use super::field::{err, unique, FieldError};
use crate::spec::Scenario;

/// One entry of `spec.scenarios`, parsed: the request the load pods send.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioPlan {
    /// Name, unique in the run.
    pub name: String,
    /// HTTP method.
    pub method: String,
    /// Path and query (with any `{{name}}` placeholders).
    pub path: String,
    /// Extra request headers, by name.
    pub headers: BTreeMap<String, String>,
    /// Request body, if any.
    pub body: Option<String>,
    /// How each placeholder's value is drawn, in the load generator's form.
    pub values: BTreeMap<String, ValueSpec>,
}

/// Parses `spec.scenarios`: at least one, unique names, and each request within its HTTP
/// grammar ([`super::request::scenario_errors`]).
pub(crate) fn parse(scenarios: &[Scenario], e: &mut Vec<FieldError>) -> Vec<ScenarioPlan> {
    if scenarios.is_empty() {
        e.push(err("spec.scenarios", "at least one scenario is required"));
    }
    unique(
        "spec.scenarios",
        scenarios.iter().map(|s| s.name.as_str()),
        e,
    );
    for (i, s) in scenarios.iter().enumerate() {
        e.extend(super::request::scenario_errors(i, s));
    }
    scenarios.iter().map(scenario).collect()
}

/// A scenario as the load pods get it. A value without exactly one kind is left out: the
/// request checks refused it.
fn scenario(s: &Scenario) -> ScenarioPlan {
    ScenarioPlan {
        name: s.name.clone(),
        method: s.method.clone(),
        path: s.path.clone(),
        headers: s.headers.clone(),
        body: s.body.clone(),
        values: s
            .values
            .iter()
            .filter_map(|(name, v)| Some((name.clone(), v.to_spec()?)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::spec;
    use super::*;
    use crate::validate;

    #[test]
    fn a_scenario_is_parsed_with_its_values_in_the_load_generators_form() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.scenarios[0].path = "/doc/{{id}}".into();
        s.scenarios[0].values =
            serde_json::from_str(r#"{"id": {"random": {"min": 1, "max": 9}}}"#).unwrap();
        let run = validate(&s).unwrap();
        let p = &run.scenarios[0];
        assert_eq!((p.name.as_str(), p.method.as_str()), ("hello", "GET"));
        assert_eq!(p.values["id"], ValueSpec::Random { min: 1, max: 9 });
    }

    #[test]
    fn scenarios_without_a_name_of_their_own_are_refused() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.scenarios.push(s.scenarios[0].clone());
        let errs = validate(&s).unwrap_err();
        assert_eq!(errs[0].field, "spec.scenarios");
        assert!(errs[0].message.contains("appears twice"), "{}", errs[0]);
        s.scenarios.clear();
        assert_eq!(
            validate(&s).unwrap_err()[0].message,
            "at least one scenario is required"
        );
    }
}
