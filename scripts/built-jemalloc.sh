#!/usr/bin/env bash
# The jemalloc library that the workspace's release build compiled (target/release), if it is the
# jemalloc of the tikv-jemalloc-sys release that Cargo.lock pins. The release runners' builds
# (scripts/build-openssl.sh, scripts/build-crate.sh: target/versions/cargo) give it to
# tikv-jemalloc-sys as JEMALLOC_OVERRIDE rather than compile the same jemalloc again, a minute and
# more of each such build on 2 cores. A runner reports the jemalloc it linked (mallctl "version").
# Run, it prints the library, or nothing. Sourced, it defines use_built_jemalloc ROOT, which exports
# JEMALLOC_OVERRIDE as that library or unsets it where there is none: tikv-jemalloc-sys refuses an
# empty one, and it watches the variable, so a build that left it set and one that did not would
# each compile jemalloc again.

built_jemalloc() { # ROOT: the checkout
    local locked header lib
    # The crate's version carries jemalloc's: 0.7.1+5.3.1-0-g81034ce...
    locked=$(sed -n '/^name = "tikv-jemalloc-sys"$/{n;s/^version = "[^+"]*+\(.*\)"$/\1/p;}' "$1/Cargo.lock")
    [ -n "$locked" ] || return 0
    for header in "$1"/target/release/build/tikv-jemalloc-sys-*/out/include/jemalloc/jemalloc.h; do
        lib="${header%/include/jemalloc/jemalloc.h}/lib/libjemalloc_pic.a"
        if [ -f "$lib" ] && grep -qx "#define JEMALLOC_VERSION \"$locked\"" "$header"; then
            echo "$lib"
            return 0
        fi
    done
}

use_built_jemalloc() { # ROOT
    local lib
    lib=$(built_jemalloc "$1")
    if [ -n "$lib" ]; then export JEMALLOC_OVERRIDE="$lib"; else unset JEMALLOC_OVERRIDE; fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    built_jemalloc "$(cd "$(dirname "$0")/.." && pwd)"
fi
