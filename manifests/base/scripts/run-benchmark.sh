#!/bin/sh
# One client machine of the benchmark Job: wait for the others, run INSTANCES loadgen processes
# for DURATION_S, print each one's memtier JSON between markers. Exit status: the worst instance's.
. "${SCRIPTS_DIR:-/scripts}/common.sh"
. "${SCRIPTS_DIR:-/scripts}/barrier.sh"

multi_get=""
[ "$MULTI_GET" -gt 0 ] && multi_get="--multi-key-get=$MULTI_GET"
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
j=0
while [ "$j" -lt "$INSTANCES" ]; do
  set -- $(target_of "$j")
  log "instance $j -> $1:$2"
  [ -n "$metrics_base" ] && metrics_port="--metrics-port=$((metrics_base + j))"
  # shellcheck disable=SC2086 # multi_get, metrics_port and EXTRA_ARGS are word lists
  loadgen --server="$1" --port="$2" --protocol="$PROTOCOL" \
    --threads="$THREADS" --clients="$CLIENTS" --ratio="$RATIO" \
    --data-size="$VALUE_BYTES" --key-maximum="$KEY_MAXIMUM" --key-pattern="$KEY_PATTERN" \
    --test-time="$DURATION_S" --print-percentiles="$PRINT_PERCENTILES" \
    --json-out-file="$work/result-$j.json" $multi_get $metrics_port $EXTRA_ARGS >"$work/loadgen-$j.log" 2>&1 &
  pids="$pids $!"
  j=$((j + 1))
done

status=0
j=0
for pid in $pids; do
  wait "$pid" || { status=$?; log "instance $j failed ($status):"; cat "$work/loadgen-$j.log" >&2; }
  [ -s "$work/result-$j.json" ] && emit "$work/result-$j.json" "$j"
  j=$((j + 1))
done
exit "$status"
