#!/usr/bin/env bash
# Install what is missing, build everything, run every regular test (CTest, labels "sweep" and
# "fpga-long" excluded: long sweeps and FPGA synthesis runs).
# Usage: scripts/test.sh [extra ctest args]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-$(nproc)}" -LE "sweep|fpga-long" "$@"
