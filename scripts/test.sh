#!/usr/bin/env bash
# The tests on a fresh machine: install what is missing, build everything (release, as measured),
# run every crate's tests, and check that the benchmarks still compile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release --workspace --locked
cargo build --release --workspace --benches --locked
