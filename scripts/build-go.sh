#!/usr/bin/env bash
# Go's crypto/tls at another release than the machine's Go: the Go runner (runners/go) built by
# another Go, as the stack `go@RELEASE`, beside the default `go`:
#
#   scripts/build-go.sh 1.27              # the newest 1.27.x the Go module proxy lists: go@1.27
#   scripts/build-go.sh 1.27.3            # that patch release: go@1.27.3
#   scripts/build-go.sh /path/to/goroot   # a local Go tree (built with src/make.bash) or installation
#
# A release is built with Go's own toolchain mechanism: `GOTOOLCHAIN=go1.27.4 go build` makes the
# machine's go fetch that toolchain from the Go module proxy (golang.org/toolchain, into the module
# cache, once) and build with it. A local tree is built with its own bin/go (GOTOOLCHAIN=local),
# and labelled by its version and commit: `1.26.8` from an installation's VERSION file
# (go1.26.8), `1.26.8+0123456789` from a git checkout (semver build metadata: the commit, 10 hex
# digits), `1.27-devel+abcdef1234` from a development tree (`go version` says
# `devel go1.27-abcdef1234 ...`: the release it leads to, `-devel`, and its commit).
#
# The runner goes to target/versions/go@RELEASE/tlsbench-runner-go, with -X main.release=RELEASE
# (and main.goroot for a local tree): it lists and answers to `go@RELEASE` alone, and its library
# is `Go crypto/tls go1.27.4` (runtime.Version(); a local tree's label and path in its stead:
# `Go crypto/tls go1.26.8 (/usr/local/go)`). tlsbench finds it there (docs/versions.md). The
# go.mod's go line (1.25) is kept, so both runners are built with Go 1.25's GODEBUG defaults.
# A release that cannot be built here is reported in one line, `go RELEASE: cannot be built
# here: REASON`, and the exit status is 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$PATH:/usr/local/go/bin"

