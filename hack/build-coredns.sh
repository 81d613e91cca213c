#!/usr/bin/env bash
# Builds CoreDNS from its Go module (like the Kubernetes components: no image, no registry)
# into a cache outside the repository keyed by CoreDNS and Go version, so a second run and CI
# on the same machine reuse it. Prints the binary's path last.
set -euo pipefail
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.2}
CACHE=${BENCHRUN_CACHE:-/var/cache/benchrun}
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
export GOCACHE=$CACHE/go-build GOMODCACHE=$CACHE/gomod
out=$CACHE/tools/coredns-$COREDNS_VERSION-$(go env GOVERSION)
if [ -x "$out/coredns" ]; then echo "$out/coredns"; exit 0; fi
mkdir -p "$CACHE/tools"
exec 9>"$CACHE/tools/.coredns-build.lock"
if ! flock -n 9; then echo "build-coredns: another build is running; waiting for it" >&2; flock 9; fi
if [ -x "$out/coredns" ]; then echo "$out/coredns"; exit 0; fi
echo "build-coredns: building github.com/coredns/coredns@$COREDNS_VERSION (cold: several minutes on 2 cores)" >&2
start=$(date +%s)
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
GOBIN=$out.tmp go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION" >&2
"$out.tmp/coredns" -version >&2
echo "build-coredns: built in $(( $(date +%s) - start ))s" >&2
rm -rf "$out"; mv "$out.tmp" "$out"
echo "$out/coredns"
