# hack/cluster/status.sh — sourced by hack/cluster.sh: `status` and `env`.

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
