#!/usr/bin/env bash
# Builds tlsbench and every runner into target/release, where tlsbench looks for its runners:
# the Rust workspace (tlsbench and the Rust runners), the Go runner (crypto/tls) and the Java
# runner (JSSE and Netty's tcnative engine), and the runner of AWS-LC's libssl (crates/runner-aws-lc),
# built alone: the openssl crate's feature aws-lc would put the workspace's openssl stack on AWS-LC.
# Run scripts/setup.sh first on a fresh machine.
# --fips also builds the opt-in runner of the stacks on AWS-LC's FIPS module (crates/runner-fips:
# rustls-aws-lc-rs-fips and aws-lc-fips): a long C build (aws-lc-fips-sys, with Go and cmake), built
# alone because its aws-lc-rs feature would swap the AWS-LC of every other crate built with it.
# --wolfssl also builds the opt-in runner of wolfSSL (crates/runner-wolfssl): wolfSSL is GPL-only, so
# it is never built by default. wolfssl-sys builds its vendored wolfSSL with autotools (autoconf,
# automake and libtool, installed if missing) and bindgen (libclang).
#
# --build NAME builds the Rust runners with other compiler flags into target/builds/NAME, where
# `tlsbench run --build NAME` finds them (release, the default, is the above):
#   native  RUSTFLAGS=-C target-cpu=native; CFLAGS/CXXFLAGS=-march=native for the C libraries
#           built from source (BoringSSL, AWS-LC, s2n-tls, ring's C, jemalloc, mimalloc);
#   lto     the cargo profile `lto`: release with fat LTO and one codegen unit. Rust code only:
#           the C libraries are compiled by gcc, whose LTO objects rustc's LLVM LTO cannot read
#           (cross-language LTO needs clang and lld of rustc's LLVM version), so they are
#           compiled as in release.
# Each build has its own cargo target directory (target/builds/NAME/cargo): other flags would
# otherwise rebuild everything in target/release. The system's OpenSSL, GnuTLS and libtls are
# Debian's builds in every build; Go's and Java's runners are release's only.
#
# --cc clang compiles those C libraries with clang (installed if missing) instead of the
# system's cc (gcc): the C compiler axis, `tlsbench run --compiler clang`. Any build, release
# too, goes to target/builds/NAME-clang; the runners report the compiler they were built with.
set -euo pipefail
cd "$(dirname "$0")/.."
# Go's own installs live in /usr/local/go; a login shell may not have it on its PATH.
export PATH="$PATH:/usr/local/go/bin"

build=release fips=false wolfssl=false cc=gcc
while (($#)); do
    case "$1" in
        --build) build="${2:?--build needs a name: release, native or lto}"; shift 2 ;;
        --build=*) build="${1#--build=}"; shift ;;
        --cc) cc="${2:?--cc needs a compiler: gcc or clang}"; shift 2 ;;
        --cc=*) cc="${1#--cc=}"; shift ;;
        --fips) fips=true; shift ;;
        --wolfssl) wolfssl=true; shift ;;
        *) echo "unknown argument \`$1\`" \
               "(usage: scripts/build.sh [--build release|native|lto] [--cc gcc|clang] [--fips] [--wolfssl])" >&2
           exit 2 ;;
    esac
done
case "$cc" in
    gcc) ;;
    clang)
        if $fips; then echo "--fips builds release's FIPS runner with gcc; build it without --cc clang" >&2; exit 2; fi
        if $wolfssl; then
            echo "--wolfssl builds release's wolfSSL runner with gcc; build it without --cc clang" >&2; exit 2
        fi
        command -v clang >/dev/null || apt-get install -y -q clang >&2
        export CC=clang CXX=clang++
        ;;
    *) echo "unknown C compiler \`$cc\` (valid: gcc, clang)" >&2; exit 2 ;;
esac
if $fips && [ "$build" != release ]; then
    echo "--fips builds release's FIPS runner; build it without --build $build" >&2; exit 2
fi
if $wolfssl && [ "$build" != release ]; then
    echo "--wolfssl builds release's wolfSSL runner; build it without --build $build" >&2; exit 2
fi

# The runners of a build with clang, release's too, go to a directory of their own.
build_dir="$build"
if [ "$cc" = clang ]; then build_dir="$build-clang"; fi
case "$build_dir" in
    release) ;;
    native|lto|release-clang|native-clang|lto-clang)
        profile=release
        unset RUSTFLAGS CFLAGS CXXFLAGS
        if [ "$build" = native ]; then
            export RUSTFLAGS="-C target-cpu=native" CFLAGS="-march=native" CXXFLAGS="-march=native"
        elif [ "$build" = lto ]; then
            profile=lto
        fi
        # The runners say which build they are, and their C compiler (crates/build-info: export_build).
        export TLSBENCH_BUILD="$build" CARGO_TARGET_DIR="target/builds/$build_dir/cargo"
        cargo build --profile "$profile" --locked -p tlsbench-runner-openssl -p tlsbench-runner-boringssl
        cargo build --profile "$profile" --locked -p tlsbench-runner-aws-lc --features aws-lc
        for runner in tlsbench-runner-openssl tlsbench-runner-boringssl tlsbench-runner-aws-lc; do
            cp "$CARGO_TARGET_DIR/$profile/$runner" "target/builds/$build_dir/"
        done
        options=""
        [ "$build" = release ] || options=" --build $build"
        [ "$cc" = gcc ] || options="$options --compiler $cc"
        echo "build $build ($cc): runners in target/builds/$build_dir (tlsbench run$options)" >&2
        exit 0
        ;;
    *) echo "unknown build \`$build\` (valid: release, native, lto)" >&2; exit 2 ;;
esac

out=target/release

cargo build --release --workspace --locked
cargo build --release --locked -p tlsbench-runner-aws-lc --features aws-lc
if $fips; then
    echo "building the FIPS runner (AWS-LC's FIPS module: a long C build)" >&2
    cargo build --release --locked -p tlsbench-runner-fips --features fips
fi
if $wolfssl; then
    echo "building the wolfSSL runner (GPL, opt-in: wolfssl-sys's autotools build of wolfSSL)" >&2
    need=()
    for pkg in autoconf automake libtool; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
    if ((${#need[@]})); then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2
    fi
    cargo build --release --locked -p tlsbench-runner-wolfssl --features wolfssl
fi

echo "building the Go runner" >&2
(cd runners/go && go build -trimpath -o "../../$out/tlsbench-runner-go" .)

# Quiet and batch: Maven's download log would bury the build's own messages. Its tests run in
# scripts/test.sh. On stderr: scripts/quick-compare.sh's stdout is the results table. Maven takes
# 3 s to find nothing to do, on every quick comparison: a jar newer than its sources is built.
jar=runners/java/target/tlsbench-runner-java.jar
if [ ! -f "$jar" ] || [ -n "$(find runners/java/pom.xml runners/java/src/main -newer "$jar" -print -quit)" ]; then
    echo "building the Java runner" >&2
    mvn -q -B -Dstyle.color=never -f runners/java/pom.xml package -DskipTests >&2
fi
cp runners/java/target/tlsbench-runner-java.jar runners/java/tlsbench-runner-java "$out/"
