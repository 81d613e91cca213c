#!/usr/bin/env bash
# Builds CoreDNS from its Go module (like the Kubernetes components: no image, no registry)
# with only the plugins the local cluster's Corefile uses (hack/coredns/main.go), into a cache
# outside the repository keyed by CoreDNS and Go version, so a second run and CI on the same
# machine reuse it. Prints the binary's path last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The version hack/coredns/go.mod requires.
COREDNS_VERSION=$(awk '$1 == "require" && $2 == "github.com/coredns/coredns" {print $3}' "$here/coredns/go.mod")
CACHE=${BENCHRUN_CACHE:-/var/cache/benchrun}
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
export GOCACHE=$CACHE/go-build GOMODCACHE=$CACHE/gomod
out=$CACHE/tools/coredns-min-$COREDNS_VERSION-$(go env GOVERSION)
if [ -x "$out/coredns" ]; then echo "$out/coredns"; exit 0; fi
mkdir -p "$CACHE/tools"
exec 9>"$CACHE/tools/.coredns-build.lock"
if ! flock -n 9; then echo "build-coredns: another build is running; waiting for it" >&2; flock 9; fi
if [ -x "$out/coredns" ]; then echo "$out/coredns"; exit 0; fi
echo "build-coredns: building github.com/coredns/coredns@$COREDNS_VERSION with the plugins bind, ready, errors, cache, kubernetes (cold: about a minute on 2 cores)" >&2
start=$(date +%s)
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
(cd "$here/coredns" && go build -trimpath -ldflags "-s -w" -o "$out.tmp/coredns" .) >&2
"$out.tmp/coredns" -version >&2
echo "build-coredns: built in $(( $(date +%s) - start ))s" >&2
rm -rf "$out"; mv "$out.tmp" "$out"
echo "$out/coredns"
