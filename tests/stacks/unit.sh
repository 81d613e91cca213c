#!/usr/bin/env bash
# tests/stacks/unit.sh — the seed stacks' own unit tests that need no cluster and no download:
# Go (`go test`), Node (`node --test` on test files that use only Node's standard library) and
# the JVM stacks' launcher (stacks/jvm-common/java.sh) against a stand-in java.
# The images and every endpoint are checked on the cluster by tests/stacks/stacks-test.sh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
# The Go toolchain of this machine lives in /usr/local/go; a CI shell may not have it on PATH.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
export GOTOOLCHAIN=local
for dir in "$repo"/stacks/*/; do
  name=$(basename "$dir")
  if compgen -G "$dir*_test.go" >/dev/null; then
    echo "stacks/$name: go test"
    (cd "$dir" && go test ./...)
  fi
  if compgen -G "$dir*.test.js" >/dev/null; then
    echo "stacks/$name: node --test"
    (cd "$dir" && node --test)
  fi
done
# The JVM launcher's processor count: a stand-in java prints the flags it was given.
echo "stacks/jvm-common: java.sh"
fake=$(mktemp)
trap 'rm -f "$fake"' EXIT
printf '#!/bin/sh\necho "$@"\n' > "$fake"; chmod +x "$fake"
launch() { env -i BENCHRUN_JAVA="$fake" "$@" /bin/sh "$repo/stacks/jvm-common/java.sh"; }
expect() { # expect WANT ENV... — the flags java.sh passes under ENV
  local want=$1; shift
  local got; got=$(launch "$@")
  [ "$got" = "$want" ] || { echo "java.sh with $*: got '$got', want '$want'" >&2; exit 1; }
}
expect "-XX:MaxRAMPercentage=75 -XX:ActiveProcessorCount=1 -jar /app/app.jar" BENCHRUN_CPU_LIMIT_MILLICORES=500
expect "-XX:MaxRAMPercentage=75 -XX:ActiveProcessorCount=1 -jar /app/app.jar" BENCHRUN_CPU_LIMIT_MILLICORES=1000
expect "-XX:MaxRAMPercentage=75 -XX:ActiveProcessorCount=2 -jar /app/app.jar" BENCHRUN_CPU_LIMIT_MILLICORES=1500
expect "-XX:MaxRAMPercentage=75 -XX:ActiveProcessorCount=4 -jar /app/app.jar" BENCHRUN_CPU_LIMIT_MILLICORES=3500
expect "-XX:MaxRAMPercentage=75 -XX:ActiveProcessorCount=1 -jar /app/app.jar" BENCHRUN_CPU_LIMIT_MILLICORES=0
expect "-XX:MaxRAMPercentage=75 -jar /app/app.jar"
expect "-XX:MaxRAMPercentage=75 -jar /app/app.jar" BENCHRUN_CPU_LIMIT_MILLICORES=1.5
expect "-XX:MaxRAMPercentage=75 -XX:ActiveProcessorCount=2 -Xmx1g -XX:ActiveProcessorCount=3 -jar /app/app.jar" \
  BENCHRUN_CPU_LIMIT_MILLICORES=2000 "JAVA_OPTS=-Xmx1g -XX:ActiveProcessorCount=3"
echo "ok: java.sh gives the JVM one processor per started CPU of the limit, JAVA_OPTS last"
