#!/usr/bin/env bash
# Builds a runner of the rustls stacks (rustls-aws-lc-rs, rustls-ring) at another rustls than
# the workspace's Cargo.lock holds: a release from crates.io, or a maintainer's local checkout.
#
#   scripts/build-rustls.sh 0.23.20          # the stacks rustls-aws-lc-rs@0.23.20, rustls-ring@0.23.20
#   scripts/build-rustls.sh ~/src/rustls     # a checkout at commit 1a2b3c4d5e of version 0.23.47:
#                                            # rustls-aws-lc-rs@0.23.47+1a2b3c4d5e (.dirty if it has
#                                            # uncommitted changes), its library string names the path
#
# It copies the workspace's sources to target/versions/src/rustls (Cargo.toml, Cargo.lock,
# crates/), pins rustls there (`cargo update --precise`, or a [patch.crates-io] to the
# checkout), and builds crates/runner-rustls-release into target/versions/rustls@LABEL/, where
# tlsbench finds its stacks (docs/versions.md). The providers (aws-lc-rs, ring) stay at the
# lock's versions unless that rustls needs others; the runner's `list` says which. The workspace
# itself is never changed. Runners share the cargo target directory target/versions/cargo.
# It prints the label on stdout (the rest goes to stderr). Something that cannot be built here
# is reported in one line, `rustls WHAT: cannot be built here: REASON`, with the log to read,
# and the exit status is 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

what="${1:-}"
if [ -z "$what" ] || (($# != 1)); then
    echo "usage: scripts/build-rustls.sh VERSION|PATH (a rustls release such as 0.23.20, or a local checkout)" >&2
    exit 2
fi
fail() { # REASON [LOG]
    echo "rustls $what: cannot be built here: $1${2:+ (log: ${2#"$root/"})}" >&2
    exit 1
}

# What to build: a release, or a checkout's rustls crate (the checkout itself, or its rustls/:
# rustls's repository is a workspace) with its version and commit.
commit="" crate_dir=""
if [[ "$what" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
    label="$what"
elif [ -d "$what" ]; then
    checkout=$(cd "$what" && pwd)
    crate=$(cargo metadata --no-deps --offline --format-version 1 --manifest-path "$checkout/Cargo.toml" 2>/dev/null |
        python3 -c 'import json, os, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "rustls":
        print(os.path.dirname(p["manifest_path"]), p["version"])') ||
        fail "$checkout holds no Cargo workspace that cargo metadata reads"
    [ -n "$crate" ] || fail "$checkout holds no crate named rustls"
    read -r crate_dir version <<<"$crate"
    commit=$(git -C "$crate_dir" rev-parse --short=10 HEAD 2>/dev/null) ||
        fail "$checkout is not a git checkout: a build from source is labelled by its commit"
    if [ -n "$(git -C "$crate_dir" status --porcelain --untracked-files=no)" ]; then
        commit="$commit.dirty"
    fi
    label="$version+$commit"
else
    fail "neither a release (MAJOR.MINOR.PATCH) nor a directory"
fi

# The build's own files stay in target/versions; the runner goes where tlsbench looks for
# releases ($TLSBENCH_RELEASES_DIR, else target/versions).
versions="$root/target/versions"
mkdir -p "$versions"
# One build at a time: the runners share a cargo target directory and the workspace copy.
exec 9>"$versions/.lock"
flock 9

# The workspace's sources, copied with their times (cargo then rebuilds only what changed).
work="$versions/src/rustls"
rm -rf "$work"
mkdir -p "$work"
log="$versions/src/rustls.log"
: >"$log"
cp -a Cargo.toml Cargo.lock crates "$work/"
export CARGO_TARGET_DIR="$versions/cargo"

if [ -z "$crate_dir" ]; then
    echo "rustls $what: pinning it in a copy of the workspace" >&2
    if ! cargo update --manifest-path "$work/Cargo.toml" -p rustls --precise "$what" >>"$log" 2>&1; then
        fail "cargo cannot pin rustls $what: $(grep -m1 -E '^error' "$log" | cut -c1-160)" "$log"
    fi
else
    echo "rustls $what: rustls $version at $commit from $crate_dir" >&2
    printf '\n[patch.crates-io]\nrustls = { path = "%s" }\n' "$crate_dir" >>"$work/Cargo.toml"
    if ! cargo update --manifest-path "$work/Cargo.toml" -p rustls >>"$log" 2>&1; then
        fail "cargo cannot use the checkout's rustls: $(grep -m1 -E '^error' "$log" | cut -c1-160)" "$log"
    fi
    # Cargo leaves a patch it cannot use unused, and would build crates.io's rustls instead.
    locked=$(python3 -c 'import sys, tomllib
print(*[p["version"] for p in tomllib.load(open(sys.argv[1], "rb"))["package"]
        if p["name"] == "rustls" and "source" not in p])' "$work/Cargo.lock")
    if [ "$locked" != "$version" ]; then
        fail "the workspace asks for rustls $(sed -n 's/^rustls = { version = "\([^"]*\)".*/\1/p' Cargo.toml), \
which the checkout's $version is not (cargo left the patch unused)" "$log"
    fi
fi

out="${TLSBENCH_RELEASES_DIR:-$versions}/rustls@$label"
cargo_log="$out/cargo.log"
mkdir -p "$out"
echo "rustls $what: building its runner into ${out#"$root/"}" >&2
started=$SECONDS
export TLSBENCH_RUSTLS_RELEASE="$label" TLSBENCH_RUSTLS_COMMIT="$commit" TLSBENCH_RUSTLS_CHECKOUT="$crate_dir"
if ! cargo build --release --locked --manifest-path "$work/Cargo.toml" -p tlsbench-runner-rustls-release \
    --features release >"$cargo_log" 2>&1; then
    fail "the adapter does not build against it: $(grep -m1 -E '^error' "$cargo_log" | cut -c1-160)" "$cargo_log"
fi
runner="$out/tlsbench-runner-rustls"
cp "$CARGO_TARGET_DIR/release/tlsbench-runner-rustls" "$runner"
echo "rustls $what: runner built in $((SECONDS - started)) s" >&2

# The runner must report the rustls it was built against, under its label.
library=$("$runner" list | python3 -c 'import json, sys
print(next(s["library"] for s in json.load(sys.stdin)["stacks"] if s["id"] == sys.argv[1]))' \
    "rustls-aws-lc-rs@$label") || fail "the runner's list failed or names no rustls-aws-lc-rs@$label"
case "$library" in
    "rustls $label "*) ;;
    *) fail "the runner reports \`$library\`, not rustls $label" ;;
esac
echo "rustls $what: ${runner#"$root/"}: rustls-aws-lc-rs@$label, rustls-ring@$label: $library" >&2
# The label alone on stdout, for scripts (scripts/gate.sh).
echo "$label"
