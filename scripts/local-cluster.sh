#!/usr/bin/env bash
# A real Kubernetes cluster on this machine (root): etcd, kube-apiserver, -controller-manager and
# -scheduler (scripts/k8s-tools.sh) on the host, and worker nodes each in a network namespace of
# its own with its own containerd, runc and CNI plugins (Debian), kubelet and kube-proxy; CoreDNS;
# pods run real containers from images built here (scripts/images.sh). Made for the testbed's
# real-cluster tests and for trying the chart.
#
#   scripts/local-cluster.sh up     start it; the last line printed is `export KUBECONFIG=<path>`
#   scripts/local-cluster.sh down   stop it and restore the machine (also after a failed `up`)
#   scripts/local-cluster.sh status exit 0 if it runs
#   scripts/local-cluster.sh registry  print the address of its registry (host:port)
#
# Nodes (CLUSTER_NODES): by default the ASL 2017 §3 shape `a1:3,a4:1,a2:3` (three server machines,
# one middleware machine, three client machines; layout.py DEFAULT_NODES), each node labelled `agentpool=<pool>` and
# `kubernetes.azure.com/agentpool=<pool>` as AKS labels its pools. The pools' Azure sizes (a1 1,
# a2 2, a4 8 cores; 1.75, 3.5, 14 GiB) are scaled by one factor (CLUSTER_SCALE, default the
# largest that fits: the caps add up to at most the cores left after CLUSTER_CONTROL_PLANE_MCPU)
# and become each node's cgroup caps and its allocatable; its uplink is shaped with tc htb both
# ways to the pool's rate of CLUSTER_PROFILE (asl2017, asl2019, azure-v2, off: the local runner's
# rates). scripts/local-cluster/layout.py computes the layout and refuses one that cannot fit.
# Network: a bridge $CLUSTER_BRIDGE (cachelab0) with the control plane at 10.244.0.1 is the
# data-centre network; node i has 10.244.0.(10+i) on a veth into its namespace and pods in
# 10.244.(127+i).0/24 on a bridge inside it, routed host-gw style from the host and every node;
# Services 10.244.64.0/20 (DNS 10.244.64.10; the host reaches them through the first node).
# Images: a registry of its own (Debian's docker-registry, run as a process with its own config,
# port CLUSTER_REGISTRY_PORT (default 5100) and storage in $CLUSTER_DIR; a docker-registry service
# of the machine is left alone) listens on the bridge at 10.244.0.1:5100, over http. Every node's
# containerd pulls from it (hosts.toml under $CLUSTER_DIR/certs.d), both as 10.244.0.1:5100/<name>
# (the chart's global.imageRegistry) and as cachelab.local/<name> (the cluster's own images:
# pause, CoreDNS, the monitoring stack). `up` pushes pause and CoreDNS there; `make k8s-up`
# pushes the rest (scripts/images.sh push), `make push REGISTRY=10.244.0.1:5100` the project's
# images as for AKS. `down` stops it and removes its storage.
#
# CLUSTER_NODES=1: today's single node instead, on the host itself (labelled `agentpool=local`,
# pods 10.244.0.0/24 on the bridge; charts/testbed/examples/local-one-node-values.yaml).
# NetworkPolicies (CLUSTER_NETWORK_POLICY; docs/kubernetes.md): kube-router (the multi-node
# default) runs its firewall in every node's namespace once the nodes are Ready; `down` stops it
# and removes its KUBE-* chains and ipsets from every node's namespace and the host
# (KUBE_ROUTER_ARGS: extra flags for it). cilium (one node only) adds Cilium's agent: its CILIUM_*
# chains, cilium_* devices and sysctls are undone by `down`. none: the bridge plugin alone,
# nothing enforced (the one-node default).
# State, logs and certificates live in $CLUSTER_DIR (default .cache/cluster, git-ignored).
# What `up` changes on the machine (bridge, veths, network namespaces and the /run/netns mount,
# iptables chains, sysctls, cgroups in every hierarchy, qdiscs, /var/log/pods, /var/log/containers,
# /var/lib/cni, /run/containerd) is recorded first and undone by `down`, also after a failed or
# interrupted `up`.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
bin="${TOOLS_DIR:-$(cachelab_cache_dir)/tools}/bin"
export PATH="$bin:$PATH"   # kubectl from make k8s-tools where the machine has none
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
registry_port="${CLUSTER_REGISTRY_PORT:-5100}"
registry="$node_ip:$registry_port"
# NetworkPolicy enforcement (set below, after the layout): kube-router (its firewall in every
# node's namespace; multi-node only), cilium (Cilium's agent chained after the bridge plugin in
# generic-veth mode; one node only; built by `CILIUM=1 make k8s-tools`) or none (the bridge plugin
# alone).
network_policy="${CLUSTER_NETWORK_POLICY:-}"
kube_router_health_port=20244   # in each node's namespace, so one port serves every node
cilium_dir="$dir/cilium"
cilium_sock="$cilium_dir/run/cilium.sock"
cilium_src="${TOOLS_DIR:-$(cachelab_cache_dir)/tools}/cilium-src"  # the module's bpf/ and CRDs (k8s-tools.sh)
cilium_router_cidr="${node_ip%.*.*}.1.0/24"
clang_dir="${CILIUM_CLANG_DIR:-/usr/lib/llvm-19/bin}"  # clang >= 18.1 with the BPF target
# Machine-wide sysctls Cilium's agent sets (datapath/loader, iptables); restored by `down`.
cilium_sysctls=(net/ipv4/conf/all/rp_filter net/ipv4/conf/default/rp_filter net/ipv4/conf/all/forwarding
  net/ipv4/fib_multipath_use_neigh net/ipv4/ip_early_demux kernel/unprivileged_bpf_disabled
  kernel/timer_migration net/core/bpf_jit_enable)
