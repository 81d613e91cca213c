# hack/lib/containerd-import.sh — sourced by hack/images.sh and hack/stacks.sh.

# containerd_addresses: the containerd sockets to import into — CONTAINERD_ADDRESS when set
# (space-separated), else every node runtime of the local cluster (hack/cluster.sh: node 1's
# default socket, and node 2's when the two-node layout runs).
containerd_addresses() {
  if [ -n "${CONTAINERD_ADDRESS:-}" ]; then echo "$CONTAINERD_ADDRESS"; return; fi
  local a=/run/containerd/containerd.sock
  if [ -S /run/benchrun-node-2/containerd.sock ]; then a="$a /run/benchrun-node-2/containerd.sock"; fi
  echo "$a"
}

# import_archive ADDRESSES REF ARCHIVE DIGEST — imports the OCI archive into the k8s.io
# namespace of each containerd in ADDRESSES (space-separated) that does not hold REF at DIGEST
# yet. Status 0 when it imported into any, 1 when every one had the image, 2 when an import
# failed.
import_archive() {
  local addresses=$1 ref=$2 archive=$3 digest=$4 address current rc=1
  for address in $addresses; do
    # ctr images ls: REF TYPE DIGEST SIZE PLATFORMS LABELS
    current=$(ctr -n k8s.io --address "$address" images ls "name==$ref" 2>/dev/null \
      | awk -v r="$ref" '$1 == r {print $3}')
    [ "$current" = "$digest" ] && continue
    ctr -n k8s.io --address "$address" images import "$archive" >/dev/null || return 2
    rc=0
  done
  return $rc
}
