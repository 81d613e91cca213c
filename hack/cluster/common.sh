# hack/cluster/common.sh — sourced by hack/cluster.sh: logging, the component processes (start,
# wait, stop by recorded PID), the bin dir, kubectl, the existing-cluster check and the lock.

log() { printf '%s cluster: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (it manages containerd, cgroups, iptables)"; }

# ---------------------------------------------------------------------------------- processes

pid_of() { cat "$K/pids/$1" 2>/dev/null || true; }

# alive NAME: the recorded PID exists and still runs the same program (guards PID reuse)
alive() {
  local pid; pid=$(pid_of "$1")
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  local exe; exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  [ -n "$exe" ] || return 1
  [ -f "$K/pids/$1.exe" ] || return 0
  [ "$exe" = "$(cat "$K/pids/$1.exe")" ]
}

# start NAME CMD...: background child in its own session, output to logs/NAME.log, PID recorded
start() {
  local name=$1; shift
  if alive "$name"; then log "$name already running (pid $(pid_of "$name"))"; return 0; fi
  mkdir -p "$K/logs" "$K/pids"
  printf '\n==== %s start: %s\n' "$(date -Is)" "$*" >>"$K/logs/$name.log"
  # No inherited descriptor lives on in a daemon: not our lock (8), nor a caller's, e.g.
  # `flock /tmp/benchrun-e2e.lock hack/cluster.sh up` would otherwise stay locked for good.
  # START_CGROUP (two-node layout): the node agent's own cgroup (see node_cgroups), joined
  # before exec so that the agent and its children (containerd's shims) are accounted there.
  ( close_inherited_fds
    if [ -n "${START_CGROUP:-}" ]; then
      local s; for s in $AGENT_SUBSYS; do echo "$BASHPID" >"/sys/fs/cgroup/$s$START_CGROUP/cgroup.procs"; done
    fi
    exec setsid "$@" >>"$K/logs/$name.log" 2>&1 </dev/null ) &
  local pid=$!
  echo "$pid" >"$K/pids/$name"
  local exe=""
  for _ in $(seq 1 50); do   # wait for setsid (and a script's env) to exec the program, then remember its executable
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
    case $exe in ""|*/setsid|*/bash|*/nsenter|*/env) sleep 0.05 ;; *) break ;; esac
  done
  case $exe in ""|*/setsid|*/bash|*/nsenter|*/env) rm -f "$K/pids/$name.exe" ;; *) echo "$exe" >"$K/pids/$name.exe" ;; esac
  log "started $name (pid $pid, log $K/logs/$name.log)"
}

show_log() {
  local f=$K/logs/$1.log
  echo "----- last 30 lines of $f -----" >&2
  tail -n 30 "$f" >&2 2>/dev/null || echo "(no log)" >&2
  echo "-----" >&2
}

# wait_for NAME TIMEOUT_S WHAT CMD...: poll CMD until it succeeds; fail legibly on timeout/death
wait_for() {
  local name=$1 timeout=$2 what=$3; shift 3
  local start_t now last=0
  start_t=$(date +%s)
  while :; do
    if "$@" >/dev/null 2>&1; then
      log "$name: $what (after $(( $(date +%s) - start_t ))s)"; return 0
    fi
    now=$(date +%s)
    if [ -f "$K/pids/$name" ] && ! alive "$name"; then
      log "ERROR: $name (pid $(pid_of "$name")) exited while waiting for: $what"
      show_log "$name"; exit 1
    fi
    if (( now - start_t >= timeout )); then
      log "ERROR: $name: timed out after ${timeout}s waiting for: $what"
      show_log "$name"; exit 1
    fi
    if (( now - last >= 10 )); then
      (( last == 0 )) || log "$name: still waiting for $what ($(( now - start_t ))s/${timeout}s)"
      last=$now
    fi
    sleep 1
  done
}

# kubelets_outdated [restart]: true when a running kubelet's command line lacks
# --housekeeping-interval=$HOUSEKEEPING (started by an older `up`); with `restart`, each such
# kubelet is stopped, so that the next `start` runs it with today's flags (its pods keep running).
kubelets_outdated() {
  local name pid outdated=1
  for name in kubelet kubelet-2; do
    alive "$name" || continue
    pid=$(pid_of "$name")
    tr '\0' '\n' <"/proc/$pid/cmdline" | grep -qxF -- "--housekeeping-interval=$HOUSEKEEPING" && continue
    outdated=0
    if [ "${1:-}" = restart ]; then
      log "$name (pid $pid) runs without --housekeeping-interval=$HOUSEKEEPING, from an older up: restarting it"
      stop "$name"
    fi
  done
  return $outdated
}

stop() {
  local name=$1 pid
  pid=$(pid_of "$name")
  if [ -z "$pid" ]; then return 0; fi
  if alive "$name"; then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    if [ -d "/proc/$pid" ]; then
      log "$name did not exit after 10s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    fi
  fi
  rm -f "$K/pids/$name" "$K/pids/$name.exe"
}

# Inherited descriptors (e.g. the e2e suite's flock) must not live on in a long-running child.
close_inherited_fds() {
  local fd
  for fd in $(ls /proc/$BASHPID/fd); do
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  return 0
}

# ---------------------------------------------------------------------------------- helpers

bindir() {
  if [ -f "$K/bindir" ] && [ -x "$(cat "$K/bindir")/hyperkube" ]; then cat "$K/bindir"; return; fi
  local d; d=$CACHE/k8s/${K8S_VERSION:-v1.33.13}-$(go env GOVERSION 2>/dev/null || echo unknown)
  [ -x "$d/hyperkube" ] && echo "$d"
}

kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" --request-timeout=10s "$@"; }

own_kubeconfig_in_env() {
  [ -n "${KUBECONFIG:-}" ] || return 1
  [ "$(readlink -f "$KUBECONFIG" 2>/dev/null || echo "$KUBECONFIG")" = "$(readlink -f "$KUBECONFIG_PATH" 2>/dev/null || echo "$KUBECONFIG_PATH")" ]
}

# A KUBECONFIG from the environment that is not ours and answers -> "existing cluster wins".
existing_cluster() {
  [ -n "${KUBECONFIG:-}" ] || return 1
  own_kubeconfig_in_env && return 1
  local kubectl
  kubectl=$(command -v kubectl 2>/dev/null || true)
  if [ -z "$kubectl" ]; then local d; d=$(bindir || true); [ -n "$d" ] && kubectl=$d/kubectl; fi
  if [ -z "$kubectl" ]; then
    log "KUBECONFIG=$KUBECONFIG is set but no kubectl is available to check it; ignoring it"
    return 1
  fi
  EXISTING_KUBECTL=$kubectl
  "$kubectl" --request-timeout=5s get --raw=/readyz >/dev/null 2>&1
}

# up/down from several shells at once (parallel test suites) take turns; the second `up` then
# finds a healthy cluster and does nothing
lock() {
  mkdir -p "$K"
  exec 8>"$K/.lock"
  if ! flock -n 8; then
    log "another hack/cluster.sh up/down is running; waiting for it (max 20 min)"
    flock -w 1200 8 || die "timed out waiting for $K/.lock"
  fi
}
