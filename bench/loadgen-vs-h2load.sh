#!/usr/bin/env bash
# benchrun-load against h2load (nghttp2, Debian's nghttp2-client) over TLS and HTTP/2: the
# requests each generator completes per CPU-second it uses, side by side against the same
# demo target (crates/demo) on loopback, in one run. Cells:
#
#   h1-tls  HTTP/1.1 over TLS        (h2load --h1 https://...; ours https://...)
#   h2-tls  HTTP/2 over TLS (ALPN)   (h2load -m M https://...; ours --protocol h2 -m M)
#   h2c     HTTP/2 prior knowledge   (h2load -m M http://...;  ours --protocol h2 -m M)
#
#   bench/loadgen-vs-h2load.sh                      # 3 rounds x 3 s per cell and tool
#   ROUNDS=1 DURATION=2 bench/loadgen-vs-h2load.sh  # quick look
#   OUT=docs/results/loadgen-vs-h2load-$(git rev-parse --short HEAD).txt bench/loadgen-vs-h2load.sh
#   bench/loadgen-vs-h2load.sh render FILE       # the Markdown table of a result file
#   bench/loadgen-vs-h2load.sh update-docs FILE  # ... written into docs/load-generator.md
#
# The demo target (2 tokio workers) is pinned to CPU $SERVER_CPU, each generator to CPU
# $CLIENT_CPU with one thread; cells run interleaved (h2load, ours, h2load, ours, ...) so drift
# on a shared machine hits both alike. CPU = user + sys of the generator process
# (/usr/bin/time), start-up and handshakes included; h2load does not verify certificates, so
# ours runs with --insecure-skip-verify too. `ours` runs with its defaults, `ours-batch` with
# --batch-wait $BATCH_WAIT (several responses per wake-up). Not a test: it prints numbers, asserts nothing.
# Loopback only; every run is bounded by DURATION. Needs root for apt-get when h2load is
# missing. Linux only.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-3}
CONNS=${CONNS:-16}
STREAMS=${STREAMS:-10}
CELLS=${CELLS:-"h1-tls h2-tls h2c"}
PORT=${PORT:-18190}   # HTTP/1.1 (stats); +1: h2c; +2: TLS
BATCH_WAIT=${BATCH_WAIT:-200us}   # ours-batch: ours with --batch-wait
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
REPO=$(cd "$(dirname "$0")/.." && pwd)

log() { printf '%s\n' "$*" >&2; }

install_anchors() {
  if ! command -v h2load >/dev/null || [ ! -x /usr/bin/time ]; then
    log "installing Debian packages nghttp2-client time"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client time >/dev/null
  fi
}

# OURS=/path/benchrun-load and DEMO=/path/benchrun-demo skip the build (release profile).
build() {
  if [ -n "${OURS:-}" ] && [ -n "${DEMO:-}" ]; then return 0; fi
  (cd "$REPO" && cargo build --release -q -p benchrun-load -p benchrun-demo)
  local dir
  dir=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  OURS=${OURS:-$dir/release/benchrun-load}
  DEMO=${DEMO:-$dir/release/benchrun-demo}
}

start_demo() {
  WORK=$(mktemp -d /tmp/loadgen-vs-h2load.XXXXXX)
  taskset -c "$SERVER_CPU" "$DEMO" --listen 127.0.0.1 --port "$PORT" --h2c-port $((PORT + 1)) \
    --tls-port $((PORT + 2)) >"$WORK/demo.log" 2>&1 &
  DEMO_PID=$!
  for _ in $(seq 50); do
    (exec 3<>/dev/tcp/127.0.0.1/$((PORT + 2))) 2>/dev/null && return 0
    sleep 0.1
  done
  log "the demo target did not start"; cat "$WORK/demo.log" >&2; exit 1
}

stop_demo() {
  if [ -n "${DEMO_PID:-}" ]; then kill "$DEMO_PID" 2>/dev/null || true; wait "$DEMO_PID" 2>/dev/null || true; fi
}
trap stop_demo EXIT

