#!/usr/bin/env bash
# Benchmarks of the tile: simulation speed of model and RTL side by side, and the tile's IPC with
# one and with six busy contexts (bench/programs/fma_loop.c built as bench_fma_1ctx and
# bench_fma_6ctx), plus the earlier workloads. Each program runs on tile 0 of the 4-tile chip with
# the other tiles disabled. For chip-level and Icarus figures see scripts/bench-rtl.sh.
# Usage: scripts/bench.sh [--seconds S]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/build.sh" tile_speed tessera_sw
bin="$build/sw/device-build/bin"
echo "== machine: $(nproc) cores; $(uptime)"
"$build/bench/tile_speed" "$@" "$bin/bench_fma_1ctx.elf" "$bin/bench_fma_6ctx.elf" \
  "$bin/wl_int_fp_loop.elf" "$bin/wl_all_contexts.elf" "$bin/wl_divsqrt.elf"
