#!/usr/bin/env bash
# images.sh — build benchrun's container images without Docker or a registry.
#
# Builds the workspace binaries once (release profile, the configured target dir; the load
# generator in profile dist, with thin LTO), packs each
# into a minimal rootfs (binary + the glibc libraries ldd lists + NSS files, non-root user
# benchrun uid 65532) and turns it into a deterministic OCI archive with hack/mkoci.sh:
#
#   benchrun.local/benchrun-operator:<version>   /usr/local/bin/benchrun-operator
#   benchrun.local/benchrun-load:<version>       /usr/local/bin/benchrun-load
#   benchrun.local/benchrun-demo:<version>       /usr/local/bin/benchrun-demo
#
# <version> is the workspace version from Cargo.toml. Archives go to
# /var/cache/benchrun/images/<name>-<version>.oci.tar and are imported into the local
# cluster's containerd (namespace k8s.io) when its socket exists.
#
# Usage: hack/images.sh [--no-import] [--no-build] [--out DIR] [IMAGE...]
#   IMAGE        benchrun-operator | benchrun-load | benchrun-demo (default: all three)
#   --no-import  only build the archives (e.g. to push them to a registry with
#                skopeo copy oci-archive:FILE docker://REGISTRY/NAME:TAG)
#   --no-build   package the binaries already in the target dir instead of running cargo build
#   --out DIR    archive directory (default $BENCHRUN_IMAGES_DIR or /var/cache/benchrun/images)
# Environment: CONTAINERD_ADDRESS (space-separated sockets; default: every node runtime of the
# local cluster, see hack/lib/containerd-import.sh), CARGO_TARGET_DIR.
#
# Idempotent: an archive whose inputs (binary, libraries, files, image config) are unchanged
# is not rebuilt, and an image is only re-imported when containerd holds a different digest.
set -euo pipefail
umask 022

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkoci="$repo/hack/mkoci.sh"
# shellcheck source=lib/containerd-import.sh
. "$repo/hack/lib/containerd-import.sh"
out_dir=${BENCHRUN_IMAGES_DIR:-/var/cache/benchrun/images}
registry=benchrun.local
all_images=(benchrun-operator benchrun-load benchrun-demo)
do_import=1 do_build=1 images=()

die() { echo "images.sh: $*" >&2; exit 1; }
log() { echo "images.sh: $*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --no-import) do_import=0 ;;
    --no-build) do_build=0 ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out_dir=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    benchrun-operator|benchrun-load|benchrun-demo) images+=("$1") ;;
    *) die "unknown argument: $1 (see --help)" ;;
  esac
  shift
