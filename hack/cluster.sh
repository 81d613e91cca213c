#!/usr/bin/env bash
# hack/cluster.sh up|down|status|env|prometheus stop|start — the project's own real single-node Kubernetes.
#
# Runs upstream components (built from their Go modules by hack/build-k8s.sh into one
# multi-call binary), containerd + runc + CNI bridge from Debian, and Prometheus scraping
# the kubelet's cAdvisor endpoint. No systemd: every component is a background process
# whose PID is recorded under $K/pids and which `down` stops by that PID.
# See docs/local-cluster.md.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

K=${BENCHRUN_CLUSTER_DIR:-/var/lib/benchrun/cluster}
CACHE=${BENCHRUN_CACHE:-/var/cache/benchrun}
# BENCHRUN_NODES=2 (default): two kubelet nodes on this machine, each on its own CPU set
# (targets / load); BENCHRUN_NODES=1: the one-node layout (one kubelet on every CPU).
NODES=${BENCHRUN_NODES:-2}
NODE_NAME=benchrun-node
GW_IP=10.244.0.1            # cni0 address = node IP = apiserver advertise address = Prometheus address
POD_CIDR=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
SVC_CIDR=10.96.0.0/16
SVC_APISERVER_IP=10.96.0.1
PROM_URL=http://$GW_IP:9090
DNS_IP=$GW_IP               # CoreDNS runs on the host, bound to the node IP (kubelets' clusterDNS)
PAUSE_IMAGE=benchrun.local/pause:3.10
BUSYBOX_IMAGE=benchrun.local/busybox:1.35
CONTAINERD_SOCK=/run/containerd/containerd.sock
KUBECONFIG_PATH=$K/kubeconfig
# Prometheus' targets for the operator's /metrics, kept by hack/operator-targets.sh
OPERATOR_TARGETS=$K/config/operator-targets.json
# The second node: its own network namespace (reached from the host through a veth pair),
# containerd, kubelet, kube-proxy, pod range and cgroup root.
NODE2_NAME=benchrun-node-2
NODE2_IP=10.244.1.1         # its cni0 address = its node IP
NODE2_POD_CIDR=10.244.1.0/24
NODE2_NETNS=benchrun-node-2
NODE2_LINK=bnode2           # host end of the veth pair; the node's end is eth0
LINK_HOST_IP=10.244.254.1   # /30 between the host and the node's netns
LINK_NODE_IP=10.244.254.2
NODE2_RUN=/run/benchrun-node-2
NODE2_SOCK=$NODE2_RUN/containerd.sock
NODE2_LIB=/var/lib/benchrun/node-2
ROLE_LABEL=benchrun.dev/role
# Two-node layout: each node's cgroup root (NODE/kubepods/...) and its agents' cgroup
# (NODE-agents). cAdvisor keeps the cgroups whose name *starts with* one of its kubelet's roots,
# so no name may be a prefix of the other node's (as /benchrun-node is of /benchrun-node-2).
NODE1_CG=benchrun-n1
NODE2_CG=benchrun-n2
# cgroup v1 hierarchies whose node-agent cgroups (/<node cgroup>-agents) the agents join; the
# kubelet takes its own cgroup from name=systemd when that exists, so that one too
AGENT_SUBSYS="cpu cpuacct memory pids systemd"
# First FORWARD rule jumps here: pods may be forwarded only between the cluster's own links.
FWD_CHAIN=BENCHRUN-FWD
OLD_DROP_RULE=(FORWARD -i cni0 ! -o cni0 -j DROP)   # the rule before the chain (removed on sight)
# start order; down stops in reverse
ALL_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd containerd-2 kubelet kubelet-2 kube-proxy kube-proxy-2 coredns prometheus)
if [ "$NODES" = 2 ]; then
  COMPONENTS=("${ALL_COMPONENTS[@]}")
else
  COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns prometheus)
fi

log() { printf '%s cluster: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (it manages containerd, cgroups, iptables)"; }

# ---------------------------------------------------------------------------------- processes

pid_of() { cat "$K/pids/$1" 2>/dev/null || true; }

# alive NAME: the recorded PID exists and still runs the same program (guards PID reuse)
alive() {
  local pid; pid=$(pid_of "$1")
  [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
  local exe; exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
  [ -n "$exe" ] || return 1
  [ -f "$K/pids/$1.exe" ] || return 0
  [ "$exe" = "$(cat "$K/pids/$1.exe")" ]
}

# start NAME CMD...: background child in its own session, output to logs/NAME.log, PID recorded
start() {
  local name=$1; shift
  if alive "$name"; then log "$name already running (pid $(pid_of "$name"))"; return 0; fi
  mkdir -p "$K/logs" "$K/pids"
  printf '\n==== %s start: %s\n' "$(date -Is)" "$*" >>"$K/logs/$name.log"
  # No inherited descriptor lives on in a daemon: not our lock (8), nor a caller's, e.g.
  # `flock /tmp/benchrun-e2e.lock hack/cluster.sh up` would otherwise stay locked for good.
  # START_CGROUP (two-node layout): the node agent's own cgroup (see node_cgroups), joined
  # before exec so that the agent and its children (containerd's shims) are accounted there.
  ( close_inherited_fds
    if [ -n "${START_CGROUP:-}" ]; then
      local s; for s in $AGENT_SUBSYS; do echo "$BASHPID" >"/sys/fs/cgroup/$s$START_CGROUP/cgroup.procs"; done
    fi
    exec setsid "$@" >>"$K/logs/$name.log" 2>&1 </dev/null ) &
  local pid=$!
  echo "$pid" >"$K/pids/$name"
  local exe=""
  for _ in $(seq 1 50); do   # wait for setsid to exec the program, then remember its executable
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
    case $exe in ""|*/setsid|*/bash|*/nsenter) sleep 0.05 ;; *) break ;; esac
  done
  case $exe in ""|*/setsid|*/bash|*/nsenter) rm -f "$K/pids/$name.exe" ;; *) echo "$exe" >"$K/pids/$name.exe" ;; esac
  log "started $name (pid $pid, log $K/logs/$name.log)"
}

