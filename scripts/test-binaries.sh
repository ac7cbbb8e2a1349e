#!/usr/bin/env bash
# Runs the test binaries that `cargo test` would run for each set of cargo arguments given (separated by `--`, each
# built before with --no-run), two binaries at a time instead of one after the other: most of them keep about one
# core busy, so two at a time fill this 2-core machine (docs/tests.md). Each runs in its package's directory, as
# cargo runs it; its output is printed whole when it ends. Each set's doc tests run as its binaries are listed.
# Fails when any failed, naming them. `--skip-test NAME` leaves out the integration test target NAME (run on its own
# before, with both cores).
#   scripts/test-binaries.sh [--skip-test NAME] -- --release --workspace --locked -- --release -p CRATE ...
set -euo pipefail
cd "$(dirname "$0")/.."
skip=
if [ "${1:-}" = --skip-test ]; then skip=$2; shift 2; fi
[ "${1:-}" = -- ] && shift
lanes=${TEST_LANES:-2} # TEST_LANES=1: one after the other, as cargo test runs them
list=$(mktemp -d)
trap 'rm -rf "$list"' EXIT
# Each set's binaries, one line each: DIRECTORY<TAB>EXECUTABLE<TAB>NAME, in cargo's order.
sets=()
current=()
for arg in "$@" --; do
    if [ "$arg" = -- ]; then sets+=("${current[*]}"); current=(); else current+=("$arg"); fi
done
for set in "${sets[@]}"; do
    [ -n "$set" ] || continue
    # shellcheck disable=SC2086 # the set's words are cargo's arguments
    cargo test $set --no-run --message-format=json-render-diagnostics |
        python3 -c 'import json, os, sys
skip = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
        continue
    kind = m["target"]["kind"][0]
    if kind == "test" and m["target"]["name"] == skip:
        continue
    print(os.path.dirname(m["manifest_path"]), m["executable"], m["target"]["name"] + " (" + kind + ")", sep="\t")
' "$skip" >>"$list/binaries"
    # The set's doc tests, which are no binaries of their own: rustdoc builds and runs them.
    # shellcheck disable=SC2086
    cargo test $set --doc -q
done
run_one() { # INDEX DIRECTORY EXECUTABLE NAME
    local status=0
    (cd "$2" && "$3") >"$list/$1.out" 2>&1 || status=$?
    {
        echo "     Running $4: $3 (exit status $status)"
        cat "$list/$1.out"
    } >&2
    [ "$status" -eq 0 ] || echo "$4" >>"$list/failed"
}
index=0
while IFS=$'\t' read -r directory executable name; do
    # At most $lanes at a time: wait for one to end before starting another.
    while [ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do wait -n || true; done
    run_one "$index" "$directory" "$executable" "$name" &
    index=$((index + 1))
done < <(awk -F'\t' '!seen[$2]++' "$list/binaries") # a binary two sets share, once
wait
if [ -s "$list/failed" ]; then
    echo "test binaries that failed:" >&2
    sed 's/^/  /' "$list/failed" >&2
    exit 1
fi
echo "scripts/test-binaries.sh: $index test binaries passed, $lanes at a time" >&2
