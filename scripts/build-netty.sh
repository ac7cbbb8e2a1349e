#!/usr/bin/env bash
# netty-tcnative at another release: the Java runner's netty-tcnative stack built against another
# netty-tcnative-boringssl-static (and so another BoringSSL) and, if given, another Netty, both
# fetched by Maven, listed as the stack `netty-tcnative@LABEL`, LABEL the tcnative release:
#
#   scripts/build-netty.sh 2.0.84            # tcnative 2.0.84.Final, Netty as in the pom (4.1.128.Final)
#   scripts/build-netty.sh 2.0.84 4.1.137    # tcnative 2.0.84.Final with Netty 4.1.137.Final
#                                            # then: tlsbench run --stack netty-tcnative --stack netty-tcnative@2.0.84
#
# It builds runners/java (a copy of its pom and sources, in target/versions/src/netty-tcnative@LABEL)
# with the pom's tcnative.version and netty.version overridden, and installs the jar, the Java
# runner's launcher and a runner script into target/versions/netty-tcnative@LABEL/. The runner
# script starts the launcher with -Dtlsbench.nettyRelease=LABEL, which makes the runner hold
# netty-tcnative alone, listed as netty-tcnative@LABEL (docs/versions.md). Its library string is
# read at runtime from what loaded, as the default runner's is; this script checks that it names
# the versions asked for. Building the same tcnative with another Netty replaces the runner.
# A release Maven cannot fetch or the runner does not compile against is refused in one line:
# `netty-tcnative X: cannot be built here: REASON`, exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: scripts/build-netty.sh TCNATIVE_VERSION [NETTY_VERSION]   (e.g. 2.0.84 4.1.137)" >&2
    exit 2
fi
label="${1%.Final}"
refuse() {
    echo "netty-tcnative $label: cannot be built here: $*" >&2
    exit 1
}
if ! [[ "$label" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    refuse "not a netty-tcnative release (such as 2.0.84 or 2.0.84.Final)"
fi
tcnative="$label.Final"
pom_netty=$(sed -n 's:.*<netty.version>\(.*\)</netty.version>.*:\1:p' runners/java/pom.xml)
netty="${2:-$pom_netty}"
netty="${netty%.Final}"
if ! [[ "$netty" =~ ^4\.[0-9]+\.[0-9]+$ ]]; then
    refuse "Netty ${2:-} is not a Netty 4 release (such as 4.1.137 or 4.2.18.Final)"
fi
netty="$netty.Final"
command -v mvn >/dev/null || refuse "no mvn (Maven 3.8 builds the Java runner: runners/java/README.md)"

id="netty-tcnative@$label"
work="target/versions/src/$id"
dir="target/versions/$id"
rm -rf "$work"
mkdir -p "$work"
cp -r runners/java/pom.xml runners/java/src "$work/"
log="$work/build.log"
echo "$id: building the Java runner with netty-tcnative-boringssl-static $tcnative and Netty $netty ($log)"
# The runner's tests are not built: they are the default runner's (mvn -f runners/java/pom.xml test).
if ! mvn -B -Dstyle.color=never -f "$work/pom.xml" -Dmaven.test.skip=true \
        -Dtcnative.version="$tcnative" -Dnetty.version="$netty" package >"$log" 2>&1; then
    missing=$(grep -m1 -o 'Could not find artifact [^ ]*' "$log" || true)
    if [ -n "$missing" ]; then
        refuse "Maven cannot fetch it: $missing"
    fi
    # javac's first error, with the symbol it names on the line after (cannot find symbol).
    error=$(awk '/^\[ERROR\] .*\.java:\[[0-9]+,[0-9]+\]/ && !found { found = 1; line = $0; next }
                 found == 1 { if (sub(/^ *symbol: */, "")) line = line ": " $0; found = 2 }
                 END { print line }' "$log" | sed "s:^\[ERROR\] $PWD/$work/::")
    if [ -n "$error" ]; then
        refuse "the runner does not compile against it (Netty $netty): $error"
    fi
    error=$(grep -m1 '^\[ERROR\]' "$log" | sed 's/^\[ERROR\] //; s/ -> \[Help 1\]$//' | cut -c1-300 || true)
    refuse "Maven failed: ${error:-see $log}"
fi

rm -rf "$dir"
mkdir -p "$dir"
cp "$work/target/tlsbench-runner-java.jar" "$dir/tlsbench-runner-java.jar"
# The launcher starts the jar beside it; its name has no tlsbench-runner- prefix, so tlsbench does not
# take it for a runner of its own.
cp runners/java/tlsbench-runner-java "$dir/java-launcher"
cat >"$dir/tlsbench-runner-java" <<SCRIPT
#!/bin/sh
# netty-tcnative-boringssl-static $tcnative with Netty $netty, as the stack $id
# (written by scripts/build-netty.sh).
TLSBENCH_JAVA_OPTS="-Dtlsbench.nettyRelease=$label \${TLSBENCH_JAVA_OPTS:-}" \\
    exec "\$(dirname "\$0")/java-launcher" "\$@"
SCRIPT
chmod +x "$dir/tlsbench-runner-java" "$dir/java-launcher"
library=$("$dir/tlsbench-runner-java" list 2>/dev/null | sed -n 's/.*"id":"[^"]*","library":"\([^"]*\)".*/\1/p')
if [[ "$library" != "netty-tcnative-boringssl-static $tcnative ("*", netty $netty)" ]]; then
    rm -rf "$dir"
    refuse "the runner built reports ${library:-no netty-tcnative stack} (asked for tcnative $tcnative, Netty $netty)"
fi
echo "$id: $dir/tlsbench-runner-java ($library)"
