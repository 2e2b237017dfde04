# Start barrier (sourced): returns when every index 0..CLIENT_MACHINES-1 of this Indexed Job has
# a DNS name <job>-<i>.benchmark-peers, i.e. its pod is Ready and its main container has started.
# All machines therefore start their load within one DNS poll plus the DNS negative-cache time
# (CoreDNS' kubernetes plugin: 5 s), which the warm-up trims.
# One machine has nobody to wait for.
deadline=$(( $(date +%s) + BARRIER_TIMEOUT_S ))
i=0
[ "$CLIENT_MACHINES" -le 1 ] && i="$CLIENT_MACHINES"
while [ "$i" -lt "$CLIENT_MACHINES" ]; do
  if getent hosts "$JOB_NAME-$i.benchmark-peers" >/dev/null 2>&1; then
    i=$((i + 1))
    continue
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    log "barrier: $JOB_NAME-$i.benchmark-peers did not appear within ${BARRIER_TIMEOUT_S}s"
    exit 1
  fi
  sleep 1
done
log "barrier passed: $CLIENT_MACHINES machines up"
