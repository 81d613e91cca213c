#!/usr/bin/env bash
# Installs benchrun (CRD, RBAC, operator) from deploy/ into the cluster KUBECONFIG points at,
# and waits until both operator replicas are ready and one of them leads. On the project's
# local cluster it uses the deploy/local overlay (Prometheus on the node's bridge) and restarts
# the operator when a new image was imported under the same tag. Elsewhere it uses
# deploy/base, or BENCHRUN_OVERLAY.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '%s install: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
command -v kubectl >/dev/null || { log "kubectl not found: eval \"\$(hack/cluster.sh env)\" first"; exit 1; }
local_kubeconfig=${BENCHRUN_CLUSTER_DIR:-/var/lib/benchrun/cluster}/kubeconfig
if [ -n "${BENCHRUN_OVERLAY:-}" ]; then
  overlay=$BENCHRUN_OVERLAY
elif [ "${KUBECONFIG:-}" = "$local_kubeconfig" ]; then
  overlay=deploy/local
else
  overlay=deploy/base
fi
log "applying $overlay to $(kubectl config current-context 2>/dev/null || echo '?')"
kubectl apply --server-side --force-conflicts -k "$overlay" >/dev/null
kubectl wait --for condition=established --timeout=60s crd/benchmarkruns.benchrun.dev crd/benchmarkschedules.benchrun.dev >/dev/null
sock=/run/containerd/containerd.sock
if [ "$overlay" = deploy/local ] && [ -S "$sock" ]; then
  # Same tag, new content: roll the operator only when the imported image changed.
  digest=$(ctr -n k8s.io --address "$sock" images ls "name==benchrun.local/benchrun-operator:0.1.0" \
    | awk 'NR==2 {print $3}')
  if [ -n "$digest" ]; then
    kubectl -n benchrun-system patch deployment benchrun-operator --type merge -p \
      "{\"spec\":{\"template\":{\"metadata\":{\"annotations\":{\"benchrun.dev/image-digest\":\"${digest#sha256:}\"}}}}}" >/dev/null
  fi
  # The commit the operator was built from, for the results' environment.operator
  # (`0.1.0+<commit>`); a strategic merge keeps the container's other variables.
  if commit=$(git rev-parse --short HEAD 2>/dev/null); then
    kubectl -n benchrun-system patch deployment benchrun-operator -p \
      "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"operator\",\"env\":[{\"name\":\"BENCHRUN_COMMIT\",\"value\":\"$commit\"}]}]}}}}" >/dev/null
  fi
fi
log "waiting for the operator (both replicas)"
# rollout status returns once every replica of the new revision is updated and available.
if ! kubectl -n benchrun-system rollout status deployment/benchrun-operator --timeout=180s; then
  kubectl -n benchrun-system get pods -o wide >&2 || true
  kubectl -n benchrun-system describe pods >&2 | tail -40 || true
  kubectl -n benchrun-system logs deploy/benchrun-operator --tail=40 >&2 || true
  exit 1
fi
# The replicas elect a leader on a Lease; wait until a pod that is not terminating holds it
# (the holder identity is "<pod>_<random>").
holder=
for _ in $(seq 60); do
  holder=$(kubectl -n benchrun-system get lease benchrun-operator \
    -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
  if [ -n "$holder" ] && deleting=$(kubectl -n benchrun-system get pod "${holder%_*}" \
    -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) && [ -z "$deleting" ]; then
    break
  fi
  holder=
  sleep 1
done
if [ -z "$holder" ]; then
  log "no operator replica holds the lease benchrun-system/benchrun-operator"
  kubectl -n benchrun-system get pods,lease -o wide >&2 || true
  exit 1
fi
log "leader: $holder"
log "benchrun is installed ($overlay)"
