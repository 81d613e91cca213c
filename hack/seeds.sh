#!/usr/bin/env bash
# hack/seeds.sh [--published] [--out DIR] [N...]: run the seed comparisons of examples/seeds/
# (all five, or the numbers given) one after the other on the cluster KUBECONFIG points at (the
# local one by default), and write per seed its results (`kubectl benchrun show` as text and
# markdown, the HTML report, the run as YAML, and the requests each target counted against the
# generator's per cell) into DIR (default out/seeds/), with the run as JSON (<seed>.run.json)
# and a manifest of the whole invocation (DIR/manifest.json: the commit, whether the tree was
# clean, the date, the machine, the cluster's layout — its nodes, roles and allocatable CPU —
# and per seed its file, phase, duration and count check). `hack/seeds-doc.sh DIR` renders
# docs/seeds.md from them. `make seeds` builds and installs everything first and then calls this.
#
# By default the local-cluster size of each seed runs (<N>-<name>-small.yaml, minutes each);
# --published runs the published size (<N>-<name>.yaml), which needs a bigger cluster (see
# docs/seeds.md). Exit status 1 when any run did not reach Succeeded or a target's count of a
# cell's requests differs from the generator's.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '%s seeds: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
export PATH="$HOME/.cargo/bin:$PATH"

size=small out=out/seeds ns=${BENCHRUN_SEEDS_NAMESPACE:-benchrun-seeds}
numbers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --published) size=published ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    [1-9]) numbers+=("$1") ;;
    *) die "unknown argument '$1' (hack/seeds.sh [--published] [--out DIR] [N...])" ;;
  esac
  shift
done
[ ${#numbers[@]} -gt 0 ] || numbers=(1 2 3 4 5)

seed_file() { # seed_file N: the example of seed N in the chosen size
  local f
  for f in examples/seeds/"$1"-*.yaml; do
    case "$f" in
      *-small.yaml) [ "$size" = small ] && { echo "$f"; return 0; } ;;
      *) [ "$size" = published ] && { echo "$f"; return 0; } ;;
    esac
  done
  return 1
}

# The targets' own counts: every stack counts each cell's requests (the X-Benchrun-Cell header)
# in /stats. While a seed runs, poll_counts keeps the latest /stats of every target pod in
# $counts/<pod>.json (pod IPs refreshed every 5 s, /stats read every second from this host, which
# routes the pod range; a restarted container's predecessor kept in a file of its own);
# check_counts compares their sums with every cell's requests + warm-up.
poll_counts() { # poll_counts NAMESPACE DIR
  local i=0 pods="" line pod ip
  while :; do
    if [ $((i % 5)) -eq 0 ]; then
      pods=$(kubectl -n "$1" get pods -l benchrun.dev/role=target \
        -o jsonpath='{range .items[*]}{.metadata.name} {.status.podIP}{"\n"}{end}' 2>/dev/null || true)
    fi
    while read -r pod ip; do
      [ -n "$ip" ] || continue
      curl -fsS -m 1 "http://$ip:8080/stats" -o "$2/$pod.tmp" 2>/dev/null || continue
      # A restarted container (an OOM kill) counts from zero again: keep what the previous
      # process counted as a file of its own instead of overwriting it.
      if [ -f "$2/$pod.json" ] && [ "$(jq -r '.requests // 0' "$2/$pod.tmp")" -lt "$(jq -r '.requests // 0' "$2/$pod.json")" ]; then
        mv "$2/$pod.json" "$2/$pod.before-$(date +%s%N).json"
      fi
      mv "$2/$pod.tmp" "$2/$pod.json"
    done <<<"$pods"
    i=$((i + 1)); sleep 1
  done
}

check_counts() { # check_counts RUN.json COUNTS_DIR: prints one line per cell, fails on a mismatch
  python3 - "$1" "$2" <<'PY'
import glob, json, sys
run = json.load(open(sys.argv[1]))
name = run["metadata"]["name"]
seen = {}
for f in glob.glob(sys.argv[2] + "/*.json"):
    for tag, n in json.load(open(f)).get("tags", {}).items():
        seen[tag] = seen.get(tag, 0) + n
bad = 0
for r in run.get("status", {}).get("results", []):
    if r.get("outcome") != "Measured":
        continue
    tag = f'{name}/{r["cell"]}/{r["repeat"]}'
    want = r.get("requests", 0) + r.get("warmupRequests", 0)
    # A request (measured or warm-up) that failed at connect, timed out or lost its connection
    # may never have reached the target: the target may lack exactly those (the e2e tests'
    # assert_counts_match rule).
    e = r.get("errors") or {}
    lost = sum(e.get(k, 0) for k in ("connectRefused", "connectTimeout", "timeout", "read")) + r.get("warmupFailed", 0)
    got = seen.get(tag, 0)
    ok = want - lost <= got <= want
    bad += not ok
    verdict = "equal" if got == want else (f"equal but for {want - got} of the {lost} failed requests" if ok else "DIFFERENT")
    print(f'  cell {r["cell"]} repeat {r["repeat"]} {r["coordinates"]["target"]}: target counted {got}, generator {r.get("requests", 0)} + {r.get("warmupRequests", 0)} warm-up ({lost} failed): {verdict}')
sys.exit(1 if bad else 0)
PY
}

