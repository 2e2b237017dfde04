# Sourced by the scripts: cachelab_cache_dir prints the per-machine cache shared by every clone,
# ${CACHELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cachelab} (tools in tools/, images in images/).
# shellcheck shell=bash
cachelab_cache_dir() { echo "${CACHELAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cachelab}"; }
