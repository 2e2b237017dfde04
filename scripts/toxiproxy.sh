#!/usr/bin/env bash
# Builds toxiproxy-server (github.com/Shopify/toxiproxy/v2 cmd/server), the latency emulator of
# local runs whose spec sets `network:` round-trip times, into ${TOOLS_DIR:-<cache>/tools}/bin
# (scripts/cache-dir.sh), static (CGO_ENABLED=0), stamped with its version and the patch's
# checksum: built once per machine (again when either changes); a rerun with the binary present
# returns at once, also without Go. Prints the binary's path on stdout, progress on stderr.
#
# Built inside a copy of its module with one patch to its `latency` toxic
# (toxiproxy-latency-sub-ms.patch), so that a link's half round trip (1.15 ms of ASL 2017's
# 2.3 ms, 0.25 ms of its 0.5 ms) is what the toxic waits: latency and jitter in fractional
# milliseconds instead of whole ones; waits up to 50 ms on a timerfd read through Go's netpoller,
# because Go's timers wake an idle process on whole milliseconds (a 0.25 ms wait took about
# 1.1 ms), and a timerfd, unlike a blocking nanosleep, holds no thread or GOMAXPROCS slot while
# it waits (so Go's default GOMAXPROCS, the CPUs, serves any number of connections); jitter
# uniform in +-jitter (upstream's whole-millisecond draw averages half a millisecond low).
# Proxies, API and the other toxics are upstream's.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cache-dir.sh
source "$root/scripts/cache-dir.sh"
bin="${TOOLS_DIR:-$(cachelab_cache_dir)/tools}/bin"
TOXIPROXY_VERSION="${TOXIPROXY_VERSION:-v2.5.0}"
patch_file="$root/scripts/toxiproxy-latency-sub-ms.patch"
stamp_text="$TOXIPROXY_VERSION+sub-ms patch $(sha256sum "$patch_file" | cut -c1-12)"
target="$bin/toxiproxy-server"

stamp_ok() { [[ -x "$target" && -f "$bin/.toxiproxy-server.version" && "$(cat "$bin/.toxiproxy-server.version")" == "$stamp_text" ]]; }

if stamp_ok; then echo "$target"; exit 0; fi
command -v go >/dev/null 2>&1 || {
  echo "error: Go is needed to build toxiproxy-server $TOXIPROXY_VERSION, the latency emulator (https://go.dev/doc/install)" >&2
  exit 1
}
mkdir -p "$bin"
exec 9>"$bin/.toxiproxy-server.lock"
flock 9  # one build at a time; a second caller waits, then finds the binary
if ! stamp_ok; then
  echo "building toxiproxy-server $TOXIPROXY_VERSION into $bin (once per machine, ~1 min)" >&2
  work="$(mktemp -d "$bin/.toxiproxy-build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  module="github.com/Shopify/toxiproxy/v2"
  src="$(GOFLAGS=-mod=mod go mod download -json "$module@$TOXIPROXY_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$src" ]] || { echo "error: could not download $module@$TOXIPROXY_VERSION" >&2; exit 1; }
  cp -r "$src" "$work/src"; chmod -R u+w "$work/src"
  "$root/scripts/install-debs.sh" patch >&2
  patch -s -p1 -d "$work/src" < "$patch_file" \
    || { echo "error: $patch_file does not apply to $module@$TOXIPROXY_VERSION" >&2; exit 1; }
  ( cd "$work/src"
    GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X $module.Version=$TOXIPROXY_VERSION+sub-ms" -o "$work/toxiproxy-server" ./cmd/server )
  mv "$work/toxiproxy-server" "$target"
  echo "$stamp_text" > "$bin/.toxiproxy-server.version"
fi
echo "$target"
