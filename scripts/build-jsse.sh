#!/usr/bin/env bash
# JSSE at another JDK's release: a runner of the stack `jsse@N` (N: the JDK's feature version)
# that runs the Java runner on the JDK at JAVA_HOME, beside the default one on the system's java:
#
#   scripts/build-jsse.sh /usr/lib/jvm/temurin-25-jdk-amd64     # then: tlsbench run --stack jsse@25
#
# It writes target/versions/jsse@N/tlsbench-runner-java, a script that starts target/release's
# Java runner (scripts/build.sh builds it) on that JDK with -Dtlsbench.jsseRelease, which makes
# the runner hold JSSE alone, listed as jsse@N (docs/versions.md). Nothing is compiled: the jar
# targets Java 17, which every later JDK runs.
set -euo pipefail
cd "$(dirname "$0")/.."
java_home="${1:-}"
if [ -z "$java_home" ] || [ ! -x "$java_home/bin/java" ]; then
    jdks=$(ls -d /usr/lib/jvm/*/ 2>/dev/null | tr '\n' ' ' || true)
    echo "usage: scripts/build-jsse.sh JAVA_HOME (a JDK 17 or later; this machine has: $jdks)" >&2
    exit 2
fi
if [ ! -x target/release/tlsbench-runner-java ] || [ ! -f target/release/tlsbench-runner-java.jar ]; then
    echo "jsse: the Java runner is not built: run scripts/build.sh first" >&2
    exit 1
fi
release=$("$java_home/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java.specification.version = //p')
if ! [[ "$release" =~ ^[0-9]+$ ]] || ((release < 17)); then
    echo "jsse: $java_home is Java ${release:-of unknown version}; the Java runner needs 17 or later" >&2
    exit 1
fi
dir="target/versions/jsse@$release"
mkdir -p "$dir"
cat >"$dir/tlsbench-runner-java" <<SCRIPT
#!/bin/sh
# JSSE of the JDK in $java_home, as the stack jsse@$release (written by scripts/build-jsse.sh).
JAVA_HOME='$java_home' TLSBENCH_JAVA_OPTS="-Dtlsbench.jsseRelease \${TLSBENCH_JAVA_OPTS:-}" \\
    exec '$PWD/target/release/tlsbench-runner-java' "\$@"
SCRIPT
chmod +x "$dir/tlsbench-runner-java"
library=$("$dir/tlsbench-runner-java" list | sed -n 's/.*"library":"\([^"]*\)".*/\1/p' || true)
echo "jsse@$release: $dir/tlsbench-runner-java ($library)"
