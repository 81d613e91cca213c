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
# The kubelets' cAdvisor housekeeping (Prometheus scrapes it every 1 s, hack/cluster/prometheus.sh):
# container CPU samples 1-2 s apart, which deploy/local's BENCHRUN_SAMPLE_INTERVAL (3s) assumes.
HOUSEKEEPING=1s
DNS_IP=$GW_IP               # CoreDNS runs on the host, bound to the node IP (kubelets' clusterDNS)
PAUSE_IMAGE=benchrun.local/pause:3.10
BUSYBOX_IMAGE=benchrun.local/busybox:1.35
CONTAINERD_SOCK=/run/containerd/containerd.sock
KUBECONFIG_PATH=$K/kubeconfig
# Prometheus' targets for the operator's /metrics, kept by hack/operator-targets.sh
OPERATOR_TARGETS=$K/config/operator-targets.json
# Prometheus' bearer token for the operator's /metrics (ensure_prometheus_token)
PROM_TOKEN=$K/config/prometheus-token
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

# The functions, one file per concern (hack/cluster/*.sh), all defined before anything runs.
# shellcheck source=SCRIPTDIR/cluster/common.sh
. "$here/cluster/common.sh"
# shellcheck source=SCRIPTDIR/cluster/pki.sh
. "$here/cluster/pki.sh"
# shellcheck source=SCRIPTDIR/cluster/configs.sh
. "$here/cluster/configs.sh"
# shellcheck source=SCRIPTDIR/cluster/network.sh
. "$here/cluster/network.sh"
# shellcheck source=SCRIPTDIR/cluster/cgroups.sh
. "$here/cluster/cgroups.sh"
# shellcheck source=SCRIPTDIR/cluster/containerd.sh
. "$here/cluster/containerd.sh"
# shellcheck source=SCRIPTDIR/cluster/prometheus.sh
. "$here/cluster/prometheus.sh"
# shellcheck source=SCRIPTDIR/cluster/health.sh
. "$here/cluster/health.sh"
# shellcheck source=SCRIPTDIR/cluster/up.sh
. "$here/cluster/up.sh"
# shellcheck source=SCRIPTDIR/cluster/down.sh
. "$here/cluster/down.sh"
# shellcheck source=SCRIPTDIR/cluster/status.sh
. "$here/cluster/status.sh"

case ${1:-} in
  up) if ! existing_cluster; then need_root; lock; fi; cmd_up ;;
  down) need_root; lock; cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  prometheus) shift; cmd_prometheus "$@" ;;
  *) echo "usage: $0 up|down|status|env|prometheus stop|start" >&2; exit 2 ;;
esac
