#!/usr/bin/env bash
# Builds the Kubernetes test-tier tools from Go modules into $TOOLS_DIR/bin.
#
#   scripts/k8s-tools.sh [GROUP ...]     GROUP: control, cluster, netpol, cilium (default: control
#                                        cluster netpol, plus cilium with CILIUM=1)
#
#   control   helm, kwok, kwokctl, kube-apiserver, kube-controller-manager, kube-scheduler, and
#             kubectl when none is on PATH, and the Prometheus Operator's CRDs: what the kwok tier
#             (make test-k8s) uses
#   cluster   kubelet, kube-proxy (the nodes of scripts/local-cluster.sh), coredns,
#             prometheus-operator and prometheus-config-reloader, and
#             prometheus (the operator's server: Debian's is built without Kubernetes service
#             discovery): what the real-cluster tier adds
#   netpol    kube-router, whose NetworkPolicy firewall runs in every node of the local cluster
#             (CLUSTER_NETWORK_POLICY=kube-router, the multi-node default)
#   cilium    cilium-agent and cilium-cni (CLUSTER_NETWORK_POLICY=cilium, one node)
#
# etcd, containerd, runc, conntrack and the CNI plugins come from Debian packages
# (scripts/install-debs.sh k8s); Go from the machine.
#
# The cache is per machine, outside any clone: $TOOLS_DIR defaults to
# ${CACHELAB_CACHE:-$XDG_CACHE_HOME/cachelab}/tools, so every clone on a machine shares one build.
# Each binary is stamped with its version, the Go version and the build flags; a change of any
# rebuilds it, and a rerun with every stamp matching returns at once. Builds write to a temporary
# file and rename it, under a lock, so two clones building at once do not see half a binary.
# Every step prints its wall time, so a slow build is visible in a CI log.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
tools_dir="${TOOLS_DIR:-$(cachelab_cache_dir)/tools}"
bin="$tools_dir/bin"
mkdir -p "$bin"

HELM_VERSION="${HELM_VERSION:-v3.16.4}"
KWOK_VERSION="${KWOK_VERSION:-v0.7.0}"
K8S_VERSION="${K8S_VERSION:-1.31.3}"   # k8s.io/kubernetes v1.31.3, staging modules v0.31.3
COREDNS_VERSION="${COREDNS_VERSION:-v1.11.3}"   # the CoreDNS of Kubernetes 1.31
# scripts/local-cluster/coredns.yaml's Corefile uses errors, health, ready, kubernetes and cache;
# the others are what a cluster DNS is commonly given (metrics: the `prometheus` directive;
# forwarding, reload, logging). Names are the packages under plugin/ of the module.
COREDNS_PLUGINS="${COREDNS_PLUGINS:-errors,health,ready,kubernetes,cache,metrics,forward,loop,reload,loadbalance,log}"
KUBE_ROUTER_VERSION="${KUBE_ROUTER_VERSION:-v2.1.0}"
CILIUM_VERSION="${CILIUM_VERSION:-v1.20.2}"
CILIUM_GOBGP="${CILIUM_GOBGP:-v4.8.0}"
PROMETHEUS_OPERATOR_VERSION="${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}"
PROMETHEUS_VERSION="${PROMETHEUS_VERSION:-v3.5.0}"

