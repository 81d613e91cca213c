# hack/lib/containerd-import.sh — sourced by hack/images.sh and hack/stacks.sh.

# import_archive ADDRESS REF ARCHIVE DIGEST — imports the OCI archive into containerd's k8s.io
# namespace unless it already holds REF at DIGEST. Status 0 when it imported, 1 when the image
# was already there, 2 when the import failed.
import_archive() {
  local address=$1 ref=$2 archive=$3 digest=$4 current
  # ctr images ls: REF TYPE DIGEST SIZE PLATFORMS LABELS
  current=$(ctr -n k8s.io --address "$address" images ls "name==$ref" 2>/dev/null \
    | awk -v r="$ref" '$1 == r {print $3}')
  [ "$current" = "$digest" ] && return 1
  ctr -n k8s.io --address "$address" images import "$archive" >/dev/null || return 2
  return 0
}