show_log() {
  local f=$K/logs/$1.log
  echo "----- last 30 lines of $f -----" >&2
  tail -n 30 "$f" >&2 2>/dev/null || echo "(no log)" >&2
  echo "-----" >&2
}

# wait_for NAME TIMEOUT_S WHAT CMD...: poll CMD until it succeeds; fail legibly on timeout/death
wait_for() {
  local name=$1 timeout=$2 what=$3; shift 3
  local start_t now last=0
  start_t=$(date +%s)
  while :; do
    if "$@" >/dev/null 2>&1; then
      log "$name: $what (after $(( $(date +%s) - start_t ))s)"; return 0
    fi
    now=$(date +%s)
    if [ -f "$K/pids/$name" ] && ! alive "$name"; then
      log "ERROR: $name (pid $(pid_of "$name")) exited while waiting for: $what"
      show_log "$name"; exit 1
    fi
    if (( now - start_t >= timeout )); then
      log "ERROR: $name: timed out after ${timeout}s waiting for: $what"
      show_log "$name"; exit 1
    fi
    if (( now - last >= 10 )); then
      (( last == 0 )) || log "$name: still waiting for $what ($(( now - start_t ))s/${timeout}s)"
      last=$now
    fi
    sleep 1
  done
}

stop() {
  local name=$1 pid
  pid=$(pid_of "$name")
  if [ -z "$pid" ]; then return 0; fi
  if alive "$name"; then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    if [ -d "/proc/$pid" ]; then
      log "$name did not exit after 10s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    fi
  fi
  rm -f "$K/pids/$name" "$K/pids/$name.exe"
}

# ---------------------------------------------------------------------------------- helpers

bindir() {
  if [ -f "$K/bindir" ] && [ -x "$(cat "$K/bindir")/hyperkube" ]; then cat "$K/bindir"; return; fi
  local d; d=$CACHE/k8s/${K8S_VERSION:-v1.33.13}-$(go env GOVERSION 2>/dev/null || echo unknown)
  [ -x "$d/hyperkube" ] && echo "$d"
}

kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" --request-timeout=10s "$@"; }

prom_query() { # prom_query PROMQL -> JSON
  curl -sf --max-time 5 "$PROM_URL/api/v1/query" --data-urlencode "query=$1"
}

own_kubeconfig_in_env() {
  [ -n "${KUBECONFIG:-}" ] || return 1
  [ "$(readlink -f "$KUBECONFIG" 2>/dev/null || echo "$KUBECONFIG")" = "$(readlink -f "$KUBECONFIG_PATH" 2>/dev/null || echo "$KUBECONFIG_PATH")" ]
}

# A KUBECONFIG from the environment that is not ours and answers -> "existing cluster wins".
existing_cluster() {
  [ -n "${KUBECONFIG:-}" ] || return 1
  own_kubeconfig_in_env && return 1
  local kubectl
  kubectl=$(command -v kubectl 2>/dev/null || true)
  if [ -z "$kubectl" ]; then local d; d=$(bindir || true); [ -n "$d" ] && kubectl=$d/kubectl; fi
  if [ -z "$kubectl" ]; then
    log "KUBECONFIG=$KUBECONFIG is set but no kubectl is available to check it; ignoring it"
    return 1
  fi
  EXISTING_KUBECTL=$kubectl
  "$kubectl" --request-timeout=5s get --raw=/readyz >/dev/null 2>&1
}

# ---------------------------------------------------------------------------------- packages

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

# ---------------------------------------------------------------------------------- PKI

