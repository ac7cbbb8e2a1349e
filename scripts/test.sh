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

# Each stage's time, printed at the end (on failure too), so that where the time goes shows.
stages=() stage_started=$SECONDS test_started=$SECONDS
stage() { # NAME: ends the stage before it and starts NAME
    local now=$SECONDS
    if ((${#stages[@]})); then stages[-1]="${stages[-1]}|$((now - stage_started))"; fi
    stages+=("$1") stage_started=$now
}
print_stages() {
    local status=$? entry
    if ((${#stages[@]})); then stages[-1]="${stages[-1]}|$((SECONDS - stage_started))"; fi
    echo "scripts/test.sh: time by stage (exit status $status)" >&2
    for entry in "${stages[@]}"; do
        printf '  %-44s %4d s\n' "${entry%|*}" "${entry##*|}" >&2
    done
    printf '  %-44s %4d s\n' "total" "$((SECONDS - test_started))" >&2
}
trap print_stages EXIT

stage "setup (packages)"
# The build fills about 6 GiB of target/ and 2 GiB of cargo's, Go's and Maven's caches. A disk
# that cannot hold them fails the build in the middle with "No space left on device" (a CI run
# did, 4 minutes in); say so first, with the figures, rather than leave the reader to guess.
read -r free_kib mount < <(df -Pk . | awk 'NR == 2 { print $4, $6 }')
used_kib=$(du -sk target 2>/dev/null | cut -f1 || true)
if ((free_kib + ${used_kib:-0} < 9 * 1024 * 1024)); then
    echo "scripts/test.sh: warning: $((free_kib / 1024)) MiB free on $mount and $((${used_kib:-0} / 1024)) MiB" \
        "in target/; the build and tests need about 9 GiB" >&2
fi
scripts/setup.sh
stage "build (workspace, Go and Java runners; wolfSSL's opt-in runner)"
# wolfSSL is GPL-only, so a user's plain build leaves it out; the tests build it, as a user who
# asks for it would (scripts/build.sh --wolfssl), and require it (crates/tlsbench/tests/it/wolfssl.rs).
scripts/build.sh --wolfssl
export TLSBENCH_REQUIRE_WOLFSSL=1
export PATH="$PATH:/usr/local/go/bin"
# One release runner of each kind beside today's, for the versions tests, ignored in a plain
# `cargo test` and run below (crates/tlsbench/tests/it/versions*.rs): OpenSSL 3.5 built from source (the longest, about
# 7 minutes), OpenSSL 1.1.1 (the line before 3, with no providers: versions_openssl111.rs),
# rustls 0.23.29, and Go 1.27 (its toolchain from the Go module proxy). The other OpenSSL
# releases are built on demand (docs/versions.md).
stage "build OpenSSL 3.5 and its runner"
scripts/build-openssl.sh 3.5
stage "build OpenSSL 1.1.1 and its runner"
scripts/build-openssl.sh 1.1.1
stage "build rustls 0.23.29's runner"
scripts/build-rustls.sh 0.23.29 >/dev/null
stage "build Go 1.27's runner"
scripts/build-go.sh 1.27
# The lint gates: formatting and clippy's warnings for Rust, gofmt and go vet for Go; javac's
# warnings are errors in the Java runner's own build (runners/java/pom.xml).
stage "lint (rustfmt, clippy, gofmt, line length)"
cargo fmt --all --check
cargo clippy --release --workspace --all-targets --locked -- -D warnings
# The aws-lc crates with their feature, built alone as scripts/build.sh builds them.
aws_lc=(-p tlsbench-stack-aws-lc -p tlsbench-runner-aws-lc
    --features tlsbench-stack-aws-lc/aws-lc,tlsbench-runner-aws-lc/aws-lc)
cargo clippy --release --all-targets --locked "${aws_lc[@]}" -- -D warnings
wolfssl=(-p tlsbench-stack-wolfssl -p tlsbench-runner-wolfssl
    --features tlsbench-stack-wolfssl/wolfssl,tlsbench-runner-wolfssl/wolfssl)
cargo clippy --release --all-targets --locked "${wolfssl[@]}" -- -D warnings
unformatted=$(gofmt -l runners/go)
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted" >&2; exit 1; fi
# Lines of at most 120 characters (rustfmt.toml's max_width) in every tracked Rust, Go, Java and
# shell file: rustfmt leaves long string literals and comments as they are, and gofmt, javac and
# bash do not wrap at all. The files are git's, so no build output (target/) is read; counted in
# characters, not bytes (perl reads the files as UTF-8).
long=$(git ls-files -z '*.rs' '*.go' '*.java' '*.sh' |
    xargs -0 -r perl -CSD -lne 'print "$ARGV:$.: ", length, " characters" if length > 120; close ARGV if eof')
if [ -n "$long" ]; then printf 'lines over 120 characters:\n%s\n' "$long" >&2; exit 1; fi
stage "Go runner: go vet, go test"
(cd runners/go && go vet ./... && go test ./...)
stage "Java runner: mvn test"
mvn -q -B -Dstyle.color=never -f runners/java/pom.xml test
stage "cargo test: build the tests"
# The tests reuse the build (docs/tests.md): a test dependency that gave a crate other features would compile the
# workspace again (about 170 s) and put test-featured runners in target/release. So a workspace crate compiled here
# that is not a test fails the stage (the tests' own dependencies are compiled here, for the first time).
rebuilt=$(cargo test --release --workspace --locked --no-run --message-format=json-render-diagnostics |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and "path+file:" in m["package_id"] and not m["profile"]["test"] \
            and not m["fresh"]:
        print(" ", m["target"]["name"], "(" + m["target"]["kind"][0] + ")")')
if [ -n "$rebuilt" ]; then
    printf 'cargo test compiled again what scripts/build.sh had built (features differ?):\n%s\n' "$rebuilt" >&2
    exit 1
fi
cargo test --release --locked "${aws_lc[@]}" --no-run
cargo test --release --locked "${wolfssl[@]}" --no-run
# The e2e suite (tests/it) keeps both cores busy on its own; the other test binaries about one each, so they run two
# at a time (scripts/test-binaries.sh), 200 s against 320 s one after the other.
stage "cargo test: run the e2e suite"
cargo test --release --workspace --locked --test it
stage "cargo test: the other unit and integration tests, two at a time"
scripts/test-binaries.sh --skip-test it -- --release --workspace --locked -- --release --locked "${aws_lc[@]}" \
    -- --release --locked "${wolfssl[@]}"
# The versions tests of the releases built above, which a plain `cargo test` lists as ignored;
# not those of the releases built on demand only (crates, netty-tcnative).
stage "cargo test: the release runners' tests"
cargo test --release --workspace --locked --test it -- --ignored versions \
    --skip versions::built_on_demand:: --skip versions_netty::
# The adapter's own tests against OpenSSL 1.1.1, whose code paths differ from 3's (docs/stacks.md#openssl-111):
# in the release runners' target directory, linked as its runner is, with openssl-sys's settings under the
# host's prefix as scripts/build-openssl.sh gives them (a plain OPENSSL_DIR would rebuild AWS-LC there).
stage "cargo test: the openssl adapter at OpenSSL 1.1.1"
(
    flock 9
    host=$(rustc -vV | sed -n 's/^host: //p' | tr 'a-z-' 'A-Z_')
    export CARGO_TARGET_DIR=target/versions/cargo "${host}_OPENSSL_DIR=$PWD/target/versions/openssl@1.1.1/install" \
        "${host}_OPENSSL_STATIC=1" "${host}_OPENSSL_NO_VENDOR=1"
    # And jemalloc as those builds link it (scripts/built-jemalloc.sh): another would compile it again.
    source scripts/built-jemalloc.sh
    use_built_jemalloc "$PWD"
    cargo test --release --locked -p tlsbench-stack-openssl
) 9>target/versions/.lock
stage "benches compile"
cargo build --release --workspace --benches --locked
