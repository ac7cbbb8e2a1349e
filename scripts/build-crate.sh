#!/usr/bin/env bash
# Builds a runner of a Rust-crate stack at another release of its crate than the workspace's
# Cargo.lock holds: rustls (its stacks rustls-aws-lc-rs and rustls-ring), s2n-tls (the crates
# s2n-tls and s2n-tls-sys, which vendors s2n-tls's C source), boring (the crates boring and
# boring-sys, which vendors a BoringSSL commit and builds it with cmake: a long build), or aws-lc
# (aws-lc-sys, which vendors an AWS-LC release and builds its libssl with cmake, as long; with the
# openssl-sys and openssl releases that build on it).
#
#   scripts/build-crate.sh rustls 0.23.29    # rustls-aws-lc-rs@0.23.29, rustls-ring@0.23.29
#   scripts/build-crate.sh rustls ~/src/rustls   # a checkout at commit 1a2b3c4d5e of version 0.23.47:
#                                            # rustls-aws-lc-rs@0.23.47+1a2b3c4d5e (.dirty if it has
#                                            # uncommitted changes), its library string names the path
#   scripts/build-crate.sh s2n-tls 0.3.31    # s2n-tls@0.3.31, s2n-tls-recvbuf@0.3.31 (the crate's version)
#   scripts/build-crate.sh boring 4.22.0     # boringssl@4.22.0 (boring's and boring-sys's version)
#   scripts/build-crate.sh aws-lc 0.39.1     # aws-lc@0.39.1: AWS-LC's libssl from that aws-lc-sys (its version)
#
# It copies the workspace's sources to target/versions/src/CRATE (Cargo.toml, Cargo.lock,
# crates/), pins the crate there, and builds the crate's release runner into
# target/versions/STACK@LABEL/, where tlsbench finds its stacks (docs/versions.md). rustls is
# pinned with `cargo update --precise` (or a [patch.crates-io] to a checkout); s2n-tls and boring,
# whose adapters ask for today's major release, by rewriting the adapter's requirement in the
# copy to `=VERSION` (s2n-tls-sys follows s2n-tls, which asks for its own version exactly;
# boring-sys is pinned beside boring). Everything else stays at the lock's versions unless the
# release needs others. The workspace itself is never changed. Runners share the cargo target
# directory target/versions/cargo. It prints the label on stdout (the rest goes to stderr).
# Something that cannot be built here is reported in one line, `CRATE WHAT: cannot be built
# here: REASON`, with the log to read, and the exit status is 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

krate="${1:-}" what="${2:-}"
usage="usage: scripts/build-crate.sh rustls|s2n-tls|boring|aws-lc VERSION|PATH"
usage+=" (a release such as 0.23.29; a local checkout for rustls)"
if [ -z "$what" ] || (($# != 2)); then
    echo "$usage" >&2
    exit 2
fi
fail() { # REASON [LOG]
    echo "$krate $what: cannot be built here: $1${2:+ (log: ${2#"$root/"})}" >&2
    exit 1
}

# Each crate: the crates pinned, the adapter manifest whose requirement is rewritten (none:
# rustls's requirement admits every 0.23), the runner's package, feature and binary, the
# variable that carries the label, the stack the runner is checked by and the directory's stack.
case "$krate" in
    rustls)
        pins=(rustls) manifest="" package=tlsbench-runner-rustls-release feature=release
        bin=tlsbench-runner-rustls label_var=TLSBENCH_RUSTLS_RELEASE check=rustls-aws-lc-rs dir_id=rustls
        ;;
    s2n-tls)
        pins=(s2n-tls) manifest=crates/stack-s2n/Cargo.toml package=tlsbench-runner-release feature=s2n-tls
        bin=tlsbench-runner-s2n-tls label_var=TLSBENCH_CRATE_RELEASE check=s2n-tls dir_id=s2n-tls
        ;;
    boring)
        pins=(boring boring-sys) manifest=crates/stack-boringssl/Cargo.toml package=tlsbench-runner-release
        feature=boring bin=tlsbench-runner-boringssl label_var=TLSBENCH_CRATE_RELEASE check=boringssl dir_id=boringssl
        ;;
    aws-lc)
        pins=(aws-lc-sys) manifest=crates/stack-aws-lc/Cargo.toml package=tlsbench-runner-release feature=aws-lc
        bin=tlsbench-runner-aws-lc label_var=TLSBENCH_CRATE_RELEASE check=aws-lc dir_id=aws-lc
        ;;
    *)
        echo "$usage" >&2
        exit 2
        ;;
esac

