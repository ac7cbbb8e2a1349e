#!/usr/bin/env bash
# The tests on a fresh machine: install what is missing, build everything (release, as measured;
# the Go and Java runners too, since the conformance tests drive every runner), run every
# crate's tests and the Go and Java runners' own, and check that the benchmarks still compile.
# The native and lto builds (scripts/build.sh --build NAME) are not built here: each rebuilds
# BoringSSL and AWS-LC from source, too long for CI on 2 cores. CI proves the build axis on the
# orchestrator's side (crates/tlsbench/tests/it/builds.rs: columns, checks, errors, compare, with
# release's runner standing in for another build) and that a runner reports the build it was
# compiled as; that the flags build is scripts/build.sh --build NAME, run by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
export PATH="$PATH:/usr/local/go/bin"
# The lint gates: formatting and clippy's warnings for Rust, gofmt and go vet for Go; javac's
# warnings are errors in the Java runner's own build (runners/java/pom.xml).
cargo fmt --all --check
cargo clippy --release --workspace --all-targets --locked -- -D warnings
unformatted=$(gofmt -l runners/go)
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi
(cd runners/go && go vet ./... && go test ./...)
mvn -q -B -Dstyle.color=never -f runners/java/pom.xml test
cargo test --release --workspace --locked
cargo build --release --workspace --benches --locked
