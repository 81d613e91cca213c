# hack/cluster/containerd.sh — sourced by hack/cluster.sh: the node runtimes' images (pause,
# busybox) and the containers left in them at `down`.

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
