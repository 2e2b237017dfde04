#!/bin/sh
# One index of the preload Job: write every key of this index's slice of [0, KEY_MAXIMUM] to
# every target (the middleware replicates or routes; direct targets are filled one by one), then
# read the slice back and fail unless the reads had zero misses. The recipe's flags are
# PRELOAD_FILL_ARGS and PRELOAD_VERIFY_ARGS (cachelab.loadgen_args, as in a local run); this
# script adds the target, the slice and the output file.
. "${SCRIPTS_DIR:-/scripts}/common.sh"
require_release

lo=$(( KEY_MAXIMUM * index / CLIENT_MACHINES ))
hi=$(( KEY_MAXIMUM * (index + 1) / CLIENT_MACHINES - 1 ))
[ "$index" -eq $((CLIENT_MACHINES - 1)) ] && hi="$KEY_MAXIMUM"

# Misses/sec of the Gets of a memtier JSON file (the "ALL STATS" section; pretty-printed JSON,
# `"Misses/sec": 0.00,` from memtier or `"Misses/sec" : 0.00,` from the cachelab loadgen).
misses_per_s() {
  sed -n '/"ALL STATS"/,$p' "$1" | awk '/"Gets"/ { g = 1 }
    g && /"Misses\/sec"/ { sub(/.*"Misses\/sec"[[:space:]]*:[[:space:]]*/, ""); sub(/[,}[:space:]].*$/, ""); print; exit }'
}

targets=1
[ "$TARGET" = servers ] && targets="$SERVERS"
t=0
while [ "$t" -lt "$targets" ]; do
  if [ "$TARGET" = servers ]; then
    host="$SERVER_STATEFULSET-$t.$SERVER_STATEFULSET"; port="$SERVER_PORT"
  else
    set -- $(target_of 0); host="$1"; port="$2"
  fi
  log "preload keys $lo..$hi into $host:$port"
  common="--server=$host --port=$port --key-minimum=$lo --key-maximum=$hi"
  # shellcheck disable=SC2086
  loadgen $common $PRELOAD_FILL_ARGS --json-out-file="$work/fill-$t.json" >"$work/fill-$t.log" 2>&1 \
    || { cat "$work/fill-$t.log" >&2; exit 1; }
  emit "$work/fill-$t.json" "fill-$t"
  if [ "$PRELOAD_VERIFY" = true ]; then
    # shellcheck disable=SC2086
    loadgen $common $PRELOAD_VERIFY_ARGS --json-out-file="$work/verify-$t.json" >"$work/verify-$t.log" 2>&1 \
      || { cat "$work/verify-$t.log" >&2; exit 1; }
    emit "$work/verify-$t.json" "verify-$t"
    misses="$(misses_per_s "$work/verify-$t.json")"
    if ! awk -v m="${misses:-x}" 'BEGIN { exit !(m == "0" || m + 0 == 0 && m ~ /^[0-9.]+$/) }'; then
      log "preload verification failed: $host:$port Misses/sec=${misses:-unknown} (expected 0)"
      exit 1
    fi
  fi
  t=$((t + 1))
done
log "preload done: keys $lo..$hi, $targets target(s), zero misses"
drain_log
