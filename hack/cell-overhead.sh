#!/usr/bin/env bash
# hack/cell-overhead.sh RUN [-n NAMESPACE]: the operator's overhead between the measurements of
# a finished BenchmarkRun: for each pair of consecutive measurements, the time from the end of
# one measured window to the start of the next, minus the next one's warm-up (spec.load.warmup
# as a duration). Windows are read to the millisecond from the measurements' detail ConfigMaps
# (the status holds them to the second). Prints one line per gap, marked `reused` when both
# measurements ran on the same target configuration (image, CPU, memory, replicas) and
# `redeployed` otherwise, then the median of each kind.
set -euo pipefail
run=${1:?usage: hack/cell-overhead.sh RUN [-n NAMESPACE]}
shift
ns=default
while [ $# -gt 0 ]; do
  case "$1" in
    -n) ns=${2:?-n needs a namespace}; shift ;;
    *) echo "unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
cd "$(dirname "$0")/.."
[ -n "${KUBECONFIG:-}" ] || eval "$(hack/cluster.sh env)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
kubectl -n "$ns" get benchmarkrun "$run" -o json >"$dir/run.json"
for cm in $(jq -r '.status.results[] | select(.detail != null) | .detail' "$dir/run.json"); do
  kubectl -n "$ns" get configmap "$cm" -o json 2>/dev/null | jq '.data["result.json"] | fromjson | {window_start_ms, window_end_ms}' >"$dir/$cm.json" || true
done
python3 - "$dir" <<'PY'
import json, os, re, statistics, sys
d = sys.argv[1]
run = json.load(open(os.path.join(d, "run.json")))
spec = run["spec"]
def seconds(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", str(text or "0s"))
    if not m:
        return 0.0
    n, unit = float(m.group(1)), m.group(2)
    return n / 1000 if unit == "ms" else n * 60 if unit == "m" else n
warmup = seconds(spec.get("load", {}).get("warmup"))
ramp = seconds(spec.get("load", {}).get("rampUp"))
def window(r):
    f = os.path.join(d, f'{r.get("detail")}.json')
    if r.get("detail") and os.path.exists(f):
        w = json.load(open(f))
        return w["window_start_ms"] / 1000, w["window_end_ms"] / 1000
    return None
def config(r):
    c = r["coordinates"]
    return (c.get("target"), c.get("cpu"), c.get("memory"), c.get("replicas"))
measured = [r for r in run["status"]["results"] if r.get("outcome") == "Measured"]
measured.sort(key=lambda r: (r["cell"], r["repeat"]))
gaps = {"reused": [], "redeployed": []}
for a, b in zip(measured, measured[1:]):
    wa, wb = window(a), window(b)
    if not wa or not wb:
        continue
    gap = wb[0] - wa[1] - warmup - ramp
    kind = "reused" if config(a) == config(b) else "redeployed"
    gaps[kind].append(gap)
    print(f'cell {a["cell"]} r{a["repeat"]} -> cell {b["cell"]} r{b["repeat"]}: {gap:6.2f} s ({kind})')
for kind, xs in gaps.items():
    if xs:
        print(f"median {kind}: {statistics.median(xs):.2f} s over {len(xs)} gaps (warm-up {warmup:g} s subtracted)")
PY
