#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine (root): etcd, kube-apiserver,
# -controller-manager, -scheduler, kubelet and kube-proxy (scripts/k8s-tools.sh), containerd,
# runc and the CNI plugins (Debian), CoreDNS; pods run real containers from images built here
# (scripts/images.sh). Made for the testbed's real-cluster tests and for trying the chart.
#
#   scripts/local-cluster.sh up     start it; the last line printed is `export KUBECONFIG=<path>`
#   scripts/local-cluster.sh down   stop it and restore the machine (also after a failed `up`)
#   scripts/local-cluster.sh status exit 0 if it runs
#
# Network: a bridge $CLUSTER_BRIDGE (default cachelab0) with $CLUSTER_NODE_IP (10.244.0.1/24) is
# the node; pods get 10.244.0.0/24, Services 10.244.64.0/20 (DNS 10.244.64.10), nothing leaves
# the machine (no masquerading, CoreDNS answers cluster.local only). The node is labelled
# `agentpool=local` (charts/testbed/examples/local-values.yaml maps every pool to it).
# State, logs and certificates live in $CLUSTER_DIR (default .cache/cluster, git-ignored).
# What `up` changes on the machine (bridge, veths, /run/netns mounts, iptables chains of kubelet,
# kube-proxy and CNI in IPv4 and IPv6, ip_forward and bridge-nf-call sysctls, kubepods cgroups,
# /var/log/pods and /var/log/containers) is recorded first and undone by `down`.
# CLUSTER_NETWORK_POLICY=cilium adds Cilium's agent (NetworkPolicies enforced; docs/kubernetes.md):
# its CILIUM_* chains, cilium_* devices and the sysctls it sets are undone by `down` as well.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${TOOLS_DIR:-$root/.cache/tools}/bin"
dir="${CLUSTER_DIR:-$root/.cache/cluster}"
bridge="${CLUSTER_BRIDGE:-cachelab0}"
node_ip="${CLUSTER_NODE_IP:-10.244.0.1}"
pod_cidr="${node_ip%.*}.0/24"
service_cidr="${CLUSTER_SERVICE_CIDR:-10.244.64.0/20}"
service_base="${service_cidr%/*}"
api_service_ip="${service_base%.*}.1"
dns_ip="${service_base%.*}.10"
node_name="${CLUSTER_NODE_NAME:-cachelab-local}"
api_port=6443
kubeconfig="$dir/kubeconfig"
# NetworkPolicy enforcement: none (the bridge plugin alone) or cilium (Cilium's agent chained after
# the bridge plugin in generic-veth mode; built by `CILIUM=1 make k8s-tools`).
network_policy="${CLUSTER_NETWORK_POLICY:-none}"
cilium_dir="$dir/cilium"
cilium_sock="$cilium_dir/run/cilium.sock"
cilium_src="${TOOLS_DIR:-$root/.cache/tools}/cilium-src"  # the module's bpf/ and CRDs (k8s-tools.sh)
cilium_router_cidr="${node_ip%.*.*}.1.0/24"
clang_dir="${CILIUM_CLANG_DIR:-/usr/lib/llvm-19/bin}"  # clang >= 18.1 with the BPF target
# Machine-wide sysctls Cilium's agent sets (datapath/loader, iptables); restored by `down`.
cilium_sysctls=(net/ipv4/conf/all/rp_filter net/ipv4/conf/default/rp_filter net/ipv4/conf/all/forwarding
  net/ipv4/fib_multipath_use_neigh net/ipv4/ip_early_demux kernel/unprivileged_bpf_disabled
  kernel/timer_migration net/core/bpf_jit_enable)
state="$dir/machine-state"
pids="$dir/pids"

log() { echo "[local-cluster] $*" >&2; }
die() { log "error: $*"; exit 1; }

kubectl_() { kubectl --kubeconfig "$kubeconfig" "$@"; }

# ---------------------------------------------------------------- machine state (record, restore)

