#!/usr/bin/env bash
# The main job until the training benchmark exists: install what is missing, build, and run the
# demo programs on the cycle-exact model and on the RTL: hello; five workers summing floats; and a
# ring shift over the 4-tile chip (sync, exchange, worker compute in every superstep).
# Usage: scripts/demo.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" tessera-run tessera_sw
run="$build/host/tools/tessera-run"
bin="$build/sw/device-build/bin"
for prog in hello workers; do
  for device in model rtl; do
    echo "== $prog on $device"
    "$run" --device "$device" --stats "$bin/$prog.elf"
  done
done
for device in model rtl; do
  echo "== chip_ring_shift on 4 tiles, $device"
  "$run" --device "$device" --all-tiles --stats "$bin/chip_ring_shift.elf"
done
