//! Confining a run's extra queries (`spec.prometheus.extraQueries`) to the run's namespace, as
//! prom-label-proxy does for dashboards: the query is parsed (crate `promql-parser`, not
//! patterns) and every vector and range selector in it gets the matcher
//! `namespace="<the run's namespace>"` added to its own, so on a shared cluster a run reads only
//! the series of its own namespace. Matchers the query has stay (they are ANDed with the added
//! one). A query the parser cannot read is refused when the run is validated
//! ([`crate::policy`]). An operator started with `--allow-cluster-wide-queries` skips both.
//!
//! Pure.

use promql_parser::label::{MatchOp, Matcher};
use promql_parser::parser::{self, Expr, VectorSelector};

/// The label every cAdvisor and kube-state-metrics series names its namespace with.
pub const NAMESPACE_LABEL: &str = "namespace";

/// `query` with `namespace="<namespace>"` added to each of its selectors, as PromQL text; an
/// error saying why when the query cannot be parsed.
pub fn confine(query: &str, namespace: &str) -> Result<String, String> {
    let mut expr =
        parser::parse(query).map_err(|e| format!("cannot be parsed as PromQL: {}", e.trim()))?;
    scope(&mut expr, namespace)?;
    Ok(expr.to_string())
}

fn scope(e: &mut Expr, ns: &str) -> Result<(), String> {
    match e {
        Expr::Aggregate(a) => {
            scope(&mut a.expr, ns)?;
            if let Some(p) = &mut a.param {
                scope(p, ns)?;
            }
        }
        Expr::Unary(u) => scope(&mut u.expr, ns)?,
        Expr::Binary(b) => {
            scope(&mut b.lhs, ns)?;
            scope(&mut b.rhs, ns)?;
        }
        Expr::Paren(p) => scope(&mut p.expr, ns)?,
        Expr::Subquery(s) => scope(&mut s.expr, ns)?,
        Expr::NumberLiteral(_) | Expr::StringLiteral(_) => {}
        Expr::VectorSelector(v) => pin(v, ns),
        Expr::MatrixSelector(m) => pin(&mut m.vs, ns),
        Expr::Call(c) => {
            for a in &mut c.args.args {
                scope(a, ns)?;
            }
        }
        Expr::Extension(_) => {
            return Err("holds an expression that cannot be confined to the namespace".into())
        }
    }
    Ok(())
}

/// Adds the namespace matcher to a selector (to each of its `or` groups, if it has any).
fn pin(v: &mut VectorSelector, ns: &str) {
    let m = || Matcher::new(MatchOp::Equal, NAMESPACE_LABEL, ns);
    if v.matchers.or_matchers.is_empty() {
        v.matchers.matchers.push(m());
    } else {
        for group in &mut v.matchers.or_matchers {
            group.push(m());
        }
        if !v.matchers.matchers.is_empty() {
            v.matchers.matchers.push(m());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The confined query, checked to parse again.
    fn confined(q: &str) -> String {
        let out = confine(q, "bench").unwrap();
        parser::parse(&out).unwrap_or_else(|e| panic!("{out} does not parse: {e}"));
        out
    }

    #[test]
    fn a_cluster_wide_sum_reads_only_the_runs_namespace() {
        assert_eq!(
            confined("sum(container_cpu_usage_seconds_total)"),
            r#"sum(container_cpu_usage_seconds_total{namespace="bench"})"#
        );
    }

    #[test]
    fn every_selector_of_a_binary_expression_and_of_functions_is_confined() {
        let out = confined(
            r#"sum(rate(container_cpu_usage_seconds_total{pod=~"a-.*"}[30s])) / sum(kube_pod_container_resource_limits{resource="cpu"})"#,
        );
        assert_eq!(out.matches(r#"namespace="bench""#).count(), 2, "{out}");
        assert!(out.contains(r#"pod=~"a-.*""#), "{out}");
        assert!(out.contains("[30s]"), "{out}");
    }

    #[test]
    fn a_namespace_the_query_names_stays_and_is_anded_with_the_runs() {
        let out = confined(r#"up{namespace="kube-system"}"#);
        assert!(out.contains(r#"namespace="kube-system""#), "{out}");
        assert!(out.contains(r#"namespace="bench""#), "{out}");
    }

    #[test]
    fn subqueries_aggregation_parameters_and_literals_are_handled() {
        let out = confined("quantile_over_time(0.99, max(x)[1m:10s]) > bool 2");
        assert!(out.contains(r#"x{namespace="bench"}"#), "{out}");
        let out = confined(r#"topk(scalar(y), z)"#);
        assert_eq!(out.matches(r#"namespace="bench""#).count(), 2, "{out}");
        assert_eq!(confined("vector(1)"), "vector(1)");
    }

    #[test]
    fn a_query_that_does_not_parse_is_refused_with_the_parsers_reason() {
        let e = confine("sum(rate(x[30s])", "bench").unwrap_err();
        assert!(e.starts_with("cannot be parsed as PromQL"), "{e}");
    }
}