# What to build: a release, or a checkout's crate (the checkout itself, or its rustls/: rustls's
# repository is a workspace) with its version and commit.
commit="" crate_dir=""
if [[ "$what" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
    label="$what"
elif [ "$krate" != rustls ] && [ -d "$what" ]; then
    # s2n-tls's repository holds s2n-tls-sys without its generated bindings (its
    # generate.sh makes them); boring's vendors BoringSSL as a git submodule.
    fail "a local checkout is built for rustls only; $krate is built from its releases on crates.io"
elif [ -d "$what" ]; then
    checkout=$(cd "$what" && pwd)
    crate=$(cargo metadata --no-deps --offline --format-version 1 --manifest-path "$checkout/Cargo.toml" 2>/dev/null |
        python3 -c 'import json, os, sys
text = sys.stdin.read()
if not text:
    sys.exit(1)  # cargo metadata printed nothing: no workspace there
for p in json.loads(text)["packages"]:
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
# One build at a time: the runners share a cargo target directory and the workspace copies.
exec 9>"$versions/.lock"
flock 9

# The workspace's sources, copied with their times (cargo then rebuilds only what changed).
work="$versions/src/$krate"
rm -rf "$work"
mkdir -p "$work"
log="$versions/src/$krate.log"
: >"$log"
cp -a Cargo.toml Cargo.lock crates "$work/"
export CARGO_TARGET_DIR="$versions/cargo"
# jemalloc as the workspace's build compiled it, where it is the one Cargo.lock pins (a minute saved).
source "$root/scripts/built-jemalloc.sh"
use_built_jemalloc "$root"

if [ -n "$crate_dir" ]; then
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
elif [ -z "$manifest" ]; then
    echo "$krate $what: pinning it in a copy of the workspace" >&2
    if ! cargo update --manifest-path "$work/Cargo.toml" -p "$krate" --precise "$what" >>"$log" 2>&1; then
        fail "cargo cannot pin $krate $what: $(grep -m1 -E '^error' "$log" | cut -c1-160)" "$log"
    fi
elif [ "$krate" = aws-lc ]; then
    # aws-lc-sys comes with the openssl-sys release that asks for its minor release (openssl-sys
    # 0.9.118 asks for 0.41, 0.9.113 to 0.9.116 for 0.39, 0.9.112 for 0.38, 0.9.107, the first with
    # AWS-LC, to 0.9.111 for 0.27). So the adapter asks for aws-lc-sys =VERSION, and openssl-sys
    # (with the newest openssl that accepts it) steps back from the lock's release until it is
    # one built on that aws-lc-sys: the adapter's build script checks that they are the same.
    echo "$krate $what: pinning aws-lc-sys to it, and the openssl-sys that builds on it, in a copy of the workspace" >&2
    sed -i "s/^aws-lc-sys = { version = \"[^\"]*\"/aws-lc-sys = { version = \"=$what\"/" "$work/$manifest"
    grep -q "^aws-lc-sys = { version = \"=$what\"" "$work/$manifest" || fail "$manifest has no aws-lc-sys requirement"
    locked=$(sed -n '/^name = "openssl-sys"$/{n;s/^version = "\(.*\)"$/\1/p}' Cargo.lock)
    found=""
    for ((patch = ${locked##*.}; patch >= 107; patch--)); do
        sed -i "s/^openssl-sys = .*/openssl-sys = \"=0.9.$patch\"/" "$work/Cargo.toml"
        cargo update --manifest-path "$work/Cargo.toml" -p openssl-sys -p openssl >>"$log" 2>&1 || continue
        # The aws-lc-sys that openssl-sys names in the lock: by name alone when it is the only one.
        links=$(python3 -c 'import sys, tomllib
lock = tomllib.load(open(sys.argv[1], "rb"))["package"]
versions = [p["version"] for p in lock if p["name"] == "aws-lc-sys"]
deps = next(p.get("dependencies", []) for p in lock if p["name"] == "openssl-sys")
named = [d.split(" ")[1] if " " in d else versions[0] for d in deps if d.split(" ")[0] == "aws-lc-sys"]
print(*named)' "$work/Cargo.lock")
        if [ "$links" = "$what" ]; then
            found=0.9.$patch
            break
        fi
    done
    [ -n "$found" ] || fail "no openssl-sys from 0.9.107 to $locked builds on aws-lc-sys $what" "$log"
    echo "$krate $what: openssl-sys $found builds on it" >&2
else
    echo "$krate $what: pinning ${pins[*]} to it in a copy of the workspace" >&2
    for pin in "${pins[@]}"; do
        grep -q "^$pin = \"" "$work/$manifest" || fail "$manifest has no \`$pin = \"...\"\` line to pin"
        sed -i "s/^$pin = \"[^\"]*\"/$pin = \"=$what\"/" "$work/$manifest"
    done
    if ! cargo update --manifest-path "$work/Cargo.toml" "${pins[@]/#/-p}" >>"$log" 2>&1; then
        fail "cargo cannot pin $krate $what: $(grep -m1 -E '^error' "$log" | cut -c1-160)" "$log"
    fi
fi

# Cargo re-resolves the dependency edges of every package when it updates one, and the index
# may now lead an unchanged package elsewhere than the workspace's lock does (bindgen 0.73.2 to
# syn 3, with which it does not compile): each package the pin left at its version keeps the
# workspace's edges, where they still resolve, unless cargo then refuses the lock.
cp "$work/Cargo.lock" "$work/Cargo.lock.cargo"
python3 - Cargo.lock "$work/Cargo.lock" <<'PY' >>"$log" 2>&1
import sys, tomllib
orig_path, new_path = sys.argv[1], sys.argv[2]
orig = tomllib.load(open(orig_path, "rb"))["package"]
text = open(new_path).read()
new = tomllib.load(open(new_path, "rb"))["package"]
key = lambda p: (p["name"], p["version"], p.get("source"))
orig_by = {key(p): p for p in orig}
names = {}
for p in new:
    names.setdefault(p["name"], set()).add(p["version"])
def resolvable(dep):
    parts = dep.split(" ")
    if len(parts) == 1:
        return len(names.get(parts[0], ())) == 1
    return parts[1] in names.get(parts[0], ())
blocks = text.split("\n[[package]]\n")
out = [blocks[0]]
kept = 0
for block, p in zip(blocks[1:], new):
    o = orig_by.get(key(p))
    if (o is not None and o.get("dependencies") != p.get("dependencies")
            and all(map(resolvable, o.get("dependencies", [])))):
        head = block.split("dependencies = [")[0].rstrip("\n")
        deps = o.get("dependencies", [])
        if deps:
            block = head + "\ndependencies = [\n" + "".join(f' "{d}",\n' for d in deps) + "]\n"
        else:
            block = head + "\n"
        kept += 1
    out.append(block)
open(new_path, "w").write("\n[[package]]\n".join(out))
print("kept the workspace's dependency edges of", kept, "packages")
PY
if ! cargo metadata --locked --offline --format-version 1 --manifest-path "$work/Cargo.toml" >/dev/null 2>>"$log"; then
    mv "$work/Cargo.lock.cargo" "$work/Cargo.lock"
fi

out="${TLSBENCH_RELEASES_DIR:-$versions}/$dir_id@$label"
cargo_log="$out/cargo.log"
mkdir -p "$out"
echo "$krate $what: building its runner into ${out#"$root/"}" >&2
started=$SECONDS
export "$label_var=$label"
export TLSBENCH_RUSTLS_COMMIT="$commit" TLSBENCH_RUSTLS_CHECKOUT="$crate_dir"
if ! cargo build --release --locked --manifest-path "$work/Cargo.toml" -p "$package" \
    --features "$feature" >"$cargo_log" 2>&1; then
    # The first crate that failed: the adapter's (tlsbench-*), or a dependency's.
    failed=$(sed -n 's/^error: could not compile `\([^`]*\)`.*/\1/p' "$cargo_log" | head -1)
    case "$failed" in
        tlsbench-* | "") who="the adapter does not build against it" ;;
        *) who="$failed does not build with it" ;;
    esac
    fail "$who: $(grep -m1 -E '^error' "$cargo_log" | cut -c1-160)" "$cargo_log"
fi
runner="$out/$bin"
cp "$CARGO_TARGET_DIR/release/$bin" "$runner"
echo "$krate $what: runner built in $((SECONDS - started)) s" >&2

# The runner must report the release it was built against, under its label.
library=$("$runner" list | python3 -c 'import json, sys
print(next(s["library"] for s in json.load(sys.stdin)["stacks"] if s["id"] == sys.argv[1]))' \
    "$check@$label") || fail "the runner's list failed or names no $check@$label"
case "$krate:$library" in
    "rustls:rustls $label "*) ;;
    "s2n-tls:s2n-tls crate $label "*) ;;
    "boring:BoringSSL (API version "*", boring-sys $label)") ;;
    "aws-lc:AWS-LC "*" (aws-lc-sys $label)") ;;
    *) fail "the runner reports \`$library\`, not $krate $label" ;;
esac
stacks=$("$runner" list | python3 -c 'import json, sys
print(", ".join(s["id"] for s in json.load(sys.stdin)["stacks"]))')
echo "$krate $what: ${runner#"$root/"}: $stacks: $library" >&2
# The label alone on stdout, for scripts (scripts/gate.sh).
echo "$label"
