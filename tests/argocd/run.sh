#!/usr/bin/env bash
# The Argo CD health check (deploy/argocd/health.lua) against BenchmarkRun objects, in the Lua
# 5.4 that Argo CD's gopher-lua follows closely enough for this script. Installs Debian's
# lua5.4 when it is missing (part of `make unit`, so a fresh machine needs nothing by hand).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v lua5.4 >/dev/null; then
  echo "argocd: installing Debian's lua5.4 for the health-check test"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends lua5.4 >/tmp/benchrun-apt-lua.log 2>&1 || {
    apt-get update -q >>/tmp/benchrun-apt-lua.log 2>&1
    apt-get install -y -q --no-install-recommends lua5.4 >>/tmp/benchrun-apt-lua.log 2>&1
  } || { tail -20 /tmp/benchrun-apt-lua.log >&2; exit 1; }
fi
lua5.4 tests/argocd/health_test.lua deploy/argocd/health.lua
