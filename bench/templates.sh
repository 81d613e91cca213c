#!/usr/bin/env bash
# What request templates cost the load generator: benchrun-load with a fixed path against
# the same request with three values drawn per request (a random id in the path, a pick
# from a list in the query, a sequence in a header), in the closed model with keep-alive
# and in the open model, against one nginx worker. Prints CPU per request of each and the
# ratio templated / fixed.
#
#   bench/templates.sh                      # 3 rounds x 10 s per cell
#   ROUNDS=1 DURATION=3 bench/templates.sh  # quick look
#
# As in bench/loadgen-vs.sh (whose functions this uses): nginx pinned to CPU 0, the generator
# to CPU 1, cells interleaved (fixed, templated, fixed, ...) so drift hits both alike. Loopback
# only. Not a test: it prints numbers, asserts nothing.
set -euo pipefail

# Ours before sourcing, which sets its own defaults for these.
T_CONNS=${CONNS:-50}
T_RATE=${RATE:-50000}
# shellcheck source=bench/loadgen-vs.sh
source "$(dirname "$0")/loadgen-vs.sh"
CONNS=$T_CONNS
RATE=$T_RATE

# cell KIND MODE: one run of ours; appends "kind mode rps cpu_s secs p99_us" to $RESULTS.
cell() {
  local kind=$1 mode=$2 out="$WORK/out.txt" tm="$WORK/time.txt" args=() url
  case $kind in
    fixed) url="${URL}doc/4711?c=green"; args=(-H "X-Seq: 12345") ;;
    templated) url="${URL}doc/{{id}}?c={{c}}"
      args=(-H "X-Seq: {{n}}" --value "id=random:1..10000" --value "c=pick:red,green,blue"
            --value "n=sequence:1..1000000" --seed 1) ;;
  esac
  case $mode in
    ka) args+=(-d "${DURATION}s") ;;
    open) args+=(-d "${DURATION}s" --rate "$RATE") ;;
  esac
  /usr/bin/time -f '%U %S %M' -o "$tm" taskset -c "$CLIENT_CPU" \
    "$OURS" -c "$CONNS" "${args[@]}" --output json "$url" >"$out" 2>&1 || true
  read -r u s _ <"$tm"
  python3 - "$out" "$kind" "$mode" "$u" "$s" "$DURATION" >>"$RESULTS" <<'PY'
import json, sys
out, kind, mode, u, s, secs = sys.argv[1:]
r = json.load(open(out))
assert r["errors"]["total"] == 0, r["errors"]
print(kind, mode, r["throughput"], float(u) + float(s), secs, r["latency"]["p99_us"])
PY
  tail -1 "$RESULTS" >&2
}

templates_main() {
  if [ "$INSTALL" = 1 ]; then
    command -v nginx >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx time >/dev/null; }
  fi
  build_ours
  start_nginx
  RESULTS="$WORK/results.txt"
  : >"$RESULTS"
  log "nginx on CPU $SERVER_CPU, benchrun-load on CPU $CLIENT_CPU; $ROUNDS round(s) x ${DURATION}s, c=$CONNS, open model at $RATE req/s"
  for round in $(seq "$ROUNDS"); do
    log "round $round"
    for mode in ka open; do
      for kind in fixed templated; do cell "$kind" "$mode"; done
    done
  done
  python3 - "$RESULTS" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kind, mode, rps, cpu, secs, p99 = line.split()
    rows[(mode, kind)].append((float(rps), float(cpu) * 1e6 / (float(rps) * float(secs)), int(p99)))
print(f"{'mode':5} {'request':10} {'req/s':>9} {'CPU us/req':>11} {'p99 ms':>7}  {'CPU/req vs fixed':>16}  runs")
for mode in ("ka", "open"):
    med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) + (len(v),)
           for (m, k), v in rows.items() if m == mode}
    for kind in ("fixed", "templated"):
        if kind not in med:
            continue
        rps, cpu, p99, n = med[kind]
        ratio = cpu / med["fixed"][1] if "fixed" in med else float("nan")
        print(f"{mode:5} {kind:10} {rps:>9.0f} {cpu:>11.2f} {p99 / 1000:>7.3f}  {ratio:>16.3f}  {n}")
print("Medians over the rounds. CPU us/req = (user+sys of benchrun-load) / (req/s x seconds);"
      " templated = 3 values drawn per request (random id, pick, sequence) in path, query and header.")
PY
}

templates_main "$@"