record_state() {  # once per up/down cycle: what to restore
  [[ -f "$state" ]] && return
  {
    echo "ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
    echo "ip6_forwarding=$(cat /proc/sys/net/ipv6/conf/all/forwarding)"
    echo "nf_call_iptables=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo none)"
    echo "nf_call_ip6tables=$(cat /proc/sys/net/bridge/bridge-nf-call-ip6tables 2>/dev/null || echo none)"
    local k
    for k in "${cilium_sysctls[@]}"; do
      [[ -r /proc/sys/$k ]] && echo "sysctl_$(echo "$k" | tr '/' '.')=$(cat "/proc/sys/$k")"
    done
    echo "had_bpffs=$(awk '$2 == "/sys/fs/bpf" {f=1} END {print f+0}' /proc/mounts)"
    for d in /run/netns /var/log/pods /var/log/containers /run/containerd /var/run/cilium /var/lib/cilium; do
      echo "had_$(echo "$d" | tr '/' '_')=$([[ -e $d ]] && echo 1 || echo 0)"
    done
  } > "$state"
}

state_value() { awk -F= -v k="$1" '$1 == k {print $2}' "$state"; }

# ---------------------------------------------------------------- processes

start_proc() {  # start_proc NAME CMD...: background daemon, log in $dir/logs/NAME.log, pid in $pids/NAME
  local name="$1"; shift
  setsid "$@" > "$dir/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$pids/$name"
}

stop_proc() {  # TERM, up to 15 s, then KILL; by the recorded pid only
  local name="$1" pid i
  [[ -f "$pids/$name" ]] || return 0
  pid="$(cat "$pids/$name")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pids/$name"
}

alive() { [[ -f "$pids/$1" ]] && kill -0 "$(cat "$pids/$1")" 2>/dev/null; }

