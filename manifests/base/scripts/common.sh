# Shared by preload.sh and run-benchmark.sh (POSIX sh; sourced). Every knob comes from the
# benchmark-config ConfigMap (manifests/base/kustomization.yaml lists them).
set -eu

index="${JOB_COMPLETION_INDEX:-0}"
work="${TMPDIR:-/tmp}"  # an emptyDir in the pod (read-only root filesystem)

log() { echo "[$JOB_NAME-$index] $*" >&2; }

# The loadgen command: memtier_benchmark, or the cachelab loadgen (jib image: classpath and main
# class in files jib writes), which takes the same flags. CACHELAB_LOADGEN_CMD overrides the
# latter (the scripts' own test runs them outside a container with the built jar). The cachelab
# loadgen runs --quiet (no per-second progress line) unless a script sets progress="".
progress="--quiet"
loadgen() {
  case "$LOADGEN" in
    memtier) memtier_benchmark --hide-histogram "$@" ;;
    # shellcheck disable=SC2086 # progress is empty or one flag
    cachelab) ${CACHELAB_LOADGEN_CMD:-java -cp @/app/jib-classpath-file @/app/jib-main-class-file} $progress --hide-histogram "$@" ;;
    *) log "unknown LOADGEN=$LOADGEN (memtier, cachelab)"; return 2 ;;
  esac
}

# A loadgen's stderr (stdin) as lines, each passed on as soon as it is complete: memtier ends its
# progress lines with a carriage return, not a newline. GNU tr holds its output to a pipe until
# a few kilobytes have gathered, so it runs line-buffered under stdbuf (coreutils, as in the
# memtier image); busybox's tr (the project's loadgen image, no stdbuf) writes what it reads.
split_lines() {
  if command -v stdbuf >/dev/null 2>&1; then
    stdbuf -oL tr '\r' '\n'
  else
    tr '\r' '\n'
  fi
}

# tag_progress <instance> <log>: a loadgen's stderr (stdin) appended to <log>, line by line, and
# its per-second progress lines ("[RUN #1  45%,   9 secs] ...", the cachelab loadgen's or
# memtier's) also to this script's stderr (the pod's log), tagged with the machine and instance:
#   progress machine=<i> instance=<j>: [RUN #1  45%,   9 secs] ...
tag_progress() {
  split_lines | while IFS= read -r line; do
    printf '%s\n' "$line" >>"$2"
    case "$line" in
      "[RUN #"*" secs]"*) printf 'progress machine=%s instance=%s: %s\n' "$index" "$1" "$line" >&2 ;;
    esac
  done
}

# host:port of the target of instance $1 of this machine. With TARGET=servers, the instances of
# all machines go round robin over the servers' stable StatefulSet names.
target_of() {
  case "$TARGET" in
    middleware) echo "$MIDDLEWARE_HOST $MIDDLEWARE_PORT" ;;
    servers)
      k=$(( (index * INSTANCES + $1) % SERVERS ))
      echo "$SERVER_STATEFULSET-$k.$SERVER_STATEFULSET $SERVER_PORT" ;;
    *) log "unknown TARGET=$TARGET (middleware, servers)"; return 2 ;;
  esac
}

# require_release: the Jobs need the testbed release in their namespace (its Services are their
# targets). Waits up to RELEASE_WAIT_S for the target's name to resolve (the middleware's
# Service, or the servers' headless Service, which resolves once a server pod is Ready), then
# fails naming what to install (RELEASE_HINT, the overlay's own helm command).
require_release() {
  case "$TARGET" in
    middleware) name="$MIDDLEWARE_HOST" ;;
    *) name="$SERVER_STATEFULSET" ;;
  esac
  deadline=$(( $(date +%s) + ${RELEASE_WAIT_S:-60} ))
  until getent hosts "$name" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "no testbed release in this namespace: $name does not resolve after ${RELEASE_WAIT_S:-60}s. Install it first: ${RELEASE_HINT:-helm upgrade --install testbed charts/testbed -f <overlay>/testbed-values.yaml --wait}"
      exit 3
    fi
    sleep 1
  done
}

# Prints a result file between the markers that the collectors look for, on stderr like every
# other line of these scripts (log, tagged progress). One stream keeps the pod's log in the order
# the lines were written: the container runtime copies stdout and stderr to the log separately,
# so a log line written on stderr just after a block on stdout could land inside the block under
# load (seen once: "verify-0: not JSON (Expecting ',' delimiter)" at load average 10.7).
emit() {  # emit <file> <instance>
  {
    echo "=== cachelab-result-begin job=$JOB_NAME machine=$index instance=$2 ==="
    cat "$1"
    echo
    echo "=== cachelab-result-end job=$JOB_NAME machine=$index instance=$2 ==="
  } >&2
}

# Lets the container runtime copy the last lines to the pod's log before the container exits. On
# the busy local cluster a benchmark pod's log lost its last blocks (up to tens of KiB written in
# the second before exit) in 2 of 3 runs of the three-client overlay; the lines never came, also
# when read again. Called once, after the last emit.
drain_log() {
  sleep "${LOG_DRAIN_S:-2}"
}
