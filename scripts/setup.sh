#!/usr/bin/env bash
# Installs what building tlsbench needs and a fresh machine may lack (Debian/Ubuntu).
# Rust itself must already be installed (rustup).
set -euo pipefail

command -v cargo >/dev/null || { echo "tlsbench needs Rust and cargo: install them with rustup first" >&2; exit 1; }
# The lint gates of scripts/test.sh: rustup's default profile has both; a minimal one may not.
for tool in fmt:rustfmt clippy:clippy; do
    cargo "${tool%%:*}" --version >/dev/null 2>&1 || rustup component add "${tool#*:}"
done

need=()
# pkg-config and libssl-dev: the `openssl` stack links the system's libssl.
# cmake, a C compiler and perl: aws-lc-sys builds AWS-LC from source (rustls-aws-lc-rs, s2n-tls);
# s2n-tls-sys compiles s2n-tls's C code with the same compiler.
# libgnutls28-dev: the `gnutls` stack links the system's GnuTLS.
# libtls-dev: the `libtls` stack links LibreTLS's libtls (on the system's OpenSSL).
# libsqlite3-dev: the results database (rusqlite) links the system's SQLite.
# libclang-dev: boring-sys generates BoringSSL's Rust bindings with bindgen (the `boringssl` stack);
# cmake and the C/C++ compiler above build BoringSSL itself (Go is needed only for its tests and FIPS).
# chromium: the tests open `tlsbench report --html` in a real headless browser.
# valgrind: the instructions measure and `tlsbench profile` run each side under callgrind, and the
# harness's client requests (valgrind-requests) are built against valgrind's headers; the tests also
# hold the heap measure against DHAT's count of the same process. setarch (util-linux) turns ASLR off.
# libc6-dbg: glibc's debug symbols, which valgrind recommends; the sync measure finds glibc's static
# futex helpers (__futex_abstimed_wait_common, ...) by their names.
# strace: a test holds the network mode's syscall counts against strace's record of the same processes.
# nginx and openssl: peers that no one here wrote (tests/it/peers.rs, scripts/peers.sh) are Debian's
# nginx, which tlsbench load connects to, and `openssl s_time`, which connects to tlsbench serve.
# On Debian 12 the package `nginx` holds the server itself (nginx-light and the others only add
# modules). The tests start it with a config of their own and never use Debian's service.
for pkg in pkg-config libssl-dev libgnutls28-dev libtls-dev libsqlite3-dev cmake gcc g++ make perl libclang-dev \
    chromium valgrind libc6-dbg strace nginx openssl; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# The Java runner (runners/java): a JDK 17 or later and Maven, which fetches its pinned
# dependencies (Netty, netty-tcnative-boringssl-static) from Maven Central.
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need+=(maven)
# The Go runner (runners/go) needs a recent Go (crypto/tls reports the negotiated group from
# Go 1.25 on), more recent than Debian 12's golang-go: Go must be installed already, as it is on
# the machines this project runs on (in /usr/local/go).
export PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null; then
    echo "tlsbench's Go runner needs Go 1.25 or later: install it from go.dev first" >&2
    exit 1
fi
if ((${#need[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "installing: ${need[*]}" >&2
    # Debian's nginx starts its service (on port 80) when installed, unless policy-rc.d says no;
    # container images have one, a fresh machine may not.
    policy=/usr/sbin/policy-rc.d
    made_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod +x "$policy" && made_policy=1
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
    [ -z "$made_policy" ] || $sudo rm -f "$policy"
fi
