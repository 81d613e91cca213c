#!/usr/bin/env bash
# tests/stacks/stacks-test.sh — every image of stacks/ on the local cluster, checked endpoint by
# endpoint (stacks/CONTRACT.md).
#
#   1. The databases: the MongoDB-compatible server (stacks/ferretdb) and the CouchDB-compatible
#      one (stacks/couchdb), each seeded by its loader (stacks/mongo-seed, stacks/couch-seed)
#      run as a pod that must succeed.
#   2. Every HTTP stack as a pod with a CPU and a memory limit (JVM 512Mi, others 256Mi; Express
#      with WORKERS=auto and a 1500m limit, so it runs two workers; two more Express pods at 1
#      and 2 CPUs must run 1 and 2 workers), the limits given as the
#      operator gives them (BENCHRUN_CPU_LIMIT_MILLICORES, BENCHRUN_MEMORY_LIMIT_BYTES from the
#      Downward API), ready on /healthz; /stats must say what the runtime was sized by.
#   3. From this host to each pod: /hello (exact JSON), /compute?n=10000 (1229 primes),
#      /compute?n=abc (400), an unknown path (404), /healthz; /items (the 100 seeded documents
#      through the real MongoDB driver) and /docs/{id} (the 4 KB document; 404 past the last id)
#      where the stack implements them, /answers whole and projected (seed 1) and /strings
#      (seed 4) where it implements them, the server settings in /stats runtime; then STACKS_TEST_REQUESTS requests (default 2000) with
#      benchrun-load and an X-Benchrun-Cell tag, and /stats must count every request exactly,
#      per path and per tag. The container of STACKS_TEST_RESTART (default spring-mvc) is then
#      killed with SIGKILL from the host and must count on from where it was once restarted.
# Prints one ok/FAIL line per check, a table of ready times and memory after the load, and
# "N passed, N failed" last; exits non-zero on failure. Everything runs in its own namespace,
# deleted at exit. Traffic goes only to the local cluster's pods.
#
# Usage: tests/stacks/stacks-test.sh [STACK...]   (default: every stack in stacks/)
# Needs the images (hack/stacks.sh) and benchrun-load (make build) built.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${KUBECONFIG:-}" ]; then eval "$("$repo/hack/cluster.sh" env)"; fi
if ! command -v kubectl >/dev/null 2>&1; then eval "$("$repo/hack/cluster.sh" env | grep '^export PATH=')"; fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)
target_dir=$("$repo/hack/target-dir.sh")
load=${BENCHRUN_LOAD:-$target_dir/release/benchrun-load}
requests=${STACKS_TEST_REQUESTS:-2000}
ready_timeout=${STACKS_TEST_READY_TIMEOUT:-300}
# Stacks whose container is killed and restarted after the load, to check that /stats survives
# (the JVM stacks share the counters, so one of them stands for all).
restart_stacks=${STACKS_TEST_RESTART:-spring-mvc}
NS=benchrun-stacks-$(date +%s)-$$
passed=0 failed=0
report=()

