#!/usr/bin/env bash
# The live tests of the Prometheus client (tests/prometheus_live.rs) against the local
# cluster's Prometheus, as their module doc describes: a pod burning half a core (limit 500m)
# in a namespace of its own, the tests once it has run for 75 s, then the namespace is
# deleted. Needs KUBECONFIG and PROMETHEUS_URL (`eval "$(hack/cluster.sh env)"`); run by
# `make e2e`. PROMQL_CHECK_NAMESPACE overrides the namespace (default promql-check-<time>: a
# new one each run, because cAdvisor's series carry their own timestamps, so Prometheus marks
# no series stale and the pod of a run minutes earlier, of the same name, would still count).
set -euo pipefail
cd "$(dirname "$0")/.."
ns=${PROMQL_CHECK_NAMESPACE:-promql-check-$(date +%s)}
image=benchrun.local/busybox:1.35
: "${PROMETHEUS_URL:?PROMETHEUS_URL is not set (eval \"\$(hack/cluster.sh env)\")}"

# A namespace left by an earlier run may still be terminating.
kubectl delete namespace "$ns" --ignore-not-found --wait=true --timeout=120s >/dev/null
trap 'kubectl delete namespace "$ns" --ignore-not-found --wait=false >/dev/null' EXIT
kubectl create namespace "$ns" >/dev/null
kubectl -n "$ns" run burner --image="$image" --image-pull-policy=IfNotPresent --restart=Never \
  --overrides='{"spec":{"containers":[{"name":"burner","image":"'"$image"'","imagePullPolicy":"IfNotPresent","command":["sh","-c","while :; do :; done"],"resources":{"limits":{"cpu":"500m","memory":"64Mi"}}}]}}' \
  >/dev/null
kubectl -n "$ns" wait --for=condition=Ready pod/burner --timeout=120s >/dev/null
# The tests read the 55 s before now: that many seconds of scraped samples, and some margin.
sleep 75
PROMQL_CHECK_NAMESPACE=$ns ${CARGO:-cargo} test --release --workspace --test prometheus_live \
  -- --ignored --nocapture
