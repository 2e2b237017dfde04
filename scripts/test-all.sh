#!/usr/bin/env bash
# `make test`: every test tier, with the Kubernetes tools and images built in the background (at
# low priority) while the tiers that need none of them run, and the wall time of each part printed.
#
#   1. install check (every command the scripts call is installed by the project's own files)
#   2. Debian packages, venv, jars
#   3. background: k8s-tools control -> cluster -> netpol (-> cilium with CILIUM=1); the images
#      once the Java tiers are done and `cluster` is built
#      foreground: lint, unit, integration, e2e; then the kwok tier once `control` is built, the
#      real-cluster tier once `cluster`, `netpol` and the images are, the Cilium tier once Cilium is
#
# Stops at the first failing part (and stops the background build); the table of times is printed
# either way. The background builds' logs are $TEST_LOG_DIR/tools.log and images.log (default
# .cache/test-logs).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
log_dir="${TEST_LOG_DIR:-$root/.cache/test-logs}"
rm -rf "$log_dir"; mkdir -p "$log_dir"
cilium="${CILIUM:-0}"
make_() { make --no-print-directory "$@"; }

started=$SECONDS
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
names=(); secs=(); results=()
report() {
  local i total=$((SECONDS - started))
  echo
  echo "make test: wall time per part (load average at start $load_start, now $(cut -d' ' -f1-3 /proc/loadavg))"
  for i in "${!names[@]}"; do printf '  %-34s %6d s  %s\n' "${names[$i]}" "${secs[$i]}" "${results[$i]}"; done
  cat "$log_dir/tools.log" "$log_dir/images.log" 2>/dev/null | grep -E '^(k8s-tools: built|background: )' | sed 's/^/  | /' || true
  printf '  %-34s %6d s\n' "total" "$total"
}
bg_pids=()
cleanup() {
  local rc=$? pid
  for pid in "${bg_pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; fi
  done
  report
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

part() {  # part NAME COMMAND...: run, time and record one part; stop everything when it fails
  local name="$1"; shift
  local t0=$SECONDS rc=0
  echo "==> $name ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1 /proc/loadavg))"
  "$@" || rc=$?
  names+=("$name"); secs+=($((SECONDS - t0)))
  if [[ $rc -ne 0 ]]; then results+=("FAILED ($rc)"); echo "make test: $name failed" >&2; exit "$rc"; fi
  results+=("ok")
}

wait_for() {  # wait_for STEP: until the background build has finished STEP; fail if it failed
  local step="$1" t0=$SECONDS log="$log_dir/tools.log" pid alive
  [[ $step == images ]] && log="$log_dir/images.log"
  while [[ ! -f "$log_dir/$step.rc" ]]; do
    alive=0
    for pid in "${bg_pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    if [[ $alive == 0 && ! -f "$log_dir/$step.rc" ]]; then
      echo "error: the background builds stopped before $step; its log:" >&2; tail -n 40 "$log" >&2; return 1
    fi
    sleep 5
  done
  local rc; rc="$(cat "$log_dir/$step.rc")"
  if [[ $rc != 0 ]]; then
    echo "error: the background build of $step failed ($rc); its log:" >&2; tail -n 60 "$log" >&2; return 1
  fi
  echo "background build: $step ready (waited $((SECONDS - t0)) s)"
}

build_tools() {  # background: the Go builds, in the order the tiers need them; a .rc file per step
  local step
  for step in control cluster netpol $([[ $cilium == 1 ]] && echo cilium); do
    local rc=0 t0=$SECONDS
    echo "==> $step ($(date -u +%H:%M:%S) UTC)" >>"$log_dir/tools.log"
    make_ k8s-tools K8S_TOOLS="$step" >>"$log_dir/tools.log" 2>&1 || rc=$?
    echo "background: tools $step took $((SECONDS - t0)) s (exit $rc)" >>"$log_dir/tools.log"
    echo "$rc" >"$log_dir/$step.rc"
    [[ $rc == 0 ]] || return "$rc"
  done
}

build_images() {  # background, once the Java tiers are done (jib packages the modules again)
  local rc=0 t0=$SECONDS
  while [[ ! -f "$log_dir/cluster.rc" ]]; do sleep 5; done   # the images pack the cluster's tools
  if [[ "$(cat "$log_dir/cluster.rc")" == 0 ]]; then
    echo "==> images ($(date -u +%H:%M:%S) UTC)" >>"$log_dir/images.log"
    make_ images K8S_TOOLS="control cluster" >>"$log_dir/images.log" 2>&1 || rc=$?
  else
    rc=1
  fi
  echo "background: images took $((SECONDS - t0)) s (exit $rc)" >>"$log_dir/images.log"
  echo "$rc" >"$log_dir/images.rc"
}

start_background() {  # start_background FUNCTION: in its own process group, at nice 19; prints the pid
  setsid nice -n 19 bash -c "$(declare -f "$1" make_); log_dir='$log_dir' cilium='$cilium' $1" \
    </dev/null >/dev/null 2>&1 &
  echo $!
}

if [[ $(id -u) -ne 0 ]]; then
  echo "error: make test needs root: it installs Debian packages, and its real-cluster tier adds a bridge, network namespaces, cgroups and iptables chains (all removed after); run it as root" >&2
  exit 1
fi
echo "make test: runs as root (Debian packages; the real-cluster tier's bridge, namespaces, cgroups and iptables chains, removed after)"
part "install check" make_ check-installs
debs=(run test k8s); [[ $cilium == 1 ]] && debs+=(cilium)
part "Debian packages (${debs[*]})" scripts/install-debs.sh "${debs[@]}"
part "venv" make_ venv
part "build (jars)" make_ build

# The Go builds share nothing with the Java tiers and start now; the images wait for them (jib
# packages the modules again, which must not happen under a running Maven or e2e test).
bg_pids=("$(start_background build_tools)")
echo "background: tool builds started (nice 19; log $log_dir/tools.log)"

part "lint" make_ lint
part "unit" make_ test-unit
part "integration" make_ test-integration
part "e2e" make_ test-e2e
bg_pids+=("$(start_background build_images)")
echo "background: image builds started (nice 19; log $log_dir/images.log)"
part "wait: k8s tools (control)" wait_for control
part "kwok tier" make_ test-k8s
part "wait: k8s tools (cluster)" wait_for cluster
part "wait: k8s tools (netpol)" wait_for netpol
part "wait: images" wait_for images
part "real-cluster tier" make_ test-k8s-real
if [[ $cilium == 1 ]]; then
  part "wait: cilium" wait_for cilium
  part "real-cluster tier (Cilium)" make_ test-k8s-cilium
fi