k() { kubectl --request-timeout=20s -n "$NS" "$@"; }
ok() { echo "ok   - $*"; passed=$((passed + 1)); }
fail() { echo "FAIL - $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

cleanup() {
  local rc=$?
  if [ "$failed" -gt 0 ] || [ "$rc" -ne 0 ]; then
    echo "# ---- diagnostics for namespace $NS ----" >&2
    kubectl --request-timeout=10s -n "$NS" get pods -o wide >&2 2>&1 || true
    kubectl --request-timeout=10s -n "$NS" get events --sort-by=.lastTimestamp >&2 2>&1 | tail -30 || true
    for p in $(kubectl --request-timeout=10s -n "$NS" get pods -o name 2>/dev/null); do
      echo "# logs $p:" >&2; kubectl --request-timeout=10s -n "$NS" logs "$p" --tail=15 >&2 2>&1 || true
    done
  fi
  kubectl --request-timeout=15s delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$load" ] || { echo "stacks-test: $load not found: run make build" >&2; exit 1; }
mapfile -t all < <("$repo/hack/stacks.sh" --list)
wanted=("$@")
selected() { [ ${#wanted[@]} -eq 0 ] && return 0; local w; for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }

# pod NAME IMAGE_STACK RESTART CPU MEMORY [ENV_JSON] [PORT] — applies a pod running a stack image.
pod() {
  local name=$1 stack=$2 restart=$3 cpu=$4 mem=$5 env=${6:-[]} port=${7:-}
  local probe=null
  [ -n "$port" ] && probe=$(jq -nc --argjson p "$port" '{httpGet:{path:"/healthz",port:$p},periodSeconds:1,failureThreshold:600}')
  jq -n --arg name "$name" --arg image "benchrun.local/stack-$stack:$version" --arg restart "$restart" \
    --arg cpu "$cpu" --arg mem "$mem" --argjson env "$env" --argjson probe "$probe" '{
      apiVersion: "v1", kind: "Pod",
      metadata: {name: $name, labels: {app: $name}},
      spec: {
        restartPolicy: $restart, enableServiceLinks: false, dnsPolicy: "Default",
        securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532},
        containers: [{
          name: "main", image: $image, imagePullPolicy: "Never",
          env: ([{name: "BENCHRUN_CPU_LIMIT_MILLICORES", valueFrom: {resourceFieldRef: {resource: "limits.cpu", divisor: "1m"}}},
                 {name: "BENCHRUN_MEMORY_LIMIT_BYTES", valueFrom: {resourceFieldRef: {resource: "limits.memory", divisor: "1"}}}] + $env),
          resources: {requests: {cpu: "50m", memory: "64Mi"}, limits: {cpu: $cpu, memory: $mem}},
          securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}}
        } + (if $probe == null then {} else {readinessProbe: $probe} end)]
      }
    }' | k apply -f - >/dev/null
}
pod_ip() { k get pod "$1" -o jsonpath='{.status.podIP}'; }
# wait_ready POD TIMEOUT — waits for the pod's Ready condition.
wait_ready() {
  k wait --for=condition=Ready "pod/$1" --timeout="${2}s" >/dev/null 2>&1
}
# wait_restarted POD N TIMEOUT — waits until the pod's container has restarted N times and is
# ready again.
wait_restarted() {
  local end=$(( $(date +%s) + $3 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    [ "$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}/{.status.containerStatuses[0].ready}' 2>/dev/null)" = "$2/true" ] && return 0
    sleep 1
  done
  return 1
}
# wait_done POD TIMEOUT — waits for the pod to succeed (0) or fail (1).
wait_done() {
  local end=$(( $(date +%s) + $2 )) phase
  while [ "$(date +%s)" -lt "$end" ]; do
    phase=$(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null)
    [ "$phase" = Succeeded ] && return 0
    [ "$phase" = Failed ] && return 1
    sleep 2
  done
  return 1
}
# ready_seconds POD — from the pod's creation to its Ready condition.
ready_seconds() {
  k get pod "$1" -o json | jq -r '((.status.conditions[] | select(.type=="Ready") | .lastTransitionTime | fromdate)
    - (.metadata.creationTimestamp | fromdate))'
}

kubectl --request-timeout=20s create namespace "$NS" >/dev/null || { echo "cannot create namespace $NS" >&2; exit 1; }
echo "# namespace $NS, images benchrun.local/stack-*:$version"

# --- 1. databases and their data ---------------------------------------------------------
mongo_url='' couch_url=''
has_stack() { printf '%s\n' "${all[@]}" | cut -f1 | grep -qx "$1"; }
if has_stack ferretdb && has_stack mongo-seed; then
  pod mongo ferretdb Always 1 512Mi
  if wait_ready mongo 120; then # no probe (not HTTP): Ready once its container runs
    mongo_url="mongodb://$(pod_ip mongo):27017/benchrun"
    pod mongo-seed mongo-seed Never 1 256Mi "$(jq -nc --arg u "$mongo_url" '[{name:"MONGODB_URL",value:$u}]')"
    check "mongo-seed loads the 100 items into ferretdb" wait_done mongo-seed 180
  else
    fail "ferretdb is not running"
  fi
fi
if has_stack couchdb && has_stack couch-seed; then
  pod couch couchdb Always 1 512Mi '[]' 5984
  if wait_ready couch 120; then
    couch_url="http://$(pod_ip couch):5984"
    pod couch-seed couch-seed Never 1 256Mi "$(jq -nc --arg u "$couch_url" '[{name:"COUCHDB_URL",value:$u}]')"
    check "couch-seed loads the 10000 documents of 4 KB" wait_done couch-seed 300
  else
    fail "couchdb is not ready"
  fi
fi

# --- 2. every HTTP stack -----------------------------------------------------------------
http_stacks=()
for line in "${all[@]}"; do
  IFS=$'\t' read -r name runtime endpoints <<<"$line"
  [ -n "$endpoints" ] && selected "$name" || continue
  http_stacks+=("$name")
  mem=256Mi cpu=500m
  case $runtime in jvm*) mem=512Mi ;; esac
  env=$(jq -nc --arg m "$mongo_url" --arg c "$couch_url" \
    '[{name:"PORT",value:"8080"}] + (if $m != "" then [{name:"MONGODB_URL",value:$m}] else [] end)
     + (if $c != "" then [{name:"COUCHDB_URL",value:$c}] else [] end)')
  if [ "$name" = express ]; then
    cpu=1500m; env=$(jq -c '. + [{name:"WORKERS",value:"auto"}]' <<<"$env")
  fi
  # The seeds' server settings, given as a BenchmarkRun's target env gives them (checked in
  # /stats runtime below): Tomcat's pool and accept queue, Netty's listen backlog.
  case $name in
    spring-mvc) env=$(jq -c '. + [{name:"SERVER_TOMCAT_THREADS_MAX",value:"500"},{name:"SERVER_TOMCAT_ACCEPT_COUNT",value:"1000"}]' <<<"$env") ;;
    spring-webflux) env=$(jq -c '. + [{name:"NETTY_SO_BACKLOG",value:"100"}]' <<<"$env") ;;
  esac
  pod "s-$name" "$name" Always "$cpu" "$mem" "$env" 8080
