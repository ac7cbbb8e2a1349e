#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, and run a quick comparison of
# all stacks on the headline scenarios (most of its time is the Java stacks' JIT warm-up, once per
# process: docs/sampling.md). At the end, tlsbench says how to measure more. Extra arguments go to
# `tlsbench run` (e.g. --export-markdown results.md, or --stack ID... for fewer stacks).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec target/release/tlsbench run --quick --measure time --measure io "$@"
