#!/usr/bin/env bash
# Builds OpenSSL at another release than the system's, from source, and a runner of the stack
# `openssl` linked statically against it (crates/runner-openssl-static):
#
#   scripts/build-openssl.sh 3.5            # also 3.6, 4.0: the newest patch release of that line
#   scripts/build-openssl.sh 1.1.1          # OpenSSL 1.1.1's last release, 1.1.1w: openssl@1.1.1
#   scripts/build-openssl.sh ~/src/openssl  # a maintainer's source tree (a git checkout):
#                                           # openssl@3.6.0-dev+1a2b3c4d5e, built as a release is
#   scripts/build-openssl.sh /opt/ossl      # an install prefix with static libraries (lib/libssl.a):
#                                           # openssl@VERSION, linked as it is
#
# The source is the `openssl-src` crate's (crates.io carries each OpenSSL line as its own
# semver line: 300.5.x holds 3.5.x, 300.6.x 3.6.x, 400.0.x 4.0.x, and 111.x 1.1.1's lettered
# releases), fetched by cargo into its registry. Before 3.0, OpenSSL named a line by three numbers
# and its releases by a letter after them (1.1.1 to 1.1.1w): 1.1.1 is that line's name here.
# Everything goes to target/versions/openssl@X.Y/, where tlsbench finds the stack openssl@X.Y
# (`tlsbench run --stack openssl --stack openssl@X.Y`, docs/versions.md):
#   tlsbench-runner-openssl-static   the runner (its `list` says the exact version and flags)
#   install/                         OpenSSL's static libraries and headers (make install_dev)
#   build/                           the source tree it was built in, and the build's logs
# The runners of all releases share one cargo target directory, target/versions/cargo, apart
# from target/release: only openssl-sys and the crates above it are rebuilt per release.
# A release that cannot be built here is reported in one line, `openssl X.Y: cannot be built
# here: REASON`, with the log to read, and the exit status is 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

