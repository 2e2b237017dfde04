#!/usr/bin/env bash
# Undoes what this project set up on the machine, and only that.
#
#   scripts/undo.sh [--dry-run] [--packages] [--caches]
#
# Always (root for the first and third):
#   - the local cluster of this clone (scripts/local-cluster.sh down: its processes, bridge, veths,
#     node namespaces, cgroups, qdiscs, iptables chains, ipsets, sysctls and mounts, restored to
#     what they were before `make k8s-up`);
#   - this clone's kwok cluster (K8S_CLUSTER, default cachelab);
#   - a shaping of the loopback device that a killed `cachelab run --bandwidth` left behind: the
#     root htb with handle 1: and the 100gbit default class that cachelab.local.shaping installs,
#     removed only while no `cachelab run`, `search` or `reproduce` runs; any other qdisc on lo is
#     someone else's.
# With --packages: the Debian packages scripts/install-debs.sh installed (it records each in
#   $CACHELAB_CACHE/installed-debs; packages that were there before are not in it), removed with
#   apt-get remove; the record is emptied of the ones removed or already gone.
# With --caches: the per-machine cache every clone shares ($CACHELAB_CACHE: the Kubernetes tools
#   and images, rebuilt by the next make test in 10-15 min) and this clone's .cache and .venv.
#
# No service is stopped here: install-debs.sh already stopped the services of the packages it
# installed, and the ones that ran before are the user's. --dry-run prints each step and changes
# nothing. Exit 1 names the step that failed; the steps after it still run.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
cache="$(cachelab_cache_dir)"
record="$cache/installed-debs"
export PATH="${TOOLS_DIR:-$cache/tools}/bin:$PATH"  # kwokctl, built by scripts/k8s-tools.sh

dry=0 packages=0 caches=0
for a in "$@"; do
  case "$a" in
    --dry-run) dry=1 ;;
    --packages) packages=1 ;;
    --caches) caches=1 ;;
    *) echo "usage: $0 [--dry-run] [--packages] [--caches]" >&2; exit 2 ;;
  esac
done

failed=()
say() { echo "[undo] $*"; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
step() {  # step WHAT CMD...: run CMD (or only say it with --dry-run); remember a failure
  local what="$1"; shift
  if [[ $dry == 1 ]]; then say "would $what: $*"; return 0; fi
  say "$what"
  "$@" || { say "error: $what failed (exit $?)"; failed+=("$what"); }
}

if [[ $(id -u) -ne 0 && $dry == 0 ]]; then
  echo "error: undo needs root (the local cluster's namespaces, iptables chains and sysctls, tc on lo, apt-get)" >&2
  exit 1
fi

cluster_dir="${CLUSTER_DIR:-$root/.cache/cluster}"
if [[ -d $cluster_dir ]]; then
  step "stop the local cluster and restore the machine" env CLUSTER_DIR="$cluster_dir" "$root/scripts/local-cluster.sh" down
else
  say "no local cluster of this clone ($cluster_dir)"
fi

kwok_name="${K8S_CLUSTER:-cachelab}"
if command -v kwokctl >/dev/null 2>&1 && kwokctl get clusters 2>/dev/null | grep -qx "$kwok_name"; then
  step "delete the kwok cluster $kwok_name" "$root/scripts/kwok-cluster.sh" down "$kwok_name"
else
  say "no kwok cluster $kwok_name"
fi

# The shaping of cachelab.local.shaping: `qdisc htb 1: root ... default 0x1` whose class 1:1 runs
# at 100Gbit (UNLIMITED there).
if command -v tc >/dev/null 2>&1 && tc qdisc show dev lo | grep -q '^qdisc htb 1: root .*default 0x1\b' \
  && tc class show dev lo classid 1:1 | grep -q 'rate 100Gbit'; then
  if pgrep -f '(^|/)cachelab (run|search|reproduce)( |$)' >/dev/null 2>&1; then
    say "lo is shaped and a cachelab run is running: left as it is (the run removes it)"
  else
    step "remove the shaping a killed run left on lo" tc qdisc del dev lo root
  fi
else
  say "no shaping of this project on lo"
fi

if [[ $packages == 1 ]]; then
  mapfile -t recorded < <(sort -u "$record" 2>/dev/null)
  present=()
  for p in "${recorded[@]}"; do
    if installed "$p"; then present+=("$p"); fi
  done
  if [[ ${#present[@]} -gt 0 ]]; then
    step "remove the Debian packages this project installed (${present[*]})" \
      env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "${present[@]}"
  else
    say "no Debian package installed by this project is left (${#recorded[@]} recorded)"
  fi
  if [[ $dry == 0 && -f $record ]]; then
    left=()
    for p in "${recorded[@]}"; do
      if installed "$p"; then left+=("$p"); fi
    done
    if [[ ${#left[@]} -gt 0 ]]; then printf '%s\n' "${left[@]}" > "$record"; else rm -f "$record"; fi
  fi
fi

if [[ $caches == 1 ]]; then
  step "remove the per-machine cache $cache" rm -rf "$cache"
  step "remove this clone's .cache and .venv" rm -rf "$root/.cache" "$root/.venv"
fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "error: undo did not finish: ${failed[*]}" >&2
  exit 1
fi
say "done$([[ $dry == 1 ]] && echo ' (dry run: nothing changed)')"
