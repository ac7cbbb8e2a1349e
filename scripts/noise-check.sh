#!/usr/bin/env bash
# How wide the time measure's intervals are on this machine now (issue 12): runs the default
# settings on the cells of the issue (rustls-aws-lc-rs and openssl, each with itself, a full
# TLS 1.3 ECDSA handshake and a transfer) and prints each result's median and its 95% interval
# in % (the farther end, as the table prints it), with the load average, the steal time over the
# run and the spread of a fixed calibration loop timed before and after it (by this script, so
# that binaries without one of their own are measured by the same yardstick).
#
#   scripts/noise-check.sh BIN_DIR [OUT_DIR] [-- extra tlsbench run arguments]
#
# BIN_DIR holds tlsbench and its runners (e.g. target/release). The run's JSON and database
# go to OUT_DIR (default: a new temporary directory).
set -euo pipefail
bin=${1:?usage: scripts/noise-check.sh BIN_DIR [OUT_DIR] [-- tlsbench run arguments]}
shift
out=$(mktemp -d)
if [[ $# -gt 0 && $1 != -- ]]; then out=$1; shift; fi
[[ ${1:-} == -- ]] && shift
mkdir -p "$out"

# A fixed CPU-bound loop (a few ms), timed 20 times: (p90 - p10) / median in %, and max / min.
calibrate() {
    python3 - <<'EOF'
import time
times = []
for _ in range(20):
    start = time.perf_counter()
    x = 0
    for i in range(60000):
        x = (x * 31 + i) & 0xFFFFFFFF
    times.append(time.perf_counter() - start)
times.sort()
median = (times[9] + times[10]) / 2
print(f"calibration: median {median * 1e3:.2f} ms, "
      f"spread (p90-p10)/median {100 * (times[17] - times[2]) / median:.1f}%, "
      f"max/min {times[-1] / times[0]:.2f}")
EOF
}
# The aggregate cpu line of /proc/stat: total jiffies and steal jiffies.
cpu_jiffies() { awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print t, $9}' /proc/stat; }

echo "binaries: $bin"
echo "start: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "before the run: $(calibrate)"
read -r total0 steal0 < <(cpu_jiffies)
started=$(date +%s)
"$bin/tlsbench" run --stack rustls-aws-lc-rs --stack openssl \
    --scenario handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm \
    --scenario transfer_1.3_x25519_ecdsa-p256_aes-128-gcm \
    --db "$out/results.db" --export-json "$out/run.json" "$@" >"$out/table.txt" 2>"$out/stderr.txt"
read -r total1 steal1 < <(cpu_jiffies)
echo "end: $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg), run took $(($(date +%s) - started)) s"
steal=$(awk -v t=$((total1 - total0)) -v s=$((steal1 - steal0)) 'BEGIN{printf "%.2f%%", t ? 100*s/t : 0}')
echo "steal over the run: $steal"
echo "after the run: $(calibrate)"
grep -i -E 'warning|noisy|interval' "$out/stderr.txt" "$out/table.txt" || true

# Each result: median and its 95% interval as the table prints it: the farther end, in % of the median.
jq -r '
  .results[] | select(.median != null)
  | [(.scenario | split("_")[0]), .client_stack, .side, .metric, (.median | tostring),
     (100 * ([.ci95[1] - .median, .median - .ci95[0]] | max) / .median | . * 10 | round / 10 | tostring),
     (.samples | length | tostring), (.outliers | length | tostring)]
  | @tsv' "$out/run.json" |
    awk -F'\t' 'BEGIN { printf "%-15s %-17s %-6s %-20s %12s %8s %4s %4s\n",
                                "kind", "stack", "side", "metric", "median", "±ci95%", "n", "out" }
                { printf "%-15s %-17s %-6s %-20s %12.1f %8s %4s %4s\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
jq -r '[.results[] | select(.median != null and (.metric == "handshakes_per_s" or .metric == "mb_per_s"))
        | 100 * ([.ci95[1] - .median, .median - .ci95[0]] | max) / .median] | sort
       | "wall-time intervals: median ±\(.[length / 2 | floor] * 10 | round / 10)%, "
         + "widest ±\(.[-1] * 10 | round / 10)% (\(length) results)"' \
    "$out/run.json"
jq -r '.run.environment | del(.cpu, .kernel, .rustc, .allocator, .aslr, .governor, .cores) | select(length > 0)
       | "recorded by tlsbench: \(tojson)"' "$out/run.json"
echo "raw output: $out"
