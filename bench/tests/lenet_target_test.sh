#!/usr/bin/env bash
# LeNet to 90% test accuracy on the model, 16 tiles (docs/training.md, "LeNet to 90%").
# Usage: lenet_target_test.sh TESSERA_BENCH PYTHON OUT_DIR full|short
#  full:  the whole recipe (4 epochs, 7,500 steps) with the translating engine; exit 0 only when an
#         evaluation of all 10,000 test images reaches 90% (--require-target). Labelled long.
#  short: the same command cut to one step per epoch run (4 steps, 64 test images), once per model engine: both runs exit 0 and give the same
#         losses, cycles per step and weights (the translating engine is what the full run uses),
#         and the translating engine ran most of the instructions translated.
set -euo pipefail
bench=$1 python=$2 out=$3 mode=$4
rm -rf "$out"
mkdir -p "$out"
recipe=(train --model lenet --tiles 16 --optimizer adam --epochs 4 --lr 0.004 --lr-schedule cosine
        --input-standardize --target-accuracy 0.9 --trace-steps 0 --quiet)

if [ "$mode" = full ]; then
  "$bench" "${recipe[@]}" --require-target --model-engine jit --out "$out/run" \
    --save-weights "$out/lenet.npz"
  exit 0
fi

for engine in interp jit; do
  "$bench" "${recipe[@]}" --max-steps 1 --eval-images 64 --model-engine "$engine" \
    --out "$out/$engine" || { echo "FAIL: the $engine run exited with $?"; exit 1; }
done
"$python" - "$out" <<'PY'
import json, sys
d = sys.argv[1]
a, b = (json.load(open(f"{d}/{e}/result.json")) for e in ("interp", "jit"))
assert a["steps"] == 4 and a["tiles"] == 16 and a["optimizer"] == "adam", a
assert a["learning_rate"] == 0.004, a["learning_rate"]
for key in ("loss_curve", "cycles_per_step", "weights_hash", "eval_accuracy"):
    assert a[key] == b[key], (key, a[key], b[key])
jit = b["model_jit"]
assert jit["translated"] * 2 > jit["instructions"], jit
print("interp and jit agree:", a["weights_hash"], a["cycles_per_step"], "cycles per step;",
      f"{jit['translated'] / jit['instructions']:.0%} translated")
PY
