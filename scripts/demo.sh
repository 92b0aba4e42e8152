#!/usr/bin/env bash
# The main job until the training benchmark exists: install what is missing, build, and run the
# demo programs on the cycle-exact model and on the RTL: hello; five workers summing floats; and a
# ring shift over the 4-tile chip (sync, exchange, worker compute in every superstep); then one
# training step of a small MLP compiled by the graph compiler, on both backends.
# Usage: scripts/demo.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" tessera-run tessera-bench tessera_sw
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
# A compiled graph: one SGD step of a 784-16-10 MLP on a minibatch of 8 (docs/compiler.md).
demo="$build/demo"
mkdir -p "$demo"
"$build/bench/tessera-bench" compile-mlp --tiles 4 --tile-mem 64 --hidden 16 --batch 8 --out "$demo"
python3 - "$demo" <<'PY'
import random, struct, sys
d = sys.argv[1]
rng = random.Random(1)
open(f"{d}/images.bin", "wb").write(struct.pack("<6272f", *[rng.random() for _ in range(8 * 784)]))
open(f"{d}/labels.bin", "wb").write(struct.pack("<8i", *[rng.randrange(10) for _ in range(8)]))
PY
for device in model rtl; do
  echo "== compiled MLP training step on 4 tiles, $device"
  "$run" --device "$device" --stats --input images="$demo/images.bin" --input labels="$demo/labels.bin" \
    --output loss="$demo/loss-$device.bin" --output correct="$demo/correct-$device.bin" "$demo/mlp.tess"
done
cmp "$demo/loss-model.bin" "$demo/loss-rtl.bin" && echo "== the model and the RTL give the same losses, bit for bit"