write_pki() {
  local P=$K/pki
  mkdir -p "$P"; chmod 700 "$P"
  if [ -f "$P/apiserver.crt" ] && [ -f "$P/tokens.csv" ] && [ -f "$KUBECONFIG_PATH" ]; then
    node2_kubeconfigs
    return 0
  fi
  log "writing PKI and kubeconfigs to $P"
  (
    cd "$P"
    openssl genrsa -out ca.key 2048 2>/dev/null
    openssl req -x509 -new -nodes -key ca.key -subj "/CN=benchrun-local-ca" -days 3650 -out ca.crt \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    cat >apiserver.ext <<EOF
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$SVC_APISERVER_IP,IP:$GW_IP
EOF
    openssl genrsa -out apiserver.key 2048 2>/dev/null
    openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr 2>/dev/null
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    local admin kcm sched kubelet proxy
    admin=$(tok) kcm=$(tok) sched=$(tok) kubelet=$(tok) proxy=$(tok)
    cat >tokens.csv <<EOF
$admin,admin,uid-admin,"system:masters"
$kcm,system:kube-controller-manager,uid-kcm
$sched,system:kube-scheduler,uid-sched
$kubelet,system:node:$NODE_NAME,uid-kubelet,"system:nodes"
$proxy,system:kube-proxy,uid-proxy
EOF
    chmod 600 ./*.key tokens.csv
    mkkc controller-manager.kubeconfig system:kube-controller-manager "$kcm"
    mkkc scheduler.kubeconfig system:kube-scheduler "$sched"
    mkkc kubelet.kubeconfig "system:node:$NODE_NAME" "$kubelet"
    mkkc kube-proxy.kubeconfig system:kube-proxy "$proxy"
    mkkc "$KUBECONFIG_PATH.tmp" admin "$admin"
    mv "$KUBECONFIG_PATH.tmp" "$KUBECONFIG_PATH"
  )
  node2_kubeconfigs
}

tok() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

mkkc() { # mkkc FILE USER TOKEN [SERVER]
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: benchrun
  cluster:
    server: ${4:-https://127.0.0.1:6443}
    certificate-authority: $K/pki/ca.crt
users:
- name: $2
  user:
    token: $3
contexts:
- name: benchrun
  context:
    cluster: benchrun
    user: $2
current-context: benchrun
EOF
  chmod 600 "$1"
}

# node2_kubeconfigs: node 2's kubelet identity (a static token, group system:nodes, added to
# an existing PKI too: the apiserver reads tokens.csv when it starts, and `up` takes a cluster
# of another layout down first, so it restarts) and the kubeconfigs of node 2's kubelet and
# kube-proxy. Node 2's agents live in their own network namespace, where 127.0.0.1 is not the
# host's: their kubeconfigs name the apiserver by node 1's IP (in the certificate's SANs).
node2_kubeconfigs() {
  local P=$K/pki t user=system:node:$NODE2_NAME
  if ! grep -q ",$user," "$P/tokens.csv"; then
    echo "$(tok),$user,uid-kubelet-$NODE2_NAME,\"system:nodes\"" >>"$P/tokens.csv"
  fi
  t=$(awk -F, -v u="$user" '$2 == u {print $1}' "$P/tokens.csv")
  mkkc "$P/kubelet-2.kubeconfig" "$user" "$t" "https://$GW_IP:6443"
  t=$(awk -F, '$2 == "system:kube-proxy" {print $1}' "$P/tokens.csv")
  mkkc "$P/kube-proxy-2.kubeconfig" system:kube-proxy "$t" "https://$GW_IP:6443"
}

# ---------------------------------------------------------------------------------- configs

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

# prometheus_config FILE: the cluster's Prometheus configuration.
prometheus_config() {
  local targets
  # one scrape target per kubelet: each cAdvisor reports only its own node's cgroups (the
  # kubelets have their own cgroup roots and sit in their own cgroups), so no container twice
  if [ "$NODES" = 2 ]; then
    targets="[{targets: ['$GW_IP:10255'], labels: {node: $NODE_NAME}}, {targets: ['$NODE2_IP:10255'], labels: {node: $NODE2_NAME}}]"
  else
    targets="[{targets: ['$GW_IP:10255'], labels: {node: $NODE_NAME}}]"
  fi
  cat >"$1" <<EOF
global: {scrape_interval: 5s, evaluation_interval: 5s}
scrape_configs:
  - job_name: kubelet-cadvisor
    metrics_path: /metrics/cadvisor
    honor_labels: true
    static_configs: $targets
    metric_relabel_configs:
      - source_labels: [__name__]
        regex: 'container_(cpu_usage_seconds_total|cpu_user_seconds_total|cpu_system_seconds_total|cpu_cfs_throttled_periods_total|cpu_cfs_throttled_seconds_total|cpu_cfs_periods_total|spec_cpu_quota|spec_cpu_period|spec_cpu_shares|memory_working_set_bytes|memory_rss|memory_usage_bytes|memory_max_usage_bytes|memory_failcnt|spec_memory_limit_bytes|oom_events_total|network_receive_bytes_total|network_transmit_bytes_total|start_time_seconds|last_seen)'
        action: keep
  - job_name: kubelet-resource
    metrics_path: /metrics/resource
    static_configs: $targets
  # The operator's /metrics (both replicas; the leader's has each finished run's per-cell
  # gauges, docs/metrics.md). Debian's Prometheus has no Kubernetes discovery: the component
  # operator-targets (hack/operator-targets.sh) keeps this file in step with the operator's pods.
  - job_name: benchrun-operator
    file_sd_configs: [{files: ['$OPERATOR_TARGETS']}]
EOF
}

# ensure_prometheus_config: writes the configuration when it changed (checked by promtool
# first) and makes a running Prometheus load it (SIGHUP: it keeps its data, and the previous
# configuration if it refuses the new one, which fails `up`).
ensure_prometheus_config() {
  local C=$K/config new
  mkdir -p "$C" "$K/logs"
  [ -f "$OPERATOR_TARGETS" ] || echo '[]' >"$OPERATOR_TARGETS"
  new=$C/prometheus.yml.new
  prometheus_config "$new"
  if cmp -s "$new" "$C/prometheus.yml"; then rm -f "$new"; return 0; fi
  if command -v promtool >/dev/null 2>&1 && ! promtool check config "$new" >"$K/logs/promtool.log" 2>&1; then
    cat "$K/logs/promtool.log" >&2
    die "promtool refused the new Prometheus configuration $new"
  fi
  mv "$new" "$C/prometheus.yml"
  if alive prometheus; then reload_prometheus; fi
}

# reload_prometheus: SIGHUP, then wait until Prometheus reports a successful reload after the
# one before (on its own /metrics; a reload takes milliseconds).
reload_prometheus() {
  local before i ok ts
  before=$(prom_reload_metric success_timestamp_seconds)
  log "reloading Prometheus (pid $(pid_of prometheus)): $K/config/prometheus.yml changed"
  kill -HUP "$(pid_of prometheus)"
  for i in $(seq 1 60); do
    sleep 0.5
    ok=$(prom_reload_metric successful) ts=$(prom_reload_metric success_timestamp_seconds)
    if [ "$ok" = 1 ] && awk -v a="${ts:-0}" -v b="${before:-0}" 'BEGIN { exit !(a + 0 > b + 0) }'; then return 0; fi
    if [ "$ok" = 0 ] && [ "$i" -ge 4 ]; then
      show_log prometheus; die "Prometheus refused $K/config/prometheus.yml (it runs on with the previous one)"
    fi
  done
  show_log prometheus
  die "Prometheus reported no reload within 30 s"
}
prom_reload_metric() { # prom_reload_metric NAME: prometheus_config_last_reload_NAME's value
  curl -sf --max-time 3 "$PROM_URL/metrics" | awk -v m="prometheus_config_last_reload_$1" '$1 == m {print $2}'
}

# ensure_operator_targets: the component that keeps Prometheus' targets for the operator's pods
# (hack/operator-targets.sh; not in COMPONENTS: `up` on a healthy cluster starts it too).
ensure_operator_targets() {
  alive operator-targets && return 0
  start operator-targets "$repo/hack/operator-targets.sh" "$BIN/kubectl" "$KUBECONFIG_PATH" "$OPERATOR_TARGETS"
  # start records no executable for a script (bash never execs anything else): record bash,
  # so that a reused PID of another program is never taken for this one
  local pid; pid=$(pid_of operator-targets)
  [ -f "$K/pids/operator-targets.exe" ] || readlink "/proc/$pid/exe" >"$K/pids/operator-targets.exe" 2>/dev/null || true
}

# ---------------------------------------------------------------------------------- network

# Everything added here is recorded in $K/net so that `down` removes exactly that.
setup_network() {
  mkdir -p "$K/net"
  if [ ! -f "$K/net/ip_forward.orig" ]; then cat /proc/sys/net/ipv4/ip_forward >"$K/net/ip_forward.orig"; fi
  if ! ip link show cni0 >/dev/null 2>&1; then
    ip link add cni0 type bridge
    touch "$K/net/cni0"
  fi
  ip addr show dev cni0 | grep -q "inet $GW_IP/24" || ip addr add "$GW_IP/24" dev cni0
  ip link set cni0 up
  touch "$K/net/cni0"
  netns_dir_shared
  # service and cluster ranges go to the bridge, never to the default route
  ip route replace "$SVC_CIDR" dev cni0 src "$GW_IP"
  ip route replace "$CLUSTER_CIDR" dev cni0 src "$GW_IP"
  touch "$K/net/routes"
  if [ "$NODES" = 2 ]; then setup_node2_network; fi
  ensure_drop_rule
  # routing between cni0 and itself (pod -> ClusterIP -> pod) needs forwarding; the DROP rule
  # above keeps pods from being forwarded anywhere beyond the bridge
  echo 1 >/proc/sys/net/ipv4/ip_forward
  [ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo 0)" = 1 ] \
    || log "WARNING: net.bridge.bridge-nf-call-iptables is not 1; pod->Service->pod on the same bridge may fail"
}

# in_node2 CMD...: CMD in the second node's network namespace (mounts and cgroups stay the
# host's: `ip netns exec` would remount /sys and hide the cgroup hierarchies)
in_node2() { nsenter --net="/run/netns/$NODE2_NETNS" "$@"; }

# fwd_rules: the rules of $FWD_CHAIN on the host. Pods are forwarded only within cni0 and, in
# the two-node layout, between cni0 and the veth pair to node 2; anything else from either
# is dropped (counted by the smoke test).
fwd_rules() {
  echo "-i cni0 -o cni0 -j RETURN"
  if [ "$NODES" = 2 ]; then
    echo "-i cni0 -o $NODE2_LINK -d $NODE2_POD_CIDR -j RETURN"
    echo "-i $NODE2_LINK -o cni0 -d $POD_CIDR -j RETURN"
  fi
  echo "-i cni0 -j DROP"
  if [ "$NODES" = 2 ]; then echo "-i $NODE2_LINK -j DROP"; fi
}

# ensure_fwd_chain [IPTABLES_PREFIX...] RULES: the chain holds exactly RULES (one per line) and
# is jumped to by the first FORWARD rule (kube-proxy prepends its own jumps, so this is
# checked again after it started and on every `up`).
ensure_fwd_chain() {
  local rules=$1; shift
  local ipt=("$@" iptables -w 5) want have first line
  "${ipt[@]}" -N "$FWD_CHAIN" 2>/dev/null || true
  want=$(while read -r line; do echo "-A $FWD_CHAIN $line"; done <<<"$rules")
  have=$("${ipt[@]}" -S "$FWD_CHAIN" | grep -v '^-N ' || true)
  if [ "$want" != "$have" ]; then
    "${ipt[@]}" -F "$FWD_CHAIN"
    while read -r line; do eval "${ipt[*]} -A $FWD_CHAIN $line"; done <<<"$rules"
  fi
  while "${ipt[@]}" -D "${OLD_DROP_RULE[@]}" 2>/dev/null; do :; done
  first=$("${ipt[@]}" -S FORWARD 2>/dev/null | sed -n 2p)
  if [ "$first" != "-A FORWARD -j $FWD_CHAIN" ]; then
    while "${ipt[@]}" -D FORWARD -j "$FWD_CHAIN" 2>/dev/null; do :; done
    "${ipt[@]}" -I FORWARD -j "$FWD_CHAIN"
  fi
}

ensure_drop_rule() {
  ensure_fwd_chain "$(fwd_rules)"
  touch "$K/net/forward-drop"
  if [ "$NODES" = 2 ] && [ -e "/run/netns/$NODE2_NETNS" ]; then
    ensure_fwd_chain "$(node2_fwd_rules)" in_node2
  fi
}

# node 2's own FORWARD rules: its pods reach its bridge and, through eth0, the cluster ranges
node2_fwd_rules() {
  echo "-i cni0 -o cni0 -j RETURN"
  echo "-i cni0 -o eth0 -d $CLUSTER_CIDR -j RETURN"
  echo "-i eth0 -o cni0 -d $NODE2_POD_CIDR -j RETURN"
  echo "-i cni0 -j DROP"
  echo "-i eth0 -j DROP"
}

# The second node's network: a namespace with its own cni0 bridge (its node IP), joined to the
# host by a veth pair. Its only routes are the cluster's ranges via the host: no default route,
# so nothing from node 2 can be sent anywhere else; the host forwards node 2's packets to cni0
# only (fwd_rules).
setup_node2_network() {
  if [ ! -e "/run/netns/$NODE2_NETNS" ]; then ip netns add "$NODE2_NETNS"; fi
  touch "$K/net/node2-netns"
  if ! ip link show "$NODE2_LINK" >/dev/null 2>&1; then
    ip link add "$NODE2_LINK" type veth peer name eth0 netns "$NODE2_NETNS"
  fi
  ip addr show dev "$NODE2_LINK" | grep -q "inet $LINK_HOST_IP/30" || ip addr add "$LINK_HOST_IP/30" dev "$NODE2_LINK"
  ip link set "$NODE2_LINK" up
  in_node2 ip link set lo up
  in_node2 ip addr show dev eth0 | grep -q "inet $LINK_NODE_IP/30" || in_node2 ip addr add "$LINK_NODE_IP/30" dev eth0
  in_node2 ip link set eth0 up
  in_node2 ip link show cni0 >/dev/null 2>&1 || in_node2 ip link add cni0 type bridge
  in_node2 ip addr show dev cni0 | grep -q "inet $NODE2_IP/24" || in_node2 ip addr add "$NODE2_IP/24" dev cni0
  in_node2 ip link set cni0 up
  in_node2 ip route replace "$CLUSTER_CIDR" via "$LINK_HOST_IP" dev eth0
  in_node2 ip route replace "$SVC_CIDR" via "$LINK_HOST_IP" dev eth0
  in_node2 sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward'
  in_node2 sh -c 'f=/proc/sys/net/bridge/bridge-nf-call-iptables; [ ! -e $f ] || echo 1 >$f'
  ip route replace "$NODE2_POD_CIDR" via "$LINK_NODE_IP" dev "$NODE2_LINK"
}

teardown_node2_network() {
  if [ -e "/run/netns/$NODE2_NETNS" ]; then
    ip netns del "$NODE2_NETNS" 2>/dev/null && log "removed network namespace $NODE2_NETNS (its bridge, veth and rules)" \
      || log "WARNING: could not remove network namespace $NODE2_NETNS"
  fi
  ip link del "$NODE2_LINK" 2>/dev/null || true
  rm -f "$K/net/node2-netns"
}

teardown_network() {
  local l
  for l in $(ip -o link show master cni0 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    ip link del "$l" 2>/dev/null || true
  done
  if [ -f "$K/net/cni0" ] || ip link show cni0 >/dev/null 2>&1; then
    ip link del cni0 2>/dev/null && log "removed bridge cni0 (and its routes)" || true
  fi
  rm -f "$K/net/cni0" "$K/net/routes"
  teardown_node2_network
  if [ -f "$K/net/forward-drop" ] || iptables -w 5 -S "$FWD_CHAIN" >/dev/null 2>&1 \
     || iptables -w 5 -C "${OLD_DROP_RULE[@]}" 2>/dev/null; then
    while iptables -w 5 -D "${OLD_DROP_RULE[@]}" 2>/dev/null; do :; done
    while iptables -w 5 -D FORWARD -j "$FWD_CHAIN" 2>/dev/null; do :; done
    iptables -w 5 -F "$FWD_CHAIN" 2>/dev/null || true
    iptables -w 5 -X "$FWD_CHAIN" 2>/dev/null || true
    rm -f "$K/net/forward-drop"
    log "removed iptables chain $FWD_CHAIN and its FORWARD jump"
  fi
  if [ -f "$K/net/ip_forward.orig" ]; then
    cat "$K/net/ip_forward.orig" >/proc/sys/net/ipv4/ip_forward
    rm -f "$K/net/ip_forward.orig"
  fi
}

# ---------------------------------------------------------------------------------- images

# import_if_changed REF TAR: import unless containerd already has REF at the archive's digest
# (mkoci.sh is deterministic, so an unchanged rootfs gives the same digest and no import)
# (into every node's containerd)
import_if_changed() {
  local ref=$1 tar=$2 want have sock
  want=$(tar -xOf "$tar" index.json | grep -o '"digest":"sha256:[0-9a-f]*"' | head -1 | cut -d'"' -f4)
  for sock in $(node_sockets); do
    have=$(ctr -a "$sock" -n k8s.io images ls 2>/dev/null | awk -v r="$ref" '$1 == r {print $3}')
    if [ "$want" != "$have" ]; then
      log "importing $ref ($want) into $sock"
      ctr -a "$sock" -n k8s.io images import "$tar" >/dev/null
    fi
  done
}

# node_sockets: the containerd socket of every node of the layout
node_sockets() { echo "$CONTAINERD_SOCK"; if [ "$NODES" = 2 ]; then echo "$NODE2_SOCK"; fi; }

ensure_images() {
  local W=$K/images
  mkdir -p "$W"
  # sandbox image: static C pause
  rm -rf "$W/pause-rootfs"; mkdir -p "$W/pause-rootfs"
  gcc -static -Os -s -o "$W/pause-rootfs/pause" "$here/cluster/pause.c"
  touch -d @0 "$W/pause-rootfs/pause"
  "$repo/hack/mkoci.sh" "$W/pause-rootfs" "$PAUSE_IMAGE" "$W/pause.tar" '["/pause"]' 2>/dev/null
  import_if_changed "$PAUSE_IMAGE" "$W/pause.tar"
  # busybox (Debian busybox-static, all applets), like the upstream image: no entrypoint, Cmd sh
  local R=$W/busybox-rootfs a
  rm -rf "$R"; mkdir -p "$R"/{bin,etc,tmp,proc,sys,dev,root,www,var/www}
  chmod 1777 "$R/tmp"
  cp /bin/busybox "$R/bin/busybox"
  for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$R/bin/$a"; done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$R/etc/passwd"
  echo 'nobody:x:65534:65534:nobody:/:/bin/false' >>"$R/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$R/etc/group"
  MKOCI_CMD_JSON='["sh"]' "$repo/hack/mkoci.sh" "$R" "$BUSYBOX_IMAGE" "$W/busybox.tar" 'null' 2>/dev/null
  import_if_changed "$BUSYBOX_IMAGE" "$W/busybox.tar"
}

# ---------------------------------------------------------------------------------- health

node_ready() { # node_ready [NODE]
  [ "$(kc get node "${1:-$NODE_NAME}" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
nodes_ready() { node_ready "$NODE_NAME" && { [ "$NODES" != 2 ] || node_ready "$NODE2_NAME"; }; }
default_sa() { kc -n default get serviceaccount default >/dev/null 2>&1; }
# pod-labelled cAdvisor series from every node (the canaries guarantee one per node)
prom_has_pod_samples() {
  local n
  n=$(prom_query 'count(count by (node) (container_memory_working_set_bytes{namespace!="",pod!="",container!=""}))' \
    | sed -n 's/.*"value":\[[0-9.]*,"\([0-9]*\)"\].*/\1/p')
  [ "${n:-0}" -ge "$NODES" ]
}
etcd_healthy() { curl -sf --max-time 3 http://127.0.0.1:2379/health | grep -q '"health":"true"'; }
apiserver_ready() { curl -sf --max-time 3 --cacert "$K/pki/ca.crt" https://127.0.0.1:6443/readyz >/dev/null; }
cm_healthy() { curl -skf --max-time 3 https://127.0.0.1:10257/healthz >/dev/null; }
sched_healthy() { curl -skf --max-time 3 https://127.0.0.1:10259/healthz >/dev/null; }
runtime_ready() { [ -S "$1" ] && ctr -a "$1" version >/dev/null 2>&1; } # runtime_ready SOCKET
proxy_healthy() { curl -sf --max-time 3 http://127.0.0.1:10256/healthz >/dev/null; }
proxy2_healthy() { in_node2 curl -sf --max-time 3 http://127.0.0.1:10256/healthz >/dev/null; }
coredns_ready() { curl -sf --max-time 3 http://127.0.0.1:8181/ready >/dev/null; }
prom_ready() { curl -sf --max-time 3 "$PROM_URL/-/ready" >/dev/null; }

# left_behind: PID files exist but none of their processes runs any more.
left_behind() {
  local c any=1
  for c in "${ALL_COMPONENTS[@]}"; do
    [ -f "$K/pids/$c" ] || continue
    any=0
    alive "$c" && return 1
  done
  return $any
}

# any_alive: some component of any layout still runs
any_alive() {
  local c
  for c in "${ALL_COMPONENTS[@]}"; do alive "$c" && return 0; done
  return 1
}

# kill_orphan_tasks: containers whose containerd is gone, found by the PID files containerd's
# runc shim keeps in each task bundle (container init first, then its shim).
kill_orphan_tasks() {
  local f pid
  for f in /run/containerd/io.containerd.runtime.v2.task/k8s.io/*/init.pid \
           "$NODE2_RUN"/containerd/io.containerd.runtime.v2.task/k8s.io/*/init.pid \
           /run/containerd/io.containerd.runtime.v2.task/k8s.io/*/shim.pid \
           "$NODE2_RUN"/containerd/io.containerd.runtime.v2.task/k8s.io/*/shim.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  done
}

healthy_quiet() {
  local c
  for c in "${COMPONENTS[@]}"; do alive "$c" || return 1; done
  [ -n "${BIN:-}" ] || return 1
  [ "$(cat "$K/layout" 2>/dev/null)" = "$(layout)" ] || return 1
  apiserver_ready && nodes_ready && prom_ready && coredns_ready || return 1
  [ "$NODES" != 2 ] || { node_cpus_confined "$NODE1_CG" "$(node1_cpus)" && node_cpus_confined "$NODE2_CG" "$(node2_cpus)"; }
}

# The canaries keep one tiny pod running on each node so cAdvisor always has pod-labelled
# series and `up` proves the whole CRI/CNI path works on every node.
ensure_canary() { # ensure_canary NAME NODE
  kc -n kube-system get pod "$1" >/dev/null 2>&1 && return 0
  kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: kube-system
  labels: {app.kubernetes.io/name: benchrun-canary, app.kubernetes.io/part-of: benchrun-local-cluster}
spec:
  nodeName: $2
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: pause
    image: $PAUSE_IMAGE
    imagePullPolicy: Never
    resources:
      requests: {cpu: 1m, memory: 4Mi}
      limits: {cpu: 10m, memory: 16Mi}
EOF
}
canary_running() { # canary_running NAME
  [ "$(kc -n kube-system get pod "$1" -o 'jsonpath={.status.phase}' 2>/dev/null)" = Running ]
}

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

# ---------------------------------------------------------------------------------- up

cmd_up() {
  if existing_cluster; then
    log "KUBECONFIG=$KUBECONFIG points to a reachable cluster: using that existing cluster, starting nothing"
    return 0
  fi
  need_root
  local t0; t0=$(date +%s)
  mkdir -p "$K/logs" "$K/pids"
  BIN=$(bindir || true)
  if [ -n "$BIN" ] && healthy_quiet; then
    ensure_drop_rule
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
  # shellcheck disable=SC2086 # labels1 is empty or one flag
  START_CGROUP=$node1_cg start kubelet "$BIN/kubelet" --config="$K/config/kubelet.yaml" \
    --kubeconfig="$K/pki/kubelet.kubeconfig" \
    --hostname-override=$NODE_NAME --node-ip=$GW_IP $labels1 \
    --root-dir=/var/lib/kubelet --cert-dir=/var/lib/kubelet/pki \
    --housekeeping-interval=5s --v=1
  if [ "$NODES" = 2 ]; then
    mkdir -p "$NODE2_LIB/kubelet"
    # --containerd: the socket its cAdvisor asks for container names (default: node 1's)
    START_CGROUP=$node2_cg start kubelet-2 nsenter --net="/run/netns/$NODE2_NETNS" \
      "$BIN/kubelet" --config="$K/config/kubelet-2.yaml" \
      --kubeconfig="$K/pki/kubelet-2.kubeconfig" \
      --hostname-override=$NODE2_NAME --node-ip=$NODE2_IP --node-labels="$ROLE_LABEL=load" \
      --root-dir="$NODE2_LIB/kubelet" --cert-dir="$NODE2_LIB/kubelet/pki" \
      --containerd="$NODE2_SOCK" --housekeeping-interval=5s --v=1
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

  start_prometheus
  wait_for prometheus 90 "cAdvisor samples with namespace/pod/container labels from $NODES node(s)" prom_has_pod_samples
  ensure_operator_targets
  layout >"$K/layout"

  log "up in $(( $(date +%s) - t0 ))s"
  where
}

# ---------------------------------------------------------------------------------- down

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

# kubelet and kube-proxy create KUBE-* chains (KUBE-FIREWALL, canaries, KUBE-MARK-MASQ, ...) in
# iptables and ip6tables; `kube-proxy --cleanup` leaves the kubelet's. Nothing else on these
# machines uses KUBE-* chains, so remove the jumps to them and then the chains.
kube_iptables_cleanup() {
  local ipt t line c
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null 2>&1 || continue
    for t in filter nat mangle raw; do
      "$ipt" -w 5 -t "$t" -S >/dev/null 2>&1 || continue
      while read -r line; do
        [ -n "$line" ] && eval "$ipt -w 5 -t $t -D ${line#-A }" 2>/dev/null || true
      done < <("$ipt" -w 5 -t "$t" -S | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j KUBE-' || true)
      for c in $("$ipt" -w 5 -t "$t" -S | awk '/^-N KUBE-/{print $2}'); do "$ipt" -w 5 -t "$t" -F "$c" 2>/dev/null || true; done
      for c in $("$ipt" -w 5 -t "$t" -S | awk '/^-N KUBE-/{print $2}'); do "$ipt" -w 5 -t "$t" -X "$c" 2>/dev/null || true; done
    done
  done
}

umount_under() { # umount_under DIR: every mount at or below DIR, deepest first
  local m
  for m in $(awk -v p="$1" '$5 == p || index($5, p "/") == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "WARNING: could not unmount $m"
  done
}

# Pod network namespaces are nsfs mounts on /run/netns/cni-*. `ip netns add` (the smoke test's
# test host does one) bind-mounts /run/netns onto itself when it is not a mount point yet, and
# that hides every pod netns mounted before it: they can only be unmounted once that bind mount
# is gone. `up` makes the bind mount first (netns_dir_shared) so nothing is hidden; this also
# cleans up after a cluster that ran before that was done.
cleanup_pod_netns() {
  local pass m n
  for pass in 1 2 3; do
    for m in $(awk '$5 ~ "^/run/netns/cni-" {print $5}' /proc/self/mountinfo | sort -u); do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    awk '$5 ~ "^/run/netns/cni-" {f = 1} END {exit !f}' /proc/self/mountinfo || break
    mountpoint -q /run/netns || break
    if awk '$5 ~ "^/run/netns/." && $5 !~ "^/run/netns/cni-" {f = 1} END {exit !f}' /proc/self/mountinfo; then
      log "WARNING: pod netns are hidden under /run/netns, which holds other namespaces too: left as is"
      break
    fi
    log "unmounting the /run/netns bind mount that hides $(awk '$5 ~ "^/run/netns/cni-"' /proc/self/mountinfo | wc -l) pod netns"
    umount /run/netns 2>/dev/null || log "WARNING: could not unmount /run/netns"
  done
  for n in /run/netns/cni-*; do
    [ -e "$n" ] || continue
    rm -f "$n" 2>/dev/null || log "WARNING: could not remove $n (still mounted)"
  done
}

# netns_dir_shared: /run/netns as a shared bind mount of itself, as `ip netns add` would make it,
# before any pod netns is mounted in it (see cleanup_pod_netns).
netns_dir_shared() {
  mkdir -p /run/netns
  if ! mountpoint -q /run/netns; then mount --bind /run/netns /run/netns; fi
  mount --make-shared /run/netns
}

# tasks_left SOCKET: containers still running in that containerd
tasks_left() { ctr -a "$1" -n k8s.io tasks ls -q 2>/dev/null; }

# kill_tasks NAME SOCKET: kill whatever the runtime still runs, so no shim stays behind
kill_tasks() {
  local name=$1 sock=$2 t c ctr=(ctr -a "$2" -n k8s.io)
  alive "$name" && [ -S "$sock" ] && "${ctr[@]}" version >/dev/null 2>&1 || return 0
  for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do
    "${ctr[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
  done
  for _ in $(seq 1 20); do
    [ -z "$("${ctr[@]}" tasks ls 2>/dev/null | awk 'NR>1 && $3 != "STOPPED"')" ] && break; sleep 0.5
  done
  for t in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks delete -f "$t" >/dev/null 2>&1 || true; done
  for c in $("${ctr[@]}" containers ls -q 2>/dev/null); do "${ctr[@]}" containers delete "$c" >/dev/null 2>&1 || true; done
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

# ---------------------------------------------------------------------------------- status/env

cmd_status() {
  local ok=0 c pid
  if existing_cluster; then
    echo "using an existing cluster: KUBECONFIG=$KUBECONFIG"
    "$EXISTING_KUBECTL" --request-timeout=10s get nodes -o wide || true
    return 0
  fi
  BIN=$(bindir || true)
  echo "state dir  : $K"
  echo "layout     : $(cat "$K/layout" 2>/dev/null || echo "(none recorded)"); wanted: $(layout)"
  for c in "${COMPONENTS[@]}"; do
    pid=$(pid_of "$c")
    if alive "$c"; then printf '  %-24s running  pid %s\n' "$c" "$pid"
    else printf '  %-24s STOPPED%s\n' "$c" "${pid:+ (stale pid $pid)}"; ok=1; fi
  done
  if [ -n "$BIN" ] && apiserver_ready 2>/dev/null; then
    echo "nodes      :"; kc get node -o wide -L "$ROLE_LABEL" 2>&1 | sed 's/^/  /'
    nodes_ready || ok=1
    if [ "$NODES" = 2 ]; then
      printf '  CPU sets   : %s %s, %s %s\n' "$NODE_NAME" "$(cat "/sys/fs/cgroup/cpuset/$NODE1_CG/kubepods/cpuset.cpus" 2>/dev/null || echo '?')" \
        "$NODE2_NAME" "$(cat "/sys/fs/cgroup/cpuset/$NODE2_CG/kubepods/cpuset.cpus" 2>/dev/null || echo '?')"
    fi
  else
    echo "node       : apiserver not reachable"; ok=1
  fi
  if coredns_ready; then echo "DNS        : $DNS_IP:53 (ready)"; else echo "DNS        : $DNS_IP:53 (NOT ready)"; ok=1; fi
  if prom_ready; then echo "Prometheus : $PROM_URL (ready)"; else echo "Prometheus : $PROM_URL (NOT ready)"; ok=1; fi
  if alive operator-targets; then echo "op. targets: $(cat "$OPERATOR_TARGETS" 2>/dev/null) (Prometheus job benchrun-operator; operator-targets pid $(pid_of operator-targets))"
  else echo "op. targets: NOT kept: operator-targets stopped (\`up\` starts it)"; ok=1; fi
  echo "kubeconfig : $KUBECONFIG_PATH"
  if [ $ok = 0 ]; then echo "healthy"; else echo "NOT healthy"; fi
  return $ok
}

cmd_env() {
  if existing_cluster; then
    echo "# using the existing cluster from KUBECONFIG=$KUBECONFIG (set PROMETHEUS_URL yourself)"
  else
    echo "export KUBECONFIG=$KUBECONFIG_PATH"
    echo "export PROMETHEUS_URL=$PROM_URL"
  fi
  local b; b=$(bindir || true)
  if [ -n "$b" ]; then echo "export PATH=$b:\$PATH"; fi
}

# prometheus stop|start: stop or start the cluster's Prometheus alone, keeping its data (the
# e2e suite uses it to test an outage; `start` waits until it answers again)
start_prometheus() {
  mkdir -p "$K/prometheus" "$K/logs"
  ensure_prometheus_config
  start prometheus /usr/bin/prometheus --config.file="$K/config/prometheus.yml" \
    --storage.tsdb.path="$K/prometheus" --storage.tsdb.retention.time=12h \
    --web.listen-address=$GW_IP:9090 --log.level=warn
  wait_for prometheus 60 "ready on $PROM_URL" prom_ready
}

# Inherited descriptors (e.g. the e2e suite's flock) must not live on in a long-running child.
close_inherited_fds() {
  local fd
  for fd in $(ls /proc/$BASHPID/fd); do
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
  return 0
}

cmd_prometheus() {
  existing_cluster && die "KUBECONFIG points at a cluster this script did not start; its Prometheus is not ours"
  need_root
  case ${1:-} in
    stop) stop prometheus ;;
    start) ( close_inherited_fds; start_prometheus ) ;;
    *) echo "usage: $0 prometheus stop|start" >&2; exit 2 ;;
  esac
}

# up/down from several shells at once (parallel test suites) take turns; the second `up` then
# finds a healthy cluster and does nothing
lock() {
  mkdir -p "$K"
  exec 8>"$K/.lock"
  if ! flock -n 8; then
    log "another hack/cluster.sh up/down is running; waiting for it (max 20 min)"
    flock -w 1200 8 || die "timed out waiting for $K/.lock"
  fi
}

case ${1:-} in
  up) if ! existing_cluster; then need_root; lock; fi; cmd_up ;;
  down) need_root; lock; cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  prometheus) shift; cmd_prometheus "$@" ;;
  *) echo "usage: $0 up|down|status|env|prometheus stop|start" >&2; exit 2 ;;
esac
