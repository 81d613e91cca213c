#!/usr/bin/env bash
# hack/readme-check.sh: the README's quick-start run, applied as written to the cluster
# KUBECONFIG points at (the local one by default), and the same run with no `resources` (the
# defaults), each in namespace benchrun-readme; both must reach Succeeded. Prints
# `kubectl get benchmarkruns` and the results table of each; exits non-zero otherwise.
# `make readme-check` installs benchrun first. About 8 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '%s readme-check: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
if [ -z "${KUBECONFIG:-}" ]; then eval "$(hack/cluster.sh env)"; fi
ns=${BENCHRUN_README_NAMESPACE:-benchrun-readme}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# The ```yaml block of README.md holding a BenchmarkRun, byte for byte.
python3 - README.md > "$dir/quickstart.yaml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
runs = [b for b in re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)
        if re.search(r"^kind: BenchmarkRun$", b, re.M)]
sys.stdout.write(runs[0] if len(runs) == 1 else "")
PY
grep -q '^kind: BenchmarkRun$' "$dir/quickstart.yaml" || { log "no BenchmarkRun in README.md"; exit 1; }
name=$(sed -n 's/^metadata: {name: \(.*\)}$/\1/p' "$dir/quickstart.yaml")
[ -n "$name" ] || { log "the README's run has no metadata: {name: ...} line"; exit 1; }
# The same run with no resources at all: the defaults must fit and succeed.
sed -e "s/^metadata: {name: .*}$/metadata: {name: $name-defaults}/" -e '/^  resources:/d' \
  "$dir/quickstart.yaml" > "$dir/defaults.yaml"
! grep -q 'resources' "$dir/defaults.yaml" || { log "could not remove resources"; exit 1; }

kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n "$ns" delete benchmarkrun "$name" "$name-defaults" --ignore-not-found --wait=true >/dev/null
log "applying the README's run as written ($name) and the same without resources ($name-defaults)"
cat "$dir/quickstart.yaml" >&2
kubectl -n "$ns" apply -f "$dir/quickstart.yaml"
kubectl -n "$ns" apply -f "$dir/defaults.yaml"
rc=0
for run in "$name" "$name-defaults"; do
  end=$((SECONDS + 1200)) phase=""
  while [ $SECONDS -lt $end ]; do
    phase=$(kubectl -n "$ns" get benchmarkrun "$run" -o jsonpath='{.status.phase}' 2>/dev/null || true)
    case $phase in Succeeded|Failed) break ;; esac
    sleep 10
  done
  log "$run: ${phase:-no phase} after ${SECONDS}s"
  [ "$phase" = Succeeded ] || rc=1
done
kubectl -n "$ns" get benchmarkruns
. hack/lib/target-dir.sh
target_dir=$(cargo_target_dir)
for run in "$name" "$name-defaults"; do
  "$target_dir/release/kubectl-benchrun" show "$run" -n "$ns" || true
done
exit $rc
