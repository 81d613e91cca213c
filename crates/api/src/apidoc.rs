//! The API reference (`docs/api.md`), generated from the CRD's OpenAPI schema so that it
//! documents exactly the fields, defaults and admission rules the apiserver enforces.
//! Pure: schema JSON in, Markdown out.

use serde_json::Value;
use std::fmt::Write;

/// Renders the reference for the CRD's first version.
pub fn markdown(crd: &Value) -> String {
    let version = &crd["spec"]["versions"][0];
    let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or("");
    let schema = &version["schema"]["openAPIV3Schema"];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {kind} API reference (`{}/{}`)\n\n\
         Generated from the Rust types by `make crds` (do not edit; a test fails when it is stale). \
         The same text is what `kubectl explain {}.spec` shows. Rules marked *admission* are \
         CEL rules the apiserver enforces when the object is created or changed; the operator \
         checks the rest and reports them as `Accepted=False`.\n",
        crd["spec"]["group"].as_str().unwrap_or(""),
        version["name"].as_str().unwrap_or(""),
        kind.to_lowercase()
    );
    rules(&mut out, schema);
    for part in ["spec", "status"] {
        object(&mut out, part, &schema["properties"][part]);
    }
    out
}

fn type_of(s: &Value) -> String {
    match s["type"].as_str() {
        Some("array") => format!("[]{}", type_of(&s["items"])),
        Some("object") if s.get("properties").is_none() => match s.get("additionalProperties") {
            Some(v) => format!("map[string]{}", type_of(v)),
            None => "object".into(),
        },
        Some(t) => t.into(),
        None if s.get("x-kubernetes-int-or-string").is_some() => "int-or-string".into(),
        None => "any".into(),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

fn rules(out: &mut String, s: &Value) {
    if let Some(rs) = s["x-kubernetes-validations"].as_array() {
        for r in rs {
            let _ = writeln!(
                out,
                "- *admission*: {} (`{}`)",
                one_line(r["message"].as_str().unwrap_or("")),
                one_line(r["rule"].as_str().unwrap_or(""))
            );
        }
        out.push('\n');
    }
}

/// A schedule's run template holds a whole BenchmarkRun spec: its fields are documented once,
/// in the BenchmarkRun reference.
const RUN_SPEC_ELSEWHERE: &str = "spec.runTemplate.spec";

fn object(out: &mut String, path: &str, s: &Value) {
    if path == RUN_SPEC_ELSEWHERE {
        let _ = writeln!(
            out,
            "## `{path}`\n\nA BenchmarkRun spec: every field as in the BenchmarkRun reference \
             ([docs/api.md](api.md)), with the same admission rules.\n"
        );
        return;
    }
    let props = match s["properties"].as_object() {
        Some(p) => p,
        None => return,
    };
    let _ = writeln!(out, "## `{path}`\n");
    if let Some(d) = s["description"].as_str() {
        let _ = writeln!(out, "{}\n", one_line(d));
    }
    rules(out, s);
    let required: Vec<&str> = s["required"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "| field | type | default | description |\n|---|---|---|---|"
    );
    let mut nested = Vec::new();
    for (name, p) in props {
        let mut desc = one_line(p["description"].as_str().unwrap_or(""));
        if required.contains(&name.as_str()) {
            desc = format!("**Required.** {desc}");
        }
        for (k, label) in [
            ("minimum", "min"),
            ("maximum", "max"),
            ("minItems", "min items"),
            ("maxItems", "max items"),
            ("maxLength", "max length"),
        ] {
            if let Some(v) = p.get(k).and_then(Value::as_f64) {
                let _ = write!(desc, " ({label} {v})");
            }
        }
        if let Some(rs) = p["x-kubernetes-validations"].as_array() {
            for r in rs {
                let _ = write!(
                    desc,
                    " *Admission:* {}.",
                    one_line(r["message"].as_str().unwrap_or(""))
                );
            }
        }
        let default = p
            .get("default")
            .map(|d| format!("`{d}`"))
            .unwrap_or_default();
        let _ = writeln!(out, "| `{name}` | {} | {default} | {desc} |", type_of(p));
        // Arrays and maps document their items' fields under `name[]` and `name.<key>`.
        let (child, suffix) = match p["type"].as_str() {
            Some("array") => (&p["items"], "[]"),
            Some("object") if p.get("additionalProperties").is_some() => {
                (&p["additionalProperties"], ".<key>")
            }
            _ => (p, ""),
        };
        let is_k8s_type = child["description"].as_str().is_some_and(|d| {
            d.contains("EnvVar represents")
                || d.contains("The pod this Toleration")
                || d.contains("Condition contains details")
        });
        if child.get("properties").is_some() && !is_k8s_type {
            nested.push((format!("{path}.{name}{suffix}"), child));
        }
    }
    out.push('\n');
    for (p, s) in nested {
        object(out, &p, s);
    }
}