groups=("$@")
if [[ ${#groups[@]} -eq 0 ]]; then
  groups=(control cluster netpol)
  [[ "${CILIUM:-0}" == 1 ]] && groups+=(cilium)
fi
for g in "${groups[@]}"; do
  case "$g" in control | cluster | netpol | cilium) ;; *) echo "error: unknown group $g (control, cluster, netpol, cilium)" >&2; exit 2 ;; esac
done

command -v go >/dev/null 2>&1 || {
  echo "error: Go is needed to build the Kubernetes tools and is not on PATH (Go >= 1.22; Debian 12's golang-go is too old: https://go.dev/doc/install)" >&2
  exit 1
}
export GOFLAGS="${GOFLAGS:--mod=mod}"
export CGO_ENABLED=0
go_version="$(go env GOVERSION)"
LDFLAGS_STRIP="-s -w"

key() { echo "$1 $go_version $LDFLAGS_STRIP"; }   # key VERSION: what a stamp must say
stamp_ok() { [[ -x "$bin/$1" && -f "$bin/.$1.version" && "$(cat "$bin/.$1.version")" == "$(key "$2")" ]]; }
stamp() { echo "$(key "$2")" > "$bin/.$1.version"; }
version_of() { cut -d' ' -f1 "$bin/.$1.version" 2>/dev/null; }   # the tool's version, for image tags
install_bin() { mv -f "$1" "$bin/$2"; stamp "$2" "$3"; }           # install_bin BUILT NAME VERSION

# Each build prints its wall time and the CPU its processes used (user + system, from this shell's
# reaped children in /proc/$$/stat), so a CI log shows what a build costs beside what it waited.
clk_tck="$(getconf CLK_TCK)"
children_cpu_ticks() { local st; read -r -a st <"/proc/$$/stat"; echo $((st[15] + st[16])); }
build_started=0 build_cpu=0
begin() { build_started=$SECONDS; build_cpu="$(children_cpu_ticks)"; echo "k8s-tools: building $1"; }
done_() {
  echo "k8s-tools: built $1 in $((SECONDS - build_started)) s (cpu $((($(children_cpu_ticks) - build_cpu) / clk_tck)) s, load $(cut -d' ' -f1 /proc/loadavg))"
}

scratch="$(mktemp -d "$tools_dir/.build.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

module_copy() {  # module_copy MODULE VERSION DIR: a writable copy of a module's source in DIR
  local src
  src="$(go mod download -json "$1@$2" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$src" ]] || { echo "error: could not download $1@$2 from the Go module proxy" >&2; exit 1; }
  rm -rf "$3"; cp -r "$src" "$3"; chmod -R u+w "$3"
}

build_control() {
  if ! stamp_ok helm "$HELM_VERSION"; then
    begin "helm $HELM_VERSION"
    GOBIN="$scratch" go install -ldflags "$LDFLAGS_STRIP" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
    install_bin "$scratch/helm" helm "$HELM_VERSION"; done_ helm
  fi
  if ! stamp_ok kwokctl "$KWOK_VERSION" || ! stamp_ok kwok "$KWOK_VERSION"; then
    begin "kwok and kwokctl $KWOK_VERSION"
    GOBIN="$scratch" go install -ldflags "$LDFLAGS_STRIP" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"
    install_bin "$scratch/kwok" kwok "$KWOK_VERSION"; install_bin "$scratch/kwokctl" kwokctl "$KWOK_VERSION"; done_ kwok
  fi
  local k8s=(kube-apiserver kube-controller-manager kube-scheduler)
  # kubectl: the machine's when it has one (any recent version talks to this control plane)
  if ! command -v kubectl >/dev/null 2>&1 || [[ "$(command -v kubectl)" == "$bin/kubectl" ]]; then k8s+=(kubectl); fi
  build_k8s "${k8s[@]}"
  operator_crds
}

