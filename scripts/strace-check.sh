#!/usr/bin/env bash
# The strace cross-check of the network mode's syscall counts: rustls-aws-lc-rs, OpenSSL, tcp and
# tcp-buffered each serve themselves over loopback, server and load generator each under strace,
# and a table shows per connection tlsbench's read, write, poll, other socket and total syscalls
# next to strace's count of the same threads, with what strace saw outside the sockets. This is
# the test crates/tlsbench/tests/it/net_strace.rs, which also fails if they differ; about 10 s after
# the build.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v strace >/dev/null || { echo "strace is missing: scripts/setup.sh installs it" >&2; exit 1; }
# The test starts the runners: build them all, not only what the test itself links.
cargo build --release --workspace --locked
exec cargo test --release --locked -q -p tlsbench --test it -- net_strace:: --nocapture
