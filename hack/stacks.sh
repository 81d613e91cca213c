#!/usr/bin/env bash
# stacks.sh — build the systems under test in stacks/ as OCI images and import them.
#
# Each stacks/<name>/ folder holds a stack.conf (see stacks/CONTRACT.md): its runtime, a build
# command and the container command. For every stack this script
#   1. builds a base layer for the runtime from Debian packages with mmdebstrap
#      (cached per runtime in $cache/base/, rebuilt when this script's recipe changes):
#        static  nothing but /etc/passwd, /etc/group and /tmp (for static Go binaries)
#        node    Debian bookworm's nodejs (18.x) and its libraries
#        jvm17   glibc, zlib, libstdc++ and dash, plus a jlinked Java 17 runtime from this
#                machine's Debian OpenJDK 17 (/opt/java, /usr/bin/java)
#        jvm25   the same with a Java 25 runtime linked from /usr/lib/jvm/temurin-25-jdk-amd64
#   2. runs the stack's build command in a scratch copy of its folder ($cache/build/<name>/,
#      beside copies of the shared folders its stack.conf names, e.g. stacks/jvm-common;
#      npm, Maven and Go keep their download caches in the home directory, outside the repo)
#      and packs ./dist/ as /app in a second layer,
#   3. assembles the image with umoci (user 65532, the command, PORT, the exposed port) and
#      writes benchrun.local/stack-<name>:<version> as an OCI archive with skopeo to
#      $out/stack-<name>-<version>.oci.tar,
#   4. imports it into the local cluster's containerd (namespace k8s.io) unless --no-import.
# A stack whose inputs (its files, its base layer, this script) are unchanged is not rebuilt,
# and an image containerd already holds with the same digest is not re-imported: a second run
# without changes takes seconds. Sizes and build times go to $out/stacks.tsv.
#
# Usage: hack/stacks.sh [--no-import] [--out DIR] [--list] [STACK...]
#   STACK        folder names under stacks/ (default: every folder with a stack.conf)
#   --no-import  only build the archives (push them elsewhere with
#                skopeo copy oci-archive:FILE docker://REGISTRY/stack-NAME:TAG)
#   --list       print the stacks and their runtimes, build nothing
#   --out DIR    archive directory (default $BENCHRUN_IMAGES_DIR or /var/cache/benchrun/images)
# Environment: CONTAINERD_ADDRESS (space-separated sockets; default: every node runtime of the
# local cluster),
#   BENCHRUN_STACKS_CACHE (default /var/cache/benchrun/stacks), DEBIAN_MIRROR
#   (default http://deb.debian.org/debian), JAVA17_HOME, JAVA25_HOME.
set -euo pipefail
umask 022

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=${BENCHRUN_IMAGES_DIR:-/var/cache/benchrun/images}
cache=${BENCHRUN_STACKS_CACHE:-/var/cache/benchrun/stacks}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
java17=${JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
java25=${JAVA25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
registry=benchrun.local
# shellcheck source=lib/containerd-import.sh
. "$repo/hack/lib/containerd-import.sh"
do_import=1 list_only=0 stacks=()
# Fixed timestamps: the same inputs give the same image config and layer digests.
export SOURCE_DATE_EPOCH=0
epoch=1970-01-01T00:00:00Z

die() { echo "stacks.sh: $*" >&2; exit 1; }
log() { echo "stacks.sh: $*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --no-import) do_import=0 ;;
    --list) list_only=1 ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out_dir=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    -*) die "unknown option: $1 (see --help)" ;;
    *) [ -f "$repo/stacks/$1/stack.conf" ] || die "no stack '$1' (no stacks/$1/stack.conf)"
       stacks+=("$1") ;;
  esac
  shift
