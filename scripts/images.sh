#!/usr/bin/env bash
# Builds the testbed's container images locally and pushes them to a registry: the local
# cluster's (scripts/local-cluster.sh runs one on its bridge; its nodes pull from it), or yours.
#
#   scripts/images.sh build  [NAME ...]   build the images (default: all) into $IMAGES_DIR/<name>.tar
#   scripts/images.sh push   [NAME ...]   build if needed, then push each to $REGISTRY as
#                                         $REGISTRY/<last segment of its name>:<tag> (skopeo)
#   scripts/images.sh list                print "<name> <image reference>" for every image
#
# Server and helper images are made with umoci from the files of this machine's Debian packages
# (each binary plus the shared libraries it links), saved with skopeo as docker archives named by
# fully qualified references (cachelab.local/...; the local cluster's containerd resolves the
# name cachelab.local to its registry). The middleware and loadgen come from jib (`mvn
# jib:buildTar`; `make push` builds them straight to the registry) on a base made here: a jlinked
# Java runtime of the build JDK on glibc from Debian (`java-base`).
# A built tar is reused until its input (binary, JDK, sources) changes; delete $IMAGES_DIR to
# rebuild everything after changing a recipe here.
#
# Environment: TOOLS_DIR (coredns from scripts/k8s-tools.sh), IMAGES_DIR (default the machine's
# cache shared by every clone, ~/.cache/cachelab/images: scripts/cache-dir.sh), REGISTRY (for
# `push`: host[:port][/path]; plain http only for a registry of this machine: a loopback host
# or the local cluster's bridge address CLUSTER_NODE_IP, default 10.244.0.1), JAVA_HOME (jlink).
# The middleware and loadgen images are rebuilt when their sources are newer than the cached
# tar, so a fresh clone rebuilds them (about a minute) and reuses the rest.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
tools_bin="${TOOLS_DIR:-$(cachelab_cache_dir)/tools}/bin"
images_dir="${IMAGES_DIR:-$(cachelab_cache_dir)/images}"
registry="cachelab.local"
app_version="$(awk '/^appVersion:/ {gsub(/"/, "", $2); print $2}' "$root/charts/testbed/Chart.yaml")"

tool_version() {  # version of a tool built by scripts/k8s-tools.sh (its stamp's first word), without v
  local v; v="$(cut -d' ' -f1 "$tools_bin/.$1.version" 2>/dev/null)" || true
  v="${v#v}"; echo "${v:-missing}"
}

deb_version() {  # upstream version of an installed Debian package (no epoch, no Debian revision)
  local v
  v="$(dpkg-query -W -f='${Version}' "$1" 2>/dev/null)" || { echo "error: Debian package $1 is missing: run scripts/install-debs.sh" >&2; exit 1; }
  v="${v#*:}"; echo "${v%%[-+~]*}"
}

# name -> reference; the server/helper tags follow the Debian packages they are made from.
image_ref() {
  case "$1" in
    pause) echo "$registry/pause:3.10" ;;
    coredns) echo "$registry/coredns:1.11.3" ;;
    helper) echo "$registry/busybox:$(deb_version busybox-static)" ;;
    toxiproxy) echo "$registry/toxiproxy:$(toxiproxy_version)-sub-ms" ;;
    memcached) echo "$registry/memcached:$(deb_version memcached)" ;;
    redis) echo "$registry/redis:$(deb_version redis-server)" ;;
    redis-exporter) echo "$registry/redis_exporter:$(deb_version prometheus-redis-exporter)" ;;
    memcached-exporter) echo "$registry/memcached-exporter:$(deb_version collectd-core)" ;;
    prometheus) echo "$registry/prometheus:$(deb_version prometheus)" ;;
    prometheus-k8s) echo "$registry/prometheus:$(tool_version prometheus)" ;;
    node-exporter) echo "$registry/node-exporter:$(deb_version prometheus-node-exporter)" ;;
    prometheus-operator) echo "$registry/prometheus-operator:$(tool_version prometheus-operator)" ;;
    java-base) echo "$registry/java-base:$("$(java_home)/bin/java" -XshowSettings:properties -version 2>&1 | awk '/java.version =/ {print $3}')" ;;
    middleware) echo "ghcr.io/cachelab/middleware:$app_version" ;;
    loadgen) echo "ghcr.io/cachelab/loadgen:$app_version" ;;
    locust) echo "ghcr.io/cachelab/locust:$locust_version" ;;
    *) echo "error: unknown image $1 (one of: ${all_images[*]})" >&2; exit 2 ;;
  esac
}
# The memcached exporter is collectd (Debian's collectd-core) with its memcached and
# write_prometheus plugins: prom/memcached-exporter is no Debian package, and its Go module is not
# in the module proxy this project's machines use.
all_images=(pause coredns helper toxiproxy memcached redis redis-exporter memcached-exporter prometheus prometheus-k8s node-exporter prometheus-operator java-base middleware loadgen locust)
# locust from PyPI, the version the loadgen-locust component names (its benchmark patch's image tag).
locust_version="$(sed -n 's|^ *image: ghcr.io/cachelab/locust:||p' "$root/manifests/components/loadgen-locust/set-benchmark-locust.patch.yaml")"

