#!/usr/bin/env bash
# Installs the Debian packages cachelab needs for local runs and tests, if any are missing.
# Usage: scripts/install-debs.sh [package ...]   (default: the full list below)
set -euo pipefail

packages=("$@")
if [[ ${#packages[@]} -eq 0 ]]; then
  packages=(
    memcached redis-server          # the servers under test
    nutcracker libmemcached-tools   # peers for `make bench` (twemproxy, memcaslap)
    gcc libc6-dev                   # `make bench` compiles the ASL floor (scripts/asl-floor/)
    etcd-server                     # Kubernetes test tier (kwok control plane)
    containerd runc containernetworking-plugins iptables openssl  # the real local cluster
    umoci skopeo busybox-static     # local images (scripts/images.sh)
    prometheus prometheus-node-exporter  # local monitoring (--monitor) and dashboard tests
    prometheus-redis-exporter            # redis panels of the servers dashboard, locally
    netcat-openbsd maven python3-venv
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "installing Debian packages: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "error: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The packaged services are not wanted running in the background: tests start their own.
for svc in memcached redis-server nutcracker prometheus prometheus-node-exporter prometheus-redis-exporter etcd; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    $sudo systemctl stop "$svc" || true
    $sudo systemctl disable "$svc" >/dev/null 2>&1 || true
  fi
done
echo "Debian packages installed."
