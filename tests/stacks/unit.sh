#!/usr/bin/env bash
# tests/stacks/unit.sh — the seed stacks' own unit tests that need no cluster and no download:
# Go (`go test`) and Node (`node --test` on test files that use only Node's standard library).
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