[ -n "${KUBECONFIG:-}" ] || eval "$(hack/cluster.sh env)"
kubectl get crd benchmarkruns.benchrun.dev >/dev/null 2>&1 \
  || die "benchrun is not installed on this cluster: run 'make seeds' (or 'make install stacks') first"
. hack/lib/target-dir.sh
target_dir=$(cargo_target_dir)
plugin=$target_dir/release/kubectl-benchrun
[ -x "$plugin" ] || die "no $plugin: run 'make build'"
kubectl get namespace "$ns" >/dev/null 2>&1 || kubectl create namespace "$ns" >/dev/null
mkdir -p "$out"
# Files of an earlier invocation would mix with this one's in the docs: start clean.
rm -f "$out"/*.run.json "$out/manifest.json"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# The commit the run measures, read before it starts (the tree may move while it runs).
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=false; [ -z "$(git status --porcelain 2>/dev/null)" ] || dirty=true
seeds_json=$(mktemp)
echo '[]' >"$seeds_json"

# A seed's time bound: the small ones take minutes; a published one can take hours.
if [ "$size" = small ]; then bound=1800; else bound=21600; fi
failed=() summary=()
for n in "${numbers[@]}"; do
  file=$(seed_file "$n") || die "no $size seed number $n in examples/seeds/"
  name=$(awk '/^  name:/ {print $2; exit}' "$file")
  [ -n "$name" ] || die "$file: no metadata.name"
  base=$out/$(basename "$file" .yaml)
  log "seed $n: $file (run $name in namespace $ns)"
  # A run is a record and never re-executed: to run a seed again, replace it.
  kubectl -n "$ns" delete benchmarkrun "$name" --ignore-not-found --wait=true >/dev/null
  t0=$SECONDS
  counts=$(mktemp -d)
  poll_counts "$ns" "$counts" & poller=$!
  kubectl -n "$ns" apply -f "$file" >/dev/null
  timeout "$bound" "$plugin" -n "$ns" watch "$name" >"$base.watch.log" 2>&1 || true
  took=$((SECONDS - t0))
  kill "$poller" 2>/dev/null; wait "$poller" 2>/dev/null || true
  phase=$(kubectl -n "$ns" get benchmarkrun "$name" -o jsonpath='{.status.phase}' 2>/dev/null || true)
  "$plugin" -n "$ns" show "$name" >"$base.txt" 2>&1 || true
  "$plugin" -n "$ns" show "$name" -o markdown >"$base.md" 2>&1 || true
  "$plugin" -n "$ns" report "$name" -o "$base.html" >/dev/null 2>&1 || true
  kubectl -n "$ns" get benchmarkrun "$name" -o yaml >"$base.run.yaml"
  kubectl -n "$ns" get benchmarkrun "$name" -o json >"$counts/run.json.run"
  cp "$counts/run.json.run" "$base.run.json"
  cat "$base.txt"
  if check_counts "$counts/run.json.run" "$counts" >"$base.counts.txt"; then counted="equal"
  else counted="DIFFERENT"; fi
  echo "requests the targets counted against the generator's ($counted):"; cat "$base.counts.txt"
  rm -rf "$counts"
  line="seed $n $(basename "$file"): ${phase:-unknown} after ${took}s, target counts $counted (results: $base.txt, .md, .html, .run.yaml, .counts.txt)"
  summary+=("$line")
  log "$line"
  [ "$phase" = Succeeded ] && [ "$counted" = equal ] || failed+=("$n")
  jq --arg n "$n" --arg file "$(basename "$file")" --arg phase "${phase:-unknown}" --argjson took "$took" \
    --arg counted "$counted" --arg results "$(basename "$base").run.json" \
    '. + [{number: ($n | tonumber), file: $file, phase: $phase, seconds: $took, counts: $counted, results: $results}]' \
    "$seeds_json" >"$seeds_json.new" && mv "$seeds_json.new" "$seeds_json"
done
# The manifest: what ran, where and from which commit (hack/seeds-doc.sh puts it in the header).
nodes=$(kubectl get nodes -o json | jq -c '[.items[] | {name: .metadata.name,
  role: (.metadata.labels["benchrun.dev/role"] // ""), cpu: .status.allocatable.cpu,
  memory: .status.allocatable.memory, kubelet: .status.nodeInfo.kubeletVersion,
  os: .status.nodeInfo.osImage, kernel: .status.nodeInfo.kernelVersion}]')
jq -n --arg commit "$commit" --argjson dirty "$dirty" --arg started "$started" \
  --arg finished "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg size "$size" \
  --arg machine "$(uname -srm), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)" \
  --argjson nodes "$nodes" --slurpfile seeds "$seeds_json" \
  '{commit: $commit, dirty: $dirty, started: $started, finished: $finished, size: $size,
    machine: $machine, layout: {nodes: $nodes}, seeds: $seeds[0]}' >"$out/manifest.json"
rm -f "$seeds_json"
log "manifest: $out/manifest.json (render docs/seeds.md with: hack/seeds-doc.sh $out > docs/seeds.md)"
echo
printf '%s\n' "${summary[@]}"
[ ${#failed[@]} -eq 0 ] || die "seed(s) ${failed[*]} did not succeed"
