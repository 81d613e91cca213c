#!/usr/bin/env bash
# The README's test command (`make test`): every suite, cheapest first, on a fresh machine.
# It installs and starts what the suites need (the local cluster included, unless KUBECONFIG
# already points at a cluster) and ends with one "N passed, N failed" line over the suites.
set -uo pipefail
cd "$(dirname "$0")/.."
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
suite unit make --no-print-directory unit
suite lint make --no-print-directory lint
suite browser make --no-print-directory browser
# The cluster suites need the cluster; if it cannot come up, they fail rather than skip.
if suite cluster make --no-print-directory cluster; then
  suite smoke make --no-print-directory smoke
  suite stacks make --no-print-directory stacks-test
  suite e2e make --no-print-directory e2e
else
  failed=$((failed + 3)); names+=("FAIL smoke (no cluster)" "FAIL stacks (no cluster)" "FAIL e2e (no cluster)")
fi
echo "==== summary"
printf '%s\n' "${names[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
