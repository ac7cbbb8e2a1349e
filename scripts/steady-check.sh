#!/usr/bin/env bash
# Is the quick comparison's figure of a JIT stack its steady state? (issue 24, docs/sampling.md)
# For jsse and netty-tcnative, full TLS 1.3 and 1.2 handshakes, TLS 1.3 and 1.2 ticket
# resumption and a transfer: the quick figure (the settings of `tlsbench run --quick`: warm-up
# until steady, at most 10 s) and a reference whose processes warmed up for 60 s first, measured
# one after the other; prints each median and the ratio quick / reference per side, and whether
# the quick figure's warm-up ended steady. The reference's JVMs keep HotSpot's default compile
# thresholds (the Java runner scales them to a tenth, docs/sampling.md), so the ratio also says
# whether the tenth reaches the plateau a JVM with the defaults reaches in 60 s. A benchmark, not a
# test: nothing is asserted.
#
#   scripts/steady-check.sh [BIN_DIR]      (default: target/release, after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release}
out=$(mktemp -d)
scenarios=(
    --scenario handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm
    --scenario handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm
    --scenario handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm
    --scenario handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm
    --scenario transfer_1.3_x25519_ecdsa-p256_aes-128-gcm
)
stacks=(--stack jsse --stack netty-tcnative)
cd "$out"
"$OLDPWD/$bin/tlsbench" run --quick "${stacks[@]}" "${scenarios[@]}" --export-json quick.json >/dev/null
TLSBENCH_JAVA_OPTS="-XX:CompileThresholdScaling=1 ${TLSBENCH_JAVA_OPTS:-}" \
    "$OLDPWD/$bin/tlsbench" run --quick "${stacks[@]}" "${scenarios[@]}" --warmup-ms 60000 --warmup-max-ms 60000 \
    --export-json reference.json >/dev/null
python3 - quick.json reference.json <<'PY'
import json, sys

def rates(path):
    out = {}
    for r in json.load(open(path))["results"]:
        if r["metric"] in ("handshakes_per_s", "mb_per_s") and r.get("median"):
            steady = all(w["steady"] for w in r.get("warmups", []))
            out[(r["client_stack"], r["scenario"].replace("_x25519_ecdsa-p256_aes-128-gcm", ""), r["side"])] = \
                (r["median"], steady)
    return out

quick, reference = rates(sys.argv[1]), rates(sys.argv[2])
print(f"{'stack':<15} {'scenario':<28} {'side':<6} {'quick':>10} {'reference':>10} {'ratio':>6}  quick warm-up")
for key in sorted(quick.keys() & reference.keys()):
    (q, steady), (r, _) = quick[key], reference[key]
    print(f"{key[0]:<15} {key[1]:<28} {key[2]:<6} {q:>10.0f} {r:>10.0f} {q / r:>6.3f}  "
          f"{'steady' if steady else 'still rising at the bound'}")
PY
echo "runs and JSON in $out" >&2
