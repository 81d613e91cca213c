#!/usr/bin/env bash
# hack/operator-targets.sh KUBECTL KUBECONFIG FILE [SELECTOR]: keeps FILE, a Prometheus file_sd
# target list, in step with the benchrun operator's pods (SELECTOR, default
# app.kubernetes.io/name=benchrun-operator, in every namespace, so a namespaced install is
# scraped too): one target per Running pod, its pod IP and the container port named `http`,
# labelled `pod`. No `namespace` label: the operator's gauges carry the run's namespace as
# `namespace`.
#
# Why a script: Debian's Prometheus is built without Kubernetes service discovery (its
# packaging removed client-go), so hack/cluster.sh runs this beside it as the component
# `operator-targets`. It is event-driven: one `kubectl get --watch` waits for pod changes, and
# each change re-lists the operator's pods (two, usually) and rewrites FILE by rename, which
# Prometheus' file discovery notices at once. Idle, it costs a sleeping kubectl.
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: $0 KUBECTL KUBECONFIG FILE [SELECTOR]" >&2; exit 2; }
kubectl=$1 kubeconfig=$2 out=$3 selector=${4:-app.kubernetes.io/name=benchrun-operator}

log() { printf '%s operator-targets: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
k() { "$kubectl" --kubeconfig "$kubeconfig" "$@"; }

# hack/cluster.sh stops components by PID: take the watch (a child) along.
trap 'trap - TERM INT; kill -- -$$ 2>/dev/null; exit 0' TERM INT

write_targets() {
  local lines json="" ns pod ip port
  lines=$(k --request-timeout=10s get pods -A -l "$selector" -o \
    jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.namespace} {.metadata.name} {.status.podIP} {.spec.containers[*].ports[?(@.name=="http")].containerPort}{"\n"}{end}') \
    || return 1
  while read -r ns pod ip port; do
    [ -n "${ip:-}" ] && [ -n "${port:-}" ] || continue
    json+="${json:+,}{\"targets\":[\"$ip:$port\"],\"labels\":{\"pod\":\"$pod\"}}"
  done <<<"$lines"
  json="[$json]"
  [ "$json" = "$(cat "$out" 2>/dev/null)" ] && return 0
  printf '%s\n' "$json" >"$out.tmp" && mv "$out.tmp" "$out" && log "targets: $json"
}

while :; do
  if ! write_targets; then sleep 2; continue; fi
  # --watch lists first and follows from that list, so nothing that changed since the write
  # above is missed; each line is a change. It ends when the apiserver closes the watch (after
  # 30-60 min) or cannot be reached; then list and watch again. In the background, so that
  # the trap above runs at once on TERM.
  k get pods -A -l "$selector" --watch -o name 2>/dev/null | while read -r _; do
    write_targets || true
  done &
  wait $!
  sleep 1
done
