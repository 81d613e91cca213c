#!/usr/bin/env bash
# hack/queue-load.sh [N] [SECONDS]: what a queue of runs costs the apiserver. One run measures
# (the demo target for 10 minutes) while N small runs (default 300) are applied at once and
# wait for its slot; after a minute to settle, the apiserver's own counter
# (apiserver_request_total, every client together: operator, kubelets, controllers) is read
# twice SECONDS apart (default 60). Prints the requests per minute in total and by verb and
# resource, and the operator pods' memory from Prometheus; then deletes everything it made.
# Needs the local cluster (or KUBECONFIG) with benchrun installed (make install).
#
# hack/queue-load.sh N SECONDS handovers: the same with a holder as short as the queued runs
# (5 s), so that slots change hands during the reading: prints the hand-overs (runs finished
# during it), the BenchmarkRun status writes, and the apiserver requests per hand-over. Then
# deletes the namespace and prints how long that took, and how many status writes reached the
# runs being deleted (the runs must go like plain objects).
set -euo pipefail
n=${1:-300}
seconds=${2:-60}
mode=${3:-}
case $mode in ''|handovers) ;; *) echo "queue-load: unknown mode $mode (handovers or nothing)" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
[ -n "${KUBECONFIG:-}" ] || eval "$(hack/cluster.sh env)"
ns=queue-load
dir=$(mktemp -d)
trap 'rm -rf "$dir"; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
log() { echo "$(date +%H:%M:%S) queue-load: $*"; }

log "commit $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain --untracked-files=no)" ] || echo ' (with uncommitted changes)'), operator image $(kubectl -n benchrun-system get deploy benchrun-operator -o jsonpath='{.spec.template.spec.containers[0].image}') built from $(kubectl -n benchrun-system get deploy benchrun-operator -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="BENCHRUN_COMMIT")].value}' | grep . || echo 'an unknown commit'), $(date -u +%Y-%m-%dT%H:%MZ)"
kubectl create namespace "$ns" >/dev/null
# The batch is larger than the default --max-queued-per-namespace (50): lift the limit while
# the script runs (restored on exit; the env var is absent from deploy/base when unset).
limit=$(kubectl -n benchrun-system get deploy benchrun-operator -o jsonpath='{.spec.template.spec.containers[0].env[?(@.name=="BENCHRUN_MAX_QUEUED_PER_NAMESPACE")].value}')
restore_limit() { kubectl -n benchrun-system set env deploy/benchrun-operator "BENCHRUN_MAX_QUEUED_PER_NAMESPACE=${limit:-50}" >/dev/null; }
trap 'rm -rf "$dir"; restore_limit || true; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl -n benchrun-system set env deploy/benchrun-operator BENCHRUN_MAX_QUEUED_PER_NAMESPACE=0 >/dev/null
kubectl -n benchrun-system rollout status deploy/benchrun-operator --timeout=120s >/dev/null
# The measuring run: one long cell that holds the slot while the queue is read.
cat >"$dir/holder.yaml" <<'EOF'
apiVersion: benchrun.dev/v1alpha1
kind: BenchmarkRun
metadata: {name: holder}
spec:
  targets: [{name: demo, image: benchrun.local/benchrun-demo:0.1.0, imagePullPolicy: IfNotPresent, port: 8080, readinessPath: /healthz}]
  resources: {cpu: 250m, memory: 128Mi}
  scenarios: [{name: hello, path: /hello}]
  load: {connections: 2, rate: 50, duration: 10m, warmup: 1s, resources: {cpu: 100m, memory: 64Mi}}
EOF
[ "$mode" = handovers ] && sed -i 's/rate: 50, duration: 10m/duration: 5s/' "$dir/holder.yaml"
kubectl -n "$ns" apply -f "$dir/holder.yaml" >/dev/null
for _ in $(seq 120); do
  [ "$(kubectl -n "$ns" get benchmarkrun holder -o jsonpath='{.status.phase}')" = Running ] && break
  sleep 1