done

# --- 3. checks ---------------------------------------------------------------------------
# get URL — fetches URL into the body file, prints the status and notes the request in the
# sent file (counted per /stats path below, whether or not the check passes).
get() {
  local path=${1#http://*/}
  echo "/${path%%\?*}" >> /tmp/stacks-sent.$$
  curl -s --max-time 20 -o /tmp/stacks-body.$$ -w '%{http_code}' "$1"
}
# sent_as_stats TAG N — the /stats document the requests in the sent file plus N tagged
# /hello requests should give.
sent_as_stats() {
  jq -R -s -c --arg t "$1" --argjson n "$2" '
    split("\n") | map(select(. != "" and . != "/stats" and . != "/healthz"))
    | map(if . == "/hello" or . == "/compute" or . == "/items" then . elif . == "/answers" then "/items"
          elif . == "/strings" then "/compute" elif startswith("/docs/") then "/docs" else "other" end)
    | {requests: (length + $n),
       paths: (reduce .[] as $p ({"/hello": $n, "/compute": 0, "/items": 0, "/docs": 0, other: 0}; .[$p] += 1)),
       tag: $n}' /tmp/stacks-sent.$$
}
body() { cat /tmp/stacks-body.$$; }
for name in "${http_stacks[@]}"; do
  line=$(printf '%s\n' "${all[@]}" | awk -F'\t' -v n="$name" '$1 == n')
  endpoints=$(cut -f3 <<<"$line")
  if ! wait_ready "s-$name" "$ready_timeout"; then
    fail "$name: not ready within ${ready_timeout}s"; continue
  fi
  ready=$(ready_seconds "s-$name")
  ok "$name: ready in ${ready}s"
  base="http://$(pod_ip "s-$name"):8080"
  : > /tmp/stacks-sent.$$
  check "$name: /hello is {\"message\":\"hello\"}" \
    eval '[ "$(get "$base/hello")" = 200 ] && [ "$(body | jq -c .)" = "{\"message\":\"hello\"}" ]'
  check "$name: /compute?n=10000 counts 1229 primes" \
    eval '[ "$(get "$base/compute?n=10000")" = 200 ] && [ "$(body | jq -c "[.n,.primes]")" = "[10000,1229]" ]'
  check "$name: /compute?n=abc is 400" eval '[ "$(get "$base/compute?n=abc")" = 400 ]'
  check "$name: an unknown path is 404" eval '[ "$(get "$base/no/such/path")" = 404 ]'
  check "$name: /healthz is 200 ok" eval '[ "$(get "$base/healthz")" = 200 ] && [ "$(body)" = ok ]'
  if [[ " $endpoints " == *" /items "* ]]; then
    check "$name: /items returns the 100 seeded documents through the MongoDB driver" \
      eval '[ "$(get "$base/items")" = 200 ] && [ "$(body | jq -c "[length, .[0]._id, .[0].name, .[99].name, .[99].price]")" = "[100,1,\"item-1\",\"item-100\",10000]" ]'
    check "$name: /items?limit=5 returns 5" eval '[ "$(get "$base/items?limit=5")" = 200 ] && [ "$(body | jq length)" = 5 ]'
  fi
  if [[ " $endpoints " == *" /answers "* ]]; then
    # Seed 1's list, whole and projected: the same 100 answers by _id, ~5 KB each or four fields.
    check "$name: /answers?projection=none returns 100 whole questionnaire answers" \
      eval '[ "$(get "$base/answers?limit=100&projection=none")" = 200 ] && [ "$(body | jq -c "[length, .[0]._id, .[99]._id, (.[0].answers | length), (.[0] | keys | length > 10)]")" = "[100,1,100,40,true]" ] && [ "$(body | wc -c)" -gt 300000 ]'
    check "$name: /answers?projection=4 returns the same 100 answers with only _id, suggestion_id, user_id, openid" \
      eval '[ "$(get "$base/answers?limit=100&projection=4")" = 200 ] && [ "$(body | jq -c "[length, .[0]._id, .[99]._id, (map(keys) | unique)]")" = "[100,1,100,[[\"_id\",\"openid\",\"suggestion_id\",\"user_id\"]]]" ]'
    check "$name: /answers?projection=all is 400" eval '[ "$(get "$base/answers?projection=all")" = 400 ]'
  fi
  if [[ " $endpoints " == *" /strings "* ]]; then
    check "$name: /strings reverses, upper-cases and joins (seed 4)" \
      eval '[ "$(get "$base/strings")" = 200 ] && [ "$(body | jq -c .)" = "{\"output\":\"ELPOEP ,OLLEH|Hello, People\",\"length\":27}" ]'
    check "$name: /strings?s=abc is CBA|abc" \
      eval '[ "$(get "$base/strings?s=abc")" = 200 ] && [ "$(body | jq -r .output)" = "CBA|abc" ]'
  fi
  if [[ " $endpoints " == *" /docs "* ]]; then
    check "$name: /docs/1 returns the 4 KB document" \
      eval '[ "$(get "$base/docs/1")" = 200 ] && [ "$(body | jq -c "[._id, .n]")" = "[\"1\",1]" ] && [ "$(body | jq -c "del(._rev)" | wc -c)" -ge 4096 ]'
    check "$name: /docs/10000 is there, /docs/10001 is 404" \
      eval '[ "$(get "$base/docs/10000")" = 200 ] && [ "$(get "$base/docs/10001")" = 404 ]'
  fi
  tag="stacks-test-$name"
  "$load" -c 4 -t 1 -n "$requests" --timeout 10s --fail-on-errors --output json \
    -H "X-Benchrun-Cell: $tag" "$base/hello" >/dev/null 2>/tmp/stacks-load.$$
  rc=$?
  check "$name: $requests requests to /hello under load, none failed" \
    eval '[ $rc = 0 ] || { cat /tmp/stacks-load.$$ >&2; false; }'
  want=$(sent_as_stats "$tag" "$requests")
  [ "$(get "$base/stats")" = 200 ]; stats=$(body)
  got=$(jq -c --arg t "$tag" '{requests, paths, tag: .tags[$t]}' <<<"$stats")
  check "$name: /stats counts every request exactly ($got)" [ "$(jq -cS . <<<"$got")" = "$(jq -cS . <<<"$want")" ]
  # What the runtime was sized by: one worker / scheduler thread / processor per started CPU of
  # the limit (500m → 1; Express runs under 1500m → 2 workers).
  rt=$(jq -c '.runtime // {}' <<<"$stats")
  case $(cut -f2 <<<"$line") in
    jvm*) want_rt='{"availableProcessors":1,"cpuLimitMillicores":500}'; got_rt=$(jq -c '{availableProcessors, cpuLimitMillicores}' <<<"$rt") ;;
    static) want_rt='{"cpuLimitMillicores":500,"gomaxprocs":1}'; got_rt=$(jq -c '{cpuLimitMillicores, gomaxprocs}' <<<"$rt") ;;
    *) case $name in
         express) want_rt='{"cpuLimitMillicores":1500,"workers":2}'; got_rt=$(jq -c '{cpuLimitMillicores, workers}' <<<"$rt") ;;
         node-http) want_rt='{"cpuLimitMillicores":500,"workers":1}'; got_rt=$(jq -c '{cpuLimitMillicores, workers}' <<<"$rt") ;;
         *) want_rt='' got_rt='' ;;
       esac ;;
  esac
  [ -z "$want_rt" ] || check "$name: /stats says what the runtime was sized by ($rt)" [ "$(jq -cS . <<<"$got_rt")" = "$want_rt" ]
  case $name in
    spring-mvc) check "$name: Tomcat runs the maxThreads and accept-count of its env (500, 1000)" \
      [ "$(jq -c '[.maxThreads, .acceptCount]' <<<"$rt")" = "[500,1000]" ] ;;
    spring-webflux) check "$name: Netty listens with the SO_BACKLOG of its env (100)" \
      [ "$(jq -c '[.backlog, .backlogSource]' <<<"$rt")" = '[100,"NETTY_SO_BACKLOG"]' ] ;;
    servlet-tomcat) check "$name: /stats reports Tomcat's default pool and accept queue (200, 100)" \
      [ "$(jq -c '[.maxThreads, .acceptCount]' <<<"$rt")" = "[200,100]" ] ;;
  esac
  if [[ " $restart_stacks " == *" $name "* ]]; then
    # Killed like the kernel's OOM killer would (SIGKILL from outside): the restarted container
    # continues the counts of the killed one (kept in the pod's /dev/shm).
    cid=$(k get pod "s-$name" -o jsonpath='{.status.containerStatuses[0].containerID}'); cid=${cid#containerd://}
    # the containerd of the pod's node (hack/cluster.sh's node 2 has its own)
    sock=/run/containerd/containerd.sock
    [ "$(k get pod "s-$name" -o jsonpath='{.spec.nodeName}')" != benchrun-node-2 ] || sock=/run/benchrun-node-2/containerd.sock
    ctr -a "$sock" -n k8s.io tasks kill -s SIGKILL "$cid" >/dev/null 2>&1
    if wait_restarted "s-$name" 1 "$ready_timeout" && [ "$(get "$base/stats")" = 200 ]; then
      after=$(jq -c --arg t "$tag" '{requests, paths, tag: .tags[$t]}' < /tmp/stacks-body.$$)
      check "$name: /stats counts survive a SIGKILL and restart of the container ($after)" [ "$(jq -cS . <<<"$after")" = "$(jq -cS . <<<"$got")" ]
    else
      fail "$name: not ready again within ${ready_timeout}s after a SIGKILL"
    fi
  fi
  report+=("$(printf '%-16s %-6s ready %4ss' "$name" "$(cut -f2 <<<"$line")" "$ready")")
done
if [[ " ${http_stacks[*]} " == *" express "* ]]; then
  check "express: WORKERS=auto under a 1500m limit runs 2 workers" \
    eval '[[ "$(k logs s-express)" == *"express cluster: 2 workers"* ]]'
  # Seed 1's pm2 sizes: at 1 and 2 CPUs of limit, 1 and 2 workers (the requests stay at 50m,
  # so a 2-CPU limit schedules on a node of 1 CPU; only the worker count is checked here).
  for cpus in 1 2; do
    pod "s-express-$cpus" express Always "$cpus" 256Mi '[{"name":"PORT","value":"8080"},{"name":"WORKERS","value":"auto"}]' 8080
  done
  for cpus in 1 2; do
    if wait_ready "s-express-$cpus" "$ready_timeout" && [ "$(get "http://$(pod_ip "s-express-$cpus"):8080/stats")" = 200 ]; then
      rt=$(jq -c '.runtime // {} | {cpuLimitMillicores, workers}' < /tmp/stacks-body.$$)
      check "express: WORKERS=auto under a limit of $cpus CPU runs $cpus worker(s) ($rt)" \
        [ "$rt" = "{\"cpuLimitMillicores\":$((cpus * 1000)),\"workers\":$cpus}" ]
    else
      fail "express: the pod with a limit of $cpus CPU is not ready within ${ready_timeout}s"
    fi
  done
fi
rm -f /tmp/stacks-body.$$ /tmp/stacks-load.$$ /tmp/stacks-sent.$$

echo "# ---- per stack (this run) ----"
printf '#  %s\n' "${report[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
