# hack/cluster/down.sh — sourced by hack/cluster.sh: `down`, which stops every component and
# removes what `up` added.

umount_under() { # umount_under DIR: every mount at or below DIR, deepest first
  local m
  for m in $(awk -v p="$1" '$5 == p || index($5, p "/") == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "WARNING: could not unmount $m"
  done
}

cmd_down() {
  need_root
  BIN=$(bindir || true)
  # 1. controllers first, so nothing recreates the pods deleted next (Deployments, Jobs, ...)
  stop kube-controller-manager
  stop kube-scheduler
  # 2. pods: let the kubelets tear them down through the CRI (CNI DEL releases IPs and veths)
  if [ -n "$BIN" ] && alive kube-apiserver && alive kubelet && alive containerd && apiserver_ready; then
    log "deleting all pods"
    kc delete pods --all --all-namespaces --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
    for _ in $(seq 1 30); do
      [ -z "$(tasks_left "$CONTAINERD_SOCK")" ] && { ! alive containerd-2 || [ -z "$(tasks_left "$NODE2_SOCK")" ]; } && break
      sleep 1
    done
  fi
  stop operator-targets
  stop prometheus
  stop coredns
  stop kube-proxy-2
  stop kube-proxy
  stop kubelet-2
  stop kubelet
  # 3. whatever is left: kill tasks through containerd so no shim stays behind
  kill_tasks containerd-2 "$NODE2_SOCK"
  kill_tasks containerd "$CONTAINERD_SOCK"
  stop containerd-2
  stop containerd
  kill_orphan_tasks
  stop kube-apiserver
  stop etcd
  # 4. host state
  if mountpoint -q "$K/etcd" 2>/dev/null; then umount "$K/etcd" || umount -l "$K/etcd" || true; fi
  umount_under /var/lib/kubelet
  umount_under "$NODE2_LIB/kubelet"
  umount_under /run/containerd/io.containerd.grpc.v1.cri/sandboxes
  umount_under /run/containerd/io.containerd.runtime.v2.task/k8s.io
  umount_under "$NODE2_RUN"
  cleanup_pod_netns
  [ -n "$BIN" ] && "$BIN/kube-proxy" --cleanup >>"$K/logs/kube-proxy.log" 2>&1 || true
  kube_iptables_cleanup
  cgroup_cleanup
  teardown_network
  rm -rf /var/lib/cni "$K/prometheus" "$K/layout"
  if ! awk '{print $5}' /proc/self/mountinfo | grep -q '^/run/containerd'; then rm -rf /run/containerd; fi
  if ! awk '{print $5}' /proc/self/mountinfo | grep -q "^$NODE2_RUN"; then rm -rf "$NODE2_RUN"; fi
  if ! awk '{print $5}' /proc/self/mountinfo | grep -q '^/var/lib/kubelet'; then rm -rf /var/lib/kubelet; fi
  if ! awk '{print $5}' /proc/self/mountinfo | grep -q "^$NODE2_LIB/kubelet"; then rm -rf "$NODE2_LIB/kubelet"; fi
  rm -rf /var/log/pods-node-2
  log "down: stopped all components and removed pods, cgroups, mounts, cni0, node 2's netns and iptables rules"
}