# run_cmd_of TOOL CELL: sets cmd to the command of a cell (ours-batch: ours's plus a batch
# wait).
run_cmd_of() {
  local tool=$1 cell=$2
  local tls="https://127.0.0.1:$((PORT + 2))/hello" h2c="http://127.0.0.1:$((PORT + 1))/hello"
  case "$tool/$cell" in
    h2load/h1-tls) cmd=(h2load --h1 -t1 -c "$CONNS" -D "$DURATION" "$tls") ;;
    h2load/h2-tls) cmd=(h2load -t1 -c "$CONNS" -m "$STREAMS" -D "$DURATION" "$tls") ;;
    h2load/h2c) cmd=(h2load -t1 -c "$CONNS" -m "$STREAMS" -D "$DURATION" "$h2c") ;;
    ours/h1-tls) cmd=("$OURS" --threads 1 -c "$CONNS" -d "${DURATION}s" --insecure-skip-verify --output json "$tls") ;;
    ours/h2-tls) cmd=("$OURS" --threads 1 -c "$CONNS" --protocol h2 --max-concurrent-streams "$STREAMS" -d "${DURATION}s" --insecure-skip-verify --output json "$tls") ;;
    ours/h2c) cmd=("$OURS" --threads 1 -c "$CONNS" --protocol h2 --max-concurrent-streams "$STREAMS" -d "${DURATION}s" --output json "$h2c") ;;
    ours-batch/*) run_cmd_of ours "$cell"; cmd+=(--batch-wait "$BATCH_WAIT") ;;
  esac
}

# run_one TOOL CELL: appends "cell tool requests cpu_s secs" to $RESULTS.
run_one() {
  local tool=$1 cell=$2 out="$WORK/out.txt" tm="$WORK/time.txt" cmd n
  run_cmd_of "$tool" "$cell"
  /usr/bin/time -f '%U %S' -o "$tm" taskset -c "$CLIENT_CPU" "${cmd[@]}" >"$out" 2>&1 || true
  case $tool in
    # Requests that got a 2xx: a failing run does not count as fast.
    h2load) n=$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$out") ;;
    ours*) n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["successes"])' "$out" 2>/dev/null || echo 0) ;;
  esac
  read -r u s <"$tm"
  echo "$cell $tool ${n:-0} $(python3 -c "print(round($u+$s, 3))") $DURATION" >>"$RESULTS"
  log "  $cell $tool: ${n:-0} requests, cpu $(python3 -c "print(round($u+$s,2))") s"
}

# summarize FILE: the median requests per CPU-second per cell and tool, and ours / h2load.
summarize() {
  python3 - "$1" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    cell, tool, n, cpu, secs = line.split()
    rows[(cell, tool)].append((int(n), float(cpu), float(secs)))
print(f"{'cell':7} {'tool':10} {'req/s':>9} {'req/CPU-s':>10} {'vs h2load':>9}  runs")
for cell in ("h1-tls", "h2-tls", "h2c"):
    med = {}
    for tool in ("h2load", "ours", "ours-batch"):
        v = rows.get((cell, tool))
        if v:
            med[tool] = (statistics.median(n / s for n, _, s in v),
                         statistics.median(n / max(c, 1e-9) for n, c, _ in v), len(v))
    ref = med.get("h2load")
    for tool, (rps, per_cpu, runs) in med.items():
        ratio = f"{per_cpu / ref[1]:.2f}x" if ref and ref[1] else "-"
        print(f"{cell:7} {tool:10} {rps:>9.0f} {per_cpu:>10.0f} {ratio:>9}  {runs}")
PY
}

# render FILE: the Markdown table of docs/load-generator.md, from a committed result file.
render() {
  local file=$1
  local meta
  meta=$(sed -n 's/^# //p' "$file" | head -1)
  echo "Measured $meta; \`bench/loadgen-vs-h2load.sh render $file\`:"
  echo
  echo "| cell | tool | req/s | requests per CPU-second | vs h2load |"
  echo "|---|---|---:|---:|---:|"
  summarize "$file" | tail -n +2 | while read -r cell tool rps per_cpu ratio _; do
    echo "| $cell | $tool | $rps | $per_cpu | $ratio |"
  done
}

# update_docs FILE: replaces the table between the h2load-table markers of
# docs/load-generator.md with `render FILE`.
update_docs() {
  local table doc="$REPO/docs/load-generator.md"
  table=$(render "$1")
  TABLE="$table" python3 - "$doc" <<'PY'
import os, re, sys
path = sys.argv[1]
text = open(path).read()
begin, end = "<!-- h2load-table:begin -->", "<!-- h2load-table:end -->"
new = f"{begin}\n{os.environ['TABLE']}\n{end}"
text, n = re.subn(re.escape(begin) + ".*?" + re.escape(end), lambda _: new, text, flags=re.S)
if n != 1:
    sys.exit(f"{path}: no h2load-table markers")
open(path, "w").write(text)
PY
}

main() {
  install_anchors
  build
  start_demo
  RESULTS=${OUT:-$WORK/results.txt}
  {
    echo "# $(cd "$REPO" && git rev-parse --short HEAD) on $(date -u +%Y-%m-%d), $ROUNDS round(s) x ${DURATION}s, $CONNS connections, $STREAMS streams (h2), ours-batch --batch-wait $BATCH_WAIT, $(h2load --version | head -1)"
    echo "# cell tool successes cpu_seconds seconds"
  } >"$RESULTS"
  log "demo target pid $DEMO_PID on CPU $SERVER_CPU, generators on CPU $CLIENT_CPU"
  for round in $(seq "$ROUNDS"); do
    log "round $round"
    for cell in $CELLS; do
      for tool in h2load ours ours-batch; do run_one "$tool" "$cell"; done
    done
  done
  summarize "$RESULTS"
  log "raw rows in $RESULTS"
}

case "${1:-}" in
  render) render "$2" ;;
  update-docs) update_docs "$2" ;;
  summarize) summarize "$2" ;;
  *) main "$@" ;;
esac