arg="${1:-}"
if (($# != 1)) || ! [[ "$arg" =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ || "$arg" == */* ]]; then
    echo "usage: scripts/build-go.sh MAJOR.MINOR[.PATCH] (e.g. 1.27) | GOROOT (a local Go tree or installation)" >&2
    exit 2
fi

fail() { # REASON [LOG]
    echo "go $arg: cannot be built here: $1${2:+ (log: ${2#"$root/"})}" >&2
    exit 1
}

# The runner needs Go 1.25 (runners/go/go.mod): ConnectionState.CurveID.
check_version() { # VERSION (1.27, 1.27.3, 1.27-devel, 1.27rc1)
    if [[ "$1" =~ ^1\.([0-9]+) ]] && ((BASH_REMATCH[1] < 25)); then
        fail "the Go runner needs Go 1.25 or later (runners/go/go.mod), not Go $1"
    fi
}

if [[ "$arg" != */* ]]; then
    # A release: the newest patch release of the line that the Go module proxy lists (or the
    # module cache holds, offline), or the patch release given.
    check_version "$arg"
    command -v go >/dev/null || fail "no go command (the machine's Go is in /usr/local/go/bin)"
    platform="$(GOTOOLCHAIN=local go env GOHOSTOS)-$(GOTOOLCHAIN=local go env GOHOSTARCH)"
    release=$arg
    if [[ "$arg" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
        version=$arg
    else
        pattern="^v0\.0\.1-go${arg//./\\.}\.[0-9]+\.$platform$"
        listed=$(cd / && GOTOOLCHAIN=local GOFLAGS= go list -m -versions golang.org/toolchain 2>&1) || {
            # Offline: the toolchains the module cache holds.
            cache="$(GOTOOLCHAIN=local go env GOMODCACHE)/cache/download/golang.org/toolchain/@v"
            listed=$(find "$cache" -name '*.zip' -printf '%f\n' 2>/dev/null | sed 's/\.zip$//' || true)
        }
        version=$(tr ' ' '\n' <<<"$listed" | grep -E "$pattern" | sed -E "s/^v0\.0\.1-go//; s/\.$platform$//" |
            sort -V | tail -n1 || true)
        [ -n "$version" ] ||
            fail "the Go module proxy ($(GOTOOLCHAIN=local go env GOPROXY)) lists no go$arg.x toolchain for $platform"
    fi
    out="$root/target/versions/go@$release"
    mkdir -p "$out"
    log="$out/build.log"
    echo "go $arg: building the Go runner with go$version (GOTOOLCHAIN), into ${out#"$root/"}" >&2
    (cd runners/go && GOTOOLCHAIN="go$version" go build -trimpath -ldflags "-X main.release=$release" \
        -o "$out/tlsbench-runner-go" .) >"$log" 2>&1 ||
        fail "go$version does not build the runner: $(grep -v '^go: downloading' "$log" | head -n1)" "$log"
    want="Go crypto/tls go$version"
else
    # A local tree: its own go, and its version and commit as the label.
    goroot=$(cd "$arg" 2>/dev/null && pwd -P) || fail "no directory $arg"
    [ -x "$goroot/bin/go" ] || fail "$goroot/bin/go is missing (a Go source tree is built with src/make.bash)"
    export GOTOOLCHAIN=local GOROOT="$goroot"
    goversion=$("$goroot/bin/go" env GOVERSION 2>&1) || fail "$goroot/bin/go env GOVERSION failed: $goversion"
    commit=""
    if [[ "$(head -n1 "$goroot/VERSION" 2>/dev/null)" =~ ^go([0-9][0-9A-Za-z.]*)$ ]]; then
        version=${BASH_REMATCH[1]}
    elif [[ "$goversion" =~ ^go([0-9][0-9A-Za-z.]*)$ ]]; then
        version=${BASH_REMATCH[1]}
    elif [[ "$goversion" =~ ^devel\ go([0-9]+\.[0-9]+)-([0-9a-f]+) ]]; then
        version="${BASH_REMATCH[1]}-devel" commit=${BASH_REMATCH[2]}
    else
        fail "cannot tell the release of $goroot from its VERSION file or \`go env GOVERSION\` ($goversion)"
    fi
    if [ "$(git -C "$goroot" rev-parse --show-toplevel 2>/dev/null)" = "$goroot" ]; then
        commit=$(git -C "$goroot" rev-parse --short=10 HEAD)
    fi
    release="$version${commit:++$commit}"
    [[ "$release" =~ ^[0-9][A-Za-z0-9.+-]*$ ]] || fail "its label \`$release\` is no release (digits first)"
    check_version "$version"
    out="$root/target/versions/go@$release"
    mkdir -p "$out"
    log="$out/build.log"
    echo "go $arg: building the Go runner with $goroot/bin/go ($goversion), as go@$release" >&2
    (cd runners/go && "$goroot/bin/go" build -trimpath \
        -ldflags "-X main.release=$release -X 'main.goroot=$goroot'" -o "$out/tlsbench-runner-go" .) >"$log" 2>&1 ||
        fail "$goroot/bin/go does not build the runner: $(head -n1 "$log")" "$log"
    want="Go crypto/tls go$release ($goroot"
fi

# The runner must list go@RELEASE alone, with the library it was built for.
runner="$out/tlsbench-runner-go"
library=$("$runner" list | python3 -c 'import json, sys
stacks = json.load(sys.stdin)["stacks"]
assert [s["id"] for s in stacks] == [sys.argv[1]], [s["id"] for s in stacks]
print(stacks[0]["library"])' "go@$release") || fail "the runner's list does not name go@$release alone"
case "$library" in
    "$want" | "$want)" | "$want, "*) ;;
    *) fail "the runner reports \`$library\`, not $want" ;;
esac
echo "go@$release: ${runner#"$root/"}: $library" >&2