state="$dir/machine-state"
pids="$dir/pids"
# Multi-node layout (see the header); `1` is the single node above.
nodes_arg="${CLUSTER_NODES:-a1:3,a4:1,a2:3}"
scale_arg="${CLUSTER_SCALE:-auto}"
profile="${CLUSTER_PROFILE:-asl2017}"
control_plane_mcpu="${CLUSTER_CONTROL_PLANE_MCPU:-500}"
layout_file="$dir/layout"          # `scale F` and `node NAME POOL CPU_M MEMORY_MIB MBIT IP PODCIDR`
if [[ -z $network_policy ]]; then   # enforced on every node of the multi-node cluster by default
  if [[ $nodes_arg == 1 ]]; then network_policy=none; else network_policy=kube-router; fi
fi
cluster_cidr="${node_ip%.*.*}.128.0/17"
# Kernel settings the kubelet changes at start (its kernel tunables); recorded and restored.
kubelet_sysctls=(vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

log() { echo "[local-cluster] $*" >&2; }
die() { log "error: $*"; exit 1; }

kubectl_() { kubectl --kubeconfig "$kubeconfig" "$@"; }

# ---------------------------------------------------------------- machine state (record, restore)

# Directories the runtime may create outside $dir; removed by `down` when `up` found them absent.
runtime_dirs=(/run/netns /var/log/pods /var/log/containers /run/containerd /var/run/cilium /var/lib/cilium
  /var/lib/cni)

record_state() {  # once per up/down cycle: what to restore
  [[ -f "$state" ]] && return
  {
    echo "ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
    echo "ip6_forwarding=$(cat /proc/sys/net/ipv6/conf/all/forwarding)"
    echo "nf_call_iptables=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo none)"
    echo "nf_call_ip6tables=$(cat /proc/sys/net/bridge/bridge-nf-call-ip6tables 2>/dev/null || echo none)"
    local k
    for k in "${cilium_sysctls[@]}" "${kubelet_sysctls[@]}"; do
      [[ -r /proc/sys/$k ]] && echo "sysctl_$(echo "$k" | tr '/' '.')=$(cat "/proc/sys/$k")"
    done
    echo "had_bpffs=$(awk '$2 == "/sys/fs/bpf" {f=1} END {print f+0}' /proc/mounts)"
    for d in "${runtime_dirs[@]}"; do
      echo "had_$(echo "$d" | tr '/' '_')=$([[ -e $d ]] && echo 1 || echo 0)"
    done
    echo "had_netns_mount=$(mountpoint -q /run/netns 2>/dev/null && echo 1 || echo 0)"
  } > "$state.tmp"
  mv "$state.tmp" "$state"
}

state_value() { awk -F= -v k="$1" '$1 == k {print $2}' "$state"; }

# ---------------------------------------------------------------- processes

start_proc() {  # start_proc NAME CMD...: background daemon, log in $dir/logs/NAME.log, pid in $pids/NAME
  local name="$1"; shift
  setsid "$@" > "$dir/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$pids/$name"
}

stop_proc() { stop_procs "$1"; }

stop_procs() {  # stop_procs NAME...: TERM all, up to 15 s, then KILL; by the recorded pids only
  local name pid i left live=()
  for name in "$@"; do
    [[ -f "$pids/$name" ]] || continue
    pid="$(cat "$pids/$name")"
    kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null && live+=("$pid")
  done
  for ((i = 0; i < 150 && ${#live[@]} > 0; i++)); do
    left=()
    for pid in "${live[@]}"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
    live=("${left[@]+"${left[@]}"}")
    [[ ${#live[@]} -gt 0 ]] && sleep 0.1
  done
  for pid in "${live[@]+"${live[@]}"}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for name in "$@"; do rm -f "$pids/$name"; done
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
  containerd_config "$dir" "$cni_bin" "$dir/cni/net.d" > "$dir/containerd.toml"
}

containerd_config() {  # containerd_config DIR CNI_BIN CNI_CONF_DIR: a containerd of its own in DIR
  local d="$1"
  cat <<EOF
version = 2
root = "$d/containerd/root"
state = "$d/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/containerd/opt"
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
        Root = "$d/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$2"
    conf_dir = "$3"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$dir/certs.d"
EOF
}

write_registry_files() {  # the registry's config, and the hosts.toml of both names the nodes pull by
  local name
  mkdir -p "$dir/registry"
  cat > "$dir/registry.yml" <<EOF
version: 0.1
log: {level: warn, fields: {service: cachelab-registry}}
storage:
  filesystem: {rootdirectory: "$dir/registry"}
  delete: {enabled: true}
http:
  addr: "$registry"
EOF
  for name in "$registry" cachelab.local; do
    mkdir -p "$dir/certs.d/$name"
    cat > "$dir/certs.d/$name/hosts.toml" <<EOF
server = "http://$registry"
[host."http://$registry"]
  capabilities = ["pull", "resolve"]
EOF
  done
}

registry_answers() { (exec 3<> "/dev/tcp/$node_ip/$registry_port") 2>/dev/null; }

start_registry() {  # on the bridge (up by now); then pause and CoreDNS pushed in the background
  command -v docker-registry >/dev/null || die "docker-registry is missing: run scripts/install-debs.sh k8s (make deps-k8s)"
  registry_answers && die "$registry is taken by another process (CLUSTER_REGISTRY_PORT=<free port>)"
  write_registry_files
  start_proc registry docker-registry serve "$dir/registry.yml"
  wait_for 30 "registry at $registry" registry registry_answers
  REGISTRY="$registry" TOOLS_DIR="${TOOLS_DIR:-}" "$root/scripts/images.sh" push pause coredns > "$dir/logs/push.log" 2>&1 &
  infra_push=$!
}

wait_infra_pushed() {  # before the first pod: its sandbox (pause) and CoreDNS are in the registry
  wait "$infra_push" || die "pushing pause and coredns to $registry failed (log: $dir/logs/push.log)"
}

write_node_configs() {
  kubelet_config "$node_ip" "$dir/containerd.sock" "$dir/pod-logs" > "$dir/kubelet.yaml"
  kube_proxy_config "$node_name" "$node_ip" "$pod_cidr" > "$dir/kube-proxy.yaml"
}

kubelet_config() {  # kubelet_config ADDRESS CONTAINERD_SOCKET POD_LOGS_DIR
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $1
port: 10250
readOnlyPort: 0
healthzPort: 0
# bearer tokens checked with the API server (TokenReview) and requests authorised by its RBAC
# (SubjectAccessReview), as kubeadm and AKS set their kubelets: Prometheus scrapes cAdvisor with
# its ServiceAccount's token and the nodes/metrics permission (manifests/monitoring)
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$dir/pki/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
containerRuntimeEndpoint: "unix://$2"
clusterDNS: ["$dns_ip"]
clusterDomain: cluster.local
resolvConf: "$dir/resolv.conf"
failSwapOn: false
hairpinMode: hairpin-veth
serializeImagePulls: false
# Images come from the cluster's registry, whose storage goes with it: keep them on the node
# for the cluster's life (no image GC), evict only when really short.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
podLogsDir: "$3"
EOF
}

kube_proxy_config() {  # kube_proxy_config NODE_NAME ADDRESS CLUSTER_CIDR
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$kubeconfig"}
hostnameOverride: $1
mode: iptables
clusterCIDR: $3
bindAddress: $2
healthzBindAddress: "$2:10256"
metricsBindAddress: "$2:10249"
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

start_kube_router() {  # after the nodes are Ready: kube-router's firewall alone in every node's namespace
  # It polices the pods of its node (those whose hostIP is the node's address) with iptables
  # rules and ipsets in that namespace, where the kubelet and kube-proxy run; pod-to-pod traffic
  # on the node's bridge passes them (bridge-nf-call-iptables=1 there, setup_node_network).
  local name
  for name in $(node_names); do
    # shellcheck disable=SC2086  # KUBE_ROUTER_ARGS: extra flags, word-split on purpose
    start_proc "kube-router-$name" nsenter --net="/run/netns/$name" "$bin/kube-router" \
      --run-firewall=true --run-router=false --run-service-proxy=false \
      --hostname-override="$name" --kubeconfig="$kubeconfig" --enable-ipv6=false \
      --service-cluster-ip-range="$service_cidr" --metrics-port=0 \
      --health-port="$kube_router_health_port" --iptables-sync-period=5m ${KUBE_ROUTER_ARGS:-}
  done
  for name in $(node_names); do  # its top-level chain is there once its first sync has begun
    wait_for 120 "kube-router on $name" "kube-router-$name" ns_ "$name" iptables -w 5 -t filter -S KUBE-ROUTER-FORWARD
  done
}

cilium_ready() {
  curl -sf --max-time 2 --unix-socket "$cilium_sock" http://localhost/v1/healthz | grep -q '"cilium":{[^}]*"state":"Ok"'
}

deploy_coredns() {
  local selector="{}"
  # Multi-node: on the node with the most CPU (the middleware's), as AKS keeps it on a system pool.
  multi_node && selector="{kubernetes.io/hostname: $(node_rows | sort -k3,3nr -s | awk 'NR == 1 {print $1}')}"
  sed -e "s/@DNS_IP@/$dns_ip/g" -e "s|@NODE_SELECTOR@|$selector|" "$root/scripts/local-cluster/coredns.yaml" \
    | kubectl_ apply -f - >/dev/null
}

# ---------------------------------------------------------------- nodes of the multi-node cluster

multi_node() { [[ $nodes_arg != 1 ]]; }

python_() {  # the project's venv if made (make venv), else the system's python3
  if [[ -x "$root/.venv/bin/python" ]]; then "$root/.venv/bin/python" "$@"; else python3 "$@"; fi
}

compute_layout() {  # before anything changes: refuse a layout the machine cannot hold
  local mem_mib out
  mem_mib="$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)"
  out="$(python_ "$root/scripts/local-cluster/layout.py" "$nodes_arg" "$scale_arg" "$profile" \
    "$(nproc)" "$mem_mib" "$control_plane_mcpu" 2>&1)" || die "${out#error: }"
  layout_text="$out"
}

# node_rows: NAME POOL CPU_M MEMORY_MIB MBIT IP PODCIDR of every node, from $layout_file
node_rows() { awk '$1 == "node" {print $2, $3, $4, $5, $6, $7, $8}' "$layout_file"; }
node_names() { [[ -f "$layout_file" ]] && awk '$1 == "node" {print $2}' "$layout_file"; return 0; }

write_layout() {  # the layout with each node's address and pod range
  local i=0 line
  {
    while IFS= read -r line; do
      if [[ $line == node* ]]; then
        i=$((i + 1))
        echo "$line ${node_ip%.*}.$((10 + i)) ${node_ip%.*.*}.$((127 + i)).0/24"
      else
        echo "$line"
      fi
    done <<< "$layout_text"
  } > "$layout_file"
}

ns_() { local n="$1"; shift; nsenter --net="/run/netns/$n" "$@"; }  # not `ip netns exec`: it remounts /sys

cgroup_hierarchies() {  # mount points of every cgroup v1 hierarchy
  awk '$3 == "cgroup" {print $2}' /proc/mounts
}

node_cgroup() {  # node_cgroup NAME CPU_M MEMORY_MIB: the node's cgroup in every v1 hierarchy, capped
  local name="$1" cpu_m="$2" mem_mib="$3" h
  for h in $(cgroup_hierarchies); do
    mkdir -p "$h/$name"
    if [[ -f "$h/cpuset.cpus" ]]; then
      cat "$h/cpuset.cpus" > "$h/$name/cpuset.cpus"
      cat "$h/cpuset.mems" > "$h/$name/cpuset.mems"
    fi
  done
  local cpu mem
  cpu="$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ {print $2}' /proc/mounts)"
  mem="$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ {print $2}' /proc/mounts)"
  [[ -n $cpu && -n $mem ]] || die "cgroup v1 cpu and memory hierarchies are needed under /sys/fs/cgroup"
  echo 100000 > "$cpu/$name/cpu.cfs_period_us"
  echo $((cpu_m * 100)) > "$cpu/$name/cpu.cfs_quota_us"
  echo $((mem_mib * 1024 * 1024)) > "$mem/$name/memory.limit_in_bytes"
}

shape() {  # shape NETNS|- DEVICE MBIT: htb root with one default class at MBIT on DEVICE's egress
  local ns="$1" dev="$2" mbit="$3" run=()
  [[ $mbit -gt 0 ]] || return 0
  [[ $ns == - ]] || run=(nsenter --net="/run/netns/$ns")
  "${run[@]}" tc qdisc replace dev "$dev" root handle 1: htb default 10
  # A burst of 5 ms at the rate: tc's default (one MTU) lets a timer tick's lateness cut the rate.
  local burst=$((mbit * 625))
  "${run[@]}" tc class replace dev "$dev" parent 1: classid 1:10 htb rate "${mbit}mbit" ceil "${mbit}mbit" \
    burst "$burst" cburst "$burst" quantum 60000
}

setup_node_network() {  # namespace, veth, addresses, routes, sysctls and shaping of every node
  ip link show "$bridge" >/dev/null 2>&1 || ip link add "$bridge" type bridge
  ip addr replace "$node_ip/24" dev "$bridge"
  ip link set "$bridge" up
  local name pool cpu mem mbit ip cidr veth
  while read -r name pool cpu mem mbit ip cidr; do
    veth="v-${name#cachelab-}"
    ip netns add "$name"
    ip link add "$veth" type veth peer name eth0 netns "$name"
    ip link set "$veth" master "$bridge" up
    ns_ "$name" ip link set lo up
    ns_ "$name" ip addr add "$ip/24" dev eth0
    ns_ "$name" ip link set eth0 up
    ns_ "$name" ip route add default via "$node_ip"
    # per namespace: the host's own values stay as they are
    ns_ "$name" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
    ip route replace "$cidr" via "$ip" dev "$bridge"
    shape "$name" eth0 "$mbit"   # the node's uplink
    shape - "$veth" "$mbit"      # its downlink
  done < <(node_rows)
  local other oip ocidr
  while read -r name _ _ _ _ ip _; do  # host-gw: every node reaches every other node's pods directly
    while read -r other _ _ _ _ oip ocidr; do
      [[ $other == "$name" ]] || ns_ "$name" ip route add "$ocidr" via "$oip" dev eth0
    done < <(node_rows)
  done < <(node_rows)
  # The host reaches Services through the first node's kube-proxy (masqueraded: not a pod source).
  ip route replace "$service_cidr" via "$(node_rows | awk 'NR == 1 {print $6}')" dev "$bridge"
}

write_node_files() {  # write_node_files NAME POOL CPU_M MEMORY_MIB IP PODCIDR: configs of one node
  local name="$1" pool="$2" cpu_m="$3" mem_mib="$4" ip="$5" cidr="$6" nd="$dir/nodes/$1" cni_bin=/usr/lib/cni
  [[ -x $cni_bin/bridge ]] || cni_bin=/opt/cni/bin
  [[ -x $cni_bin/bridge ]] || die "CNI plugins missing: run scripts/install-debs.sh (containernetworking-plugins)"
  mkdir -p "$nd/cni/net.d" "$nd/cni/ipam" "$nd/kubelet" "$nd/pod-logs"
  cat > "$nd/cni/net.d/10-cachelab.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "cachelab",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$nd/cni/ipam",
              "ranges": [[{"subnet": "$cidr", "gateway": "${cidr%.*}.1"}]],
              "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "bandwidth", "capabilities": {"bandwidth": true}}
  ]
}
JSON
  containerd_config "$nd" "$cni_bin" "$nd/cni/net.d" > "$nd/containerd.toml"
  local mem_total_ki cores_m
  mem_total_ki="$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)"
  cores_m=$(($(nproc) * 1000))
  # Allocatable = capacity (the whole machine, as every node sees it) - systemReserved - the
  # eviction threshold = the node's caps.
  kubelet_config "$ip" "$nd/containerd.sock" "$nd/pod-logs" > "$nd/kubelet.yaml"
  cat >> "$nd/kubelet.yaml" <<YAML
cgroupRoot: /$name
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
systemReserved: {cpu: "$((cores_m - cpu_m))m", memory: "$((mem_total_ki - mem_mib * 1024 - 100 * 1024))Ki"}
YAML
  kube_proxy_config "$name" "$ip" "$cluster_cidr" > "$nd/kube-proxy.yaml"
}

start_node() {  # start_node NAME POOL IP: kubelet and kube-proxy inside the node's namespace
  # --containerd: the node's own containerd for the kubelet's cAdvisor, which otherwise asks the
  # default socket, knows no container of the node and reports pods without network statistics;
  # --housekeeping-interval 2s (default 10 s, up to 15 s when idle): the pods' CPU and network in
  # the summary API are cAdvisor's last reading, and a point of a few seconds needs several
  local name="$1" pool="$2" ip="$3" nd="$dir/nodes/$1" scale
  scale="$(awk '$1 == "scale" {print $2}' "$layout_file")"
  start_proc "kubelet-$name" nsenter --net="/run/netns/$name" "$bin/kubelet" --config "$nd/kubelet.yaml" \
    --kubeconfig "$kubeconfig" --root-dir "$nd/kubelet" --cert-dir "$nd/kubelet/pki" \
    --hostname-override "$name" --node-ip "$ip" --containerd "$nd/containerd.sock" --housekeeping-interval 2s \
    --node-labels "agentpool=$pool,kubernetes.azure.com/agentpool=$pool,cachelab.dev/scale=$scale"
  start_proc "kube-proxy-$name" nsenter --net="/run/netns/$name" "$bin/kube-proxy" --config "$nd/kube-proxy.yaml"
}

nodes_ready() {  # every node of the layout Ready
  local want got
  want="$(node_names | wc -l)"
  got="$(kubectl_ get nodes --no-headers 2>/dev/null | awk '$2 == "Ready"' | wc -l)"
  [[ $got -eq $want ]]
}

up_nodes() {  # the worker nodes of the layout, after the control plane answers
  local name pool cpu mem mbit ip cidr
  while read -r name pool cpu mem mbit ip cidr; do
    start_proc "containerd-$name" nsenter --net="/run/netns/$name" containerd --config "$dir/nodes/$name/containerd.toml"
  done < <(node_rows)
  while read -r name _; do
    wait_for 30 "containerd of $name" "containerd-$name" ctr --address "$dir/nodes/$name/containerd.sock" version
  done < <(node_rows)
  # One node at a time, each Ready before the next starts: every kubelet binds the same device
  # plugin socket, /var/lib/kubelet/device-plugins/kubelet.sock, whatever its --root-dir, and two
  # starting together can fail ("bind: address already in use"; the kubelet then never becomes
  # Ready).
  while read -r name pool cpu mem mbit ip cidr; do
    start_node "$name" "$pool" "$ip"
    wait_for 90 "node $name" "kubelet-$name" kubectl_ wait --for=condition=Ready "node/$name" --timeout=1s
  done < <(node_rows)
  local first; first="$(node_names | head -1)"
  wait_for 120 "nodes $(node_names | tr '\n' ' ')" "kubelet-$first" nodes_ready
}

stop_nodes() {  # every node's daemons, then whatever still runs in the nodes' cgroups
  local name p pid names=() i
  for name in $(node_names); do names+=("kube-router-$name" "kubelet-$name" "kube-proxy-$name"); done
  stop_procs "${names[@]}"
  names=(); for name in $(node_names); do names+=("containerd-$name"); done
  stop_procs "${names[@]}"
  stop_shims
  local pidsh; pidsh="$(awk '$3 == "cgroup" && $4 ~ /(^|,)pids(,|$)/ {print $2}' /proc/mounts)"
  for name in $(node_names); do  # the pods' processes (containers outlive a killed shim)
    [[ -d "$pidsh/$name" ]] || continue
    for ((i = 0; i < 50; i++)); do
      p="$(find "$pidsh/$name" -name cgroup.procs -exec cat {} + 2>/dev/null)"
      [[ -z $p ]] && break
      for pid in $p; do kill -KILL "$pid" 2>/dev/null || true; done
      sleep 0.1
    done
  done
}

clean_nodes() {  # namespaces (their chains and ipsets first), veths and cgroups of every node
  local name h d
  for name in $(node_names); do
    if [[ -e "/run/netns/$name" ]]; then
      clean_iptables "$name"
      clean_ipsets "$name"
    fi
    ip netns del "$name" 2>/dev/null || true
    ip link del "v-${name#cachelab-}" 2>/dev/null || true
    for h in $(cgroup_hierarchies) /sys/fs/cgroup/unified; do
      [[ -d "$h/$name" ]] || continue
      for d in $(find "$h/$name" -depth -type d 2>/dev/null); do rmdir "$d" 2>/dev/null || true; done
    done
  done
}

check_tools() {
  local b
  for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy coredns; do
    [[ -x "$bin/$b" ]] || die "$bin/$b is missing: run make k8s-tools"
  done
  command -v kubectl >/dev/null || die "kubectl is missing: run make k8s-tools (it builds one into $bin when the machine has none)"
  for b in containerd runc ctr etcd iptables openssl nsenter tc conntrack; do
    command -v "$b" >/dev/null || die "$b is missing: run scripts/install-debs.sh k8s (make deps-k8s)"
  done
  case "$network_policy" in
    none) ;;
    kube-router)
      multi_node || die "kube-router runs in the nodes' namespaces of the multi-node cluster; on one node (CLUSTER_NODES=1) use cilium or none"
      [[ -x "$bin/kube-router" ]] || die "$bin/kube-router is missing: run make k8s-tools (its group netpol), or CLUSTER_NETWORK_POLICY=none"
      for b in ipset iptables-save iptables-restore; do
        command -v "$b" >/dev/null || die "$b is missing (kube-router needs it): run scripts/install-debs.sh k8s (make deps-k8s)"
      done ;;
    cilium)
      multi_node && die "Cilium runs on one node here (CLUSTER_NODES=1; docs/kubernetes.md says why), not on '$nodes_arg'"
      [[ -x "$bin/cilium-agent" && -x "$bin/cilium-cni" && -d "$cilium_src/bpf" ]] \
        || die "cilium is not built: run CILIUM=1 make k8s-tools"
      [[ -x "$clang_dir/clang" ]] || die "$clang_dir/clang is missing: run scripts/install-debs.sh cilium"
      command -v curl >/dev/null || die "curl is missing: run scripts/install-debs.sh cilium" ;;
    *) die "CLUSTER_NETWORK_POLICY must be kube-router, cilium or none, not '$network_policy'" ;;
  esac
}

start_control_plane() {  # etcd, kube-apiserver on $node_ip, controller-manager, scheduler
  local etcd_port pki="$dir/pki"
  etcd_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  start_proc etcd etcd --data-dir "$dir/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:0" \
    --log-level warn
  start_proc kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address "$node_ip" --advertise-address "$node_ip" --secure-port "$api_port" \
    --cert-dir "$dir/apiserver" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" --service-account-key-file "$pki/sa.pub" \
    --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range "$service_cidr" --authorization-mode Node,RBAC --allow-privileged=true \
    --kubelet-client-certificate "$pki/admin.crt" --kubelet-client-key "$pki/admin.key" \
    --kubelet-preferred-address-types InternalIP --profiling=false
  if ! multi_node; then  # cilium-cni, run by containerd, finds the agent through CILIUM_SOCK.
    start_proc containerd env CILIUM_SOCK="$cilium_sock" containerd --config "$dir/containerd.toml"
  fi
  wait_for 60 "kube-apiserver" kube-apiserver kubectl_ get --raw /readyz
  start_proc kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$kubeconfig" \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --use-service-account-credentials=false --leader-elect=false --secure-port 0 --profiling=false
  start_proc kube-scheduler "$bin/kube-scheduler" --kubeconfig "$kubeconfig" --leader-elect=false \
    --secure-port 0 --profiling=false
}

up_single_node() {  # the one node on the host itself
  wait_for 30 "containerd" containerd ctr --address "$dir/containerd.sock" version
  start_proc kubelet "$bin/kubelet" --config "$dir/kubelet.yaml" --kubeconfig "$kubeconfig" \
    --root-dir "$dir/kubelet" --cert-dir "$dir/kubelet/pki" --hostname-override "$node_name" \
    --node-ip "$node_ip" --containerd "$dir/containerd.sock" --housekeeping-interval 2s \
    --node-labels "agentpool=local,kubernetes.azure.com/agentpool=local"
  start_proc kube-proxy "$bin/kube-proxy" --config "$dir/kube-proxy.yaml"
  wait_for 90 "node $node_name" kubelet kubectl_ wait --for=condition=Ready "node/$node_name" --timeout=1s
}

up() {
  check_tools
  multi_node && compute_layout  # refused here, before anything changes
  [[ $(id -u) -eq 0 ]] || die "needs root (bridge, iptables, containerd)"
  if status; then log "already running"; echo "export KUBECONFIG=$kubeconfig"; return; fi
  mkdir -p "$dir/logs" "$pids"
  record_state
  trap 'log "start failed: tearing down"; down >&2 || true' EXIT
  local started=$SECONDS
  make_certs
  write_kubeconfig
  printf 'nameserver %s\n' "$dns_ip" > "$dir/resolv.conf"
  if multi_node; then
    write_layout
    local name pool cpu mem mbit ip cidr
    while read -r name pool cpu mem mbit ip cidr; do
      node_cgroup "$name" "$cpu" "$mem"
      write_node_files "$name" "$pool" "$cpu" "$mem" "$ip" "$cidr"
    done < <(node_rows)
    setup_node_network
  else
    setup_network
    write_containerd_config
    write_node_configs
  fi
  start_registry
  start_control_plane
  if multi_node; then up_nodes; else up_single_node; fi
  log "nodes Ready in $((SECONDS - started)) s"
  wait_for 60 "default service account" kube-controller-manager kubectl_ get serviceaccount default
  wait_infra_pushed
  [[ $network_policy == cilium ]] && start_cilium
  [[ $network_policy == kube-router ]] && start_kube_router
  deploy_coredns
  kubectl_ -n kube-system rollout status deployment/coredns --timeout=90s >&2 || die "CoreDNS did not become ready"
  trap - EXIT
  if multi_node; then
    log "cluster up in $((SECONDS - started)) s: $(node_names | wc -l) nodes (scale $(awk '$1 == "scale" {print $2}' "$layout_file"), profile $profile, NetworkPolicy: $network_policy; $dir/layout), logs in $dir/logs"
  else
    log "cluster up in $((SECONDS - started)) s (node $node_name at $node_ip, NetworkPolicy: $network_policy; logs in $dir/logs)"
  fi
  echo "export KUBECONFIG=$kubeconfig"
}

status() {
  local k=kubelet
  multi_node && [[ -f $layout_file ]] && k="kubelet-$(node_names | head -1)"
  alive kube-apiserver && alive "$k" && kubectl_ get --raw /readyz >/dev/null 2>&1
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
    tr '\0' ' ' 2>/dev/null < "$p/cmdline" | grep -q -- "-address $dir/" || continue
    kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
}

# clean_iptables [NETNS]: every KUBE-* (kube-proxy's; kube-router's KUBE-ROUTER-*, KUBE-NWPLCY-*,
# KUBE-POD-FW-*), CNI-* and CILIUM_* chain and the rules that jump to them, IPv4 and IPv6, on the
# host or in a node's namespace
clean_iptables() {
  local cmd table line chain run=()
  [[ -n ${1:-} ]] && run=(nsenter --net="/run/netns/$1")
  for cmd in iptables ip6tables; do
    command -v "$cmd" >/dev/null || continue
    for table in filter nat mangle raw; do
      "${run[@]}" "$cmd" -t "$table" -S >/dev/null 2>&1 || continue
      while IFS= read -r line; do
        eval "${run[*]} $cmd -w -t $table ${line/#-A /-D }" 2>/dev/null || true
      done < <("${run[@]}" "$cmd" -t "$table" -S | grep -E '^-A ' | grep -E -- '-j (KUBE-|CNI-|CILIUM_)' | grep -vE '^-A (KUBE-|CNI-|CILIUM_)' || true)
      for chain in $("${run[@]}" "$cmd" -t "$table" -S | awk '/^-N (KUBE-|CNI-|CILIUM_)/ {print $2}'); do
        "${run[@]}" "$cmd" -w -t "$table" -F "$chain" 2>/dev/null || true
      done
      for chain in $("${run[@]}" "$cmd" -t "$table" -S | awk '/^-N (KUBE-|CNI-|CILIUM_)/ {print $2}'); do
        "${run[@]}" "$cmd" -w -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
}

clean_ipsets() {  # clean_ipsets [NETNS]: kube-router's ipsets (KUBE-SRC-*, KUBE-DST-*, ...), after the rules using them
  local run=() set
  command -v ipset >/dev/null || return 0
  [[ -n ${1:-} ]] && run=(nsenter --net="/run/netns/$1")
  for set in $("${run[@]}" ipset list -n 2>/dev/null | grep -E '^(inet6:)?KUBE-' || true); do
    "${run[@]}" ipset destroy "$set" 2>/dev/null || true
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
  local p
  if [[ -f $layout_file ]]; then  # nodes in namespaces: their iptables and links go with them
    stop_procs kube-controller-manager kube-scheduler
    stop_nodes
  else
    delete_pods
    stop_procs kube-controller-manager kube-scheduler kubelet cilium-agent
    stop_proc kube-proxy
    [[ -x "$bin/kube-proxy" ]] && "$bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
    stop_proc containerd
    stop_shims
  fi
  stop_procs kube-apiserver etcd registry
  clean_mounts
  clean_nodes
  clean_iptables
  clean_ipsets
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
    if [[ "$(state_value had_netns_mount)" == 0 ]] && mountpoint -q /run/netns 2>/dev/null; then
      umount /run/netns 2>/dev/null || umount -l /run/netns 2>/dev/null || true
    fi
    # libcni's cache of our networks' results, when /var/lib/cni was there before
    rm -f /var/lib/cni/results/cachelab-* 2>/dev/null || true
    for p in "${runtime_dirs[@]}"; do restore_dir "$p"; done
    rm -f "$state"
  fi
  # Keep the certificates and etcd out of the next run; keep nothing that would surprise it.
  rm -rf "$dir/etcd" "$dir/containerd" "$dir/kubelet" "$dir/runc" "$dir/cni" "$dir/pod-logs" "$dir/nodes" "$pids" \
    "$dir/registry" "$dir/registry.yml" "$dir/certs.d"
  rm -f "$layout_file"
  log "cluster down; machine restored"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  registry) echo "$registry" ;;
  *) echo "usage: $0 up|down|status|registry" >&2; exit 2 ;;
esac
