//! CPU and memory settings (`spec.resources`, `load.resources`, `services[].resources`), and
//! the target pods' shape that is not swept per cell: requests set apart and the replicas.

use super::field::{count_in_range, err, FieldError};
use crate::spec::{BenchmarkRunSpec, Resources};
use crate::units;

/// Parsed resource settings: limits plus requests (defaulting to the limits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourcePlan {
    /// CPU limit as written.
    pub cpu: String,
    /// CPU limit in millicores.
    pub cpu_millis: i64,
    /// CPU request as written (equal to `cpu` unless set apart).
    pub cpu_request: String,
    /// Memory limit as written.
    pub memory: String,
    /// Memory request as written.
    pub memory_request: String,
}

/// Requests of the target pods set apart from their limits in `spec.resources`: they apply to
/// every cell, whatever limit it sweeps (`None`: the request follows the cell's limit).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TargetRequests {
    /// `resources.cpuRequest`.
    pub cpu: Option<String>,
    /// `resources.memoryRequest`.
    pub memory: Option<String>,
}

/// Parses the resources at `field`: limits that are quantities, requests not above them.
pub(crate) fn resources(field: &str, r: &Resources, errors: &mut Vec<FieldError>) -> ResourcePlan {
    let cpu_millis = units::cpu_millis(&r.cpu).unwrap_or_else(|e| {
        errors.push(err(format!("{field}.cpu"), e));
        0
    });
    let memory_bytes = units::memory_bytes(&r.memory).unwrap_or_else(|e| {
        errors.push(err(format!("{field}.memory"), e));
        0
    });
    if let Some(req) = &r.cpu_request {
        match units::cpu_millis(req) {
            Ok(m) if m > cpu_millis && cpu_millis > 0 => errors.push(err(
                format!("{field}.cpuRequest"),
                format!(
                    "{req} is above the limit {}: lower the request or raise the limit",
                    r.cpu
                ),
            )),
            Err(e) => errors.push(err(format!("{field}.cpuRequest"), e)),
            _ => {}
        }
    }
    if let Some(req) = &r.memory_request {
        match units::memory_bytes(req) {
            Ok(b) if b > memory_bytes && memory_bytes > 0 => errors.push(err(
                format!("{field}.memoryRequest"),
                format!(
                    "{req} is above the limit {}: lower the request or raise the limit",
                    r.memory
                ),
            )),
            Err(e) => errors.push(err(format!("{field}.memoryRequest"), e)),
            _ => {}
        }
    }
    ResourcePlan {
        cpu: r.cpu.clone(),
        cpu_millis,
        cpu_request: r.cpu_request.clone().unwrap_or_else(|| r.cpu.clone()),
        memory: r.memory.clone(),
        memory_request: r.memory_request.clone().unwrap_or_else(|| r.memory.clone()),
    }
}

/// Parses `spec.resources` and checks `spec.replicas`: what every target pod gets unless its
/// cell sweeps it. The limits themselves reach the plan through the cells.
pub(crate) fn target_pods(spec: &BenchmarkRunSpec, e: &mut Vec<FieldError>) -> TargetRequests {
    resources("spec.resources", &spec.resources, e);
    count_in_range("spec.replicas", spec.replicas.into(), 1, 32, e);
    TargetRequests {
        cpu: spec.resources.cpu_request.clone(),
        memory: spec.resources.memory_request.clone(),
    }
}

/// A request set apart in `spec.resources` applies to every cell, so it must not exceed any
/// limit the matrix sweeps. `name` is `cpu` or `memory`; unparsable values were reported
/// elsewhere.
pub(crate) fn request_within_swept_limits(
    name: &str,
    request: Option<&str>,
    swept: &[String],
    parse: fn(&str) -> Result<i64, String>,
    errors: &mut Vec<FieldError>,
) {
    let Some((req, value)) = request.and_then(|r| Some((r, parse(r).ok()?))) else {
        return;
    };
    for (i, limit) in swept.iter().enumerate() {
        if parse(limit).is_ok_and(|l| value > l) {
            errors.push(err(
                format!("spec.resources.{name}Request"),
                format!(
                    "{req} is above the swept limit {limit} (spec.matrix.{name}[{i}]) and applies to every cell: \
                     lower resources.{name}Request to at most the smallest swept limit, or remove it so each cell's request follows its limit"
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::describe;
    use super::super::fixtures::spec;
    use crate::validate;

    #[test]
    fn swept_cpu_limit_carries_its_request() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.matrix = Some(crate::Matrix {
            cpu: vec!["250m".into(), "2".into()],
            ..Default::default()
        });
        let run = validate(&s).unwrap();
        let r = run.target_resources(&run.cells[1]);
        assert_eq!(
            (r.cpu.as_str(), r.cpu_request.as_str(), r.cpu_millis),
            ("2", "2", 2000)
        );
    }

    #[test]
    fn requests_set_apart_apply_to_every_swept_cell() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.resources.cpu_request = Some("250m".into());
        s.resources.memory_request = Some("256Mi".into());
        s.matrix = Some(crate::Matrix {
            cpu: vec!["500m".into(), "1".into(), "2".into()],
            memory: vec!["512Mi".into(), "1Gi".into()],
            ..Default::default()
        });
        let run = validate(&s).unwrap();
        assert_eq!(run.cells.len(), 6);
        for cell in &run.cells {
            let r = run.target_resources(cell);
            assert_eq!(
                (r.cpu.as_str(), r.memory.as_str()),
                (cell.cpu.as_str(), cell.memory.as_str())
            );
            assert_eq!(
                (r.cpu_request.as_str(), r.memory_request.as_str()),
                ("250m", "256Mi"),
                "cell {}",
                cell.index
            );
        }
    }

    #[test]
    fn requests_above_a_swept_limit_are_rejected_naming_the_field_and_fix() {
        let mut s = spec(r#"{"connections": 4, "duration": "10s"}"#);
        s.resources.cpu = "1".into();
        s.resources.cpu_request = Some("1".into());
        s.resources.memory_request = Some("512Mi".into());
        s.matrix = Some(crate::Matrix {
            cpu: vec!["500m".into(), "2".into()],
            memory: vec!["256Mi".into(), "1Gi".into()],
            ..Default::default()
        });
        let errs = validate(&s).unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["spec.resources.cpuRequest", "spec.resources.memoryRequest"],
            "{}",
            describe(&errs)
        );
        assert!(
            errs[0]
                .message
                .contains("swept limit 500m (spec.matrix.cpu[0])"),
            "{}",
            errs[0]
        );
        assert!(
            errs[0].message.contains("lower resources.cpuRequest"),
            "{}",
            errs[0]
        );
        assert!(
            errs[1]
                .message
                .contains("swept limit 256Mi (spec.matrix.memory[0])"),
            "{}",
            errs[1]
        );
    }
}
