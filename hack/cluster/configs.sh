# hack/cluster/configs.sh — sourced by hack/cluster.sh: containerd, CNI, kubelet, kube-proxy and
# CoreDNS configurations, and the two-node layout's split of CPUs and memory.

# containerd_config FILE ROOT STATE SOCKET CNI_CONF_DIR: cgroupfs, B1 fix, our pause image
containerd_config() {
  cat >"$1" <<EOF
version = 2
root = "$2"
state = "$3"
oom_score = 0

[grpc]
  address = "$4"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$5"
EOF
}

# cni_config FILE SUBNET GATEWAY DATA_DIR: bridge on the cni0 we create ourselves (in the
# node's network namespace); no masquerade (pods never leave the machine's own links)
cni_config() {
  cat >"$1" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "benchrun",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {"type": "host-local", "ranges": [[{"subnet": "$2", "gateway": "$3"}]],
               "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$4"}
    }
  ]
}
EOF
}

# kubelet_config FILE NODE_IP POD_CIDR SOCKET [CGROUP_ROOT RESERVED_CPU RESERVED_MEMORY LOG_DIR]
# The optional part is the two-node layout's: the node's own cgroup root (its CPU set), the
# rest of the machine reserved so that allocatable matches that CPU set and a memory share,
# and its own pod log directory (a kubelet removes log directories of pods it does not know).
kubelet_config() {
  cat >"$1" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $2
port: 10250
readOnlyPort: 10255
healthzBindAddress: 127.0.0.1
healthzPort: 10248
containerRuntimeEndpoint: unix://$4
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
protectKernelDefaults: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
clusterDNS: ["$DNS_IP"]
resolvConf: ""
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%", nodefs.inodesFree: "2%"}
serializeImagePulls: false
rotateCertificates: false
serverTLSBootstrap: false
maxPods: 110
podCIDR: $3
EOF
  if [ -n "${5:-}" ]; then
    cat >>"$1" <<EOF
cgroupRoot: $5
systemReserved: {cpu: "$6", memory: "$7"}
podLogsDir: $8
EOF
  fi
}

# kube_proxy_config FILE NODE NODE_IP KUBECONFIG
kube_proxy_config() {
  cat >"$1" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $4}
hostnameOverride: $2
mode: iptables
clusterCIDR: $CLUSTER_CIDR
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$3/32"]
EOF
}

# The two-node layout's split of this machine: node 1 (targets) gets the first half of the
# CPUs, node 2 (load) the rest; each gets (memory - 4 GiB) / 2, the 4 GiB being left to the
# control plane, Prometheus and the host.
cpu_count() { nproc --all; }
cpu_range() { if [ "$1" = "$2" ]; then echo "$1"; else echo "$1-$2"; fi; }
node1_cpus() { local n; n=$(cpu_count); cpu_range 0 $(( n / 2 - 1 )); }
node2_cpus() { local n; n=$(cpu_count); cpu_range $(( n / 2 )) $(( n - 1 )); }
node_memory_ki() { awk '/^MemTotal:/ {m = $2; n = int((m - 4 * 1048576) / 2); print (n > 1048576 ? n : 1048576)}' /proc/meminfo; }
# kubelet_reserved NODE_CPUS: "CPU MEMORY" to reserve so that allocatable = the node's share
# (allocatable = capacity - systemReserved - evictionHard; capacity = all CPUs, MemTotal)
kubelet_reserved() {
  local n cpus mem total
  n=$(cpu_count)
  cpus=$(awk -v r="$1" 'BEGIN { c = 0; k = split(r, p, ","); for (i = 1; i <= k; i++) { if (split(p[i], q, "-") == 2) c += q[2] - q[1] + 1; else c++ } print c }')
  mem=$(node_memory_ki); total=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  echo "$(( n - cpus )) $(( total - mem - 102400 ))Ki"
}

# layout: what `up` builds, kept in $K/layout; a running cluster of another layout is taken
# down first
layout() {
  if [ "$NODES" = 2 ]; then echo "nodes=2 $NODE_NAME=$(node1_cpus) $NODE2_NAME=$(node2_cpus) memory=$(node_memory_ki)Ki dns=1"
  else echo "nodes=1 dns=1"; fi
}

write_configs() {
  local C=$K/config
  mkdir -p "$C" /etc/cni/net.d
  containerd_config "$C/containerd.toml" /var/lib/containerd /run/containerd "$CONTAINERD_SOCK" /etc/cni/net.d
  cni_config /etc/cni/net.d/10-benchrun.conflist "$POD_CIDR" "$GW_IP" /var/lib/cni/networks
  local first; first=$(ls /etc/cni/net.d | sort | head -1)
  [ "$first" = 10-benchrun.conflist ] || log "WARNING: /etc/cni/net.d/$first sorts before 10-benchrun.conflist; containerd only loads the first file"
  kube_proxy_config "$C/kube-proxy.yaml" "$NODE_NAME" "$GW_IP" "$K/pki/kube-proxy.kubeconfig"
  if [ "$NODES" = 2 ]; then
    local r1 r2
    read -r -a r1 <<<"$(kubelet_reserved "$(node1_cpus)")"
    read -r -a r2 <<<"$(kubelet_reserved "$(node2_cpus)")"
    kubelet_config "$C/kubelet.yaml" "$GW_IP" "$POD_CIDR" "$CONTAINERD_SOCK" \
      "/$NODE1_CG" "${r1[0]}" "${r1[1]}" /var/log/pods
    mkdir -p "$C/node-2/net.d"
    containerd_config "$C/containerd-2.toml" "$NODE2_LIB/containerd" "$NODE2_RUN/containerd" "$NODE2_SOCK" "$C/node-2/net.d"
    cni_config "$C/node-2/net.d/10-benchrun.conflist" "$NODE2_POD_CIDR" "$NODE2_IP" /var/lib/cni/networks-node-2
    kubelet_config "$C/kubelet-2.yaml" "$NODE2_IP" "$NODE2_POD_CIDR" "$NODE2_SOCK" \
      "/$NODE2_CG" "${r2[0]}" "${r2[1]}" /var/log/pods-node-2
    kube_proxy_config "$C/kube-proxy-2.yaml" "$NODE2_NAME" "$NODE2_IP" "$K/pki/kube-proxy-2.kubeconfig"
  else
    kubelet_config "$C/kubelet.yaml" "$GW_IP" "$POD_CIDR" "$CONTAINERD_SOCK"
  fi
  cat >"$C/Corefile" <<EOF
# Cluster DNS for both nodes' pods: Service and pod names of cluster.local only. No forward
# plugin, so no query ever leaves this machine (other names get REFUSED/SERVFAIL).
.:53 {
    bind $DNS_IP
    errors
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $KUBECONFIG_PATH benchrun
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
EOF
  ensure_prometheus_config
}
