#!/usr/bin/env bash
# Benchmarks of the tile: simulation speed of model and RTL, side by side, on a single-context and
# an all-contexts workload. Usage: scripts/bench.sh [--seconds S]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh" tile_speed tessera_sw
bin="$build/sw/device-build/bin"
"$build/bench/tile_speed" "$@" "$bin/wl_int_fp_loop.elf" "$bin/wl_all_contexts.elf" \
  "$bin/wl_divsqrt.elf"
