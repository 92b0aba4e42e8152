#!/usr/bin/env bash
# tessera-bench's options: every number parsed strictly (NaN, infinities, negatives and
# out-of-range values refused, naming the option, with a plain error exit and no signal), and
# compile-mlp working with its defaults and making its --out directory before it compiles
# (issue 29, items 8 and 12; docs/limits.md, "Numbers").
# Usage: options_test.sh TESSERA_BENCH WORK_DIR
set -u
bench=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
failures=0

# refused "ARGS" "MESSAGE": the command must fail with exit 1..127 and print MESSAGE.
refused() {
  local args=$1 want=$2 out rc
  # shellcheck disable=SC2086  # ARGS is a word list on purpose
  out=$("$bench" $args 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ]; then
    echo "FAIL: tessera-bench $args exited $rc (want a refusal): $out"
    failures=$((failures + 1))
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: tessera-bench $args: want \"$want\", got: $out"
    failures=$((failures + 1))
  else
    echo "ok: tessera-bench $args -> $want"
  fi
}

for opt in --lr --momentum --weight-decay --adam-beta1 --adam-beta2 --adam-eps \
           --target-accuracy --clock-mhz --link-gbps --link-step-us; do
  refused "train --max-steps 1 $opt nan" "$opt: nan is not a finite number"
  refused "train --max-steps 1 $opt -NaN" "$opt: -NaN is not a finite number"
done
refused "train --max-steps 1 --lr inf" "--lr: Value inf not in range"
refused "train --max-steps 1 --merge-compute-sets maybe" "--merge-compute-sets: maybe not in {on,off}"
refused "train --max-steps 1 --lr -0.5" "--lr: Value -0.5 not in range"
refused "compile-mlp --momentum nan" "--momentum: nan is not a finite number"
refused "train --hidden -5" "--hidden: Value -5 not in range 1 to 16777216"
refused "compile-mlp --hidden 64,0" "--hidden: Value 0 not in range 1 to 16777216"
refused "compile-mlp --hidden 4294967297" "--hidden: Value 4294967297 not in range"
refused "train --max-steps -1" "--max-steps: -1 is negative; the option counts"
refused "compile-mlp --tiles 4 --tile-mem 64 --hidden 16 --batch 60000" \
  "variable \"x\" [60000,784] needs 188160000 bytes, more than the whole chip holds (4 tiles of 65536 bytes)"
refused "compile-mlp --out /dev/null/x" "/dev/null/x"

# compile-mlp's defaults compile (the model's tile memory, as train uses) and --out is made.
for model in mlp lenet resnet-tiny transformer-tiny; do
  if out=$("$bench" compile-mlp --model "$model" --out "$work/$model/new" 2>&1) &&
     [ -s "$work/$model/new/mlp.tess" ] && [ -s "$work/$model/new/mlp-report.json" ]; then
    echo "ok: compile-mlp --model $model with its defaults"
  else
    echo "FAIL: compile-mlp --model $model with its defaults: $out"
    failures=$((failures + 1))
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "FAIL: $failures cases"
  exit 1
fi
echo "PASS"
