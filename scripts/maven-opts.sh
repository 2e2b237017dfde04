#!/usr/bin/env bash
# MAVEN_OPTS for the JDK in $JAVA_HOME: on JDK 23+ Maven's own libraries (guava) call
# sun.misc.Unsafe, and the JDK prints four warnings about it on every mvn run; allowing it
# explicitly silences them. Older JDKs do not know the flag, so it is added only where it works.
set -euo pipefail
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
if "$java" --sun-misc-unsafe-memory-access=allow -version >/dev/null 2>&1; then
  echo "--sun-misc-unsafe-memory-access=allow"
fi
