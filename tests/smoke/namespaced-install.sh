#!/usr/bin/env bash
# tests/smoke/namespaced-install.sh — the namespaced install (deploy/namespaced) on the local
# cluster: with the cluster-wide operator scaled to zero, installs the operator with its Role
# into a fresh namespace that enforces the `restricted` Pod Security Standard, applies a
# one-cell run there and waits for Succeeded; checks that the operator's service account may
# not touch another namespace and that the target container runs under the RuntimeDefault
# seccomp filter (host /proc: Seccomp 2) and that the operator logs JSON lines. At exit deletes the namespace and restores the
# cluster-wide install (hack/install.sh).
#
# Needs the images imported (make images) and the CRD installed (make install). Holds the
# cluster: run it under the shared lock, e.g.
#   flock /tmp/benchrun-e2e.lock tests/smoke/namespaced-install.sh
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
if [ -z "${KUBECONFIG:-}" ]; then eval "$(hack/cluster.sh env)"; fi
PROMETHEUS_URL=${PROMETHEUS_URL:-http://10.244.0.1:9090}
NS=benchrun-ns-$(date +%s)
passed=0 failed=0
ok() { echo "ok   - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
k() { kubectl --request-timeout=20s -n "$NS" "$@"; }

cleanup() {
  if [ "$failed" -gt 0 ]; then
    k get benchmarkruns,deploy,pods,jobs -o wide || true
    k get events --sort-by=.lastTimestamp | tail -20 || true
    k logs deploy/benchrun-operator --tail=40 || true
  fi
  kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  echo "# restoring the cluster-wide install"
  kubectl -n benchrun-system scale deployment benchrun-operator --replicas=1 >/dev/null 2>&1 || true
  hack/install.sh >/dev/null 2>&1 || echo "# WARNING: hack/install.sh failed; run make install"
  echo "$passed passed, $failed failed"
}
trap cleanup EXIT

kubectl -n benchrun-system scale deployment benchrun-operator --replicas=0 >/dev/null
kubectl -n benchrun-system wait --for=delete pod -l app.kubernetes.io/name=benchrun-operator --timeout=60s >/dev/null 2>&1 || true
kubectl create namespace "$NS" >/dev/null
kubectl label namespace "$NS" pod-security.kubernetes.io/enforce=restricted \
  pod-security.kubernetes.io/enforce-version=latest >/dev/null

# The overlay as shipped, pointed at this namespace and the local Prometheus.
kubectl kustomize deploy/namespaced \
  | sed -e "s/namespace: benchmarks$/namespace: $NS/" \
        -e "s#http://prometheus.monitoring.svc:9090#$PROMETHEUS_URL#" \
  | kubectl apply --server-side -f - >/dev/null
if k rollout status deployment/benchrun-operator --timeout=120s >/dev/null; then
  ok "namespaced operator ready in $NS (restricted namespace)"
else
  fail "namespaced operator not ready"; exit 1
fi
sa=system:serviceaccount:$NS:benchrun-operator
if [ "$(kubectl auth can-i create deployments -n "$NS" --as "$sa")" = yes ] \
  && [ "$(kubectl auth can-i create deployments -n default --as "$sa")" = no ] \
  && [ "$(kubectl auth can-i list benchmarkruns --all-namespaces --as "$sa")" = no ]; then
  ok "the operator's rights end at its namespace"
else
  fail "the operator's service account reaches beyond $NS"
fi

sed -e 's/^  name: demo$/  name: ns-demo/' -e '/^  matrix:/,$d' examples/demo.yaml \
  | sed -e 's/^    - {name: compute.*$//' | k apply -f - >/dev/null
seccomp_checked=0
for _ in $(seq 1 150); do
  phase=$(k get benchmarkrun ns-demo -o jsonpath='{.status.phase}' 2>/dev/null)
  if [ "$seccomp_checked" = 0 ]; then
    cid=$(k get pods -l benchrun.dev/role=target -o jsonpath='{.items[0].status.containerStatuses[0].containerID}' 2>/dev/null)
    cid=${cid#containerd://}
    if [ -n "$cid" ]; then
      pid=$(ctr -n k8s.io task ls 2>/dev/null | awk -v c="$cid" '$1 == c {print $2}')
      if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
        sc=$(awk '/^Seccomp:/ {print $2}' "/proc/$pid/status")
        uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
        caps=$(awk '/^CapEff:/ {print $2}' "/proc/$pid/status")
        if [ "$sc" = 2 ] && [ "$uid" != 0 ] && [ "$caps" = 0000000000000000 ]; then
          ok "target container: seccomp filter mode 2 (RuntimeDefault), uid $uid, no effective capabilities"
        else
          fail "target container: Seccomp=$sc uid=$uid CapEff=$caps"
        fi
        seccomp_checked=1
      fi
    fi
  fi
  case $phase in Succeeded|Failed) break ;; esac
  sleep 2
done
progress=$(k get benchmarkrun ns-demo -o jsonpath='{.status.progress}')
if [ "$phase" = Succeeded ]; then
  ok "run in $NS: $phase $progress, reconciled by the namespaced operator"
else
  fail "run in $NS: phase '$phase' $progress"
fi
[ "$seccomp_checked" = 1 ] || fail "target container not seen running: seccomp not checked"
if k logs deploy/benchrun-operator --tail=20 | python3 -c '
import json, sys
lines = [l for l in sys.stdin if l.strip()]
assert lines and all(json.loads(l)["level"] for l in lines)'; then
  ok "operator logs are JSON lines in the container"
else
  fail "operator logs are not JSON lines"
fi
[ "$failed" = 0 ]
