#!/usr/bin/env bash
# A noisy host on demand (issue 42, docs/sampling.md "A noisy machine"): runs a command while
# `tlsbench inject-noise` makes this machine behave like the noisy cloud VM of 2026-11-28, whose
# 20-ms samples of one cell spread about ±25% and whose noise check (50-ms loops) said about ±7%.
# The injector stops when the command ends (and by itself within the hour).
#
#   scripts/noisy-host.sh COMMAND [ARGS...]     e.g. scripts/noisy-host.sh scripts/repeat-check.sh
#   scripts/noisy-host.sh --check               what the setting does: the probe's line, quiet and noisy
#
# TLSBENCH_NOISE overrides the injector's flags (default: the setting below).
set -euo pipefail
cd "$(dirname "$0")/.."
tlsbench=$PWD/target/release/tlsbench
[[ -x $tlsbench ]] || { echo "noisy-host.sh: build first (scripts/build.sh)" >&2; exit 1; }
# Measured here 2026-11-29 (docs/sampling.md): bursts on both CPUs, a few to tens of ms on and off,
# on idle CPU time only (SCHED_IDLE), so that the noise check's loop moves by about ±7%, not ±30%.
setting=${TLSBENCH_NOISE:---idle --on-ms 3-15 --off-ms 15-60}

start_noise() {
    # shellcheck disable=SC2086 # the setting is a list of flags
    "$tlsbench" inject-noise $setting --duration 3600 &
    noise=$!
    trap 'kill $noise 2>/dev/null || true; wait $noise 2>/dev/null || true' EXIT
    sleep 0.2
}

if [[ ${1:-} == --check ]]; then
    echo "quiet:"
    "$tlsbench" probe-noise
    echo "under the injector ($setting):"
    start_noise
    "$tlsbench" probe-noise
    exit 0
fi
(($#)) || { echo "usage: scripts/noisy-host.sh COMMAND [ARGS...] | --check" >&2; exit 2; }
start_noise
"$@"
