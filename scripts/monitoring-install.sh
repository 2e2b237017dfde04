#!/usr/bin/env bash
# Installs (or upgrades) kube-prometheus-stack into the current kubectl context with the values
# the testbed needs (ops/monitoring/kube-prometheus-stack-values.yaml).
# Usage: scripts/monitoring-install.sh   (env: KPS_VERSION, MONITORING_NAMESPACE, KPS_RELEASE, HELM)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
KPS_VERSION="${KPS_VERSION:-67.8.0}"
MONITORING_NAMESPACE="${MONITORING_NAMESPACE:-monitoring}"
KPS_RELEASE="${KPS_RELEASE:-kps}"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
HELM="${HELM:-$(command -v helm || echo "${TOOLS_DIR:-$(cachelab_cache_dir)/tools}/bin/helm")}"
values="$root/ops/monitoring/kube-prometheus-stack-values.yaml"

[[ -x "$HELM" ]] || { echo "error: helm not found (install it, or run make k8s-tools and set HELM)" >&2; exit 1; }

"$HELM" repo add prometheus-community https://prometheus-community.github.io/helm-charts --force-update >/dev/null
"$HELM" repo update prometheus-community >/dev/null
echo "installing kube-prometheus-stack $KPS_VERSION as $KPS_RELEASE in namespace $MONITORING_NAMESPACE"
"$HELM" upgrade --install "$KPS_RELEASE" prometheus-community/kube-prometheus-stack \
  --version "$KPS_VERSION" --namespace "$MONITORING_NAMESPACE" --create-namespace \
  --values "$values" --wait --timeout 10m
echo "Grafana: kubectl -n $MONITORING_NAMESPACE port-forward svc/$KPS_RELEASE-grafana 3000:80, then http://127.0.0.1:3000"
echo "  user admin, password: kubectl -n $MONITORING_NAMESPACE get secret $KPS_RELEASE-grafana -o jsonpath='{.data.admin-password}' | base64 -d"
