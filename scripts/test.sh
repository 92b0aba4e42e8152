#!/usr/bin/env bash
# Install what is missing, build everything, run every regular test (CTest; the labels "sweep" and
# "long" — FPU sweeps, the training benchmark to its target, FPGA flows ("fpga-long") — are left out).
# Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-$(nproc)}" -LE 'sweep|long' "$@"
