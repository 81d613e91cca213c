#!/usr/bin/env bash
# Builds the upstream Kubernetes components (and etcd) from the Go module proxy into one
# multi-call binary, cached outside the repository and keyed by Kubernetes and Go version,
# so a second run (or CI on the same machine) reuses it. Prints the bin directory last.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
K8S_VERSION=${K8S_VERSION:-v1.33.13}
CACHE=${BENCHRUN_CACHE:-/var/cache/benchrun}
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
export GOCACHE=$CACHE/go-build GOMODCACHE=$CACHE/gomod
out=$CACHE/k8s/$K8S_VERSION-$(go env GOVERSION)
if [ -x "$out/hyperkube" ]; then echo "$out"; exit 0; fi
# one build at a time (hack/cluster.sh up and CI may call this concurrently)
mkdir -p "$CACHE/k8s"
exec 9>"$CACHE/k8s/.build.lock"
if ! flock -n 9; then echo "build-k8s: another build is running; waiting for it" >&2; flock 9; fi
if [ -x "$out/hyperkube" ]; then echo "$out"; exit 0; fi
minor=$(echo "$K8S_VERSION" | cut -d. -f2)
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
cd "$here/hyperkube"
echo "build-k8s: downloading modules for Kubernetes $K8S_VERSION" >&2
go mod download >&2
echo "build-k8s: compiling (cold: ~30-40 min on 2 cores; cached in $CACHE)" >&2
start=$(date +%s)
rm -rf "$out.tmp"; mkdir -p "$out.tmp"
go build -trimpath -tags providerless -ldflags "$ld" -o "$out.tmp/hyperkube" . >&2
for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd; do
  ln -sf hyperkube "$out.tmp/$c"
done
"$out.tmp/kube-apiserver" --version >&2
echo "build-k8s: built in $(( $(date +%s) - start ))s" >&2
rm -rf "$out"; mv "$out.tmp" "$out"
echo "$out"
