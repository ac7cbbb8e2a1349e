#!/usr/bin/env bash
# Prints the jemalloc library that the workspace's release build compiled (target/release), if it is
# the jemalloc of the tikv-jemalloc-sys release that Cargo.lock pins; else nothing. The release
# runners' builds (scripts/build-openssl.sh, scripts/build-crate.sh: target/versions/cargo) give it
# to tikv-jemalloc-sys as JEMALLOC_OVERRIDE rather than compile the same jemalloc again, a minute and
# more of each such build on 2 cores. A runner reports the jemalloc it linked (mallctl "version").
set -euo pipefail
cd "$(dirname "$0")/.."
# The crate's version carries jemalloc's: 0.7.1+5.3.1-0-g81034ce...
locked=$(sed -n '/^name = "tikv-jemalloc-sys"$/{n;s/^version = "[^+"]*+\(.*\)"$/\1/p;}' Cargo.lock)
[ -n "$locked" ] || exit 0
for header in target/release/build/tikv-jemalloc-sys-*/out/include/jemalloc/jemalloc.h; do
    lib="${header%/include/jemalloc/jemalloc.h}/lib/libjemalloc_pic.a"
    if [ -f "$lib" ] && grep -qx "#define JEMALLOC_VERSION \"$locked\"" "$header"; then
        echo "$PWD/$lib"
        exit 0
    fi
done
