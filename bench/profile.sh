#!/usr/bin/env bash
# Profiles benchrun-load with perf against the same pinned nginx as bench/loadgen-vs.sh and
# prints where its CPU goes: the user/kernel split, the top symbols, and the top symbols
# grouped by the syscall they sit under.
#
#   bench/profile.sh                          # closed model, c=50, 10 s
#   MODE=open RATE=100000 bench/profile.sh    # open model
#   MODE=close bench/profile.sh               # a new connection per request
#   ARGS="-c 500" bench/profile.sh            # extra benchrun-load arguments
#
# Needs perf (Debian: linux-perf) and root (or perf_event_paranoid <= 1). The perf data and
# the full report stay in $OUT (default /tmp/benchrun-profile). Not a test.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=loadgen-vs.sh
source "$HERE/loadgen-vs.sh"

MODE=${MODE:-ka}
OUT=${OUT:-/tmp/benchrun-profile}
FREQ=${FREQ:-4999}
ARGS=${ARGS:-"-c 50"}

command -v perf >/dev/null || {
  log "perf is missing: apt-get install linux-perf"
  exit 1
}
build_ours
start_nginx
mkdir -p "$OUT"
extra=()
case $MODE in
  ka) ;;
  close) extra=(--no-keepalive) ;;
  open) extra=(--rate "$RATE") ;;
  *) log "MODE must be ka, close or open"; exit 2 ;;
esac
# shellcheck disable=SC2086
taskset -c "$CLIENT_CPU" perf record -q -F "$FREQ" -g --call-graph dwarf,16384 -o "$OUT/perf.data" \
  -- "$OURS" $ARGS -d "${DURATION}s" "${extra[@]}" --output json "$URL" >"$OUT/result.json"
python3 - "$OUT/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
if r["requests"] == 0:
    sys.exit(f"no requests completed (errors: {r['errors']})")
c = r["cpu"]
print(f"{r['requests']} requests, {r['throughput']:.0f} req/s, errors {r['errors']['total']}")
print(f"CPU per request: {c['us_per_request']:.2f} us "
      f"(user {c['user_us'] / r['requests']:.2f}, kernel {c['system_us'] / r['requests']:.2f})")
PY
perf report -i "$OUT/perf.data" --no-children --sort dso --stdio -g none 2>/dev/null \
  | grep -v '^#' | grep -v '^$' | head -8
echo "--- top symbols (self) ---"
perf report -i "$OUT/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null \
  | grep -v '^#' | grep -v '^$' | head -40 | tee "$OUT/top.txt"
echo "--- by syscall entry (children) ---"
perf report -i "$OUT/perf.data" --children --sort sym --stdio -g none 2>/dev/null \
  | grep -E '__x64_sys_|\[\.\] (main|benchrun|std::|mio|httparse|hdrhistogram)' | head -25
log "perf data and reports: $OUT"
