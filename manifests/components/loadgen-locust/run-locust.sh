#!/bin/sh
# Index 0: locust master (headless, waits for the workers, prints the final stats as JSON).
# Other indices: workers that connect to the master's stable name benchmark-0.benchmark-peers.
. /scripts/common.sh
require_release
set -- $(target_of 0)
# The environment of loadgen/locust/locustfile.py (its docstring), the same one as locally.
export CACHELAB_HOST="$1:$2" CACHELAB_RATIO="$RATIO" \
  CACHELAB_VALUE_BYTES="$VALUE_BYTES" CACHELAB_KEY_MAXIMUM="$KEY_MAXIMUM"
file=/locust/locustfile.py
if [ "$index" -eq 0 ]; then
  workers=$((CLIENT_MACHINES - 1))
  [ "$workers" -ge 1 ] || { log "locust needs CLIENT_MACHINES >= 2 (1 master + workers)"; exit 2; }
  users=$((workers * INSTANCES * THREADS * CLIENTS))
  locust -f "$file" --master --headless --expect-workers "$workers" --users "$users" \
    --spawn-rate "$users" --run-time "${DURATION_S}s" --json --only-summary MemcachedUser \
    >"${TMPDIR:-/tmp}/locust.json"
  emit "${TMPDIR:-/tmp}/locust.json" 0
else
  exec locust -f "$file" --worker --master-host "$JOB_NAME-0.benchmark-peers" MemcachedUser
fi
