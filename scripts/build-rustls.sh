#!/usr/bin/env bash
# Builds a runner of the rustls stacks (rustls-aws-lc-rs, rustls-ring) at another rustls than
# the workspace's Cargo.lock holds: a release from crates.io, or a maintainer's local checkout.
# `scripts/build-crate.sh rustls VERSION|PATH` (which see), kept for its callers:
#
#   scripts/build-rustls.sh 0.23.29          # the stacks rustls-aws-lc-rs@0.23.29, rustls-ring@0.23.29
#   scripts/build-rustls.sh ~/src/rustls     # a checkout: rustls-aws-lc-rs@0.23.47+1a2b3c4d5e
set -euo pipefail
if (($# != 1)); then
    echo "usage: scripts/build-rustls.sh VERSION|PATH (a rustls release such as 0.23.29, or a local checkout)" >&2
    exit 2
fi
exec "$(dirname "$0")/build-crate.sh" rustls "$1"
