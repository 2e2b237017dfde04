#!/usr/bin/env bash
# Builds the Kubernetes test-tier tools from Go modules into $TOOLS_DIR/bin (default .cache/tools/bin):
#   helm, kwok, kwokctl, kube-apiserver, kube-controller-manager, kube-scheduler (control plane),
#   kubelet, kube-proxy (the node of the real local cluster, scripts/local-cluster.sh), coredns,
#   prometheus-operator and prometheus-config-reloader (with the operator's CRDs), and prometheus
#   (the server the operator runs: Debian's is built without Kubernetes service discovery).
# etcd, containerd, runc and the CNI plugins come from Debian packages (scripts/install-debs.sh).
# Each tool is built once (stamped with its version); a rerun with everything present returns at once.
# First build takes ~10 min on 2 cores for helm and the control plane, a few more for kubelet,
# kube-proxy (same module, mostly shared packages) and coredns; Go caches the rest.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools_dir="${TOOLS_DIR:-$root/.cache/tools}"
bin="$tools_dir/bin"
mkdir -p "$bin"

HELM_VERSION="${HELM_VERSION:-v3.16.4}"
KWOK_VERSION="${KWOK_VERSION:-v0.7.0}"
K8S_VERSION="${K8S_VERSION:-1.31.3}"   # k8s.io/kubernetes v1.31.3, staging modules v0.31.3

command -v go >/dev/null 2>&1 || { echo "error: Go is needed to build the Kubernetes tools (https://go.dev/doc/install)" >&2; exit 1; }
export GOFLAGS="${GOFLAGS:--mod=mod}"
export CGO_ENABLED=0

module_copy() {  # module_copy MODULE VERSION DIR: a writable copy of a module's source in DIR
  local src
  src="$(go mod download -json "$1@$2" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$src" ]] || { echo "error: could not download $1@$2" >&2; exit 1; }
  rm -rf "$3"; cp -r "$src" "$3"; chmod -R u+w "$3"
}
stamp_ok() { [[ -x "$bin/$1" && -f "$bin/.$1.version" && "$(cat "$bin/.$1.version")" == "$2" ]]; }
stamp() { echo "$2" > "$bin/.$1.version"; }

if ! stamp_ok helm "$HELM_VERSION"; then
  echo "building helm $HELM_VERSION (first time ~4 min)"
  GOBIN="$bin" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  stamp helm "$HELM_VERSION"
fi

if ! stamp_ok kwokctl "$KWOK_VERSION" || ! stamp_ok kwok "$KWOK_VERSION"; then
  echo "building kwok and kwokctl $KWOK_VERSION"
  GOBIN="$bin" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"
  stamp kwok "$KWOK_VERSION"; stamp kwokctl "$KWOK_VERSION"
fi

