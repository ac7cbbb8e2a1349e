#!/usr/bin/env bash
# Do the quick comparison's figures repeat? (issue 33, docs/sampling.md) Runs the same
# `tlsbench run` twice in a row (by default the quick comparison's: --quick --measure time) and
# prints, for every rate cell (stack, scenario, side, wall and CPU): each run's figure (a time
# rate's faster-half mean; the median in runs from before it), their ratio, each run's printed
# interval and whether it holds the other run's figure; then, per group of stacks (JIT, Go,
# compiled ahead of time), the worst ratio, the share of intervals that hold the other run's
# figure and the typical (median) interval; per clock (wall, CPU), the
# median cell's move, the move every cell shares (the machine's speed between the runs) and the
# moves beside it (how the stacks stand against each other from run to run); the same per clock
# for other estimators on the same samples (docs/sampling.md "Which estimator repeats under
# noise"); then `tlsbench compare`'s verdicts. A benchmark, not a test: nothing is asserted.
#
#   scripts/repeat-check.sh [OUT_DIR] [-- tlsbench run arguments]
#   scripts/repeat-check.sh --analyze OUT_DIR      (the analysis again, of runs already there)
#
# After scripts/build.sh. The two runs' JSON and database go to OUT_DIR (default: a new
# temporary directory), so they can be compared again later.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
analyze_only=false
if [[ ${1:-} == --analyze ]]; then analyze_only=true; shift; fi
out=$(mktemp -d)
if [[ $# -gt 0 && $1 != -- ]]; then out=$1; shift; fi
[[ ${1:-} == -- ]] && shift
args=("$@")
((${#args[@]})) || args=(--quick --measure time)
mkdir -p "$out"
for run in a b; do
    $analyze_only && break
    started=$SECONDS
    "$root/target/release/tlsbench" run "${args[@]}" --db "$out/runs.db" --export-json "$out/$run.json" \
        >"$out/$run.txt" 2>"$out/$run.log"
    echo "run $run: $((SECONDS - started)) s (table in $out/$run.txt)"
done
python3 - "$out/a.json" "$out/b.json" <<'EOF'
import json, statistics, sys

JIT = {"jsse", "netty-tcnative"}
def group(stack):
    base = stack.split("@")[0]
    return "jit" if base in JIT else "go" if base == "go" else "aot"

def cells(path):
    doc = json.load(open(path))
    out = {}
    for r in doc["results"]:
        # Rates only: gc_percent's median is often 0, and is not a figure that should repeat.
        if r["status"] != "ok" or r["measure"] != "time" or not r["metric"].endswith("_per_s") \
                or r.get("median") is None:
            continue
        pair = r["client_stack"] if r["client_stack"] == r["server_stack"] else \
            f'{r["client_stack"]}->{r["server_stack"]}'
        key = (pair, r["scenario"], r["process"], r["side"], r["metric"])
        # The printed figure: a time rate's faster-half mean (runs before it: the median).
        out[key] = (r.get("faster_half_mean", r["median"]), r["ci95"], r["samples"], r["median"])
    return out

a, b = cells(sys.argv[1]), cells(sys.argv[2])
rows, by_group, by_clock = [], {}, {}
for key in sorted(a.keys() & b.keys()):
    (ma, ca, *_), (mb, cb, *_) = a[key], b[key]
    ratio = mb / ma
    holds_a = ca[0] <= mb <= ca[1]
    holds_b = cb[0] <= ma <= cb[1]
    width_a = max(ma - ca[0], ca[1] - ma) / ma * 100
    width_b = max(mb - cb[0], cb[1] - mb) / mb * 100
    g = by_group.setdefault(group(key[0].split("->")[0]), {"ratios": [], "holds": [], "widths": []})
    g["ratios"].append(ratio)
    g["holds"] += [holds_a, holds_b]
    g["widths"] += [width_a, width_b]
    c = by_clock.setdefault("cpu" if key[4].startswith("cpu_") else "wall",
                            {"moves": [], "ratios": [], "holds": [], "widths": []})
    c["moves"].append(abs(ratio - 1) * 100)
    c["ratios"].append(ratio)
    c["holds"] += [holds_a, holds_b]
    c["widths"] += [width_a, width_b]
    scenario = key[1].replace("_x25519_ecdsa-p256_aes-128-gcm", "")
    rows.append(f"{key[0][:24]:<24} {scenario[:30]:<30} {key[3]:<6} {key[4][:20]:<20} {ma:>11.1f} {mb:>11.1f} "
                f"{ratio:>6.3f} ±{width_a:>4.1f}% {'y' if holds_a else 'n'} "
                f"±{width_b:>4.1f}% {'y' if holds_b else 'n'}")
print(f"{'pair':<24} {'scenario':<30} {'side':<6} {'metric':<20} {'median A':>11} {'median B':>11} "
      f"{'B/A':>6} {'A int':>7} h {'B int':>7} h")
print("\n".join(rows))
print()
print(f"{'stacks':<6} {'cells':>5} {'worst B/A':>20} {'holds other':>12} {'typical interval':>17}")
for name in ["aot", "go", "jit"]:
    g = by_group.get(name)
    if not g:
        continue
    worst = (min(g["ratios"]), max(g["ratios"]))
    holds = sum(g["holds"]) / len(g["holds"]) * 100
    print(f"{name:<6} {len(g['ratios']):>5} {worst[0]:>9.3f} to {worst[1]:>6.3f} {holds:>11.0f}% "
          f"{statistics.median(g['widths']):>15.1f}%")
everything = [h for g in by_group.values() for h in g["holds"]]
print(f"all    {len(everything) // 2:>5} {'':>20} {sum(everything) / len(everything) * 100:>11.0f}%")
print()
# "shared": the median B/A of the clock's cells, a move they all share (the machine's speed between
# the runs); "beside it": each cell's move once that is divided out, how the stacks stand against
# each other from one run to the next.
print(f"{'clock':<6} {'cells':>5} {'median move':>12} {'within 5%':>10} {'holds other':>12} {'typical interval':>17} "
      f"{'shared':>7} {'beside it':>10} {'within 5%':>10}")
for name in ["wall", "cpu"]:
    c = by_clock.get(name)
    if not c:
        continue
    n, within = len(c["moves"]), sum(m <= 5 for m in c["moves"])
    holds = sum(c["holds"]) / len(c["holds"]) * 100
    shared = statistics.median(c["ratios"])
    beside = [abs(r / shared - 1) * 100 for r in c["ratios"]]
    within_beside = sum(m <= 5 for m in beside)
    print(f"{name:<6} {n:>5} {statistics.median(c['moves']):>11.1f}% {within:>4} ({within * 100 // n:>2}%) "
          f"{holds:>11.0f}% {statistics.median(c['widths']):>16.1f}% {shared:>7.3f} {statistics.median(beside):>9.1f}% "
          f"{within_beside:>4} ({within_beside * 100 // n:>2}%)")
print()
# The same samples under other estimators, a benchmark of the design (issue 42): where noise only
# slows samples, one that leans on the faster ones moves less from run to run.
def upper_half_mean(xs):
    xs = sorted(xs)
    return statistics.mean(xs[len(xs) // 2:])
def upper_quartile(xs):
    xs = sorted(xs)
    at = (len(xs) - 1) * 0.75
    low = int(at)
    return xs[low] + (xs[min(low + 1, len(xs) - 1)] - xs[low]) * (at - low)
estimators = {"as printed": lambda cell: cell[0], "kept median": lambda cell: cell[3],
              "median of all samples": lambda cell: statistics.median(cell[2]),
              "mean of the upper half": lambda cell: upper_half_mean(cell[2]),
              "upper quartile": lambda cell: upper_quartile(cell[2])}
print(f"{'clock':<6} {'estimator':<26} {'median move':>12} {'within 5%':>10} {'shared':>7} {'beside it':>10} "
      f"{'within 5%':>10}")
for clock in ["wall", "cpu"]:
    keys = [k for k in a.keys() & b.keys() if k[4].startswith("cpu_") == (clock == "cpu")]
    for name, estimate in estimators.items():
        ratios = [estimate(b[k]) / estimate(a[k]) for k in keys]
        if not ratios:
            continue
        moves = [abs(r - 1) * 100 for r in ratios]
        shared = statistics.median(ratios)
        beside = [abs(r / shared - 1) * 100 for r in ratios]
        n = len(ratios)
        print(f"{clock:<6} {name:<26} {statistics.median(moves):>11.1f}% {sum(m <= 5 for m in moves) * 100 // n:>9}% "
              f"{shared:>7.3f} {statistics.median(beside):>9.1f}% {sum(m <= 5 for m in beside) * 100 // n:>9}%")
EOF
"$root/target/release/tlsbench" compare "$out/a.json" "$out/b.json" >"$out/compare.txt" 2>&1 || true
echo
echo "tlsbench compare A B, its summary:"
sed -n '/^summary:/,$p' "$out/compare.txt"
echo "runs, JSON and compare's table in $out"
