#!/usr/bin/env bash
# hack/demo-repeat.sh N — run examples/demo.yaml N times and check that every measured cell
# recorded the node(s) its load pods ran on (`.status.results[].loadNodes`, issue 8).
#
# One run at a time, each under the shared e2e lock (other engineers' e2e tests interleave
# between runs): applies the demo as demo-r1 .. demo-rN in namespace benchrun-demo-repeat
# (created if missing), waits for it to end (20 min at most; a demo run takes ~5 min),
# saves its status JSON, checks every entry of `.status.results` for a non-empty `loadNodes`,
# deletes the run (and, foreground, its children), then releases the lock. Prints one line
# per run (name, phase, cells, cells with loadNodes) and a final tally; exits non-zero when
# a run did not succeed, a cell lacks loadNodes, or a run has fewer results than cells.
#
# Usage (the operator must be installed on the cluster KUBECONFIG points at; without
# KUBECONFIG the project's local cluster is used):
#   hack/demo-repeat.sh 10
# Environment: BENCHRUN_REPEAT_NAMESPACE (benchrun-demo-repeat), BENCHRUN_LOCK
# (/tmp/benchrun-e2e.lock), BENCHRUN_LOG_DIR (/var/cache/benchrun/logs).
# Output: the lines go to stdout and to $BENCHRUN_LOG_DIR/demo-repeat-<time>/summary.log,
# next to each run's status (<name>.json).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
self=$repo/hack/demo-repeat.sh
NS=${BENCHRUN_REPEAT_NAMESPACE:-benchrun-demo-repeat}
LOCK=${BENCHRUN_LOCK:-/tmp/benchrun-e2e.lock}
TIMEOUT=${BENCHRUN_REPEAT_TIMEOUT:-1200}
log() { printf '%s demo-repeat: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
usage() { echo "usage: $0 N   (N >= 1 runs of examples/demo.yaml)" >&2; exit 2; }
if [ -z "${KUBECONFIG:-}" ]; then eval "$("$repo/hack/cluster.sh" env)"; fi
k() { kubectl --request-timeout=20s -n "$NS" "$@"; }

# one NAME DIR: apply, wait, check, delete one run; prints its line. Runs under the lock.
one() {
  local name=$1 dir=$2 phase="" deadline
  kubectl get namespace "$NS" >/dev/null 2>&1 || kubectl create namespace "$NS" >/dev/null
  # A run is never re-executed: a leftover of the same name is replaced.
  k delete benchmarkrun "$name" --ignore-not-found --cascade=foreground --wait=true --timeout=180s >/dev/null
  python3 - "$repo/examples/demo.yaml" "$name" <<'EOF' | k apply -f - >/dev/null
import re, sys
text = open(sys.argv[1]).read()
text, n = re.subn(r'(?m)^(metadata:\n(?:  .*\n)*?  name: ).*$', r'\g<1>' + sys.argv[2], text, count=1)
if n != 1:
    sys.exit("demo-repeat: no metadata.name in " + sys.argv[1])
sys.stdout.write(text)
EOF
  log "$name applied in $NS; waiting (at most ${TIMEOUT}s)"
  deadline=$((SECONDS + TIMEOUT))
  while [ $SECONDS -lt $deadline ]; do
    phase=$(k get benchmarkrun "$name" -o jsonpath='{.status.phase}' 2>/dev/null || true)
    case $phase in Succeeded|Failed) break ;; esac
    sleep 5
  done
  [ -n "$phase" ] || phase=None
  k get benchmarkrun "$name" -o json >"$dir/$name.json" 2>/dev/null || echo '{}' >"$dir/$name.json"
  k delete benchmarkrun "$name" --ignore-not-found --cascade=foreground --wait=true --timeout=180s >/dev/null \
    || log "WARNING: $name not deleted within 180s"
  python3 - "$dir/$name.json" "$name" <<'EOF'
import json, sys
path, name = sys.argv[1], sys.argv[2]
status = json.load(open(path)).get("status", {})
phase = status.get("phase") or "None"
results = status.get("results", [])
total = status.get("total")
with_nodes = [r for r in results if r.get("loadNodes")]
nodes = sorted({n for r in results for n in r.get("loadNodes", [])})
ok = phase == "Succeeded" and len(with_nodes) == len(results) and total == len(results)
print(f"{name} phase={phase} cells={len(results)} total={total} withLoadNodes={len(with_nodes)} "
      f"loadNodes={','.join(nodes) or '-'} {'OK' if ok else 'BAD'}")
for r in results:
    if not r.get("loadNodes"):
        c = r.get("coordinates", {})
        print(f"  {name} cell {r.get('cell')} repeat {r.get('repeat')} ({c.get('scenario')} cpu={c.get('cpu')} "
              f"c={c.get('connections')}): outcome={r.get('outcome')} reason={r.get('reason', '-')} no loadNodes")
EOF
}

if [ "${1:-}" = _one ]; then shift; one "$@"; exit; fi

[ $# = 1 ] && [[ $1 =~ ^[1-9][0-9]*$ ]] || usage
n=$1
dir=${BENCHRUN_LOG_DIR:-/var/cache/benchrun/logs}/demo-repeat-$(date +%Y%m%d-%H%M%S)
mkdir -p "$dir"
summary=$dir/summary.log
log "$n runs of examples/demo.yaml in $NS; lock $LOCK; log $summary"
for i in $(seq 1 "$n"); do
  name=demo-r$i
  log "$name: waiting for $LOCK"
  flock "$LOCK" bash "$self" _one "$name" "$dir" | tee -a "$summary" \
    || echo "$name phase=Error (the run's script failed) BAD" | tee -a "$summary"
done
python3 - "$summary" "$n" <<'EOF' | tee -a "$summary"
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("demo-r")]
runs = len(lines)
good = sum(l.split()[1] == "phase=Succeeded" for l in lines)
cells = sum(int(m.group(1)) for l in lines if (m := re.search(r" cells=(\d+)", l)))
with_nodes = sum(int(m.group(1)) for l in lines if (m := re.search(r" withLoadNodes=(\d+)", l)))
bad = sum(l.rstrip().endswith("BAD") for l in lines)
print(f"TALLY runs={runs}/{sys.argv[2]} succeeded={good} cells={cells} withLoadNodes={with_nodes} "
      f"missing={cells - with_nodes} badRuns={bad} -> {'PASS' if bad == 0 and runs == int(sys.argv[2]) else 'FAIL'}")
EOF
tail -1 "$summary" | grep -q ' -> PASS$'
