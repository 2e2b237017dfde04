#!/usr/bin/env bash
# A local Kubernetes control plane with simulated node pools, for the chart, the manifests and the
# k8s runner: real etcd (Debian), kube-apiserver, kube-controller-manager, kube-scheduler (built by
# scripts/k8s-tools.sh) and kwok, which plays the kubelets (nodes, pod lifecycles, logs).
#
#   scripts/kwok-cluster.sh up   [NAME]   create the cluster and the pool nodes; prints the kubeconfig path
#   scripts/kwok-cluster.sh down [NAME]   delete the cluster and its files
#
# Environment (all optional):
#   TOOLS_DIR        where k8s-tools.sh put bin/ (default ~/.cache/cachelab/tools: scripts/cache-dir.sh)
#   KWOK_WORKDIR     kwokctl state (default .cache/kwok); tests pass a temporary directory
#   KUBECONFIG_OUT   kubeconfig to write (default $KWOK_WORKDIR/<NAME>.kubeconfig); ~/.kube is never touched
#   POOL_NODES       nodes per pool (default "a1=3 a2=3 a4=2")
#   POOL_LABEL_KEYS  node labels that carry the pool name (default "cachelab.dev/pool agentpool")
#   KWOK_CONFIG      extra kwokctl config files, space separated (e.g. ClusterLogs resources);
#                    scripts/kwok-stages.yaml (pod lifecycles, incl. `helm test` pods) is always passed
# Ports of etcd, the apiserver and the controllers are picked free at start, so several clusters
# (and other test suites) can run side by side; they listen on 127.0.0.1 only.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
action="${1:-}"
name="${2:-cachelab}"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
bin="${TOOLS_DIR:-$(cachelab_cache_dir)/tools}/bin"
export PATH="$bin:$PATH"   # kubectl from make k8s-tools where the machine has none
export KWOK_WORKDIR="${KWOK_WORKDIR:-$root/.cache/kwok}"
kubeconfig="${KUBECONFIG_OUT:-$KWOK_WORKDIR/$name.kubeconfig}"
pool_nodes="${POOL_NODES:-a1=3 a2=3 a4=2}"
pool_label_keys="${POOL_LABEL_KEYS:-cachelab.dev/pool agentpool}"

usage() { echo "usage: $0 up|down [NAME]" >&2; exit 2; }

# Azure sizes of the seeds: A1 1 vCPU 1.75 GiB, A2 2 vCPU 3.5 GiB, A4 8 vCPU 14 GiB.
pool_cpu() { case "$1" in a1) echo 1 ;; a2) echo 2 ;; a4) echo 8 ;; *) echo "error: unknown pool $1 (a1, a2, a4)" >&2; exit 2 ;; esac; }
pool_memory() { case "$1" in a1) echo 1792Mi ;; a2) echo 3584Mi ;; a4) echo 14336Mi ;; esac; }

free_ports() {  # prints N free TCP ports on 127.0.0.1
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

node_manifest() {  # one Node per pool member, managed by kwok (annotation kwok.x-k8s.io/node: fake)
  local pool count i node key
  for spec in $pool_nodes; do
    pool="${spec%=*}"; count="${spec#*=}"
    for ((i = 0; i < count; i++)); do
      node="$pool-$i"
      cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $node
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: $node
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    type: kwok
$(for key in $pool_label_keys; do echo "    $key: $pool"; done)
status:
  capacity: {cpu: "$(pool_cpu "$pool")", memory: $(pool_memory "$pool"), pods: "110"}
  allocatable: {cpu: "$(pool_cpu "$pool")", memory: $(pool_memory "$pool"), pods: "110"}
EOF
    done
  done
}

up() {
  for t in kwokctl kwok kube-apiserver kube-controller-manager kube-scheduler; do
    [[ -x "$bin/$t" ]] || { echo "error: $bin/$t is missing; run make k8s-tools" >&2; exit 1; }
  done
  [[ -x /usr/bin/etcd ]] || { echo "error: /usr/bin/etcd is missing; run scripts/install-debs.sh etcd-server" >&2; exit 1; }
  mkdir -p "$KWOK_WORKDIR" "$(dirname "$kubeconfig")"
  read -r p_api p_etcd p_kwok p_kcm p_sched < <(free_ports 5)
  local config_args=(--config "$root/scripts/kwok-stages.yaml")
  for c in ${KWOK_CONFIG:-}; do config_args+=(--config "$c"); done
  "$bin/kwokctl" create cluster --name "$name" --runtime binary \
    "${config_args[@]}" \
    --kubeconfig "$kubeconfig" \
    --etcd-binary /usr/bin/etcd \
    --kube-apiserver-binary "$bin/kube-apiserver" \
    --kube-controller-manager-binary "$bin/kube-controller-manager" \
    --kube-scheduler-binary "$bin/kube-scheduler" \
    --kwok-controller-binary "$bin/kwok" \
    --kube-apiserver-port "$p_api" --etcd-port "$p_etcd" --controller-port "$p_kwok" \
    --kube-controller-manager-port "$p_kcm" --kube-scheduler-port "$p_sched" \
    --extra-args kube-apiserver=bind-address=127.0.0.1 \
    --extra-args kube-controller-manager=bind-address=127.0.0.1 \
    --extra-args kube-scheduler=bind-address=127.0.0.1 \
    --extra-args etcd=listen-client-urls=http://127.0.0.1:"$p_etcd" \
    --extra-args etcd=advertise-client-urls=http://127.0.0.1:"$p_etcd" \
    --disable-qps-limits --wait 120s >&2
  node_manifest | kubectl --kubeconfig "$kubeconfig" apply -f - >&2
  kubectl --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=120s >&2
  # The default ServiceAccount must exist before pods can be created in a namespace.
  for _ in $(seq 60); do
    kubectl --kubeconfig "$kubeconfig" get serviceaccount default -n default >/dev/null 2>&1 && break
    sleep 1
  done
  kubectl --kubeconfig "$kubeconfig" get nodes -L "${pool_label_keys%% *}" >&2
  echo "$kubeconfig"
}

down() {
  "$bin/kwokctl" delete cluster --name "$name" --kubeconfig "$kubeconfig" >&2 || true
  rm -f "$kubeconfig"
}

case "$action" in
  up) up ;;
  down) down ;;
  *) usage ;;
esac
