#!/usr/bin/env bash
# The README's test command (`make test`): every suite, cheapest first, on a fresh machine.
# It installs and starts what the suites need (the local cluster included; a KUBECONFIG that
# points at another cluster is refused unless BENCHRUN_TEST_FOREIGN_CLUSTER=yes) and ends with one "N passed, N failed" line over the suites.
set -uo pipefail
cd "$(dirname "$0")/.."
# Never against someone else's cluster by accident: a KUBECONFIG that is not the local
# cluster's needs BENCHRUN_TEST_FOREIGN_CLUSTER=yes.
hack/cluster-guard.sh "make test" || exit 2
passed=0 failed=0 names=()
suite() {
  local name=$1; shift
  echo "==== $name: $*"
  local t0=$SECONDS
  if "$@"; then
    passed=$((passed + 1)); names+=("ok   $name ($((SECONDS - t0))s)")
  else
    failed=$((failed + 1)); names+=("FAIL $name ($((SECONDS - t0))s)")
  fi
}
# in_background_at_low_priority LOG CMD...: runs CMD in the background with the lowest CPU share
# this machine's cgroups give (cpu.shares 2 in a cgroup of its own under v1, cpu.weight 1 under
# v2) and nice 19, so that it takes only CPU time the foreground leaves idle; its PID is in $bg.
in_background_at_low_priority() {
  local log=$1; shift
  (
    if [ -w /sys/fs/cgroup/cpu ] && mkdir -p /sys/fs/cgroup/cpu/benchrun-background 2>/dev/null; then
      echo 2 >/sys/fs/cgroup/cpu/benchrun-background/cpu.shares
      echo "$BASHPID" >/sys/fs/cgroup/cpu/benchrun-background/cgroup.procs
    elif [ -f /sys/fs/cgroup/cgroup.subtree_control ] && mkdir -p /sys/fs/cgroup/benchrun-background 2>/dev/null; then
      echo 1 >/sys/fs/cgroup/benchrun-background/cpu.weight 2>/dev/null || true
      echo "$BASHPID" >/sys/fs/cgroup/benchrun-background/cgroup.procs 2>/dev/null || true
    fi
    exec nice -n 19 "$@"
  ) >"$log" 2>&1 &
  bg=$!
}

# e2e: the operator and the three stacks its tests run first; the other seed stacks (minutes
# from cold: Maven, npm, a Go build) are built meanwhile in the background at low priority,
# using the CPU the e2e suite leaves idle while it waits on windows. They are imported after it.
bg="" bg_log=${TMPDIR:-/tmp}/benchrun-stacks-background.log
e2e() {
  make --no-print-directory install stacks-e2e || return 1
  in_background_at_low_priority "$bg_log" hack/stacks.sh --no-import
  echo "e2e: building the other stacks in the background (pid $bg, log $bg_log)"
  make --no-print-directory e2e-run
}
# stacks: waits for the background build, then imports and tests every stack.
stacks() {
  if [ -n "$bg" ]; then
    local t0=$SECONDS rc=0
    wait "$bg" || rc=$?
    echo "stacks: the background build ended (rc $rc, waited $((SECONDS - t0)) s); from its log ($bg_log):"
    if [ "$rc" -eq 0 ]; then grep -aE 'built in|unchanged|image\(s\) ready' "$bg_log"
    else tail -n 60 "$bg_log"; return 1; fi
  fi
  make --no-print-directory stacks-test
}

suite unit make --no-print-directory unit
suite lint make --no-print-directory lint
suite browser make --no-print-directory browser
# The cluster suites need the cluster; if it cannot come up, they fail rather than skip.
if suite cluster make --no-print-directory cluster; then
  suite smoke make --no-print-directory smoke
  suite e2e e2e
  suite stacks stacks
else
  failed=$((failed + 3)); names+=("FAIL smoke (no cluster)" "FAIL e2e (no cluster)" "FAIL stacks (no cluster)")
fi
echo "==== summary"
printf '%s\n' "${names[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
