# hack/cluster/up.sh — sourced by hack/cluster.sh: `up` (packages, binaries, then every component
# in start order) and the summary it prints.

install_packages() {
  local pkgs=() p
  for p in containerd runc containernetworking-plugins prometheus iptables conntrack busybox-static curl openssl gcc libc6-dev iproute2 python3 jq; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || pkgs+=("$p")
  done
  [ ${#pkgs[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${pkgs[*]}"
  if [ ! -e /usr/sbin/policy-rc.d ]; then   # never let Debian start containerd/prometheus itself
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ] || \
     ! apt-get install -y -q --no-install-recommends "${pkgs[@]}" >"$K/logs/apt.log" 2>&1; then
    apt-get update -q >>"$K/logs/apt.log" 2>&1 || { tail -30 "$K/logs/apt.log" >&2; die "apt-get update failed"; }
    apt-get install -y -q --no-install-recommends "${pkgs[@]}" >>"$K/logs/apt.log" 2>&1 \
      || { tail -30 "$K/logs/apt.log" >&2; die "apt-get install failed (log: $K/logs/apt.log)"; }
  fi
}

nodes_line() {
  [ "$NODES" = 2 ] || return 0
  printf '\n               CPUs %s, role target (targets)' "$(node1_cpus)"
  printf '\n  node 2     : %s (%s), pods %s, CPUs %s, role load (load generators), netns %s' \
    "$NODE2_NAME" "$NODE2_IP" "$NODE2_POD_CIDR" "$(node2_cpus)" "$NODE2_NETNS"
}

where() {
  cat <<EOF
benchrun local cluster is up.
  kubeconfig : $KUBECONFIG_PATH
  node       : $NODE_NAME ($GW_IP), pods $POD_CIDR, services $SVC_CIDR$(nodes_line)
  DNS        : CoreDNS on $DNS_IP:53 (cluster.local only)
  Prometheus : $PROM_URL
  logs       : $K/logs/<component>.log     PIDs: $K/pids/<component>
  binaries   : $BIN
  use it     : eval "\$(hack/cluster.sh env)"; kubectl get nodes
EOF
}

cmd_up() {
  if existing_cluster; then
    log "KUBECONFIG=$KUBECONFIG points to a reachable cluster: using that existing cluster, starting nothing"
    return 0
  fi
  need_root
  local t0; t0=$(date +%s)
  mkdir -p "$K/logs" "$K/pids"
  BIN=$(bindir || true)
  if [ -n "$BIN" ] && healthy_quiet && ! kubelets_outdated; then
    ensure_drop_rule
    ensure_prometheus_token
    ensure_prometheus_config
    ensure_operator_targets
    where; return 0
  fi
  # A cluster whose processes all ended without `down` (a reboot, or a session and its
  # children being killed) leaves mounts, cgroups, netns and a stale etcd behind: clean them
  # up first so this `up` starts from a known state.
  if left_behind; then
    log "a previous cluster was left behind (its processes are gone): cleaning it up first"
    cmd_down
    mkdir -p "$K/logs" "$K/pids"
  elif any_alive && [ "$(cat "$K/layout" 2>/dev/null || echo "nodes=1 (before two-node support)")" != "$(layout)" ]; then
    log "the running cluster has another layout ($(cat "$K/layout" 2>/dev/null || echo "one node, no DNS")) than wanted ($(layout)): taking it down first"
    cmd_down
    mkdir -p "$K/logs" "$K/pids"
  fi
  if [ "$NODES" != 1 ] && [ "$NODES" != 2 ]; then die "BENCHRUN_NODES must be 1 or 2 (got '$NODES')"; fi
  if [ "$NODES" = 2 ] && [ "$(cpu_count)" -lt 2 ]; then
    die "the two-node layout needs at least 2 CPUs (this machine has $(cpu_count)); use BENCHRUN_NODES=1"
  fi
  install_packages
  # build-k8s.sh returns at once when its cache (keyed by k8s + Go version) is filled; a cold
  # build takes ~15-40 min on 2 cores and logs to $CACHE/logs/k8s-build.log
  # The Go toolchain of this machine lives in /usr/local/go; a CI shell may not have it on PATH.
  if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  fi
  if command -v go >/dev/null 2>&1; then
    mkdir -p "$CACHE/logs"
    BIN=$("$repo/hack/build-k8s.sh" 2> >(tee -a "$CACHE/logs/k8s-build.log" >&2) | tail -1) \
      || die "hack/build-k8s.sh failed (log: $CACHE/logs/k8s-build.log)"
  elif [ -z "$BIN" ]; then
    die "no Go toolchain to build Kubernetes with (hack/build-k8s.sh) and no cached binaries"
  fi
  [ -x "$BIN/hyperkube" ] || die "no hyperkube in '$BIN'"
  # CoreDNS, built from its Go module the same way (cached; a cold build takes a few minutes)
  mkdir -p "$CACHE/logs"
  COREDNS_BIN=$("$repo/hack/build-coredns.sh" 2> >(tee -a "$CACHE/logs/coredns-build.log" >&2) | tail -1) \
    || die "hack/build-coredns.sh failed (log: $CACHE/logs/coredns-build.log)"
  [ -x "$COREDNS_BIN" ] || die "no CoreDNS binary at '$COREDNS_BIN'"
  echo "$BIN" >"$K/bindir"
  write_pki
  write_configs
  setup_network

  # etcd: embedded 3.5.21, data on a tmpfs we mount (and down unmounts)
  mkdir -p "$K/etcd"
  if ! mountpoint -q "$K/etcd"; then mount -t tmpfs -o size=1g,mode=700 benchrun-etcd "$K/etcd"; fi
  start etcd "$BIN/etcd" --name benchrun --data-dir "$K/etcd/data" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster benchrun=http://127.0.0.1:2380 --unsafe-no-fsync --log-level=warn
  wait_for etcd 30 "healthy on 127.0.0.1:2379" etcd_healthy

  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 \
    --advertise-address=$GW_IP --bind-address=0.0.0.0 --secure-port=6443 \
    --tls-cert-file="$K/pki/apiserver.crt" --tls-private-key-file="$K/pki/apiserver.key" \
    --client-ca-file="$K/pki/ca.crt" --token-auth-file="$K/pki/tokens.csv" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true \
    --service-cluster-ip-range=$SVC_CIDR --service-node-port-range=30000-32767 \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$K/pki/sa.pub" --service-account-signing-key-file="$K/pki/sa.key" \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --profiling=false --v=1
  wait_for kube-apiserver 120 "/readyz ok on https://127.0.0.1:6443" apiserver_ready

  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$K/pki/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$K/pki/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$K/pki/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$K/pki/sa.key" --root-ca-file="$K/pki/ca.crt" \
    --cluster-signing-cert-file="$K/pki/ca.crt" --cluster-signing-key-file="$K/pki/ca.key" \
    --controllers='*' --profiling=false --v=1
  start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$K/pki/scheduler.kubeconfig" \
    --authentication-kubeconfig="$K/pki/scheduler.kubeconfig" \
    --authorization-kubeconfig="$K/pki/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --profiling=false --v=1
  wait_for kube-controller-manager 60 "healthz ok on 127.0.0.1:10257" cm_healthy
  wait_for kube-scheduler 60 "healthz ok on 127.0.0.1:10259" sched_healthy

  if ! alive containerd && runtime_ready "$CONTAINERD_SOCK"; then
    die "another containerd already serves $CONTAINERD_SOCK (not started by this script); stop it first"
  fi
  local node1_cg="" node2_cg="" labels1=""
  if [ "$NODES" = 2 ]; then
    node_cgroups "$NODE1_CG"
    node_cgroups "$NODE2_CG"
    node1_cg=/$NODE1_CG-agents node2_cg=/$NODE2_CG-agents
    labels1="--node-labels=$ROLE_LABEL=target"
  fi
  START_CGROUP=$node1_cg start containerd /usr/bin/containerd --config "$K/config/containerd.toml"
  wait_for containerd 30 "serving $CONTAINERD_SOCK" runtime_ready "$CONTAINERD_SOCK"
  if [ "$NODES" = 2 ]; then
    mkdir -p "$NODE2_RUN" "$NODE2_LIB"
    START_CGROUP=$node2_cg start containerd-2 nsenter --net="/run/netns/$NODE2_NETNS" \
      /usr/bin/containerd --config "$K/config/containerd-2.toml"
    wait_for containerd-2 30 "serving $NODE2_SOCK" runtime_ready "$NODE2_SOCK"
  fi
  ensure_images

  mkdir -p /var/lib/kubelet
  # Container CPU sampled every 1-2 s (deploy/local tells the operator 3 s): a kubelet an older
  # `up` started with another interval is restarted (its pods keep running).
  kubelets_outdated restart || true
  # shellcheck disable=SC2086 # labels1 is empty or one flag
  START_CGROUP=$node1_cg start kubelet "$BIN/kubelet" --config="$K/config/kubelet.yaml" \
    --kubeconfig="$K/pki/kubelet.kubeconfig" \
    --hostname-override=$NODE_NAME --node-ip=$GW_IP $labels1 \
    --root-dir=/var/lib/kubelet --cert-dir=/var/lib/kubelet/pki \
    --housekeeping-interval=$HOUSEKEEPING --v=1
  if [ "$NODES" = 2 ]; then
    mkdir -p "$NODE2_LIB/kubelet"
    # --containerd: the socket its cAdvisor asks for container names (default: node 1's)
    START_CGROUP=$node2_cg start kubelet-2 nsenter --net="/run/netns/$NODE2_NETNS" \
      "$BIN/kubelet" --config="$K/config/kubelet-2.yaml" \
      --kubeconfig="$K/pki/kubelet-2.kubeconfig" \
      --hostname-override=$NODE2_NAME --node-ip=$NODE2_IP --node-labels="$ROLE_LABEL=load" \
      --root-dir="$NODE2_LIB/kubelet" --cert-dir="$NODE2_LIB/kubelet/pki" \
      --containerd="$NODE2_SOCK" --housekeeping-interval=$HOUSEKEEPING --v=1
  fi
  wait_for kubelet 120 "node $NODE_NAME Ready" node_ready "$NODE_NAME"
  if [ "$NODES" = 2 ]; then
    wait_for kubelet-2 120 "node $NODE2_NAME Ready" node_ready "$NODE2_NAME"
    confine_node_cpus "$NODE1_CG" "$(node1_cpus)"
    confine_node_cpus "$NODE2_CG" "$(node2_cpus)"
    log "pods of $NODE_NAME confined to CPUs $(node1_cpus), of $NODE2_NAME to CPUs $(node2_cpus)"
  fi

  start kube-proxy "$BIN/kube-proxy" --config="$K/config/kube-proxy.yaml" --v=1
  wait_for kube-proxy 60 "healthz ok on 127.0.0.1:10256" proxy_healthy
  if [ "$NODES" = 2 ]; then
    start kube-proxy-2 nsenter --net="/run/netns/$NODE2_NETNS" "$BIN/kube-proxy" --config="$K/config/kube-proxy-2.yaml" --v=1
    wait_for kube-proxy-2 60 "healthz ok on 127.0.0.1:10256 in netns $NODE2_NETNS" proxy2_healthy
  fi
  ensure_drop_rule

  wait_for kube-controller-manager 60 "ServiceAccount default/default exists" default_sa
  wait_for kube-controller-manager 60 "ServiceAccount kube-system/default exists" kc -n kube-system get sa default
  ensure_canary benchrun-canary "$NODE_NAME"
  if [ "$NODES" = 2 ]; then ensure_canary benchrun-canary-2 "$NODE2_NAME"; fi
  wait_for kubelet 90 "canary pod kube-system/benchrun-canary Running" canary_running benchrun-canary
  if [ "$NODES" = 2 ]; then wait_for kubelet-2 90 "canary pod kube-system/benchrun-canary-2 Running" canary_running benchrun-canary-2; fi

  start coredns "$COREDNS_BIN" -conf "$K/config/Corefile"
  wait_for coredns 60 "ready (127.0.0.1:8181), serving $DNS_IP:53" coredns_ready

  ensure_prometheus_token
  start_prometheus
  wait_for prometheus 90 "cAdvisor samples with namespace/pod/container labels from $NODES node(s)" prom_has_pod_samples
  ensure_operator_targets
  layout >"$K/layout"

  log "up in $(( $(date +%s) - t0 ))s"
  where
}
