#!/usr/bin/env bash
# A regression gate for a library's CI: rustls built from two local checkouts, the base (e.g.
# main) and the branch, counted in one run under callgrind (instructions: the same every run, so
# a change of 0.3% is real; sync: locks, once checks, atomics and futex calls, exact, so one
# more per handshake is real, and a new lock in the handshake fails the gate), and compared cell
# by cell.
# Exit status 1 when a cell of the branch spends more than the base beyond its threshold; the
# verdict table says which threshold each cell was held to and why
# (docs/versions.md#a-regression-gate-for-ci).
#
#   scripts/gate.sh BASE_CHECKOUT BRANCH_CHECKOUT [OPTIONS OF `tlsbench run`]
#   scripts/gate.sh ~/rustls-main ~/rustls --scenario 'handshake-full_1.3_*'
#
# Default scenarios: full TLS 1.3 and 1.2 handshakes, TLS 1.3 ticket resumption and AES-128-GCM
# transfer, with X25519 and ECDSA P-256, both sides. Needs tlsbench built
# (`cargo build --release --locked -p tlsbench`) and valgrind. Everything goes to
# target/gate/ ($TLSBENCH_GATE_DIR): the results database, the run as JSON and text, and the
# comparison; the runners to target/versions/rustls@LABEL ($TLSBENCH_RELEASES_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 2)) || [ ! -d "$1" ] || [ ! -d "$2" ]; then
    echo "usage: scripts/gate.sh BASE_CHECKOUT BRANCH_CHECKOUT [OPTIONS OF tlsbench run]" >&2
    exit 2
fi
base_dir=$1 branch_dir=$2
shift 2
tlsbench=target/release/tlsbench
[ -x "$tlsbench" ] || { echo "gate: build tlsbench first: cargo build --release --locked -p tlsbench" >&2; exit 2; }

base=$(scripts/build-rustls.sh "$base_dir")
branch=$(scripts/build-rustls.sh "$branch_dir")
echo "gate: base rustls@$base, branch rustls@$branch" >&2

scenarios=(--scenario 'handshake-full_1.[23]_x25519_ecdsa-p256_aes-128-gcm'
    --scenario 'handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm'
    --scenario 'transfer_1.3_x25519_ecdsa-p256_aes-128-gcm')
if printf '%s\n' "$@" | grep -qx -- '--scenario'; then scenarios=(); fi
out="${TLSBENCH_GATE_DIR:-target/gate}"
mkdir -p "$out"
run() { # JSON STACK... -- the stacks given, counted in one run
    local json=$1
    shift
    "$tlsbench" run --measure instructions --measure sync "$@" "${scenarios[@]}" "${options[@]}" \
        --db "$out/results.db" --export-json "$json" >"${json%.json}.txt"
}
options=("$@")
if [ "$branch" != "$base" ]; then
    run "$out/run.json" --stack "rustls-aws-lc-rs@$base" --stack "rustls-aws-lc-rs@$branch"
    a="$out/run.json" b="$out/run.json"
else
    # The same commit twice is one stack: two runs of it, which the gate must not flag.
    run "$out/run-a.json" --stack "rustls-aws-lc-rs@$base"
    run "$out/run-b.json" --stack "rustls-aws-lc-rs@$base"
    a="$out/run-a.json" b="$out/run-b.json"
fi
"$tlsbench" compare "$a" "$b" --db "$out/results.db" \
    --stack-a "rustls-aws-lc-rs@$base" --stack-b "rustls-aws-lc-rs@$branch" --fail-on-regression |
    tee "$out/compare.txt"