wait_for() {  # wait_for SECONDS WHAT PROC CMD...: poll CMD every 0.5 s; fail at once if PROC died
  local limit="$1" what="$2" proc="$3" i; shift 3
  for ((i = 0; i < limit * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    [[ $proc == - ]] || alive "$proc" || die "$proc exited (log: $dir/logs/$proc.log)"
    sleep 0.5
  done
  die "$what not ready after ${limit}s (logs in $dir/logs)"
}

# ---------------------------------------------------------------- pieces of `up`

make_certs() {
  local pki="$dir/pki"
  [[ -f "$pki/admin.crt" ]] && return
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=cachelab-local-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  cat > "$pki/apiserver.ext" <<EOF
subjectAltName=IP:$node_ip,IP:$api_service_ip,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost
extendedKeyUsage=serverAuth
EOF
  printf 'extendedKeyUsage=clientAuth\n' > "$pki/client.ext"
  sign() {  # sign NAME SUBJECT EXTFILE
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
    openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 3650 -extfile "$3" -out "$pki/$1.crt" 2>/dev/null
  }
  sign apiserver "/CN=kube-apiserver" "$pki/apiserver.ext"
  # One client identity (system:masters) for the controllers, the kubelet, kube-proxy and you.
  sign admin "/O=system:masters/CN=cachelab-admin" "$pki/client.ext"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

write_kubeconfig() {
  cat > "$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster: {server: "https://$node_ip:$api_port", certificate-authority: "$dir/pki/ca.crt"}
users:
  - name: admin
    user: {client-certificate: "$dir/pki/admin.crt", client-key: "$dir/pki/admin.key"}
contexts:
  - name: local
    context: {cluster: local, user: admin}
current-context: local
EOF
  chmod 600 "$kubeconfig"
}

setup_network() {
  if ! ip link show "$bridge" >/dev/null 2>&1; then
    ip link add "$bridge" type bridge
  fi
  ip addr replace "$node_ip/24" dev "$bridge"
  ip link set "$bridge" up
  # Service traffic between pods on the bridge must pass iptables (kube-proxy's DNAT).
  [[ -w /proc/sys/net/bridge/bridge-nf-call-iptables ]] || die "br_netfilter is not loaded (modprobe br_netfilter)"
  echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
  echo 1 > /proc/sys/net/bridge/bridge-nf-call-ip6tables
  echo 1 > /proc/sys/net/ipv4/ip_forward
  mkdir -p "$dir/cni/net.d" "$dir/cni/ipam"
  local cilium_cni=""
  # Cilium attaches its programs to the veth the bridge plugin made (policy per endpoint).
  [[ $network_policy == cilium ]] && cilium_cni=$',\n    {"type": "cilium-cni", "chaining-mode": "generic-veth"}'
  cat > "$dir/cni/net.d/10-cachelab.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "cachelab",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$dir/cni/ipam",
              "ranges": [[{"subnet": "$pod_cidr", "rangeStart": "${node_ip%.*}.10", "gateway": "$node_ip"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "bandwidth", "capabilities": {"bandwidth": true}}$cilium_cni
  ]
}
EOF
}

write_containerd_config() {
  local cni_bin=/usr/lib/cni p
  [[ -x $cni_bin/bridge ]] || cni_bin=/opt/cni/bin
  [[ -x $cni_bin/bridge ]] || die "CNI plugins missing: run scripts/install-debs.sh (containernetworking-plugins)"
  if [[ $network_policy == cilium ]]; then  # one plugin folder: Debian's plugins and cilium-cni
    mkdir -p "$dir/cni/bin"
    for p in "$cni_bin"/*; do ln -sf "$p" "$dir/cni/bin/"; done
    ln -sf "$bin/cilium-cni" "$dir/cni/bin/cilium-cni"
    cni_bin="$dir/cni/bin"
  fi
  cat > "$dir/containerd.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$dir/containerd.sock"
[ttrpc]
  address = "$dir/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "cachelab.local/pause:3.10"
  # Without CAP_SYS_RESOURCE runc cannot lower oom_score_adj ("can't get final child's PID").
  restrict_oom_score_adj = true
  enable_tls_streaming = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        Root = "$dir/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni_bin"
    conf_dir = "$dir/cni/net.d"
EOF
}

write_node_configs() {
  printf 'nameserver %s\n' "$dns_ip" > "$dir/resolv.conf"
  cat > "$dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: 10250
readOnlyPort: 0
healthzPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$dir/pki/ca.crt"}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
containerRuntimeEndpoint: "unix://$dir/containerd.sock"
clusterDNS: ["$dns_ip"]
clusterDomain: cluster.local
resolvConf: "$dir/resolv.conf"
failSwapOn: false
hairpinMode: hairpin-veth
serializeImagePulls: false
# Images here cannot be pulled again: never collect them, evict only when really short.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
podLogsDir: "$dir/pod-logs"
EOF
  cat > "$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$kubeconfig"}
hostnameOverride: $node_name
mode: iptables
clusterCIDR: $pod_cidr
bindAddress: $node_ip
healthzBindAddress: "$node_ip:10256"
metricsBindAddress: "$node_ip:10249"
iptables: {localhostNodePorts: false}
# Leave the machine's conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

start_cilium() {  # after the node is Ready: Cilium's CRDs, the node's pod CIDR, the agent
  local crds
  crds="$cilium_src/pkg/k8s/apis/cilium.io/client/crds"
  kubectl_ apply -f "$crds/v2" -f "$crds/v2alpha1" >/dev/null
  kubectl_ wait --for condition=established --timeout=60s -f "$crds/v2" -f "$crds/v2alpha1" >/dev/null
  # IPAM stays the bridge plugin's; the agent only wants a range for its own router address,
  # one the bridge's host-local allocator never hands out.
  kubectl_ patch node "$node_name" --type merge \
    -p "{\"spec\": {\"podCIDR\": \"$cilium_router_cidr\", \"podCIDRs\": [\"$cilium_router_cidr\"]}}" >/dev/null
  mkdir -p "$cilium_dir/lib" "$cilium_dir/run"
  ln -sfn "$cilium_src/bpf" "$cilium_dir/lib/bpf"
  # The agent runs in a mount namespace of its own: its bpffs and cgroup2 mounts vanish with it,
  # and kernel.unprivileged_bpf_disabled, which it would set to 1 (irreversible until reboot),
  # is read-only there (the agent ignores that write failing).
  start_proc cilium-agent unshare --mount --propagation private sh -c '
    f=/proc/sys/kernel/unprivileged_bpf_disabled
    mount --bind "$f" "$f" && mount -o remount,bind,ro "$f" "$f" || exit 1
    exec "$@"' cilium-agent env PATH="$clang_dir:$PATH" K8S_NODE_NAME="$node_name" "$bin/cilium-agent" \
    --k8s-kubeconfig-path "$kubeconfig" --k8s-require-ipv4-pod-cidr=false \
    --cni-chaining-mode generic-veth --enable-local-node-route=false --enable-host-legacy-routing=true \
    --routing-mode native --ipv4-native-routing-cidr "${node_ip%.*.*}.0.0/16" \
    --enable-ipv4-masquerade=false --enable-ipv6=false --kube-proxy-replacement=false \
    --enable-l7-proxy=false --enable-hubble=false --enable-endpoint-health-checking=false \
    --enable-health-checking=false --ipam kubernetes --identity-allocation-mode crd \
    --devices "$bridge" --cni-exclusive=false --write-cni-conf-when-ready "" \
    --lib-dir "$cilium_dir/lib" --state-dir "$cilium_dir/run" --socket-path "$cilium_sock" \
    --bpf-root /sys/fs/bpf --cgroup-root "$cilium_dir/cgroupv2" --enable-policy default \
    ${CILIUM_AGENT_ARGS:-}
  wait_for 300 "cilium-agent" cilium-agent cilium_ready
}

cilium_ready() {
  curl -sf --max-time 2 --unix-socket "$cilium_sock" http://localhost/v1/healthz | grep -q '"cilium":{[^}]*"state":"Ok"'
}

deploy_coredns() {
  sed -e "s/@DNS_IP@/$dns_ip/g" "$root/scripts/local-cluster/coredns.yaml" | kubectl_ apply -f - >/dev/null
}

up() {
  [[ $(id -u) -eq 0 ]] || die "needs root (bridge, iptables, containerd)"
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy coredns; do
    [[ -x "$bin/$b" ]] || die "$bin/$b is missing: run make k8s-tools"
  done
  for b in containerd runc ctr etcd iptables openssl kubectl; do
    command -v "$b" >/dev/null || die "$b is missing: run scripts/install-debs.sh"
  done
  case "$network_policy" in
    none) ;;
    cilium)
      [[ -x "$bin/cilium-agent" && -x "$bin/cilium-cni" && -d "$cilium_src/bpf" ]] \
        || die "cilium is not built: run CILIUM=1 make k8s-tools"
      [[ -x "$clang_dir/clang" ]] || die "$clang_dir/clang is missing: scripts/install-debs.sh clang-19 llvm-19"
      command -v curl >/dev/null || die "curl is missing" ;;
    *) die "CLUSTER_NETWORK_POLICY must be none or cilium, not '$network_policy'" ;;
  esac
  if status; then log "already running"; echo "export KUBECONFIG=$kubeconfig"; return; fi
  mkdir -p "$dir/logs" "$pids"
  record_state
  trap 'log "start failed: tearing down"; down >&2 || true' EXIT
  local started=$SECONDS
  make_certs
  write_kubeconfig
  setup_network
  write_containerd_config
  write_node_configs

  local etcd_port
  etcd_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  start_proc etcd etcd --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:0" \
    --log-level warn
  local pki="$dir/pki"
  start_proc kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address "$node_ip" --advertise-address "$node_ip" --secure-port "$api_port" \
    --cert-dir "$dir/apiserver" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range "$service_cidr" --authorization-mode Node,RBAC --allow-privileged=true \
    --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
    --kubelet-preferred-address-types InternalIP --profiling=false
  # cilium-cni, run by containerd, finds the agent through CILIUM_SOCK.
  start_proc containerd env CILIUM_SOCK="$cilium_sock" containerd --config "$dir/containerd.toml"
  wait_for 60 "kube-apiserver" kube-apiserver kubectl_ get --raw /readyz
  start_proc kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$kubeconfig" \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --use-service-account-credentials=false --leader-elect=false --secure-port 0 --profiling=false
  start_proc kube-scheduler "$bin/kube-scheduler" --kubeconfig "$kubeconfig" --leader-elect=false \
    --secure-port 0 --profiling=false
  wait_for 30 "containerd" containerd ctr --address "$dir/containerd.sock" version
  TOOLS_DIR="${TOOLS_DIR:-}" CLUSTER_DIR="$dir" "$root/scripts/images.sh" import pause coredns >&2
  start_proc kubelet "$bin/kubelet" --config "$dir/kubelet.yaml" --kubeconfig "$kubeconfig" \
    --root-dir "$dir/kubelet" --cert-dir "$dir/kubelet/pki" --hostname-override "$node_name" \
    --node-ip "$node_ip" --node-labels "agentpool=local,kubernetes.azure.com/agentpool=local"
  start_proc kube-proxy "$bin/kube-proxy" --config "$dir/kube-proxy.yaml"
  wait_for 90 "node $node_name" kubelet kubectl_ wait --for=condition=Ready "node/$node_name" --timeout=1s
  wait_for 60 "default service account" kube-controller-manager kubectl_ get serviceaccount default
  [[ $network_policy == cilium ]] && start_cilium
  deploy_coredns
  kubectl_ -n kube-system rollout status deployment/coredns --timeout=90s >&2 || die "CoreDNS did not become ready"
  trap - EXIT
  log "cluster up in $((SECONDS - started)) s (node $node_name at $node_ip, NetworkPolicy: $network_policy; logs in $dir/logs)"
  echo "export KUBECONFIG=$kubeconfig"
}

status() {
  alive kube-apiserver && alive kubelet && kubectl_ get --raw /readyz >/dev/null 2>&1
}

# ---------------------------------------------------------------- down

delete_pods() {  # through the API, so the kubelet stops them and CNI releases their networks
  alive kube-apiserver && alive kubelet || return 0
  stop_proc kube-controller-manager  # nothing recreates them now
  stop_proc kube-scheduler
  kubectl_ delete pods --all-namespaces --all --grace-period=1 --wait=false --request-timeout=10s >/dev/null 2>&1 || true
  local i
  for ((i = 0; i < 120; i++)); do
    [[ -z "$(kubectl_ get pods -A -o name --request-timeout=5s 2>/dev/null)" ]] && return 0
    sleep 0.5
  done
  log "pods still present after 60 s; stopping anyway"
}

stop_shims() {  # containerd-shim processes of our containerd (by pid, matched on our socket)
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q -- "-address $dir/containerd.sock" || continue
    kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
}

clean_iptables() {  # every KUBE-*, CNI-* and CILIUM_* chain and the rules that jump to them, IPv4 and IPv6
  local cmd table line chain
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for table in filter nat mangle raw; do
      "$cmd" -t "$table" -S >/dev/null 2>&1 || continue
      while IFS= read -r line; do
        eval "$cmd -w -t $table ${line/#-A /-D }" 2>/dev/null || true
      done < <("$cmd" -t "$table" -S | grep -E '^-A ' | grep -E -- '-j (KUBE-|CNI-|CILIUM_)' | grep -vE '^-A (KUBE-|CNI-|CILIUM_)' || true)
      for chain in $("$cmd" -t "$table" -S | awk '/^-N (KUBE-|CNI-|CILIUM_)/ {print $2}'); do
        "$cmd" -w -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("$cmd" -t "$table" -S | awk '/^-N (KUBE-|CNI-|CILIUM_)/ {print $2}'); do
        "$cmd" -w -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

clean_mounts() {  # everything mounted under $dir and the pods' network namespaces, deepest first
  local m
  for m in $(awk -v d="$dir" 'index($2, d) == 1 || index($2, "/run/netns/cni-") == 1 {print $2}' /proc/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  rm -f /run/netns/cni-* 2>/dev/null || true
}

clean_links() {
  local l
  if ip link show "$bridge" >/dev/null 2>&1; then
    for l in $(ip -o link show master "$bridge" | awk -F': ' '{print $2}' | cut -d@ -f1); do
      ip link del "$l" 2>/dev/null || true
    done
    ip link del "$bridge" 2>/dev/null || true
  fi
  # Cilium's own devices (cilium_host/cilium_net, tunnels if any).
  for l in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 | grep '^cilium_' || true); do
    ip link del "$l" 2>/dev/null || true
  done
  # ifb devices of the bandwidth plugin (ingress limits) are named bwp<hash>.
  for l in $(ip -o link show type ifb 2>/dev/null | awk -F': ' '{print $2}' | grep '^bwp' || true); do
    ip link del "$l" 2>/dev/null || true
  done
}

clean_cgroups() {  # the kubelet's kubepods hierarchy (cgroup v1 controllers or v2), deepest first
  local d
  for d in $(find /sys/fs/cgroup -depth -type d -path '*kubepods*' 2>/dev/null); do rmdir "$d" 2>/dev/null || true; done
}

restore_dir() {  # restore_dir PATH: remove PATH if it did not exist before `up`
  [[ "$(state_value "had_$(echo "$1" | tr '/' '_')")" == 0 ]] && rm -rf "$1"
  return 0
}

down() {
  [[ $(id -u) -eq 0 ]] || die "needs root"
  [[ -d "$dir" ]] || return 0
  delete_pods
  local p
  for p in kube-controller-manager kube-scheduler kubelet cilium-agent; do stop_proc "$p"; done
  stop_proc kube-proxy
  [[ -x "$bin/kube-proxy" ]] && "$bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
  stop_proc containerd
  stop_shims
  stop_proc kube-apiserver
  stop_proc etcd
  clean_mounts
  clean_iptables
  clean_links
  clean_cgroups
  if [[ -f "$state" ]]; then
    echo "$(state_value ip_forward)" > /proc/sys/net/ipv4/ip_forward
    echo "$(state_value ip6_forwarding)" > /proc/sys/net/ipv6/conf/all/forwarding
    [[ "$(state_value nf_call_iptables)" == none ]] || echo "$(state_value nf_call_iptables)" > /proc/sys/net/bridge/bridge-nf-call-iptables
    [[ "$(state_value nf_call_ip6tables)" == none ]] || echo "$(state_value nf_call_ip6tables)" > /proc/sys/net/bridge/bridge-nf-call-ip6tables
    local line k
    while IFS= read -r line; do  # sysctls Cilium's agent sets
      k="${line%%=*}"; k="${k#sysctl_}"
      echo "${line#*=}" > "/proc/sys/$(echo "$k" | tr '.' '/')" 2>/dev/null || true
    done < <(grep '^sysctl_' "$state" || true)
    if [[ "$(state_value had_bpffs)" == 0 ]] && awk '$2 == "/sys/fs/bpf" {f=1} END {exit !f}' /proc/mounts; then
      umount /sys/fs/bpf 2>/dev/null || umount -l /sys/fs/bpf 2>/dev/null || true
    fi
    for p in /run/netns /var/log/pods /var/log/containers /run/containerd /var/run/cilium /var/lib/cilium; do restore_dir "$p"; done
    rm -f "$state"
  fi
  # Keep the certificates and etcd out of the next run; keep nothing that would surprise it.
  rm -rf "$dir/etcd" "$dir/containerd" "$dir/kubelet" "$dir/runc" "$dir/cni" "$dir/pod-logs" "$pids"
  log "cluster down; machine restored"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
