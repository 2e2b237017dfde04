#!/usr/bin/env bash
# MAVEN_OPTS for the JDK in $JAVA_HOME, so that mvn's output in a log or a pipe is plain text:
# - jansi.noreset: Maven (3.8, Debian's jansi) writes ESC[0m when it starts and stops, even with
#   -B and -Dstyle.color=never, so every quiet (-q) mvn call leaves `ESC[0mESC[0m` in front of the
#   next line of a log (`make test-unit > log`). Without the reset nothing else is coloured.
# - on JDK 23+ Maven's own libraries (guava) call sun.misc.Unsafe, and the JDK prints four
#   warnings about it on every mvn run; allowing it explicitly silences them. Older JDKs do not
#   know the flag, so it is added only where it works.
set -euo pipefail
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
opts="-Djansi.noreset=true"
if "$java" --sun-misc-unsafe-memory-access=allow -version >/dev/null 2>&1; then
  opts="$opts --sun-misc-unsafe-memory-access=allow"
fi
echo "$opts"
