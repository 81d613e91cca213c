# hack/cluster/network.sh — sourced by hack/cluster.sh: cni0, node 2's netns and veth, routes,
# the FORWARD rules, and their removal (with kube-proxy's KUBE-* chains and the pod netns).

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
