#!/usr/bin/env bash
# Mixed-precision training of the MLP (docs/training.md, "Mixed precision").
# Usage: fp16_train_test.sh TESSERA_BENCH PYTHON OUT_DIR full|short
#  full:  tessera-bench train --precision fp16 to the benchmark's 85% (3 epochs at most, exit 0 only
#         when an evaluation of all 10,000 test images reaches it). Labelled long.
#  short: 20 steps in fp16 and in fp32 from the same seed: the fp16 run says so in its result,
#         its losses are finite and within 5% of fp32's step by step, its weights differ; and the
#         refusals (no unit, another model, a loss scale that is not a power of two, odd sizes)
#         name the option at fault; a run resumed from a checkpoint in its second epoch ends as the
#         uninterrupted one; an overflowing loss scale is reported.
set -euo pipefail
bench=$1 python=$2 out=$3 mode=$4
rm -rf "$out"
mkdir -p "$out"
if [ "$mode" = full ]; then
  exec "$bench" train --precision fp16 --epochs 3 --require-target --trace-steps 0 --quiet \
    --out "$out/run" --save-weights "$out/mlp.npz"
fi
for p in fp16 fp32; do
  "$bench" train --precision "$p" --max-steps 20 --eval-images 64 --trace-steps 0 --quiet \
    --out "$out/$p" || { echo "FAIL: the $p run exited with $?"; exit 1; }
done
"$python" - "$out" <<'PY'
import json, math, sys
d = sys.argv[1]
h, f = (json.load(open(f"{d}/{p}/result.json")) for p in ("fp16", "fp32"))
assert h["precision"] == "fp16" and h["loss_scale"] == 1024, (h["precision"], h["loss_scale"])
assert f["precision"] == "fp32" and f["loss_scale"] == 1, (f["precision"], f["loss_scale"])
lh, lf = h["loss_curve"], f["loss_curve"]
assert len(lh) == len(lf) == 20, (len(lh), len(lf))
for s, (a, b) in enumerate(zip(lh, lf)):
    assert math.isfinite(a) and abs(a - b) <= 0.05 * b, (s, a, b)
assert h["weights_hash"] != f["weights_hash"], "fp16 gave fp32's weights"
print("fp16 and fp32 losses agree within 5% over 20 steps; last", lh[-1], lf[-1])
PY
# Resume in float16: a run resumed from the older of its two kept checkpoints (in the second
# epoch; the float16 copies are cast again from the restored float32 masters) ends with the
# uninterrupted run's losses, cycles and weights.
resume=(train --precision fp16 --epochs 2 --max-steps 10 --eval-images 32 --quiet
        --checkpoint-every 5 --trace-steps 0)
"$bench" "${resume[@]}" --out "$out/whole" || { echo "FAIL: the checkpointed run exited with $?"; exit 1; }
mkdir -p "$out/first"
first=$(ls "$out/whole/checkpoints" | head -1)
cp "$out/whole/checkpoints/$first" "$out/first/"
"$bench" "${resume[@]}" --out "$out/resumed" --resume "$out/first" ||
  { echo "FAIL: the resumed run exited with $?"; exit 1; }
"$python" - "$out" "$first" <<'PY'
import json, sys
d = sys.argv[1]
a, b = (json.load(open(f"{d}/{r}/result.json")) for r in ("whole", "resumed"))
assert a["steps"] == b["steps"] == 20, (a["steps"], b["steps"])
for key in ("loss_curve", "weights_hash", "cycles_per_step"):
    assert a[key] == b[key], (key, a[key], b[key])
print("resumed from", sys.argv[2], "to the uninterrupted run's weights", a["weights_hash"])
PY
expect_error() {  # expect_error TEXT ARGS...: the command fails and says TEXT
  local text=$1
  shift
  if "$bench" train --max-steps 1 --eval-images 32 --quiet --out "$out/err" "$@" 2> "$out/err.txt"; then
    echo "FAIL: train $* succeeded"
    exit 1
  fi
  grep -q -- "$text" "$out/err.txt" || { echo "FAIL: train $*: no \"$text\" in:"; cat "$out/err.txt"; exit 1; }
}
expect_error "needs the matrix unit" --precision fp16 --matrix-unit off
expect_error "MLP's only" --precision fp16 --model lenet
expect_error "not a power of two" --precision fp16 --loss-scale 1000
expect_error "every layer size even" --precision fp16 --hidden 33
expect_error "even batch" --precision fp16 --batch 7
# A loss scale that overflows float16: the run goes on and says which step's loss is NaN, and why.
"$bench" train --precision fp16 --loss-scale 16777216 --max-steps 5 --eval-images 32 --quiet \
  --trace-steps 0 --out "$out/overflow" 2> "$out/overflow.txt" || true
grep -q "the loss of step 2 is nan (float16 gradients overflowing" "$out/overflow.txt" ||
  { echo "FAIL: no overflow warning in:"; cat "$out/overflow.txt"; exit 1; }
echo "the refusals name their cause; an overflowing loss scale is reported"
