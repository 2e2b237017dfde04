#!/usr/bin/env bash
# `make push REGISTRY=<host>[:port][/path]`: the project's images into a registry a cluster pulls
# from (AKS: an ACR, `az acr login` first; the local cluster: its own registry).
#
# - middleware and loadgen: built by jib straight to the registry (jib:build), each tagged with the
#   chart's appVersion (what the chart and the overlays name) and the short commit of this clone
#   (which sources an image holds), on the base scripts/images.sh makes (`java-base`: a jlinked
#   runtime of the build JDK with busybox and getent, which the Jobs' scripts use);
# - the other images the project builds for the chart and the overlays (toxiproxy, the links' RTT
#   sidecar; the memcached exporter, collectd; locust), from $IMAGES_DIR when `make images` has built them, with skopeo.
#
# Every image lands at $REGISTRY/<name>:<tag>, the names `global.imageRegistry=$REGISTRY` (chart)
# and the image-registry component (overlays) give. Plain http is allowed only for a registry of
# this machine: a loopback host, or the local cluster's bridge address (CLUSTER_NODE_IP, default
# 10.244.0.1); any other registry must speak TLS.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
images_dir="${IMAGES_DIR:-$(cachelab_cache_dir)/images}"
registry="${REGISTRY:-}"
registry="${registry%/}"
[[ -n $registry ]] || { echo "usage: make push REGISTRY=<host>[:port][/path] (e.g. myacr.azurecr.io/cachelab)" >&2; exit 2; }
[[ $registry =~ ^[a-z0-9]([a-z0-9.:-]*[a-z0-9])?(/[a-z0-9._-]+)*$ ]] \
  || { echo "error: REGISTRY=$registry is not <host>[:port][/path] (lower case)" >&2; exit 2; }

host="${registry%%/*}"
host="${host%:*}"
insecure=false
case "$host" in
  localhost | 127.* | "[::1]" | "${CLUSTER_NODE_IP:-10.244.0.1}") insecure=true ;;
esac

version="$(awk '/^appVersion:/ {gsub(/"/, "", $2); print $2}' "$root/charts/testbed/Chart.yaml")"
commit="$(git -C "$root" rev-parse --short HEAD)"
jdk="$(JAVA_HOME="${JAVA_HOME:-}" "$root/scripts/find-jdk.sh")"

JAVA_HOME="$jdk" "$root/scripts/images.sh" build java-base >&2
echo "push: middleware and loadgen with jib to $registry (tags $version, $commit)" >&2
( cd "$root" && JAVA_HOME="$jdk" MAVEN_OPTS="$(JAVA_HOME="$jdk" "$root/scripts/maven-opts.sh")" \
    mvn -B -q -ntp -Dstyle.color=never -DskipTests -pl middleware,loadgen -am package jib:build \
    -Djib.base.image="tar://$images_dir/java-base.tar" -Dimage.registry="$registry" -Dimage.tag="$version" \
    -Djib.to.tags="$commit" -Djib.allowInsecureRegistries="$insecure" \
    -Djib.container.environment=PATH=/opt/java/bin:/usr/bin:/bin ) \
  || { echo "error: jib could not push to $registry (logged in? az acr login --name <acr>)" >&2; exit 1; }
echo "pushed $registry/middleware:$version $registry/middleware:$commit $registry/loadgen:$version $registry/loadgen:$commit"

others=()
for name in toxiproxy memcached-exporter locust; do
  if [[ -f "$images_dir/$name.tar" ]]; then others+=("$name"); else echo "push: no $name image in $images_dir (make images builds it); not pushed" >&2; fi
done
[[ ${#others[@]} -eq 0 ]] || REGISTRY="$registry" "$root/scripts/images.sh" push "${others[@]}"
