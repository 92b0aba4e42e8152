#!/usr/bin/env bash
# One chip sharded across MPI ranks (docs/scale-out.md): the model's speed in one process and on
# 1, 2 and 4 ranks, side by side, for two workloads on the mk2 chip (1472 tiles):
#   compute - wl_int_fp_loop on every tile: no sync, no exchange (the ranks only meet at the end);
#   bsp     - chip_ring_shift on every tile: 6 supersteps, each a 43-word ring exchange in which
#             every tile sends every cycle (the heaviest exchange traffic per cycle there is).
# Each line is bench/shard_speed's: wall seconds per run, tile-cycles/s (chip cycles x tiles per
# wall second), the CPU seconds per run of the busiest rank and of all ranks together, and per
# superstep the collectives each rank makes and the bytes all ranks send.
# Ranks beyond the machine's cores are oversubscribed: they share cores, so wall-time rates there
# show the protocol's overhead, not a cluster's speed.
# Usage: scripts/bench-shard.sh [--seconds S] [--ranks "1 2 4"] [--tiles N]   (default: mk2)
# Environment: BUILD_DIR (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
seconds=2
ranks="1 2 4"
shape=(--preset mk2)
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --tiles) shape=(--tiles "$2"); shift 2 ;;
    *) echo "usage: $0 [--seconds S] [--ranks \"1 2 4\"] [--tiles N]" >&2; exit 2 ;;
  esac
done
bench=$build/bench/shard_speed
sw=$build/sw/device-build/bin
[ -x "$bench" ] || { echo "bench-shard: build first ($bench missing)" >&2; exit 1; }
# mpirun refuses root unless told (containers, CI).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for workload in compute:wl_int_fp_loop bsp:chip_ring_shift; do
  name=${workload%%:*} elf=$sw/${workload#*:}.elf
  echo "## $name ($(basename "$elf"))"
  mpirun --oversubscribe -np 1 "$bench" --plain "${shape[@]}" --seconds "$seconds" "$elf"
  for r in $ranks; do
    mpirun --oversubscribe -np "$r" "$bench" "${shape[@]}" --seconds "$seconds" "$elf"
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
