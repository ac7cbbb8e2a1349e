#!/usr/bin/env bash
# Is the quick comparison's figure of a JIT stack its steady state? (issue 24, docs/sampling.md)
# For jsse and netty-tcnative, a full TLS 1.3 handshake and a transfer: the quick figure (the
# settings of `tlsbench run --quick`: warm-up until steady, at most 10 s) and a reference whose
# processes warmed up for 60 s first, measured one after the other; prints each median and the
# ratio quick / reference per side. A benchmark, not a test: the ratio is reported, not asserted.
#
#   scripts/steady-check.sh [BIN_DIR]      (default: target/release, after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release}
out=$(mktemp -d)
scenarios=(
    --scenario handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm
    --scenario transfer_1.3_x25519_ecdsa-p256_aes-128-gcm
)
stacks=(--stack jsse --stack netty-tcnative)
cd "$out"
"$OLDPWD/$bin/tlsbench" run --quick "${stacks[@]}" "${scenarios[@]}" --export-json quick.json >/dev/null
"$OLDPWD/$bin/tlsbench" run --quick "${stacks[@]}" "${scenarios[@]}" --warmup-ms 60000 --warmup-max-ms 60000 \
    --export-json reference.json >/dev/null
rates='.results[] | select(.metric == "handshakes_per_s" or .metric == "mb_per_s")
       | {key: "\(.client_stack) \(.scenario) \(.side)", value: .median}'
jq -r -n --slurpfile q quick.json --slurpfile r reference.json "
    ([\$q[0] | $rates] | from_entries) as \$quick | ([\$r[0] | $rates] | from_entries) as \$ref
    | \$quick | keys[] | \"\\(.)  quick \\(\$quick[.] | floor)  reference \\(\$ref[.] | floor)\"
        + \"  ratio \\(\$quick[.] / \$ref[.] * 1000 | round / 1000)\""
echo "runs and JSON in $out" >&2