done
log "holder is $(kubectl -n "$ns" get benchmarkrun holder -o jsonpath='{.status.phase}'); applying $n queued runs"
for i in $(seq "$n"); do
  sed "s/name: holder/name: queued-$i/; s/rate: 50, duration: 10m/duration: 5s/" "$dir/holder.yaml"
  echo ---
done >"$dir/queued.yaml"
kubectl -n "$ns" apply -f "$dir/queued.yaml" 2>&1 | { grep -v " created$" || true; } | head -5
sleep 60
queued=$(kubectl -n "$ns" get benchmarkrun -o json | jq '[.items[] | select(.status.phase == "Queued")] | length')
log "$queued runs Queued; reading apiserver_request_total over ${seconds}s"
counts() {
  kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ {
    match($0, /verb="[^"]*"/); verb = substr($0, RSTART + 6, RLENGTH - 7)
    match($0, /resource="[^"]*"/); res = substr($0, RSTART + 10, RLENGTH - 11)
    match($0, /subresource="[^"]*"/); sub_ = substr($0, RSTART + 13, RLENGTH - 14)
    key = verb " " res (sub_ == "" ? "" : "/" sub_)
    sum[key] += $NF
  } END { for (k in sum) printf "%s\t%d\n", k, sum[k] }' | sort
}
finished() { kubectl -n "$ns" get benchmarkrun -o json | jq '[.items[] | select(.status.phase == "Succeeded" or .status.phase == "Failed")] | length'; }
done_before=$(finished)
counts >"$dir/before"
sleep "$seconds"
counts >"$dir/after"
done_after=$(finished)
phase=$(kubectl -n "$ns" get benchmarkrun holder -o jsonpath='{.status.phase}')
join -t $'\t' -a 2 -e 0 -o 0,1.2,2.2 "$dir/before" "$dir/after" |
  awk -F '\t' -v s="$seconds" '{ d = ($3 - $2) * 60 / s; if (d > 0) printf "%10.0f  %s\n", d, $1; t += d }
    END { printf "%10.0f  total requests per minute (all clients)\n", t }' | sort -rn | head -16
if [ "$mode" = handovers ]; then
  handovers=$((done_after - done_before))
  join -t $'\t' -a 2 -e 0 -o 0,1.2,2.2 "$dir/before" "$dir/after" |
    awk -F '\t' -v s="$seconds" -v h="$handovers" '
      { d = $3 - $2; t += d; if ($1 ~ /benchmarkruns\/status$/) st += d }
      END {
        printf "%d hand-overs in %ds; %d requests (%d BenchmarkRun status writes)\n", h, s, t, st
        if (h > 0) printf "%.0f requests and %.1f BenchmarkRun status writes per hand-over\n", t / h, st / h
      }'
  log "deleting namespace $ns with $(kubectl -n "$ns" get benchmarkrun --no-headers | wc -l) runs"
  counts >"$dir/before-delete"
  start=$(date +%s.%N)
  kubectl delete namespace "$ns" --timeout=300s >/dev/null
  end=$(date +%s.%N)
  counts >"$dir/after-delete"
  join -t $'\t' -a 2 -e 0 -o 0,1.2,2.2 "$dir/before-delete" "$dir/after-delete" |
    awk -F '\t' -v secs="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" '
      { d = $3 - $2; t += d; if ($1 ~ /benchmarkruns\/status$/) st += d }
      END { printf "namespace deleted in %.1fs: %d apiserver requests meanwhile, %d of them BenchmarkRun status writes\n", secs, t, st }'
else
  log "holder still $phase during the reading"
fi
prom=${PROMETHEUS_URL:-}
prom=${prom:-http://10.244.0.1:9090}
for pod in $(kubectl -n benchrun-system get pods -l app.kubernetes.io/name=benchrun-operator -o name); do
  pod=${pod#pod/}
  curl -s "$prom/api/v1/query" --data-urlencode \
    "query=max(container_memory_working_set_bytes{namespace=\"benchrun-system\",pod=\"$pod\",container=\"operator\"})" |
    jq -r --arg pod "$pod" '.data.result[] | "operator memory: \($pod) \((.value[1] | tonumber) / 1048576 | floor) MiB"'
done
