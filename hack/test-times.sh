#!/usr/bin/env bash
# hack/test-times.sh LOG [COMMIT] [CONDITIONS] — where the time of one `make test` went, from its output.
#
# Reads the log of a `make test` (or `.ci/run`) and prints the commit, the date, each suite's
# time and the total from tests/run-all.sh's summary, then every end-to-end test's own time
# (the `e2e-time NAMESPACE SECONDS s` lines the suite prints), slowest first, and the builds
# (cargo's, Kubernetes', CoreDNS', the stacks'). The README and
# the issue notes quote its output files (docs/results/make-test-*.txt), never typed figures.
#
#   .ci/run 2>&1 | tee /tmp/ci.log
#   hack/test-times.sh /tmp/ci.log "$(git rev-parse HEAD)" "fresh machine, empty caches" \
#     > docs/results/make-test-cold.txt
set -euo pipefail
log=${1:?usage: hack/test-times.sh LOG [COMMIT] [CONDITIONS]}
commit=${2:-$(git -C "$(dirname "$0")/.." rev-parse HEAD)}
conditions=${3:-}
[ -r "$log" ] || { echo "test-times: cannot read $log" >&2; exit 1; }

echo "# make test: suite and end-to-end test times"
echo "commit: $commit"
echo "log: $log (written $(date -u -r "$log" +%Y-%m-%dT%H:%M:%SZ))"
[ -z "$conditions" ] || echo "conditions: $conditions"
echo
echo "## suites (tests/run-all.sh's summary)"
# The summary lines: "ok   unit (1293s)" or "FAIL e2e (1899s)".
summary=$(grep -aE '^(ok  |FAIL) [a-z0-9-]+ \([0-9]+s\)$' "$log" || true)
[ -n "$summary" ] || { echo "test-times: no suite summary in $log (did make test finish?)" >&2; exit 1; }
echo "$summary"
total=$(sed -E 's/.*\(([0-9]+)s\)$/\1/' <<<"$summary" | awk '{s += $1} END {print s}')
printf 'total: %d s (%d min %02d s)\n' "$total" $((total / 60)) $((total % 60))
grep -aE '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1
echo
echo "## end-to-end tests, slowest first (seconds, namespace)"
grep -aoE 'e2e-time [a-z0-9-]+ [0-9]+ s' "$log" | awk '{print $3, $2}' | sort -rn || true
e2e=$(grep -aoE 'e2e-time [a-z0-9-]+ [0-9]+ s' "$log" | awk '{s += $3; n++} END {print n+0, s+0}')
echo "tests: ${e2e% *}, their own time together: ${e2e#* } s"
# Cargo's "Finished" lines: the builds' own times as cargo reported them, in order.
echo
echo "## cargo builds (in order)"
grep -aE '^\s*Finished `(release|dist)` profile' "$log" | sed -E 's/^\s*//' || true
# The other builds a cold run makes (Kubernetes, CoreDNS, each seed stack), as their scripts
# reported them; a warm run reuses their caches and prints none.
echo
echo "## other builds (in order)"
grep -aoE '(build-k8s|build-coredns): built in [0-9]+s|stacks\.sh: [^ ]+: built in [0-9]+s' "$log" || true
echo "## background stack build: waited for it after e2e"
grep -aoE 'stacks: the background build ended \(rc [0-9]+, waited [0-9]+ s\)' "$log" || true
