#!/usr/bin/env bash
# Builds tlsbench and every runner into target/release, where tlsbench looks for its runners:
# the Rust workspace (tlsbench and the Rust runners), the Go runner (crypto/tls) and the Java
# runner (JSSE and Netty's tcnative engine). Run scripts/setup.sh first on a fresh machine.
# --fips also builds the opt-in runner of rustls on AWS-LC's FIPS module (crates/runner-fips): a
# long C build (aws-lc-fips-sys, with Go and cmake), built alone because its aws-lc-rs feature
# would swap the AWS-LC of every other crate built with it.
set -euo pipefail
fips=false
for arg in "$@"; do
    case "$arg" in
        --fips) fips=true ;;
        *) echo "scripts/build.sh: unknown option $arg (valid: --fips)" >&2; exit 2 ;;
    esac
done
cd "$(dirname "$0")/.."
# Go's own installs live in /usr/local/go; a login shell may not have it on its PATH.
export PATH="$PATH:/usr/local/go/bin"
out=target/release

cargo build --release --workspace --locked
if $fips; then
    echo "building the FIPS runner (AWS-LC's FIPS module: a long C build)" >&2
    cargo build --release --locked -p tlsbench-runner-fips --features fips
fi

echo "building the Go runner" >&2
(cd runners/go && go build -trimpath -o "../../$out/tlsbench-runner-go" .)

echo "building the Java runner" >&2
# Quiet and batch: Maven's download log would bury the build's own messages. Its tests run in
# scripts/test.sh. On stderr: scripts/quick-compare.sh's stdout is the results table.
mvn -q -B -Dstyle.color=never -f runners/java/pom.xml package -DskipTests >&2
cp runners/java/target/tlsbench-runner-java.jar runners/java/tlsbench-runner-java "$out/"
