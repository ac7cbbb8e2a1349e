#!/usr/bin/env bash
# The tests on a fresh machine: install what is missing, build everything (release, as measured;
# the Go and Java runners too, since the conformance tests drive every runner), run every
# crate's tests and the Go and Java runners' own, and check that the benchmarks still compile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
export PATH="$PATH:/usr/local/go/bin"
(cd runners/go && go vet ./... && go test ./...)
mvn -q -B -Dstyle.color=never -f runners/java/pom.xml test
cargo test --release --workspace --locked
cargo build --release --workspace --benches --locked