# toxiproxy-server's version as scripts/toxiproxy.sh builds it (its TOXIPROXY_VERSION), without v.
toxiproxy_version() { sed -n 's/^TOXIPROXY_VERSION="${TOXIPROXY_VERSION:-v\(.*\)}"$/\1/p' "$root/scripts/toxiproxy.sh"; }

java_home() { JAVA_HOME="${JAVA_HOME:-}" "$root/scripts/find-jdk.sh"; }

need() { command -v "$1" >/dev/null 2>&1 || { echo "error: $1 is missing: run scripts/install-debs.sh" >&2; exit 1; }; }

add_libs() {  # add_libs ROOTFS FILE: copy the shared libraries FILE links (ldd) into ROOTFS
  local rootfs="$1" lib
  # ldd prints "name => /path (addr)" or "/path (addr)"; static binaries print nothing useful.
  for lib in $(ldd "$2" 2>/dev/null | grep -oE '/[^ ]+' || true); do
    [[ $lib == "$rootfs"/* || -e "$rootfs$lib" ]] && continue
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
}

add_file() {  # add_file ROOTFS PATH: copy PATH of this machine (dereferenced) and its libraries
  mkdir -p "$1$(dirname "$2")"
  cp -L "$2" "$1$2"
  add_libs "$1" "$2"
}

add_busybox() {  # /bin/busybox (Debian busybox-static) and a link per applet
  local rootfs="$1" applet
  mkdir -p "$rootfs/bin"; cp /bin/busybox "$rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do [[ -e "$rootfs/bin/$applet" ]] || ln -s busybox "$rootfs/bin/$applet"; done
}

base_rootfs() {  # minimal /etc and /tmp shared by every image
  local rootfs="$1"
  mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/data"
  chmod 1777 "$rootfs/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$rootfs/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$rootfs/etc/group"
  printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
}

pack() {  # pack NAME ROOTFS ENTRYPOINT-JSON-ARGS...: umoci layout -> docker archive $images_dir/NAME.tar
  local name="$1" rootfs="$2"; shift 2
  local ref work layout cfg=()
  ref="$(image_ref "$name")"
  work="$(mktemp -d "$images_dir/.build-$name.XXXXXX")"
  layout="$work/layout"
  umoci init --layout "$layout"
  umoci new --image "$layout:latest"
  umoci insert --image "$layout:latest" "$rootfs" /
  for arg in "$@"; do cfg+=(--config.entrypoint "$arg"); done
  umoci config --image "$layout:latest" --config.env "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" \
    --config.workingdir / --author cachelab "${cfg[@]}"
  skopeo copy --quiet "oci:$layout:latest" "docker-archive:$work/$name.tar:$ref"
  mv -f "$work/$name.tar" "$images_dir/$name.tar"   # a clone reading the cache never sees half a tar
  rm -rf "$work"
}

fresh() {  # fresh NAME INPUT...: the tar exists and is newer than every input
  local tar="$images_dir/$1.tar" input; shift
  [[ -f "$tar" ]] || return 1
  for input in "$@"; do [[ "$tar" -nt "$input" ]] || return 1; done
}

tool() {
  [[ -x "$tools_bin/$1" ]] || { echo "error: $tools_bin/$1 is missing: run make k8s-tools" >&2; exit 1; }
  echo "$tools_bin/$1"
}

build_one() {
  local name="$1" rootfs input
  rootfs="$(mktemp -d "$images_dir/.rootfs-$name.XXXXXX")"
  base_rootfs "$rootfs"
  case "$name" in
    pause)
      input="$root/scripts/images/pause/main.go"
      fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      ( cd "$root/scripts/images/pause" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$rootfs/pause" main.go )
      pack "$name" "$rootfs" /pause ;;
    coredns)
      input="$(tool coredns)"; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      cp "$input" "$rootfs/coredns"; pack "$name" "$rootfs" /coredns ;;
    helper)
      input=/bin/busybox; fresh "$name" "$input" /bin/nc /usr/bin/dash && { rm -rf "$rootfs"; return; }
      # busybox-static's nc has no -z (the middleware's wait-for-servers), and its shell runs its
      # own applets before PATH: Debian's dash as sh and OpenBSD's nc, busybox for the rest.
      add_busybox "$rootfs"; rm "$rootfs/bin/nc" "$rootfs/bin/sh"
      add_file "$rootfs" "$(readlink -f /bin/nc)"; ln -s "$(readlink -f /bin/nc)" "$rootfs/bin/nc"
      add_file "$rootfs" /usr/bin/dash; ln -s /usr/bin/dash "$rootfs/bin/sh"
      pack "$name" "$rootfs" /bin/sh ;;
    toxiproxy)
      # The links' RTT sidecar (chart `links.*`): toxiproxy-server with the sub-millisecond
      # latency patch (scripts/toxiproxy.sh, static), busybox for the sidecar's script (sh, wget,
      # grep), and rttprobe, which `cachelab run --target k8s` times the links with.
      input="$("$root/scripts/toxiproxy.sh")"
      fresh "$name" "$input" /bin/busybox "$root/scripts/images/rttprobe/main.go" && { rm -rf "$rootfs"; return; }
      add_busybox "$rootfs"; cp "$input" "$rootfs/bin/toxiproxy-server"
      ( cd "$root/scripts/images/rttprobe" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$rootfs/bin/rttprobe" main.go )
      pack "$name" "$rootfs" /bin/toxiproxy-server ;;
    memcached)
      input=/usr/bin/memcached; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      add_file "$rootfs" "$input"; pack "$name" "$rootfs" ;;
    redis)
      input=/usr/bin/redis-server; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      add_file "$rootfs" "$input"; add_file "$rootfs" /usr/bin/redis-cli; pack "$name" "$rootfs" ;;
    redis-exporter)
      input=/usr/bin/prometheus-redis-exporter; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      add_file "$rootfs" "$input"; pack "$name" "$rootfs" "$input" ;;
    memcached-exporter)
      # collectd, its two plugins and its types; the chart mounts /etc/collectd/collectd.conf
      # (charts/testbed/files/collectd-memcached.conf). libgcc_s: glibc loads it when collectd's
      # threads end (on SIGTERM), and aborts without it.
      input=/usr/sbin/collectd; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      add_file "$rootfs" "$input"; add_file "$rootfs" /usr/share/collectd/types.db
      add_file "$rootfs" /usr/lib/collectd/memcached.so; add_file "$rootfs" /usr/lib/collectd/write_prometheus.so
      add_file "$rootfs" /lib/x86_64-linux-gnu/libgcc_s.so.1
      pack "$name" "$rootfs" "$input" -f -C /etc/collectd/collectd.conf ;;
    prometheus)
      input=/usr/bin/prometheus; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      add_file "$rootfs" "$input"; mkdir -p "$rootfs/prometheus"; chmod 777 "$rootfs/prometheus"
      pack "$name" "$rootfs" "$input" ;;
    prometheus-k8s)
      # the Prometheus of the operator (manifests/monitoring), built by scripts/k8s-tools.sh from
      # its Go module (static): Debian's has no Kubernetes service discovery, which every
      # configuration the operator writes uses
      input="$(tool prometheus)"; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      mkdir -p "$rootfs/bin" "$rootfs/prometheus"; chmod 777 "$rootfs/prometheus"
      cp "$input" "$rootfs/bin/prometheus"; pack "$name" "$rootfs" /bin/prometheus ;;
    node-exporter)
      input=/usr/bin/prometheus-node-exporter; fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      add_file "$rootfs" "$input"; pack "$name" "$rootfs" "$input" ;;
    prometheus-operator)
      # The operator and the config reloader it runs next to each Prometheus (as
      # /bin/prometheus-config-reloader, the path the operator gives that container), both static.
      input="$(tool prometheus-operator)"
      fresh "$name" "$input" "$(tool prometheus-config-reloader)" && { rm -rf "$rootfs"; return; }
      mkdir -p "$rootfs/bin"
      cp "$input" "$rootfs/bin/operator"; cp "$(tool prometheus-config-reloader)" "$rootfs/bin/prometheus-config-reloader"
      pack "$name" "$rootfs" /bin/operator ;;
    java-base)
      local jdk; jdk="$(java_home)"; input="$jdk/release"
      fresh "$name" "$input" && { rm -rf "$rootfs"; return; }
      # Modules of the middleware and loadgen (jdeps over both jars and their libraries), plus
      # jdk.crypto.ec and jdk.zipfs for a usable runtime.
      "$jdk/bin/jlink" --add-modules java.base,java.logging,java.management,java.naming,java.net.http,jdk.httpserver,jdk.management,jdk.unsupported,jdk.crypto.ec,jdk.zipfs \
        --strip-debug --no-man-pages --no-header-files --output "$rootfs/opt/java"
      local f; while IFS= read -r f; do add_libs "$rootfs" "$f"; done < <(find "$rootfs/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' \))
      mkdir -p "$rootfs/usr/bin"; ln -s /opt/java/bin/java "$rootfs/usr/bin/java"
      # The experiment Jobs run manifests/base/scripts/*.sh in the loadgen image: a shell and
      # tools (busybox), and getent (glibc's, for the start barrier's name lookups).
      add_busybox "$rootfs"; add_file "$rootfs" /usr/bin/getent
      pack "$name" "$rootfs" ;;
    locust)
      # Debian's python3 (the binary, its standard library and the libraries they link) and a
      # venv made with it at /opt/locust holding locust from PyPI (pip, the registry's client);
      # busybox and getent for the Job scripts (run-locust.sh sources common.sh).
      local py=/usr/bin/python3.11
      [[ -x $py ]] || { echo "error: $py is missing: run scripts/install-debs.sh (python3, python3-venv)" >&2; exit 1; }
      input="$root/manifests/components/loadgen-locust/set-benchmark-locust.patch.yaml"
      fresh "$name" "$input" "$py" && { rm -rf "$rootfs"; return; }
      add_busybox "$rootfs"; add_file "$rootfs" /usr/bin/getent; add_file "$rootfs" "$py"
      ln -s python3.11 "$rootfs/usr/bin/python3"
      tar -C / --exclude='python3.11/test' --exclude='python3.11/idlelib' --exclude='python3.11/tkinter' \
        --exclude='python3.11/turtledemo' -cf - usr/lib/python3.11 | tar -C "$rootfs" -xf -
      "$py" -m venv "$rootfs/opt/locust" || { echo "error: python3 -m venv failed: run scripts/install-debs.sh (python3-venv)" >&2; exit 1; }
      "$rootfs/opt/locust/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check "locust==$locust_version" \
        || { echo "error: pip install locust==$locust_version failed (PyPI unreachable?)" >&2; exit 1; }
      # The venv's scripts name the build path in their #! lines; in the image it is /opt/locust.
      sed -i "1s|^#!$rootfs/opt/locust/|#!/opt/locust/|" "$rootfs"/opt/locust/bin/*
      sed -i "/^command = /d" "$rootfs/opt/locust/pyvenv.cfg"
      local f; while IFS= read -r f; do add_libs "$rootfs" "$f"; done < <(find "$rootfs/usr/lib/python3.11" "$rootfs/opt/locust" -name '*.so*' -type f)
      mkdir -p "$rootfs/usr/local/bin"; ln -s /opt/locust/bin/locust "$rootfs/usr/local/bin/locust"
      pack "$name" "$rootfs" /opt/locust/bin/locust ;;
    middleware | loadgen)
      build_jib "$name"; rm -rf "$rootfs"; return ;;
  esac
  rm -rf "$rootfs"
}

build_jib() {  # jib:buildTar of one module on the java-base tar; jib writes <module>/target/jib-image.tar
  local module="$1" ref
  build_one java-base
  ref="$(image_ref "$module")"
  local sources; sources="$(find "$root/$module/src" "$root/$module/pom.xml" "$root/pom.xml" -newer "$images_dir/$module.tar" -print -quit 2>/dev/null || echo missing)"
  [[ -f "$images_dir/$module.tar" && -z "$sources" && "$images_dir/$module.tar" -nt "$images_dir/java-base.tar" ]] && return
  local jdk; jdk="$(java_home)"
  ( cd "$root" && JAVA_HOME="$jdk" MAVEN_OPTS="$(JAVA_HOME="$jdk" "$root/scripts/maven-opts.sh")" \
      mvn -B -q -ntp -Dstyle.color=never -DskipTests -pl "$module" -am package jib:buildTar \
      -Djib.base.image="tar://$images_dir/java-base.tar" -Dimage.registry="${ref%/*}" -Dimage.tag="${ref##*:}" \
      -Djib.container.environment=PATH=/opt/java/bin:/usr/bin:/bin )
  cp "$root/$module/target/jib-image.tar" "$images_dir/.$module.tar.new"
  mv -f "$images_dir/.$module.tar.new" "$images_dir/$module.tar"
}

# tls_verify HOST[:PORT][/PATH]: skopeo's --dest-tls-verify for a registry: false (http allowed)
# only for one on this machine (loopback, or the local cluster's bridge address), true otherwise
tls_verify() {
  local host="${1%%/*}"
  host="${host%:*}"
  case "$host" in
    localhost | 127.* | "[::1]" | "${CLUSTER_NODE_IP:-10.244.0.1}") echo false ;;
    *) echo true ;;
  esac
}

push_one() {  # push_one NAME: $images_dir/NAME.tar to $REGISTRY/<last segment>:<tag>
  local name="$1" ref repository dest
  ref="$(image_ref "$name")"
  repository="${ref%:*}"
  dest="${REGISTRY%/}/${repository##*/}:${ref##*:}"
  skopeo copy --quiet --dest-tls-verify="$(tls_verify "$REGISTRY")" \
    "docker-archive:$images_dir/$name.tar" "docker://$dest" \
    || { echo "error: pushing $name to $dest failed (is the registry up and writable?)" >&2; exit 1; }
  echo "pushed $dest"
}

action="${1:-}"; shift || true
names=("$@"); [[ ${#names[@]} -gt 0 ]] || names=("${all_images[@]}")
case "$action" in
  list) for n in "${names[@]}"; do echo "$n $(image_ref "$n")"; done ;;
  build | push)
    need umoci; need skopeo
    [[ $action == build || -n ${REGISTRY:-} ]] || { echo "error: push needs REGISTRY=<host>[:port][/path]" >&2; exit 2; }
    mkdir -p "$images_dir"
    for n in "${names[@]}"; do image_ref "$n" >/dev/null; build_one "$n"; done
    if [[ $action == push ]]; then
      # a few at a time: each compresses its layers (one core) while another uploads
      pids=()
      for n in "${names[@]}"; do
        push_one "$n" &
        pids+=($!)
        if [[ ${#pids[@]} -ge 3 ]]; then wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); fi
      done
      for pid in "${pids[@]+"${pids[@]}"}"; do wait "$pid" || exit 1; done
    fi ;;
  *) echo "usage: $0 build|push|list [NAME ...]" >&2; exit 2 ;;
esac