done
if [ ${#stacks[@]} -eq 0 ]; then
  for conf in "$repo"/stacks/*/stack.conf; do stacks+=("$(basename "$(dirname "$conf")")"); done
fi

# read_conf NAME — sets runtime, build, cmd, port, endpoints, shared from stacks/NAME/stack.conf.
read_conf() {
  runtime='' build='' cmd='' port='' endpoints='' shared=''
  # shellcheck disable=SC1090
  . "$repo/stacks/$1/stack.conf"
  case $runtime in static|node|jvm17|jvm25) ;; *) die "stacks/$1/stack.conf: runtime '$runtime' is not static, node, jvm17 or jvm25" ;; esac
  [ -n "$build" ] || die "stacks/$1/stack.conf: build is empty"
  jq -e 'type == "array" and length > 0' <<<"$cmd" >/dev/null 2>&1 \
    || die "stacks/$1/stack.conf: cmd must be a JSON array, e.g. '[\"node\",\"/app/server.js\"]'"
  [[ $port =~ ^[0-9]+$ ]] || die "stacks/$1/stack.conf: port must be a number"
  local dir
  for dir in $shared; do
    [ -d "$repo/stacks/$dir" ] && [ ! -f "$repo/stacks/$dir/stack.conf" ] \
      || die "stacks/$1/stack.conf: shared folder '$dir' is not a folder of stacks/ without a stack.conf"
  done
}


# --- preflight ---------------------------------------------------------------------------
# The Go toolchain of this machine lives in /usr/local/go; a CI shell may not have it on PATH.
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; fi
export GOTOOLCHAIN=local
need_pkgs=()
for tool in mmdebstrap:mmdebstrap umoci:umoci skopeo:skopeo jq:jq; do
  command -v "${tool%%:*}" >/dev/null || need_pkgs+=("${tool##*:}")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing ${need_pkgs[*]}: install them (apt-get install ${need_pkgs[*]}) or run as root"
  log "installing Debian packages: ${need_pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_pkgs[@]}" >/dev/null \
    || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_pkgs[@]}" >/dev/null; } \
    || die "apt-get install ${need_pkgs[*]} failed"
fi
if [ $list_only = 1 ]; then
  for name in "${stacks[@]}"; do read_conf "$name"; printf '%s\t%s\t%s\n' "$name" "$runtime" "$endpoints"; done
  exit 0
fi
if [ $do_import = 1 ]; then
  command -v ctr >/dev/null || die "ctr not found: run hack/cluster.sh up, or use --no-import"
  address=$(containerd_addresses)
  for a in $address; do
    [ -S "$a" ] || die "containerd socket $a not found: run 'hack/cluster.sh up' first, or use --no-import"
  done
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)
[ -n "$version" ] || die "cannot read the workspace version from Cargo.toml"
mkdir -p "$out_dir" "$cache/base" "$cache/build"

# layer_tar DIR OUT — a deterministic tar of DIR's content (sorted, root-owned, mtime 0).
layer_tar() {
  chmod 755 "$1" # the layer's root entry: mktemp -d made it 0700
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
    --no-xattrs --no-acls --no-selinux -C "$1" -cf "$2" .
}

# add_users ROOTFS — the non-root user the images run as, and a world-writable /tmp.
add_users() {
  mkdir -p "$1/etc" "$1/tmp" "$1/app"
  chmod 1777 "$1/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nbenchrun:x:65532:65532:benchrun:/tmp:/sbin/nologin\n' > "$1/etc/passwd"
  printf 'root:x:0:\nbenchrun:x:65532:\n' > "$1/etc/group"
}

# debian_rootfs ROOTFS PKG... — the packages and their dependencies, unpacked (mmdebstrap's
# extract variant: no maintainer scripts, no dpkg, no apt), without docs and charset modules.
debian_rootfs() {
  local root=$1; shift
  local include; include=$(IFS=,; echo "$*")
  mmdebstrap --quiet --variant=extract --mode=root --format=directory --include="$include" \
    bookworm "$root" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    "deb ${mirror%/debian}/debian-security bookworm-security main" >&2 \
    || die "mmdebstrap failed for $*"
  rm -rf "$root"/usr/share/{doc,man,info,lintian,gdb,systemtap,bash-completion} \
    "$root"/usr/lib/x86_64-linux-gnu/gconv "$root"/var/cache/apt "$root"/var/lib/apt/lists \
    "$root"/var/lib/dpkg "$root"/var/log "$root"/dev
}

# jlink_runtime JAVA_HOME ROOTFS COMPRESS — a trimmed Java runtime at ROOTFS/opt/java, with its
# default class-data-sharing archive (as the Temurin JRE images have: a faster JVM start).
# The module set covers the JVM stacks in stacks/ (Spring needs java.desktop, java.naming,
# java.management, java.sql, jdk.unsupported; Netty and Vert.x jdk.unsupported; the MongoDB
# driver java.naming and jdk.naming.dns); see docs/stacks.md.
jvm_modules=java.base,java.compiler,java.desktop,java.instrument,java.logging,java.management,java.naming,java.net.http,java.prefs,java.rmi,java.scripting,java.security.jgss,java.security.sasl,java.sql,java.transaction.xa,java.xml,jdk.crypto.ec,jdk.jfr,jdk.management,jdk.naming.dns,jdk.net,jdk.unsupported,jdk.zipfs
jlink_runtime() {
  local home=$1 root=$2 compress=$3
  [ -x "$home/bin/jlink" ] || die "$home/bin/jlink not found: install the JDK (or set JAVA17_HOME/JAVA25_HOME)"
  "$home/bin/jlink" --add-modules "$jvm_modules" --strip-debug --no-man-pages --no-header-files \
    --generate-cds-archive \
    --compress="$compress" --output "$root/opt/java" >&2 || die "jlink from $home failed"
  mkdir -p "$root/usr/bin"
  ln -sf /opt/java/bin/java "$root/usr/bin/java"
}

# base_layer RUNTIME — prints the path of the runtime's cached base layer tar, building it if
# the recipe (this script) or the JDK it links from changed.
base_layer() {
  local rt=$1 key tarfile root
  tarfile="$cache/base/$rt.tar"
  key=$(declare -f base_layer debian_rootfs jlink_runtime add_users layer_tar | sha256sum | cut -c1-16)
  key="$key $jvm_modules"
  case $rt in
    jvm17) key="$key $(cat "$java17/release" 2>/dev/null | sha256sum | cut -c1-16)" ;;
    jvm25) key="$key $(cat "$java25/release" 2>/dev/null | sha256sum | cut -c1-16)" ;;
  esac
  if [ -f "$tarfile" ] && [ "$(cat "$tarfile.key" 2>/dev/null)" = "$key" ]; then
    echo "$tarfile"; return
  fi
  log "base layer '$rt': building (Debian packages via mmdebstrap)"
  root=$(mktemp -d "$cache/base/$rt.XXXXXX")
  case $rt in
    static) ;;
    node)
      debian_rootfs "$root" nodejs
      # Debian's node reads this bundle at start; empty: the stacks make no TLS connections.
      mkdir -p "$root/etc/ssl/certs"; : > "$root/etc/ssl/certs/ca-certificates.crt" ;;
    jvm17)
      debian_rootfs "$root" libc6 zlib1g libstdc++6 libgcc-s1 dash
      jlink_runtime "$java17" "$root" 2 ;;
    jvm25)
      debian_rootfs "$root" libc6 zlib1g libstdc++6 libgcc-s1 dash
      jlink_runtime "$java25" "$root" zip-6 ;;
  esac
  if [ -e "$root/usr/bin/dash" ] && [ ! -e "$root/bin/sh" ] && [ ! -e "$root/usr/bin/sh" ]; then
    ln -s dash "$root/usr/bin/sh"
  fi
  add_users "$root"
  layer_tar "$root" "$tarfile.tmp"
  rm -rf "$root"
  mv "$tarfile.tmp" "$tarfile"
  printf '%s\n' "$key" > "$tarfile.key"
  echo "$tarfile"
}

# stack_files NAME — the stack's source files (what git tracks or would track), sorted.
stack_files() {
  (cd "$repo/stacks/$1" && find . -type f -not -path './dist/*' -not -path './node_modules/*' \
    -not -path './target/*' -not -name '*.log' -print | LC_ALL=C sort)
}

# build_app NAME DIR — runs the stack's build in a scratch copy at DIR; leaves dist/ there. The
# shared folders of stack.conf are copied beside it, so `../<shared>` resolves as in the repo.
build_app() {
  local name=$1 dir=$2 part tree
  tree=$(dirname "$dir")
  rm -rf "$tree"
  for part in "$name" $shared; do
    mkdir -p "$tree/$part"
    (cd "$repo/stacks/$part" && stack_files "$part" | tar -cf - -T -) | tar -xf - -C "$tree/$part"
  done
  log "$name: building ($runtime): $build"
  (cd "$dir" && bash -euo pipefail -c "$build") > "$dir.log" 2>&1 \
    || { tail -30 "$dir.log" >&2; die "$name: the build failed (log: $dir.log)"; }
  [ -d "$dir/dist" ] && [ -n "$(ls -A "$dir/dist")" ] || die "$name: the build left nothing in dist/"
}

# assemble NAME BASE_TAR APP_TAR ARCHIVE — the image, written as an OCI archive.
assemble() {
  local name=$1 base=$2 app=$3 archive=$4 layout ref
  layout="$cache/build/$name.oci" ref="$registry/stack-$name:$version"
  local -a cfg=(--config.user 65532:65532 --config.workingdir /app --config.env "PORT=$port"
    --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    --config.exposedports "$port/tcp" --created "$epoch" --history.created "$epoch"
    --config.label "org.opencontainers.image.title=benchrun stack $1"
    --config.label "org.opencontainers.image.source=stacks/$1")
  local arg
  while IFS= read -r arg; do cfg+=(--config.cmd "$arg"); done < <(jq -r '.[]' <<<"$cmd")
  rm -rf "$layout"
  umoci init --layout "$layout"
  umoci new --image "$layout:img"
  umoci raw add-layer --image "$layout:img" --history.created "$epoch" \
    --history.created_by "hack/stacks.sh base $runtime" "$base"
  umoci raw add-layer --image "$layout:img" --history.created "$epoch" \
    --history.created_by "hack/stacks.sh $1: $build" "$app"
  umoci config --image "$layout:img" "${cfg[@]}"
  umoci gc --layout "$layout"
  rm -f "$archive"
  skopeo copy --quiet "oci:$layout:img" "oci-archive:$archive:$ref" >&2 \
    || die "skopeo copy to $archive failed"
  # containerd names an imported image after this annotation (skopeo writes only the OCI
  # ref.name, which ctr would take as a bare tag).
  local tmp; tmp=$(mktemp -d)
  tar -xf "$archive" -C "$tmp"
  jq --arg ref "$ref" '.manifests[0].annotations["io.containerd.image.name"] = $ref' \
    "$tmp/index.json" > "$tmp/index.json.new" && mv "$tmp/index.json.new" "$tmp/index.json"
  (cd "$tmp" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
    -cf "$archive" oci-layout index.json blobs)
  rm -rf "$tmp" "$layout"
}

# --- build and import --------------------------------------------------------------------
summary="$out_dir/stacks.tsv"
[ -f "$summary" ] || printf 'stack\truntime\timage_bytes\tbuild_seconds\tarchive\n' > "$summary"
imported=0
for name in "${stacks[@]}"; do
  read_conf "$name"
  ref="$registry/stack-$name:$version"
  archive="$out_dir/stack-$name-$version.oci.tar"
  base=$(base_layer "$runtime")
  key=$({ declare -f build_app assemble layer_tar stack_files; echo "$runtime $(sha256sum < "$base.key")"; cat "$repo/stacks/$name/stack.conf";
          for part in "$name" $shared; do (cd "$repo/stacks/$part" && stack_files "$part" | xargs -r -d '\n' sha256sum); done; } | sha256sum | cut -d' ' -f1)
  if [ -f "$archive" ] && [ "$(cat "$archive.inputs" 2>/dev/null)" = "$key" ]; then
    log "$ref: unchanged, keeping $archive"
  else
    started=$(date +%s)
    dir="$cache/build/$name/$name"
    build_app "$name" "$dir"
    stage=$(mktemp -d "$cache/build/$name/stage.XXXXXX")
    mkdir -p "$stage/app"; cp -a "$dir/dist/." "$stage/app/"
    layer_tar "$stage" "$dir.app.tar"; rm -rf "$stage"
    assemble "$name" "$base" "$dir.app.tar" "$archive"
    rm -f "$dir.app.tar"
    printf '%s\n' "$key" > "$archive.inputs"
    seconds=$(( $(date +%s) - started ))
    bytes=$(stat -c %s "$archive")
    grep -v "^$name	" "$summary" > "$summary.tmp" || true
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$runtime" "$bytes" "$seconds" "$archive" >> "$summary.tmp"
    mv "$summary.tmp" "$summary"
    log "$ref: built in ${seconds}s, $((bytes / 1048576)) MiB (compressed archive)"
  fi
  digest=$(tar -xOf "$archive" index.json | jq -r '.manifests[0].digest')
  if [ $do_import = 1 ]; then
    rc=0; import_archive "$address" "$ref" "$archive" "$digest" || rc=$?
    case $rc in
      0) log "$ref: imported into containerd (k8s.io: $address)"; imported=$((imported + 1)) ;;
      1) log "$ref: already in containerd" ;;
      *) die "ctr import of $archive failed" ;;
    esac
  fi
done
log "${#stacks[@]} stack image(s) ready, $imported imported; sizes and build times in $summary"