k8s_bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
missing_k8s=()
for b in "${k8s_bins[@]}"; do stamp_ok "$b" "v$K8S_VERSION" || missing_k8s+=("$b"); done
if [[ ${#missing_k8s[@]} -gt 0 ]]; then
  echo "building ${missing_k8s[*]} v$K8S_VERSION (first time ~3 min each)"
  mod="$tools_dir/k8s-build"
  mkdir -p "$mod"
  staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
    cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
    cri-client csi-translation-lib dynamic-resource-allocation endpointslice kms kube-aggregator
    kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils
    pod-security-admission sample-apiserver)
  {
    echo "module cachelab.dev/k8sbuild"
    echo
    echo "go 1.22"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    for s in "${staging[@]}"; do echo "replace k8s.io/$s => k8s.io/$s v0.${K8S_VERSION#1.}"; done
  } > "$mod/go.mod"
  cat > "$mod/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
)
GO
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#1.}"
  ldflags="${ldflags%.*}"  # gitMinor is the minor number only
  ( cd "$mod"
    go mod tidy -e >/dev/null 2>&1 || true
    for b in "${missing_k8s[@]}"; do
      go build -tags tools -ldflags "$ldflags" -o "$bin/$b" "k8s.io/kubernetes/cmd/$b"
      stamp "$b" "v$K8S_VERSION"
    done )
fi

COREDNS_VERSION="${COREDNS_VERSION:-v1.11.3}"   # the CoreDNS of Kubernetes 1.31
if ! stamp_ok coredns "$COREDNS_VERSION"; then
  echo "building coredns $COREDNS_VERSION (static, first time ~3 min)"
  GOBIN="$bin" go install -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"
  stamp coredns "$COREDNS_VERSION"
fi

# Cilium (opt-in, CILIUM=1): the NetworkPolicy enforcer of the local cluster
# (CLUSTER_NETWORK_POLICY=cilium scripts/local-cluster.sh up). Built inside a copy of its module:
# the BGP library version it pins is not in the module proxy, so the nearest release replaces it.
CILIUM_VERSION="${CILIUM_VERSION:-v1.20.2}"
CILIUM_GOBGP="${CILIUM_GOBGP:-v4.8.0}"
if [[ "${CILIUM:-0}" == 1 ]]; then
  # The agent compiles its BPF programs at run time with clang >= 18.1; curl asks it for health.
  "$root/scripts/install-debs.sh" clang-19 llvm-19 curl
fi
if [[ "${CILIUM:-0}" == 1 ]] && { ! stamp_ok cilium-agent "$CILIUM_VERSION" || ! stamp_ok cilium-cni "$CILIUM_VERSION"; }; then
  echo "building cilium-agent and cilium-cni $CILIUM_VERSION (first time ~15-25 min on 2 cores)"
  src_mod="$(go mod download -json "github.com/cilium/cilium@$CILIUM_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$src_mod" ]] || { echo "error: could not download github.com/cilium/cilium@$CILIUM_VERSION" >&2; exit 1; }
  rm -rf "$tools_dir/cilium-src"
  cp -r "$src_mod" "$tools_dir/cilium-src"
  chmod -R u+w "$tools_dir/cilium-src"
  ( cd "$tools_dir/cilium-src"
    go mod edit -replace "github.com/osrg/gobgp/v4=github.com/osrg/gobgp/v4@$CILIUM_GOBGP"
    go build -trimpath -ldflags "-s -w" -o "$bin/cilium-agent" ./daemon
    go build -trimpath -ldflags "-s -w" -o "$bin/cilium-cni" ./plugins/cilium-cni )
  stamp cilium-agent "$CILIUM_VERSION"; stamp cilium-cni "$CILIUM_VERSION"
fi

# The Prometheus Operator and its config reloader (monitoring as kube-prometheus-stack does it:
# manifests/monitoring), and its CRDs (example/prometheus-operator-crd of the same module) in
# $TOOLS_DIR/prometheus-operator-crd. Built inside a copy of the module: its go.mod replaces two
# nested modules (pkg/apis/monitoring, pkg/client) by folders that the module zip leaves out, so the
# replacements are dropped and the proxy's releases of the same version are used.
PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}"
crd_dir="$tools_dir/prometheus-operator-crd"
if ! stamp_ok prometheus-operator "$PROMETHEUS_OPERATOR_VERSION" \
  || ! stamp_ok prometheus-config-reloader "$PROMETHEUS_OPERATOR_VERSION" \
  || [[ "$(cat "$crd_dir/.version" 2>/dev/null)" != "$PROMETHEUS_OPERATOR_VERSION" ]]; then
  echo "building prometheus-operator and prometheus-config-reloader $PROMETHEUS_OPERATOR_VERSION (first time ~5-10 min on 2 cores)"
  po_mod="github.com/prometheus-operator/prometheus-operator"
  module_copy "$po_mod" "$PROMETHEUS_OPERATOR_VERSION" "$tools_dir/prometheus-operator-src"
  ( cd "$tools_dir/prometheus-operator-src"
    go mod edit -dropreplace "$po_mod/pkg/apis/monitoring" -dropreplace "$po_mod/pkg/client"
    go mod download "$po_mod/pkg/apis/monitoring" "$po_mod/pkg/client"
    ldflags="-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}"
    go build -trimpath -ldflags "$ldflags" -o "$bin/prometheus-operator" ./cmd/operator
    go build -trimpath -ldflags "$ldflags" -o "$bin/prometheus-config-reloader" ./cmd/prometheus-config-reloader
    rm -rf "$crd_dir"; mkdir -p "$crd_dir"
    cp example/prometheus-operator-crd/*.yaml "$crd_dir/"
    echo "$PROMETHEUS_OPERATOR_VERSION" > "$crd_dir/.version" )
  rm -rf "$tools_dir/prometheus-operator-src"
  stamp prometheus-operator "$PROMETHEUS_OPERATOR_VERSION"
  stamp prometheus-config-reloader "$PROMETHEUS_OPERATOR_VERSION"
fi

# Prometheus for the operator's `Prometheus` (manifests/monitoring): Debian's prometheus is built
# without Kubernetes service discovery, which every configuration the operator writes uses. The
# module github.com/prometheus/prometheus numbers Prometheus 3.x.y as v0.30x.y. Built inside a copy
# of the module with only the Kubernetes service discovery registered (plugins/plugins.go as
# upstream's `make plugins` writes it from a plugins.yml listing one plugin; file and http
# discovery stay, they are in plugins/minimum.go), which leaves out the cloud SDKs of the others;
# no web UI assets (the HTTP API is what is used here).
PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-v3.5.0}"
if ! stamp_ok prometheus "$PROMETHEUS_VERSION"; then
  echo "building prometheus $PROMETHEUS_VERSION (first time ~5-10 min on 2 cores)"
  prom_mod="github.com/prometheus/prometheus"
  prom_mod_version="$(echo "${PROMETHEUS_VERSION#v}" | awk -F. '{printf "v0.%d%02d.%d", $1, $2, $3}')"
  module_copy "$prom_mod" "$prom_mod_version" "$tools_dir/prometheus-src"
  ( cd "$tools_dir/prometheus-src"
    printf '%s\n' '// Code generated by "make plugins". DO NOT EDIT.' '' 'package plugins' '' 'import (' \
      '	// Register kubernetes plugin.' '	_ "github.com/prometheus/prometheus/discovery/kubernetes"' ')' \
      > plugins/plugins.go
    ldflags="-s -w -X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION#v}"
    go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$bin/prometheus" ./cmd/prometheus )
  rm -rf "$tools_dir/prometheus-src"
  stamp prometheus "$PROMETHEUS_VERSION"
fi

[[ -x /usr/bin/etcd ]] || echo "note: etcd not found at /usr/bin/etcd; run scripts/install-debs.sh etcd-server" >&2
echo "Kubernetes tools ready in $bin"
