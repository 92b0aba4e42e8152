#!/usr/bin/env bash
# Mixed-precision training of the MLP (docs/training.md, "Mixed precision").
# Usage: fp16_train_test.sh TESSERA_BENCH PYTHON OUT_DIR full|short
#  full:  tessera-bench train --precision fp16 to the benchmark's 85% (3 epochs at most, exit 0 only
#         when an evaluation of all 10,000 test images reaches it). Labelled long.
#  short: 20 steps in fp16 and in fp32 from the same seed: the fp16 run says so in its result,
#         its losses are finite and within 5% of fp32's step by step, its weights differ; and the
#         refusals (no unit, another model, a loss scale that is not a power of two, odd sizes)
#         name the option at fault; a run resumed from a checkpoint in its second epoch ends as the
#         uninterrupted one (with a static and with a dynamic loss scale); an overflowing static
#         loss scale is reported; a dynamic one skips the overflowing steps and comes down.
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
# uninterrupted run's losses, cycles and weights; with a dynamic loss scale (started where it
# overflows, so that steps are skipped and the scale moves), its state too.
for scale in static dynamic; do
  resume=(train --precision fp16 --epochs 2 --max-steps 10 --eval-images 32 --quiet
          --checkpoint-every 5 --trace-steps 0)
  if [ "$scale" = dynamic ]; then
    resume+=(--loss-scale dynamic --loss-scale-init 16777216 --loss-scale-interval 3)
  fi
  "$bench" "${resume[@]}" --out "$out/whole-$scale" ||
    { echo "FAIL: the checkpointed $scale run exited with $?"; exit 1; }
  mkdir -p "$out/first-$scale"
  first=$(ls "$out/whole-$scale/checkpoints" | head -1)
  cp "$out/whole-$scale/checkpoints/$first" "$out/first-$scale/"
  "$bench" "${resume[@]}" --out "$out/resumed-$scale" --resume "$out/first-$scale" ||
    { echo "FAIL: the resumed $scale run exited with $?"; exit 1; }
  "$python" - "$out" "$first" "$scale" <<'PY'
import json, sys
d, first, scale = sys.argv[1:4]
a, b = (json.load(open(f"{d}/{r}-{scale}/result.json")) for r in ("whole", "resumed"))
assert a["steps"] == b["steps"] == 20, (a["steps"], b["steps"])
keys = ["loss_curve", "weights_hash", "cycles_per_step"]
if scale == "dynamic":
    keys.append("loss_scale_dynamic")
    dyn = a["loss_scale_dynamic"]
    assert dyn["skipped_steps"] >= 1 and dyn["final"] < dyn["initial"], dyn
for key in keys:
    assert a[key] == b[key], (key, a[key], b[key])
print(scale, "loss scale: resumed from", first, "to the uninterrupted run's weights", a["weights_hash"])
PY
done
# A dynamic loss scale from the scale that overflows below: the overflowing steps are skipped
# (no NaN loss, no warning), the scale comes down, and the run learns as the static one does.
"$bench" train --precision fp16 --loss-scale dynamic --loss-scale-init 16777216 \
  --loss-scale-interval 5 --max-steps 20 --eval-images 64 --trace-steps 0 --quiet \
  --out "$out/dynamic" 2> "$out/dynamic.txt" || { echo "FAIL: the dynamic run exited with $?"; exit 1; }
if grep -q "is nan" "$out/dynamic.txt"; then echo "FAIL: NaN loss with a dynamic scale:"; cat "$out/dynamic.txt"; exit 1; fi
"$python" - "$out" <<'PY'
import json, math, sys
d = sys.argv[1]
r, h = (json.load(open(f"{d}/{p}/result.json")) for p in ("dynamic", "fp16"))
dyn = r["loss_scale_dynamic"]
assert dyn["initial"] == 16777216 and dyn["interval"] == 5, dyn
assert 1 <= dyn["skipped_steps"] < 20 and dyn["final"] < dyn["initial"], dyn
assert all(math.isfinite(x) for x in r["loss_curve"]), r["loss_curve"]
assert r["loss_curve"][-1] < r["loss_curve"][0], r["loss_curve"]
assert "loss_scale_dynamic" not in h, "a static run reports a dynamic scale"
print("dynamic loss scale:", dyn["skipped_steps"], "steps skipped, scale", dyn["initial"], "->",
      dyn["final"], "; last loss", r["loss_curve"][-1], "(static 1024:", h["loss_curve"][-1], ")")
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
expect_error "is for --precision fp16" --loss-scale dynamic
expect_error "first value of --loss-scale dynamic" --precision fp16 --loss-scale-init 1024
expect_error "not a power of two" --precision fp16 --loss-scale dynamic --loss-scale-init 1000
expect_error "a positive number or 'dynamic'" --precision fp16 --loss-scale lots
# A loss scale that overflows float16: the run goes on and says which step's loss is NaN, and why.
"$bench" train --precision fp16 --loss-scale 16777216 --max-steps 5 --eval-images 32 --quiet \
  --trace-steps 0 --out "$out/overflow" 2> "$out/overflow.txt" || true
grep -q "the loss of step 2 is nan (float16 gradients overflowing" "$out/overflow.txt" ||
  { echo "FAIL: no overflow warning in:"; cat "$out/overflow.txt"; exit 1; }
# Optimizer state that does not fit the model's default tiles: without --tile-mem they grow (and
# the command says so) until the unit's layouts fit; with it, the error names the size.
"$bench" train --precision fp16 --optimizer momentum --max-steps 2 --eval-images 32 --quiet \
  --trace-steps 0 --out "$out/grow" 2> "$out/grow.txt" || { echo "FAIL: momentum in fp16 exited $?"; cat "$out/grow.txt"; exit 1; }
grep -q "does not fit the model's 192 KiB tiles; trying 256 KiB" "$out/grow.txt" ||
  { echo "FAIL: no growth note in:"; cat "$out/grow.txt"; exit 1; }
"$python" - "$out" <<'PY'
import json, sys
r = json.load(open(f"{sys.argv[1]}/grow/result.json"))
assert r["tile_mem_bytes"] == 256 * 1024 and r["matrix_unit"] == "on", (r["tile_mem_bytes"], r["matrix_unit"])
PY
expect_error "had 192 KiB; --tile-mem sets them" --precision fp16 --optimizer momentum --tile-mem 192
echo "the refusals name their cause; an overflowing loss scale is reported; tiles grow for momentum"
