#!/usr/bin/env bash
# The main job on a fresh machine: install what is missing, build, and run a quick comparison of
# all stacks on the headline scenarios (under 2 minutes after the build on 2 cores; at the end,
# tlsbench says how to measure more). Extra arguments go to `tlsbench run` (e.g.
# --export-markdown results.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
exec target/release/tlsbench run --quick --measure time --measure io "$@"