line="${1:-}" source_tree="" prefix=""
if (($# != 1)); then
    line=""
elif [ -f "$line/Configure" ] && [ -f "$line/VERSION.dat" ]; then
    source_tree=$(cd "$line" && pwd)
elif [ -f "$line/include/openssl/opensslv.h" ]; then
    prefix=$(cd "$line" && pwd)
fi
if [ -z "$source_tree$prefix" ]; then
    if [ "$line" = 1.1.1 ]; then
        major=1 minor=1
    elif [[ "$line" =~ ^([0-9]+)\.([0-9]+)$ ]]; then
        major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
    else
        echo "usage: scripts/build-openssl.sh MAJOR.MINOR|1.1.1|SOURCE_TREE|PREFIX (e.g. 3.5, 3.6, 4.0," \
            "1.1.1, an OpenSSL checkout, or an install prefix)" >&2
        exit 2
    fi
    # 1.1.1 is the oldest line with TLS 1.3 and the API the adapter needs; 1.1 is written 1.1.1.
    if ((major < 3)) && [ "$line" != 1.1.1 ]; then
        echo "openssl $line: not supported: the openssl stack needs OpenSSL 1.1.1 (written 1.1.1)," \
            "or 3.0 or later" >&2
        exit 2
    fi
fi

versions="$root/target/versions"
mkdir -p "$versions"
# One build at a time: the runners share a cargo target directory, and a runner is copied out
# of it after its build.
exec 9>"$versions/.lock"
flock 9

fail() { # REASON [LOG]
    echo "openssl $line: cannot be built here: $1${2:+ (log: ${2#"$root/"})}" >&2
    exit 1
}

label="$line" source=""
if [ -n "$source_tree$prefix" ]; then
    # A maintainer's tree or prefix: labelled by its version, and a tree by its commit too
    # (semver's build metadata: 3.6.0-dev+1a2b3c4d5e, `.dirty` with uncommitted changes); its
    # library string then names the commit and the path (TLSBENCH_OPENSSL_SOURCE).
    if [ -n "$source_tree" ]; then
        src="$source_tree"
        # shellcheck disable=SC1090,SC1091
        version=$(. "$src/VERSION.dat" && echo "$MAJOR.$MINOR.$PATCH${PRE_RELEASE_TAG:+-$PRE_RELEASE_TAG}")
        commit=$(git -C "$src" rev-parse --short=10 HEAD 2>/dev/null) ||
            fail "$src is not a git checkout: a build from source is labelled by its commit"
        if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then commit="$commit.dirty"; fi
        label="$version+$commit" source="checkout $commit from $src"
    else
        version=$(sed -n 's/^# *define OPENSSL_VERSION_STR "\(.*\)"/\1/p' "$prefix/include/openssl/opensslv.h")
        [ -n "$version" ] || fail "$prefix/include/openssl/opensslv.h names no OPENSSL_VERSION_STR (OpenSSL 3 or later)"
        [ -f "$prefix/lib/libssl.a" ] || [ -f "$prefix/lib64/libssl.a" ] ||
            fail "$prefix has no static libssl.a in lib/ or lib64/ (configure it with no-shared)"
        label="$version" source="install $prefix"
    fi
    line="$label"
else
    # The openssl-src line of this OpenSSL line: 3.5 -> 300.5, 4.0 -> 400.0, 1.1.1 -> 111.
    if ((major < 3)); then crate_line=111; else crate_line="${major}00.${minor}"; fi
    fetch="$versions/fetch/openssl-src-$crate_line"
    mkdir -p "$fetch/src"
    touch "$fetch/src/lib.rs"
    # Its own [workspace]: the project's workspace above it must not claim it.
    {
        printf '[package]\nname = "fetch-openssl-src"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        printf '[dependencies]\nopenssl-src = "~%s"\n\n[workspace]\n' "$crate_line"
    } >"$fetch/Cargo.toml"
    echo "openssl $line: fetching the source (openssl-src ~$crate_line)" >&2
    fetch_log="$fetch/fetch.log"
    # The newest release of the line; offline from cargo's cache when the registry cannot be reached.
    rm -f "$fetch/Cargo.lock"
    if ! cargo fetch --manifest-path "$fetch/Cargo.toml" >"$fetch_log" 2>&1 &&
        ! cargo fetch --offline --manifest-path "$fetch/Cargo.toml" >>"$fetch_log" 2>&1; then
        reason=$(grep -m1 'error' "$fetch_log" || true)
        fail "no openssl-src ~$crate_line from the registry or cargo's cache ($reason)" "$fetch_log"
    fi
    crate_dir=$(cargo metadata --offline --format-version 1 --manifest-path "$fetch/Cargo.toml" 2>>"$fetch_log" |
        python3 -c 'import json, os, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "openssl-src":
        print(os.path.dirname(p["manifest_path"]), p["version"])') || fail "cargo metadata failed" "$fetch_log"
    read -r crate_dir crate_version <<<"$crate_dir"
    src="$crate_dir/openssl"
    if [ -f "$src/VERSION.dat" ]; then
        # shellcheck disable=SC1090,SC1091
        version=$(. "$src/VERSION.dat" && echo "$MAJOR.$MINOR.$PATCH${PRE_RELEASE_TAG:+-$PRE_RELEASE_TAG}")
    else
        # Before 3.0 the version is only in opensslv.h: "OpenSSL 1.1.1w  11 Sep 2023".
        version=$(sed -n 's/^# *define OPENSSL_VERSION_TEXT *"OpenSSL \([^ ]*\) .*/\1/p' \
            "$src/include/openssl/opensslv.h" 2>/dev/null || true)
        [ -n "$version" ] || fail "openssl-src $crate_version holds no OpenSSL source (no VERSION.dat or opensslv.h)"
    fi
fi
out="$versions/openssl@$label"
install="${prefix:-$out/install}"
mkdir -p "$out"
echo "openssl $line: OpenSSL $version from ${source:-openssl-src $crate_version}, into ${out#"$root/"}" >&2

# The configuration: OpenSSL's own defaults for linux-x86_64 (-O3, its assembly), static
# libraries only, with the 64-bit P-224/P-384/P-521 code that Debian's and Fedora's builds also
# enable. Its own OPENSSLDIR, so no configuration file of the system's is read.
# 1.1.1 has no modules (providers came in 3.0), and its Configure refuses no-module.
no_module=no-module
if [[ "$version" == 1.* ]]; then no_module=""; fi
configure=(linux-x86_64 "--prefix=$install" --libdir=lib "--openssldir=$install/ssl"
    no-shared ${no_module:+"$no_module"} no-tests enable-ec_nistp_64_gcc_128)
stamp="$install/.configured-with"
if [ -n "$prefix" ]; then
    echo "openssl $line: OpenSSL $version as installed in $prefix" >&2
elif [ -f "$install/lib/libssl.a" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$label ${configure[*]}" ] &&
    [[ "$label" != *.dirty ]]; then
    echo "openssl $line: OpenSSL $version is built (${install#"$root/"}); not rebuilt" >&2
else
    build="$out/build"
    rm -rf "$build" "$install"
    mkdir -p "$build"
    # A copy without its git history: the build must not write into a maintainer's tree.
    mkdir -p "$build/openssl"
    tar -C "$src" --exclude=.git -cf - . | tar -C "$build/openssl" -xf -
    # OpenSSL's own flags only: none of the environment's, nor a -march the runners don't share.
    unset CFLAGS CXXFLAGS CPPFLAGS LDFLAGS
    started=$SECONDS
    echo "openssl $line: configure: ${configure[*]}" >&2
    (cd "$build/openssl" && ./Configure "${configure[@]}") >"$build/configure.log" 2>&1 ||
        fail "Configure failed: $(tail -n1 "$build/configure.log")" "$build/configure.log"
    echo "openssl $line: make build_libs (a few minutes)" >&2
    (cd "$build/openssl" && make -j"$(nproc)" build_libs) >"$build/make.log" 2>&1 ||
        fail "make failed: $(grep -m1 -E 'error|Error' "$build/make.log" || tail -n1 "$build/make.log")" \
            "$build/make.log"
    (cd "$build/openssl" && make install_dev) >"$build/install.log" 2>&1 ||
        fail "make install_dev failed" "$build/install.log"
    echo "$label ${configure[*]}" >"$stamp"
    echo "openssl $line: OpenSSL $version built in $((SECONDS - started)) s" >&2
fi

echo "openssl $line: building its runner" >&2
started=$SECONDS
cargo_log="$out/cargo.log"
# openssl-sys's settings under the host's prefix (X86_64_UNKNOWN_LINUX_GNU_OPENSSL_DIR), which it
# reads before the plain names: aws-lc-sys, built in the same target directory for the harness,
# rebuilds AWS-LC (a minute or more) whenever a plain OPENSSL_DIR changes, and does not watch these.
host=$(rustc -vV | sed -n 's/^host: //p' | tr 'a-z-' 'A-Z_')
unset OPENSSL_DIR OPENSSL_STATIC OPENSSL_NO_VENDOR OPENSSL_LIB_DIR OPENSSL_INCLUDE_DIR OPENSSL_LIBS
unset "${host}_OPENSSL_LIB_DIR" "${host}_OPENSSL_INCLUDE_DIR" "${host}_OPENSSL_LIBS"
export CARGO_TARGET_DIR="$versions/cargo" "${host}_OPENSSL_DIR=$install" "${host}_OPENSSL_STATIC=1" \
    "${host}_OPENSSL_NO_VENDOR=1"
# jemalloc as the workspace's build compiled it, where it is the one Cargo.lock pins (a minute saved).
source "$root/scripts/built-jemalloc.sh"
use_built_jemalloc "$root"
# The runner lists and answers to its stack as openssl@LABEL (the family's release).
export TLSBENCH_OPENSSL_RELEASE="$label" TLSBENCH_OPENSSL_SOURCE="$source"
# OpenSSL 3's own install puts its libraries in lib64 on x86_64 unless told --libdir=lib.
if [ ! -f "$install/lib/libssl.a" ] && [ -f "$install/lib64/libssl.a" ]; then
    export "${host}_OPENSSL_LIB_DIR=$install/lib64" "${host}_OPENSSL_INCLUDE_DIR=$install/include"
fi
if ! cargo build --release --locked -p tlsbench-runner-openssl-static --features static >"$cargo_log" 2>&1; then
    reason=$(grep -m1 -E '^error' "$cargo_log" || tail -n1 "$cargo_log")
    fail "the runner does not build against OpenSSL $version: $reason" "$cargo_log"
fi
runner="$out/tlsbench-runner-openssl-static"
cp "$CARGO_TARGET_DIR/release/tlsbench-runner-openssl-static" "$runner"
echo "openssl $line: runner built in $((SECONDS - started)) s" >&2

# The runner must not load any shared libssl or libcrypto, and must report the release built.
if ldd "$runner" | grep -E 'lib(ssl|crypto)\.so' >&2; then
    fail "the runner links a shared libssl or libcrypto (ldd above)"
fi
library=$("$runner" list | python3 -c 'import json, sys
print(next(s["library"] for s in json.load(sys.stdin)["stacks"] if s["id"] == sys.argv[1]))' "openssl@$label") ||
    fail "the runner's list failed"
case "$library" in
    "OpenSSL $version "*) ;;
    *) fail "the runner reports \`$library\`, not OpenSSL $version" ;;
esac
echo "openssl $line: ${runner#"$root/"}: $library" >&2
