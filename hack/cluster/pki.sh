# hack/cluster/pki.sh — sourced by hack/cluster.sh: the CA, apiserver certificate, static tokens
# and kubeconfigs under $K/pki.

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