# The Prometheus Operator's CRDs (example/prometheus-operator-crd of its module) in
# $TOOLS_DIR/prometheus-operator-crd: the kwok tier installs them; no build, a copy of the files.
operator_crds() {
  local crd_dir="$tools_dir/prometheus-operator-crd" src
  [[ "$(cat "$crd_dir/.version" 2>/dev/null)" == "$PROMETHEUS_OPERATOR_VERSION" ]] && return 0
  src="$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$src" ]] || { echo "error: could not download github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION from the Go module proxy" >&2; exit 1; }
  rm -rf "$crd_dir.new"; mkdir -p "$crd_dir.new"
  cp "$src"/example/prometheus-operator-crd/*.yaml "$crd_dir.new/"
  echo "$PROMETHEUS_OPERATOR_VERSION" >"$crd_dir.new/.version"
  rm -rf "$crd_dir"; mv "$crd_dir.new" "$crd_dir"
  echo "k8s-tools: prometheus-operator CRDs $PROMETHEUS_OPERATOR_VERSION in $crd_dir"
}

build_k8s() {  # build_k8s BINARY...: binaries of k8s.io/kubernetes/cmd, in one go build (shared compile)
  local missing=() b
  for b in "$@"; do stamp_ok "$b" "v$K8S_VERSION" || missing+=("$b"); done
  [[ ${#missing[@]} -gt 0 ]] || return 0
  begin "${missing[*]} v$K8S_VERSION"
  local mod="$tools_dir/k8s-build-$group"
  mkdir -p "$mod"
  local staging=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
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
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
      printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"
    done
    printf ')\n'
  } > "$mod/tools.go"
  local minor="${K8S_VERSION#1.}"; minor="${minor%%.*}"
  local ldflags="$LDFLAGS_STRIP -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
  local pkgs=()
  for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
  ( cd "$mod"
    go mod tidy -e >/dev/null 2>&1 || true
    go build -tags tools -ldflags "$ldflags" -o "$scratch/" "${pkgs[@]}" )
  for b in "${missing[@]}"; do install_bin "$scratch/$b" "$b" "v$K8S_VERSION"; done
  done_ "${missing[*]}"
}

build_cluster() {
  build_k8s kubelet kube-proxy
  # CoreDNS with the plugins a cluster's DNS uses (core/plugin/zplugin.go as upstream's `make`
  # writes it from a plugin.cfg listing only these): the cloud DNS backends (route53, azure,
  # clouddns), etcd, tracing and dnstap, whose SDKs are most of a full build, are left out.
  if ! stamp_ok coredns "$COREDNS_VERSION+$COREDNS_PLUGINS"; then
    begin "coredns $COREDNS_VERSION (static; plugins: $COREDNS_PLUGINS)"
    module_copy github.com/coredns/coredns "$COREDNS_VERSION" "$scratch/coredns-src"
    { printf '// Code generated by directives_generate.go. DO NOT EDIT.\n\npackage plugin\n\nimport (\n'
      for p in ${COREDNS_PLUGINS//,/ }; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$p"; done
      printf ')\n'; } >"$scratch/coredns-src/core/plugin/zplugin.go"
    ( cd "$scratch/coredns-src" && go build -trimpath -ldflags "$LDFLAGS_STRIP" -o "$scratch/coredns" . )
    install_bin "$scratch/coredns" coredns "$COREDNS_VERSION+$COREDNS_PLUGINS"; done_ coredns
  fi

  # The Prometheus Operator and its config reloader (monitoring as kube-prometheus-stack does it:
  # manifests/monitoring; its CRDs come with the control group). Built inside a copy of the module: its go.mod replaces two
  # nested modules (pkg/apis/monitoring, pkg/client) by folders that the module zip leaves out, so
  # the replacements are dropped and the proxy's releases of the same version are used.
  if ! stamp_ok prometheus-operator "$PROMETHEUS_OPERATOR_VERSION" \
    || ! stamp_ok prometheus-config-reloader "$PROMETHEUS_OPERATOR_VERSION"; then
    begin "prometheus-operator and prometheus-config-reloader $PROMETHEUS_OPERATOR_VERSION"
    local po_mod="github.com/prometheus-operator/prometheus-operator"
    module_copy "$po_mod" "$PROMETHEUS_OPERATOR_VERSION" "$scratch/prometheus-operator-src"
    ( cd "$scratch/prometheus-operator-src"
      go mod edit -dropreplace "$po_mod/pkg/apis/monitoring" -dropreplace "$po_mod/pkg/client"
      go mod download "$po_mod/pkg/apis/monitoring" "$po_mod/pkg/client"
      local ldflags="$LDFLAGS_STRIP -X github.com/prometheus/common/version.Version=${PROMETHEUS_OPERATOR_VERSION#v}"
      go build -trimpath -ldflags "$ldflags" -o "$scratch/" ./cmd/operator ./cmd/prometheus-config-reloader )
    install_bin "$scratch/operator" prometheus-operator "$PROMETHEUS_OPERATOR_VERSION"
    install_bin "$scratch/prometheus-config-reloader" prometheus-config-reloader "$PROMETHEUS_OPERATOR_VERSION"
    done_ prometheus-operator
  fi

  # Prometheus for the operator's `Prometheus` (manifests/monitoring): Debian's prometheus is built
  # without Kubernetes service discovery, which every configuration the operator writes uses. The
  # module github.com/prometheus/prometheus numbers Prometheus 3.x.y as v0.30x.y. Built inside a
  # copy of the module with only the Kubernetes service discovery registered (plugins/plugins.go as
  # upstream's `make plugins` writes it from a plugins.yml listing one plugin; file and http
  # discovery stay, they are in plugins/minimum.go), which leaves out the cloud SDKs of the others;
  # no web UI assets (the HTTP API is what is used here).
  if ! stamp_ok prometheus "$PROMETHEUS_VERSION"; then
    begin "prometheus $PROMETHEUS_VERSION (Kubernetes discovery only)"
    local prom_mod="github.com/prometheus/prometheus" prom_mod_version
    prom_mod_version="$(echo "${PROMETHEUS_VERSION#v}" | awk -F. '{printf "v0.%d%02d.%d", $1, $2, $3}')"
    module_copy "$prom_mod" "$prom_mod_version" "$scratch/prometheus-src"
    ( cd "$scratch/prometheus-src"
      printf '%s\n' '// Code generated by "make plugins". DO NOT EDIT.' '' 'package plugins' '' 'import (' \
        '	// Register kubernetes plugin.' '	_ "github.com/prometheus/prometheus/discovery/kubernetes"' ')' \
        > plugins/plugins.go
      local ldflags="$LDFLAGS_STRIP -X github.com/prometheus/common/version.Version=${PROMETHEUS_VERSION#v}"
      go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$scratch/prometheus" ./cmd/prometheus )
    install_bin "$scratch/prometheus" prometheus "$PROMETHEUS_VERSION"; done_ prometheus
  fi
  [[ -x /usr/bin/etcd ]] || echo "note: etcd not found at /usr/bin/etcd; run scripts/install-debs.sh k8s" >&2
}

# kube-router, for its NetworkPolicy controller alone: local-cluster.sh runs it with only
# --run-firewall in every node's namespace, where it writes iptables rules and ipsets (Debian's
# ipset; scripts/install-debs.sh k8s). Plain iptables, no eBPF, so one kernel serves every node.
build_netpol() {
  if ! stamp_ok kube-router "$KUBE_ROUTER_VERSION"; then
    begin "kube-router $KUBE_ROUTER_VERSION"
    local kr_mod="github.com/cloudnativelabs/kube-router/v2"
    GOBIN="$scratch" go install -trimpath \
      -ldflags "$LDFLAGS_STRIP -X $kr_mod/pkg/version.Version=$KUBE_ROUTER_VERSION" \
      "$kr_mod/cmd/kube-router@$KUBE_ROUTER_VERSION"
    install_bin "$scratch/kube-router" kube-router "$KUBE_ROUTER_VERSION"; done_ kube-router
  fi
  command -v ipset >/dev/null || echo "note: ipset not found; run scripts/install-debs.sh k8s" >&2
}

# Cilium: the one-node NetworkPolicy enforcer of the local cluster (CLUSTER_NETWORK_POLICY=cilium
# scripts/local-cluster.sh up). Built inside a copy of its module: the BGP library version it pins
# is not in the module proxy, so the nearest release replaces it. The copy stays in
# $TOOLS_DIR/cilium-src: the agent compiles its BPF programs (bpf/) at run time and the cluster
# applies its CRDs from there.
build_cilium() {
  # The agent compiles its BPF programs at run time with clang >= 18.1; curl asks it for health.
  "$root/scripts/install-debs.sh" cilium
  if ! stamp_ok cilium-agent "$CILIUM_VERSION" || ! stamp_ok cilium-cni "$CILIUM_VERSION" \
    || [[ ! -d "$tools_dir/cilium-src/bpf" ]]; then
    begin "cilium-agent and cilium-cni $CILIUM_VERSION"
    local src_mod
    src_mod="$(go mod download -json "github.com/cilium/cilium@$CILIUM_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
    [[ -d "$src_mod" ]] || { echo "error: could not download github.com/cilium/cilium@$CILIUM_VERSION from the Go module proxy" >&2; exit 1; }
    rm -rf "$tools_dir/cilium-src"
    cp -r "$src_mod" "$tools_dir/cilium-src"
    chmod -R u+w "$tools_dir/cilium-src"
    ( cd "$tools_dir/cilium-src"
      go mod edit -replace "github.com/osrg/gobgp/v4=github.com/osrg/gobgp/v4@$CILIUM_GOBGP"
      go build -trimpath -ldflags "$LDFLAGS_STRIP" -o "$scratch/cilium-agent" ./daemon
      go build -trimpath -ldflags "$LDFLAGS_STRIP" -o "$scratch/cilium-cni" ./plugins/cilium-cni )
    install_bin "$scratch/cilium-agent" cilium-agent "$CILIUM_VERSION"
    install_bin "$scratch/cilium-cni" cilium-cni "$CILIUM_VERSION"
    done_ cilium
  fi
}

# One build of a group at a time per cache: a second clone waits for the first, then finds the
# stamps matching. A lock per group, so the real-cluster tools can build while the kwok tier uses
# the control plane's.
all_started=$SECONDS
for group in "${groups[@]}"; do
  exec 9>"$tools_dir/.lock-$group"
  if ! flock -n 9; then
    echo "k8s-tools: waiting for another build of $group into $tools_dir"
    flock 9
  fi
  "build_$group"
  exec 9>&-
done
echo "k8s-tools: ${groups[*]} ready in $bin ($((SECONDS - all_started)) s)"
