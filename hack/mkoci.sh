#!/usr/bin/env bash
# mkoci.sh ROOTFS_DIR IMAGE_REF OUT_TAR [ENTRYPOINT_JSON]
#
# Packs a directory into a single-layer OCI image archive that
# `ctr -n k8s.io images import OUT_TAR` imports under the name IMAGE_REF
# (the name is carried in the io.containerd.image.name annotation).
# No Docker, no registry. The output is deterministic: same rootfs content
# and arguments give byte-identical archives (sorted entries, uid/gid 0,
# mtime 0, GNU format, no xattrs), so image digests are stable.
#
#   ENTRYPOINT_JSON  default '["/bin/sh"]'; 'null' for none (then set MKOCI_CMD_JSON, e.g. '["sh"]')
# Optional environment (JSON where noted):
#   MKOCI_CMD_JSON   image Cmd, e.g. '["--port","8080"]'       (default: none)
#   MKOCI_ENV_JSON   extra Env entries, e.g. '["RUST_LOG=info"]' (PATH is always set)
#   MKOCI_WORKDIR    working directory                           (default: /)
#   MKOCI_USER       user, e.g. 65532:65532                      (default: image root)
#   MKOCI_PORTS      space-separated exposed ports, e.g. "8080/tcp"
#   MKOCI_ARCH       architecture                                (default: from uname -m)
set -euo pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: $0 ROOTFS_DIR IMAGE_REF OUT_TAR [ENTRYPOINT_JSON]" >&2; exit 2
fi
rootfs=$1 ref=$2 out=$3 entry=${4:-'["/bin/sh"]'}
[ -d "$rootfs" ] || { echo "mkoci: $rootfs is not a directory" >&2; exit 2; }
case $ref in *:*) ;; *) echo "mkoci: IMAGE_REF needs an explicit tag (name:tag)" >&2; exit 2;; esac
case $(uname -m) in x86_64) def_arch=amd64;; aarch64) def_arch=arm64;; *) def_arch=$(uname -m);; esac
arch=${MKOCI_ARCH:-$def_arch}
cmd_json=${MKOCI_CMD_JSON:-}
env_json=${MKOCI_ENV_JSON:-[]}
workdir=${MKOCI_WORKDIR:-/}
out_abs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"
tarflags=(--sort=name --format=gnu --owner=0 --group=0 --numeric-owner --mtime=@0 --no-xattrs --no-acls --no-selinux)

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }
put() { local s; s=$(sha "$1"); mv "$1" "$work/blobs/sha256/$s"; echo "$s"; }

tar "${tarflags[@]}" -C "$rootfs" -cf "$work/layer.tar" .
layer_size=$(size "$work/layer.tar"); layer_sha=$(put "$work/layer.tar")

# Env: PATH plus MKOCI_ENV_JSON entries (simple JSON array splice).
extra_env=$(printf '%s' "$env_json" | sed -e 's/^[[:space:]]*\[//' -e 's/\][[:space:]]*$//')
env_all='"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"'
if [ -n "${extra_env//[[:space:]]/}" ]; then env_all="$env_all,$extra_env"; fi
cfg='"Entrypoint":'"$entry"',"Env":['"$env_all"'],"WorkingDir":"'"$workdir"'"'
[ -n "$cmd_json" ] && cfg="$cfg"',"Cmd":'"$cmd_json"
[ -n "${MKOCI_USER:-}" ] && cfg="$cfg"',"User":"'"$MKOCI_USER"'"'
if [ -n "${MKOCI_PORTS:-}" ]; then
  ports=""; for p in $MKOCI_PORTS; do ports="$ports${ports:+,}\"$p\":{}"; done
  cfg="$cfg"',"ExposedPorts":{'"$ports"'}'
fi
printf '%s' '{"architecture":"'"$arch"'","os":"linux","config":{'"$cfg"'},"rootfs":{"type":"layers","diff_ids":["sha256:'"$layer_sha"'"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"hack/mkoci.sh"}]}' > "$work/config.json"
cfg_size=$(size "$work/config.json"); cfg_sha=$(put "$work/config.json")

printf '%s' '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:'"$cfg_sha"'","size":'"$cfg_size"'},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:'"$layer_sha"'","size":'"$layer_size"'}]}' > "$work/manifest.json"
man_size=$(size "$work/manifest.json"); man_sha=$(put "$work/manifest.json")

printf '%s' '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:'"$man_sha"'","size":'"$man_size"',"platform":{"architecture":"'"$arch"'","os":"linux"},"annotations":{"io.containerd.image.name":"'"$ref"'","org.opencontainers.image.ref.name":"'"${ref##*:}"'"}}]}' > "$work/index.json"
printf '%s' '{"imageLayoutVersion":"1.0.0"}' > "$work/oci-layout"
tar "${tarflags[@]}" -C "$work" -cf "$out_abs.tmp" oci-layout index.json blobs
mv "$out_abs.tmp" "$out_abs"
echo "mkoci: $ref -> $out_abs (manifest sha256:$man_sha)" >&2
