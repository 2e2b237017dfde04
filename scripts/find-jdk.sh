#!/usr/bin/env bash
# Prints the JAVA_HOME of a JDK >= 21, or explains how to get one and exits 1.
# Order: $JAVA_HOME, the JDK that `javac` on PATH belongs to, then /usr/lib/jvm/*.
set -euo pipefail

min_version=21

version_of() {  # $1 = a JAVA_HOME; prints the feature version or nothing
  local javac="$1/bin/javac"
  [[ -x "$javac" ]] || return 0
  "$javac" -version 2>&1 | sed -nE 's/^javac ([0-9]+).*/\1/p'
}

candidates=()
[[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
if command -v javac >/dev/null 2>&1; then
  candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
fi
for d in /usr/lib/jvm/*; do [[ -d "$d" ]] && candidates+=("$d"); done

for home in "${candidates[@]}"; do
  v=$(version_of "$home")
  if [[ -n "$v" && "$v" -ge "$min_version" ]]; then
    echo "$home"
    exit 0
  fi
done

cat >&2 <<MSG
error: no JDK >= $min_version found (looked at \$JAVA_HOME, javac on PATH, /usr/lib/jvm/*).
  Install one, for example:  sudo apt-get install openjdk-21-jdk-headless   (Debian trixie / Ubuntu 24.04)
  or a Temurin JDK 21+ under /usr/lib/jvm, or set JAVA_HOME to one.
MSG
exit 1
