# hack/cluster/cgroups.sh — sourced by hack/cluster.sh: the two-node layout's node cgroups, their
# CPU sets, and the removal of every cgroup the cluster made.

# node_cgroups CG: the node's cgroup root /CG in every v1 hierarchy (the kubelet makes
# CG/kubepods in it) and the cgroup /CG-agents its kubelet and containerd run in: outside the
# node's CPU set, and not "/", so that its cAdvisor watches only its own node's cgroups.
# The CPU set itself is applied by confine_node_cpus once the kubelet has started.
node_cgroups() {
  local h s
  for h in /sys/fs/cgroup/*/; do
    case $h in */unified/) continue ;; esac
    mkdir -p "$h$1"
  done
  cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$1/cpuset.mems"
  cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$1/cpuset.cpus"
  for s in $AGENT_SUBSYS; do mkdir -p "/sys/fs/cgroup/$s/$1-agents"; done
}

# confine_node_cpus CG CPUS: the node's pod cgroups (CG/kubepods and everything below it)
# confined to CPUS, leaves first (a cpuset v1 child must stay within its parent). A kubelet with
# the "none" CPU manager policy writes all online CPUs into kubepods when it starts (and fails
# to start if the parent does not allow that), and never again; new pod and container cgroups
# copy their parent's set. So this runs after each kubelet start, and /CG keeps all CPUs.
confine_node_cpus() {
  local root=/sys/fs/cgroup/cpuset/$1/kubepods d
  [ -d "$root" ] || die "no cpuset cgroup $root: did the kubelet start?"
  while read -r d; do
    [ "$(cat "$d/cpuset.cpus" 2>/dev/null)" = "$2" ] && continue
    echo "$2" >"$d/cpuset.cpus" 2>/dev/null || [ ! -d "$d" ] || die "could not confine $d to CPUs $2"
  done < <(find "$root" -depth -type d)
}
node_cpus_confined() { # node_cpus_confined CG CPUS
  [ "$(cat "/sys/fs/cgroup/cpuset/$1/kubepods/cpuset.cpus" 2>/dev/null)" = "$2" ]
}

cgroup_cleanup() {
  # kubepods: the kubelet's QoS/pod/container cgroups (cgroupfs driver) of the one-node
  # layout; benchrun-n1, benchrun-n2: the two-node layout's node roots (CG/kubepods/...) and
  # CG-agents their agents' cgroups; k8s.io: what `ctr -n k8s.io run` would create.
  # Depth first; rmdir only succeeds on empty cgroups.
  local h d top
  for h in /sys/fs/cgroup/*/; do
    for top in kubepods "$NODE1_CG" "$NODE2_CG" "$NODE1_CG-agents" "$NODE2_CG-agents" k8s.io; do
      [ -d "$h$top" ] || continue
      find "$h$top" -depth -type d 2>/dev/null | while read -r d; do rmdir "$d" 2>/dev/null || true; done
      if [ -d "$h$top" ]; then log "WARNING: could not remove $h$top (processes left?)"; fi
    done
  done
  return 0
}
