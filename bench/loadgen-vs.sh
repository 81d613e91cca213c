#!/usr/bin/env bash
# Compares benchrun-load with the C/Rust/Go anchors (wrk, oha, bombardier, h2load, ab, and
# wrk2 for the open model) for throughput, generator CPU per request, peak RSS and (open
# model) corrected p99, against one nginx worker.
#
#   bench/loadgen-vs.sh                 # full run: 3 rounds x 10 s per cell
#   ROUNDS=1 DURATION=3 bench/loadgen-vs.sh   # quick look
#   INSTALL=0 CONNS=50 bench/loadgen-vs.sh    # only the installed tools, only c=50
#   ONLY=open RATE=100000 bench/loadgen-vs.sh  # only the open-model cells (ka, close, open)
#   TOOLS="wrk ours" bench/loadgen-vs.sh       # only these tools (default: all found)
#
# `ours` runs with its defaults (io_uring where the kernel allows it), `ours-epoll` with
# `--backend epoll`, `ours-batch` with `--batch-wait $BATCH_WAIT` (default 200us) and, in the
# open model, `ours-coarse` with `--schedule-quantum $COARSE` (default 500us); each result
# line names the back end that ran and whether receives were timestamped.
#
# wrk2 is not packaged in Debian. Give its binary with WRK2=/path (or put `wrk2` on PATH or
# in $TOOLS_ROOT/bin): build it yourself from github.com/giltene/wrk2 (`make`), outside this
# repository. Without it the open model is measured for ours only. wrk2 spends its first
# 10 s calibrating and drops those samples, so open-model cells run OPEN_WARMUP (10) s of
# warm-up plus DURATION s for both tools, and CPU per request is over the whole run.
#
# nginx (1 worker) is pinned to CPU 0 and every generator to CPU 1 with taskset, so each
# generator has exactly one core; cells run interleaved (A B C A B C ...) so drift on a
# shared machine hits all tools alike. Not a test: it prints numbers, asserts nothing.
# Needs root for apt-get when the anchors are missing. Linux only.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CONNS=${CONNS:-"50 500"}
PORT=${PORT:-18089}
RATE=${RATE:-100000}
OPEN_CONNS=${OPEN_CONNS:-50}
OPEN_WARMUP=${OPEN_WARMUP:-10}
BATCH_WAIT=${BATCH_WAIT:-200us}
COARSE=${COARSE:-500us}
ONLY=${ONLY:-"ka close open"}
TOOLS_ROOT=${TOOLS_ROOT:-/var/cache/benchrun/tools}
INSTALL=${INSTALL:-1}   # 0: use what is installed, skip missing tools
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
REPO=$(cd "$(dirname "$0")/.." && pwd)
URL="http://127.0.0.1:${PORT}/"
export PATH="$TOOLS_ROOT/bin:$PATH"
WRK2=${WRK2:-$(command -v wrk2 || true)}

log() { printf '%s\n' "$*" >&2; }

install_anchors() {
  local missing=()
  for bin in nginx wrk ab h2load; do command -v "$bin" >/dev/null || missing+=("$bin"); done
  [ -x /usr/bin/time ] || missing+=(time)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages (missing: ${missing[*]})"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx wrk apache2-utils nghttp2-client time >/dev/null
  fi
  if ! command -v oha >/dev/null; then
    log "installing oha with cargo into $TOOLS_ROOT"
    # Its own target dir: the workspace one (.cargo/config.toml) would hold the build lock.
    (cd / && CARGO_TARGET_DIR="$TOOLS_ROOT/build" cargo install oha --locked --root "$TOOLS_ROOT") \
      || log "oha install failed: skipping oha"
  fi
  if ! command -v bombardier >/dev/null && command -v go >/dev/null; then
    log "installing bombardier with go into $TOOLS_ROOT/bin"
    GOBIN="$TOOLS_ROOT/bin" go install github.com/codesenberg/bombardier@latest \
      || log "bombardier install failed: skipping bombardier"
  fi
}

build_ours() {
  if [ -n "${OURS:-}" ]; then return 0; fi   # OURS=/path/to/benchrun-load skips the build
  # Profile dist (thin LTO across crates, Cargo.toml): the build the load image ships.
  (cd "$REPO" && cargo build --profile dist -q -p benchrun-load --bin benchrun-load)
  local dir
  dir=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  OURS="$dir/dist/benchrun-load"
}

