#!/bin/sh
# One client machine of the benchmark Job: wait for the others, run INSTANCES loadgen processes
# with LOADGEN_ARGS (the flags cachelab.loadgen_args made of the spec point, passed on unchanged),
# print each one's memtier JSON and HDR interval log between markers. Exit status: the worst
# instance's.
#
# With the cachelab loadgen, each instance's per-second progress line also goes to the pod's log
# (stderr) while it runs, tagged with its machine and instance:
#   progress machine=<i> instance=<j>: [RUN #1  45%,   9 secs]  ... ops/sec, ... p99 msec, 0 errors
# `cachelab run --target k8s` follows these for its live line (cachelab.k8s.progress). memtier's
# progress line (carriage returns, no p99) stays in the instance's own file.
. "${SCRIPTS_DIR:-/scripts}/common.sh"
. "${SCRIPTS_DIR:-/scripts}/barrier.sh"

# The cachelab loadgen serves Prometheus metrics, instance j on METRICS_PORT+j, a port the Job
# declares (metrics-<j>) so that a PodMonitor scrapes it; memtier has no such option.
metrics_base=""
metrics_port=""
if [ -n "${METRICS_PORT:-}" ] && [ "$LOADGEN" = cachelab ]; then
  metrics_base="$METRICS_PORT"
  if [ "$INSTANCES" -gt "${METRICS_PORTS:-0}" ]; then
    log "INSTANCES=$INSTANCES but the Job declares METRICS_PORTS=${METRICS_PORTS:-0} metrics ports (metrics-0..): declare one port per instance"
    exit 2
  fi
fi

# tag <instance>: the instance's stderr (read from its fifo until the loadgen exits) into its log
# file, and its progress lines, tagged, to the pod's log as well.
tag() {
  while IFS= read -r line; do
    printf '%s\n' "$line" >>"$work/loadgen-$1.log"
    case "$line" in
      "[RUN #"*) printf 'progress machine=%s instance=%s: %s\n' "$index" "$1" "$line" >&2 ;;
    esac
  done <"$work/stderr-$1"
}

pids=""
readers=""
j=0
while [ "$j" -lt "$INSTANCES" ]; do
  set -- $(target_of "$j")
  log "instance $j -> $1:$2"
  [ -n "$metrics_base" ] && metrics_port="--metrics-port=$((metrics_base + j))"
  : >"$work/loadgen-$j.log"
  stderr="$work/loadgen-$j.log"
  if [ "$LOADGEN" = cachelab ]; then
    progress=""
    rm -f "$work/stderr-$j"
    mkfifo "$work/stderr-$j"
    tag "$j" &
    readers="$readers $!"
    stderr="$work/stderr-$j"
  fi
  # shellcheck disable=SC2086 # LOADGEN_ARGS and metrics_port are word lists
  loadgen --server="$1" --port="$2" $LOADGEN_ARGS \
    --json-out-file="$work/result-$j.json" --hdr-file-prefix="$work/hdr-$j" \
    $metrics_port >>"$work/loadgen-$j.log" 2>>"$stderr" &
  pids="$pids $!"
  j=$((j + 1))
done

status=0
failed=""
j=0
for pid in $pids; do
  wait "$pid" || { status=$?; failed="$failed $j"; log "instance $j failed ($status)"; }
  j=$((j + 1))
done
for pid in $readers; do
  wait "$pid" || true  # each ends when its loadgen closed the fifo
done
for j in $failed; do
  log "instance $j log:"
  cat "$work/loadgen-$j.log" >&2
done
j=0
while [ "$j" -lt "$INSTANCES" ]; do
  [ -s "$work/result-$j.json" ] && emit "$work/result-$j.json" "$j"
  [ -s "$work/hdr-${j}_FULL_RUN_1.txt" ] && emit "$work/hdr-${j}_FULL_RUN_1.txt" "hdr-$j"
  j=$((j + 1))
done
exit "$status"
