# hack/cluster/prometheus.sh — sourced by hack/cluster.sh: Prometheus' configuration, reload,
# start, the operator-targets component and `prometheus stop|start`.

prom_query() { # prom_query PROMQL -> JSON
  curl -sf --max-time 5 "$PROM_URL/api/v1/query" --data-urlencode "query=$1"
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
    scrape_interval: 1s
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
  # /metrics asks for a bearer token allowed to get it: the token of the service account
  # kube-system/prometheus, bound to benchrun-metrics-reader (ensure_prometheus_token), read
  # from the file at every scrape.
  - job_name: benchrun-operator
    authorization: {credentials_file: '$PROM_TOKEN'}
    file_sd_configs: [{files: ['$OPERATOR_TARGETS']}]
EOF
}

# ensure_prometheus_token: the service account kube-system/prometheus, bound to the ClusterRole
# benchrun-metrics-reader (deploy/base/metrics-auth.yaml, which `make install` applies; the
# binding may come first), and a fresh token of it in $PROM_TOKEN for Prometheus' scrapes of
# the operator. A new token on every `up` (one TokenRequest): a recreated account or an
# expired token is mended by the next `up`.
ensure_prometheus_token() {
  kc apply -f - >/dev/null <<'EOF' || die "cannot create the service account kube-system/prometheus and its binding"
apiVersion: v1
kind: ServiceAccount
metadata:
  name: prometheus
  namespace: kube-system
  labels: {app.kubernetes.io/part-of: benchrun-local-cluster}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: benchrun-local-prometheus-metrics-reader
  labels: {app.kubernetes.io/part-of: benchrun-local-cluster}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: benchrun-metrics-reader}
subjects: [{kind: ServiceAccount, name: prometheus, namespace: kube-system}]
EOF
  mkdir -p "$(dirname "$PROM_TOKEN")"
  (umask 077; kc -n kube-system create token prometheus --duration=8760h >"$PROM_TOKEN.tmp") \
    || die "cannot create a token of kube-system/prometheus for Prometheus' scrapes of the operator"
  mv "$PROM_TOKEN.tmp" "$PROM_TOKEN"
}

# ensure_prometheus_config: writes the configuration when it changed (checked by promtool
# first) and makes a running Prometheus load it (SIGHUP: it keeps its data, and the previous
# configuration if it refuses the new one, which fails `up`).
ensure_prometheus_config() {
  local C=$K/config new
  mkdir -p "$C" "$K/logs"
  [ -f "$OPERATOR_TARGETS" ] || echo '[]' >"$OPERATOR_TARGETS"
  # promtool wants the token file to exist: empty until ensure_prometheus_token (once the
  # apiserver runs) writes it
  [ -f "$PROM_TOKEN" ] || (umask 077; : >"$PROM_TOKEN")
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

cmd_prometheus() {
  existing_cluster && die "KUBECONFIG points at a cluster this script did not start; its Prometheus is not ours"
  need_root
  case ${1:-} in
    stop) stop prometheus ;;
    start) ( close_inherited_fds; start_prometheus ) ;;
    *) echo "usage: $0 prometheus stop|start" >&2; exit 2 ;;
  esac
}