start_nginx() {
  WORK=$(mktemp -d /tmp/loadgen-vs.XXXXXX)
  mkdir -p "$WORK/logs"
  cat >"$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 120s;
  client_body_temp_path $WORK/body;
  proxy_temp_path $WORK/proxy;
  fastcgi_temp_path $WORK/fastcgi;
  uwsgi_temp_path $WORK/uwsgi;
  scgi_temp_path $WORK/scgi;
  server {
    listen 127.0.0.1:$PORT reuseport backlog=4096;
    location / {
      default_type application/json;
      return 200 '{"message":"Hello, World!"}';
    }
  }
}
CONF
  taskset -c "$SERVER_CPU" nginx -p "$WORK" -c "$WORK/nginx.conf" &
  NGINX_PID=$!
  for _ in $(seq 50); do curl_ok && return 0; sleep 0.1; done
  log "nginx did not start"; cat "$WORK/logs/error.log" >&2; exit 1
}

curl_ok() { (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null; }

stop_nginx() {
  if [ -n "${NGINX_PID:-}" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
}
trap stop_nginx EXIT

# run_one TOOL CONNS MODE: runs one cell, appends
# "tool mode conns rps cpu_s rss_kb secs p99_us" to $RESULTS (secs: the run's length, over
# which CPU per request is counted; p99_us: open model only, else 0).
run_one() {
  local tool=$1 c=$2 mode=$3 out="$WORK/out.txt" tm="$WORK/time.txt" cmd rps p99 secs=$DURATION
  local kind=$tool
  # ours-epoll: ours with the epoll back end forced (ours alone picks io_uring when it can);
  # ours-batch: ours with --batch-wait $BATCH_WAIT (longer batches of responses per wake-up);
  # ours-coarse: ours with --schedule-quantum $COARSE (open model: fewer, larger bursts).
  local extra=()
  unset BENCHRUN_LOAD_BACKEND
  case $tool in
    ours-epoll) kind=ours; export BENCHRUN_LOAD_BACKEND=epoll ;;
    ours-batch) kind=ours; extra=(--batch-wait "$BATCH_WAIT") ;;
    ours-coarse) kind=ours; extra=(--schedule-quantum "$COARSE") ;;
  esac
  case "$kind/$mode" in
    wrk/ka) cmd=(wrk -t1 -c"$c" -d"${DURATION}s" "$URL") ;;
    ours/ka) cmd=("$OURS" -c "$c" -d "${DURATION}s" "${extra[@]}" --output json "$URL") ;;
    ours/close) cmd=("$OURS" -c "$c" -d "${DURATION}s" --no-keepalive "${extra[@]}" --output json "$URL") ;;
    ours/open) cmd=("$OURS" -c "$c" -d "${DURATION}s" --warmup "${OPEN_WARMUP}s" --rate "$RATE" "${extra[@]}" --output json "$URL")
      secs=$((DURATION + OPEN_WARMUP)) ;;
    wrk2/open) [ -n "$WRK2" ] || return 0
      cmd=("$WRK2" -t1 -c"$c" -d"$((DURATION + OPEN_WARMUP))s" -R"$RATE" --latency "$URL")
      secs=$((DURATION + OPEN_WARMUP)) ;;
    oha/ka) cmd=(oha --no-tui -z "${DURATION}s" -c "$c" "$URL") ;;
    bombardier/ka) cmd=(bombardier -c "$c" -d "${DURATION}s" -p r -o json "$URL") ;;
    h2load/ka) cmd=(h2load --h1 -t1 -c "$c" -D "$DURATION" "$URL") ;;
    ab/ka) cmd=(ab -k -q -c "$c" -t "$DURATION" -n 100000000 "$URL") ;;
    ab/close) cmd=(ab -q -c "$c" -t "$DURATION" -n 100000000 "$URL") ;;
    *) log "unknown cell $tool/$mode"; return ;;
  esac
  command -v "${cmd[0]}" >/dev/null || return 0
  if [ -n "${TOOLS:-}" ] && [[ " $TOOLS " != *" $tool "* ]]; then return 0; fi
  /usr/bin/time -f '%U %S %M' -o "$tm" taskset -c "$CLIENT_CPU" "${cmd[@]}" >"$out" 2>&1 || true
  rps=$(parse_rps "$kind" "$out")
  p99=0
  if [ "$mode" = open ]; then p99=$(parse_p99 "$kind" "$out"); fi
  read -r u s rss <"$tm"
  echo "$tool $mode $c ${rps:-0} $(python3 -c "print($u+$s)") $rss $secs ${p99:-0}" >>"$RESULTS"
  log "  $tool $mode c=$c: ${rps:-?} req/s, cpu $(python3 -c "print(round($u+$s,2))") s, rss ${rss} KB$([ "$mode" = open ] && echo ", p99 ${p99} us")"
  if [ "$kind" = ours ]; then
    python3 - "$out" "$tool" >&2 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
line = f"    {sys.argv[2]}: backend {r.get('backend', '?')}, rx timestamps {r.get('rx_timestamps', '?')}"
lag = r.get("schedule_lag")
if lag:
    line += f", schedule lag mean {lag['mean_us']:.1f} us, max {lag['max_us']} us"
