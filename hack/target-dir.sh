#!/usr/bin/env bash
# hack/target-dir.sh: prints the cargo build directory the project's scripts use, for
# `export CARGO_TARGET_DIR=$(hack/target-dir.sh)`. Nothing is hard-wired into .cargo/, so a plain
# `cargo build` by any user works in the default ./target.
#
#   CARGO_TARGET_DIR set       that directory, as cargo itself would use it
#   /var/cache/benchrun writable (root, or a user given it)
#                              /var/cache/benchrun/target: outside the repository, so a new clone
#                              (CI's) reuses the compiled dependencies
#   otherwise                  ./target in the checkout (cargo's default)
#
# The shared directory holds one checkout's workspace crates at a time: cargo names them by
# their path relative to the workspace, so two checkouts would take each other's newer
# artifacts as fresh. When the checkout that last built there is another one, this checkout's
# workspace crates are cleaned there first (dependencies stay; the workspace rebuilds in a few
# minutes). Two checkouts building at the same moment still share it: give one its own
# CARGO_TARGET_DIR.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd -P)
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
  echo "$CARGO_TARGET_DIR"
  exit 0
fi
cache=${BENCHRUN_CACHE_DIR:-/var/cache/benchrun}
if ! { mkdir -p "$cache/target" 2>/dev/null && [ -w "$cache/target" ]; }; then
  echo "$repo/target"
  exit 0
fi
dir=$cache/target
owner_file=$dir/.benchrun-checkout
last=$(cat "$owner_file" 2>/dev/null || true)
if [ "$last" != "$repo" ]; then
  if [ -n "$last" ] && command -v cargo >/dev/null; then
    echo "target-dir: $dir was last built by $last; cleaning its workspace crates for $repo" >&2
    packages=$(cd "$repo" && CARGO_TARGET_DIR=$dir cargo metadata --format-version 1 --no-deps |
      python3 -c 'import json, sys; print(" ".join("-p " + p["name"] for p in json.load(sys.stdin)["packages"]))') || packages=""
    [ -n "$packages" ] && for profile in dev release dist; do
      # shellcheck disable=SC2086 # one word per -p flag
      (cd "$repo" && CARGO_TARGET_DIR=$dir cargo clean -q --profile "$profile" $packages) >&2 || true
    done
  fi
  echo "$repo" >"$owner_file"
fi
echo "$dir"
