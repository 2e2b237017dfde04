#!/bin/sh
# One client machine of the benchmark Job: wait for the others, run INSTANCES loadgen processes
# with LOADGEN_ARGS (the flags cachelab.loadgen_args made of the spec point, passed on unchanged),
# print each one's memtier JSON and HDR interval log between markers. Exit status: the worst
# instance's.
#
# Each instance's per-second progress line also goes to the pod's log (stderr) while it runs,
# tagged with its machine and instance (common.sh, tag_progress), with either loadgen:
#   progress machine=<i> instance=<j>: [RUN #1  45%,   9 secs]  ... ops/sec, ... p99 msec, 0 errors
#   progress machine=<i> instance=<j>: [RUN #1 45%,   9 secs]  2 threads: ... msec latency  (memtier)
# `cachelab run --target k8s` follows these for its live line (cachelab.k8s.progress).
. "${SCRIPTS_DIR:-/scripts}/common.sh"
require_release
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

pids=""
readers=""
j=0
while [ "$j" -lt "$INSTANCES" ]; do
  set -- $(target_of "$j")
  log "instance $j -> $1:$2"
  [ -n "$metrics_base" ] && metrics_port="--metrics-port=$((metrics_base + j))"
  : >"$work/loadgen-$j.log"
  progress=""  # the cachelab loadgen prints its progress line (memtier always does)
  rm -f "$work/stderr-$j"
  mkfifo "$work/stderr-$j"
  tag_progress "$j" "$work/loadgen-$j.log" <"$work/stderr-$j" &
  readers="$readers $!"
  # shellcheck disable=SC2086 # LOADGEN_ARGS and metrics_port are word lists
  loadgen --server="$1" --port="$2" $LOADGEN_ARGS \
    --json-out-file="$work/result-$j.json" --hdr-file-prefix="$work/hdr-$j" \
    $metrics_port >>"$work/loadgen-$j.log" 2>"$work/stderr-$j" &
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
# The runner may take the results as soon as this line is in the log (every block is before it)
# rather than when the pod is seen succeeded, seconds after its exit on a busy node.
log "results emitted: status $status"
drain_log
exit "$status"