print(line)
PY
  fi
}

# parse_p99 TOOL FILE: corrected p99 in microseconds (open model).
parse_p99() {
  case $1 in
    ours) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["latency"]["p99_us"])' "$2" ;;
    wrk2) python3 - "$2" <<'PY'
import re, sys
scale = {"us": 1, "ms": 1e3, "s": 1e6, "m": 6e7}
for line in open(sys.argv[1]):
    m = re.match(r"\s*99\.000%\s+([0-9.]+)(us|ms|s|m)\s*$", line)
    if m:
        print(round(float(m.group(1)) * scale[m.group(2)])); break
PY
    ;;
  esac
}

parse_rps() {
  local tool=$1 f=$2
  case $tool in
    wrk|wrk2) awk '/^Requests\/sec/ {print $2}' "$f" ;;
    ours) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["throughput"])' "$f" ;;
    oha) awk '/Requests\/sec/ {print $2; exit}' "$f" ;;
    bombardier) python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["rps"]["mean"])' "$f" ;;
    h2load) sed -n 's/^finished in .*, \([0-9.]*\) req\/s.*/\1/p' "$f" ;;
    ab) awk '/^Requests per second/ {print $4}' "$f" ;;
  esac
}

main() {
  if [ "$INSTALL" = 1 ]; then install_anchors; fi
  build_ours
  start_nginx
  RESULTS="$WORK/results.txt"
  : >"$RESULTS"
  log "nginx pid $NGINX_PID on CPU $SERVER_CPU, generators on CPU $CLIENT_CPU; $ROUNDS round(s) x ${DURATION}s"
  [ -n "$WRK2" ] || log "no wrk2 (set WRK2=/path): the open model is measured for ours only"
  for round in $(seq "$ROUNDS"); do
    log "round $round"
    if [[ " $ONLY " == *" ka "* ]]; then
      for c in $CONNS; do
        for tool in wrk ours ours-epoll ours-batch oha bombardier h2load ab; do run_one "$tool" "$c" ka; done
      done
    fi
    if [[ " $ONLY " == *" close "* ]]; then
      for tool in ab ours ours-epoll; do run_one "$tool" 50 close; done
    fi
    if [[ " $ONLY " == *" open "* ]]; then
      for tool in wrk2 ours ours-epoll ours-coarse; do run_one "$tool" "$OPEN_CONNS" open; done
    fi
  done
  python3 - "$RESULTS" "$RATE" <<'PY'
import statistics, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tool, mode, c, rps, cpu, rss, secs, p99 = line.split()
    rows[(mode, int(c), tool)].append((float(rps), float(cpu), int(rss), float(secs), int(p99)))
print(f"{'mode':6} {'c':>4} {'tool':11} {'req/s':>10} {'CPU us/req':>11} {'RSS MB':>7} {'p99 ms':>7} {'req/s vs ref':>12} {'CPU/req vs ref':>14} {'RSS vs ref':>10} {'p99 vs ref':>10}  runs")
for mode in ("ka", "close", "open"):
    for c in sorted({k[1] for k in rows if k[0] == mode}):
        ref = {"ka": "wrk", "close": "ab", "open": "wrk2"}[mode]
        med = {}
        for (m, cc, tool), v in rows.items():
            if m == mode and cc == c:
                rps = statistics.median(x[0] for x in v)
                cpu_us = statistics.median(x[1] * 1e6 / max(x[0] * x[3], 1) for x in v)
                rss = statistics.median(x[2] for x in v) / 1024
                p99 = statistics.median(x[4] for x in v) / 1000
                med[tool] = (rps, cpu_us, rss, p99, len(v))
        r = med.get(ref)
        ratio = lambda a, b: f"{a / b:.2f}" if r and b else "-"
        for tool, (rps, cpu_us, rss, p99, n) in sorted(med.items(), key=lambda kv: kv[0] != ref):
            p99s = f"{p99:.3f}" if mode == "open" else "-"
            p99r = ratio(p99, r[3]) if r and mode == "open" else "-"
            print(f"{mode:6} {c:>4} {tool:11} {rps:>10.0f} {cpu_us:>11.2f} {rss:>7.1f} {p99s:>7} "
                  f"{ratio(rps, r[0]) if r else '-':>12} {ratio(cpu_us, r[1]) if r else '-':>14} "
                  f"{ratio(rss, r[2]) if r else '-':>10} {p99r:>10}  {n}")
print("CPU us/req = (user+sys of the generator process, /usr/bin/time) / (req/s x run seconds);"
      " ka = keep-alive, close = new connection per request,"
      f" open = fixed rate ({sys.argv[2]} req/s, corrected p99; run = warm-up/calibration + window).")
PY
}

# bench/profile.sh sources this file for its functions.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; fi
