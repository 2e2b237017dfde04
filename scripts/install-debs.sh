#!/usr/bin/env bash
# Installs the Debian packages a target needs, if any are missing, and nothing more.
#
#   scripts/install-debs.sh [GROUP|PACKAGE ...]      (default: run)
#   scripts/install-debs.sh --list [GROUP ...]       print the packages of the groups, one a line
#
# Groups (a target names the ones it needs; `make deps` is `run`):
#   run      local experiments (make run, cachelab run --target local): the servers under test,
#            the Python venv, Maven, patch (scripts/toxiproxy.sh patches the latency emulator)
#   test     what the local test tiers add: the peers (twemproxy, memcaslap), a C compiler for the
#            ASL floor, Prometheus and its exporters for --monitor and the dashboard tests, chromium
#            for the report screenshot
#   bench    make bench: the peers and the C compiler
#   k8s      the Kubernetes tiers and make k8s-up: etcd, containerd, runc, CNI plugins, iptables,
#            ipset (kube-router's NetworkPolicy firewall), conntrack, openssl, umoci and skopeo for
#            the local images (servers and exporters are packed from the run and test groups'
#            packages; the memcached exporter from collectd-core, whose write_prometheus plugin
#            needs libmicrohttpd12 and libprotobuf-c1, only recommended by it), docker-registry
#            (the local cluster's registry, run as a process of its own)
#   cilium   CILIUM=1: clang/llvm 19 (the agent compiles its BPF programs at run time), curl
#   all      every group
#
# Packages that ship a service (memcached, redis-server, nutcracker, prometheus, ...) start it when
# installed; this script stops and disables the services of the packages it has just installed
# (tests start their own servers on free ports), and leaves alone every service that was there
# before it ran. Each package it installs is recorded in $CACHELAB_CACHE/installed-debs, so that
# `make undo PACKAGES=1` (scripts/undo.sh --packages) removes those and no others.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"

group() {
  case "$1" in
    run) echo memcached redis-server python3-venv maven netcat-openbsd patch ;;
    test) echo nutcracker libmemcached-tools gcc libc6-dev prometheus prometheus-node-exporter prometheus-redis-exporter \
      collectd-core libmicrohttpd12 libprotobuf-c1 chromium ;;
    bench) echo nutcracker libmemcached-tools gcc libc6-dev ;;
    k8s) echo etcd-server containerd runc containernetworking-plugins iptables ipset conntrack openssl umoci skopeo docker-registry busybox-static \
      prometheus prometheus-node-exporter prometheus-redis-exporter collectd-core libmicrohttpd12 libprotobuf-c1 ;;
    cilium) echo clang-19 llvm-19 curl ;;
    all) for g in run test bench k8s cilium; do group "$g"; done ;;
    *) return 1 ;;
  esac
}

list=0
if [[ "${1:-}" == --list ]]; then list=1; shift; fi
args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(run)
packages=()
for a in "${args[@]}"; do
  if g="$(group "$a")"; then
    # shellcheck disable=SC2206  # the groups are space-separated package names
    packages+=($g)
  elif [[ $a =~ ^[a-z0-9][a-z0-9.+-]+$ ]]; then
    packages+=("$a")
  else
    echo "error: $a is neither a group (run, test, bench, k8s, cilium, all) nor a Debian package name" >&2
    exit 2
  fi
done
if [[ $list == 1 ]]; then printf '%s\n' "${packages[@]}" | sort -u; exit 0; fi

missing=()
for p in $(printf '%s\n' "${packages[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "installing Debian packages: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "error: installing ${missing[*]} needs root or sudo; install them yourself (apt-get install ${missing[*]}) and run again" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
started=$SECONDS
$sudo apt-get update -qq || { echo "error: apt-get update failed: is a Debian mirror reachable?" >&2; exit 1; }
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || { echo "error: apt-get install ${missing[*]} failed" >&2; exit 1; }
record="$(cachelab_cache_dir)/installed-debs"
mkdir -p "$(dirname "$record")" && printf '%s\n' "${missing[@]}" >> "$record"

# The services of the packages installed just now; a service that ran before is the user's.
services=()
for p in "${missing[@]}"; do
  case "$p" in
    memcached | nutcracker | prometheus | prometheus-node-exporter | prometheus-redis-exporter) services+=("$p") ;;
    collectd-core) services+=(collectd) ;;
    redis-server) services+=(redis-server) ;;
    etcd-server) services+=(etcd) ;;
    docker-registry) services+=(docker-registry) ;;
  esac
done
if command -v systemctl >/dev/null 2>&1 && [[ ${#services[@]} -gt 0 ]]; then
  for svc in "${services[@]}"; do
    if systemctl is-active --quiet "$svc" 2>/dev/null; then
      $sudo systemctl stop "$svc" || true
      $sudo systemctl disable "$svc" >/dev/null 2>&1 || true
      echo "stopped and disabled $svc (installed just now; tests start their own)"
    fi
  done
fi
echo "Debian packages installed ($((SECONDS - started)) s)."
