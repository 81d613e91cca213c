# hack/cluster/health.sh — sourced by hack/cluster.sh: readiness probes of each component, the
# left-behind checks, the quiet health check of `up` and the canary pods.

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