done
[ ${#images[@]} -gt 0 ] || images=("${all_images[@]}")

# json EXPR < JSON — a jq expression, or the same small subset via python3 when jq is absent.
json() {
  if command -v jq >/dev/null; then jq -r "$1"; return; fi
  command -v python3 >/dev/null || die "need jq or python3 to read JSON"
  python3 -c '
import json, sys
expr, doc = sys.argv[1], json.load(sys.stdin)
if expr == ".target_directory": print(doc["target_directory"])
elif expr.startswith(".packages"): print(next(p["version"] for p in doc["packages"] if p["name"] == "benchrun"))
elif expr == ".manifests[0].digest": print(doc["manifests"][0]["digest"])
else: sys.exit("unsupported expression " + expr)' "$1"
}

# --- preflight ---------------------------------------------------------------------------
command -v cargo >/dev/null || die "cargo not found: install Rust (https://rustup.rs) or put cargo on PATH"
[ -x "$mkoci" ] || die "$mkoci missing or not executable"
for tool in ldd tar sha256sum; do command -v $tool >/dev/null || die "$tool not found"; done
if [ $do_import = 1 ]; then
  command -v ctr >/dev/null \
    || die "ctr not found: run hack/cluster.sh up, or use --no-import and push the archives to your registry"
  address=$(containerd_addresses)
  for a in $address; do
    [ -S "$a" ] || die "containerd socket $a not found: run 'hack/cluster.sh up' first, or use --no-import and push the archives to your registry, e.g. skopeo copy oci-archive:$out_dir/benchrun-demo-<version>.oci.tar docker://REGISTRY/benchrun-demo:<version>"
  done
fi

cd "$repo"
. hack/lib/target-dir.sh   # CARGO_TARGET_DIR: the shared cache, or ./target
metadata=$(cargo metadata --format-version 1 --no-deps) || die "cargo metadata failed"
target_dir=$(json .target_directory <<<"$metadata")
version=$(json '.packages[] | select(.name == "benchrun") | .version' <<<"$metadata")
[ -n "$version" ] || die "cannot read the workspace version from Cargo.toml"

if [ $do_build = 1 ]; then
  log "cargo build --release --workspace --bins (target dir $target_dir)"
  cargo build --release --workspace --bins || die "cargo build failed"
  # The load generator's image: thin LTO across crates (profile dist, Cargo.toml).
  log "cargo build --profile dist -p benchrun-load"
  cargo build --profile dist -p benchrun-load --bin benchrun-load || die "cargo build failed"
fi
mkdir -p "$out_dir"

# --- rootfs ------------------------------------------------------------------------------
# copy_file SRC ROOTFS [DEST] — copy SRC (following symlinks) to the same path (or DEST) in ROOTFS.
copy_file() {
  local dest="$2${3:-$1}"
  mkdir -p "$(dirname "$dest")"
  cp -L "$1" "$dest"
}

# make_rootfs BINARY ROOTFS — the binary, its shared libraries and loader, users, NSS config.
make_rootfs() {
  local bin=$1 root=$2 lib libdir
  mkdir -p "$root"/{etc,tmp,usr/local/bin}
  chmod 1777 "$root/tmp"
  install -m 0755 "$bin" "$root/usr/local/bin/$(basename "$bin")"
  # ldd lines: "libc.so.6 => /lib/.../libc.so.6 (0x..)" and "/lib64/ld-linux-x86-64.so.2 (0x..)".
  # A static binary prints "not a dynamic executable" (exit 1): nothing to copy then.
  local libs
  libs=$(ldd "$bin" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}') || true
  for lib in $libs; do copy_file "$lib" "$root"; done
  # glibc loads the NSS modules at run time (getaddrinfo), so ldd cannot list them.
  libdir=$(ldd "$bin" 2>/dev/null | awk '$1 == "libc.so.6" {print $3}' | xargs -r dirname)
  for lib in libnss_dns.so.2 libnss_files.so.2 libresolv.so.2; do
    if [ -n "$libdir" ] && [ -e "$libdir/$lib" ]; then copy_file "$libdir/$lib" "$root"; fi
  done
  printf 'root:x:0:0:root:/root:/sbin/nologin\nbenchrun:x:65532:65532:benchrun:/tmp:/sbin/nologin\n' \
    > "$root/etc/passwd"
  printf 'root:x:0:\nbenchrun:x:65532:\n' > "$root/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
  # Kubernetes mounts its own /etc/hosts and /etc/resolv.conf; this one serves plain ctr runs.
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n' > "$root/etc/hosts"
}

# inputs_key ROOTFS REF ENTRYPOINT — a digest of everything the archive is made from.
inputs_key() {
  {
    sha256sum "$mkoci"
    printf '%s\n' "$2" "$3" "$MKOCI_USER" "${MKOCI_PORTS:-}"
    (cd "$1" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort)
    (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
  } | sha256sum | cut -d' ' -f1
}

# --- build and import --------------------------------------------------------------------
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
imported=0
for name in "${images[@]}"; do
  bin="$target_dir/release/$name"
  if [ "$name" = benchrun-load ]; then bin="$target_dir/dist/$name"; fi
  [ -x "$bin" ] || die "$bin not found: the build did not produce it (run without --no-build)"
  ref="$registry/$name:$version"
  tarball="$out_dir/$name-$version.oci.tar"
  entry="[\"/usr/local/bin/$name\"]"
  export MKOCI_USER=65532:65532
  if [ "$name" = benchrun-demo ]; then export MKOCI_PORTS=8080/tcp; else unset MKOCI_PORTS; fi

  root="$work/$name"
  make_rootfs "$bin" "$root"
  key=$(inputs_key "$root" "$ref" "$entry")
  if [ -f "$tarball" ] && [ "$(cat "$tarball.inputs" 2>/dev/null)" = "$key" ]; then
    log "$ref: unchanged, keeping $tarball"
  else
    "$mkoci" "$root" "$ref" "$tarball" "$entry"
    printf '%s\n' "$key" > "$tarball.inputs"
  fi
  digest=$(tar -xOf "$tarball" index.json | json '.manifests[0].digest')
  log "$ref: $tarball ($digest)"

  if [ $do_import = 1 ]; then
    rc=0; import_archive "$address" "$ref" "$tarball" "$digest" || rc=$?
    case $rc in
      0) log "$ref: imported into containerd (k8s.io: $address)"; imported=$((imported + 1)) ;;
      1) log "$ref: already in containerd" ;;
      *) die "ctr import of $tarball failed" ;;
    esac
  fi
done

if [ $do_import = 1 ]; then
  log "$imported image(s) imported; benchrun images in containerd:"
  ctr -n k8s.io --address "${address%% *}" images ls | grep -F "$registry/" || true
else
  log "archives in $out_dir (not imported: --no-import)"
fi
