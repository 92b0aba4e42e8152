#!/usr/bin/env bash
# The matrix unit's state in training checkpoints, across backends (docs/checkpoint.md, "The
# matrix unit's state"): the MLP trained with --matrix-unit on is killed after its checkpoint of
# step 2 on one backend and resumed on the other (model -> rtl, rtl -> model); the resumed run
# ends with the uninterrupted model run's trained weights (byte for byte), result.json (all but
# the device and the wall-clock figures) and MLLOG lines (all but time_ms and the platform name).
# Usage: train_unit_resume_test.sh TESSERA_BENCH PYTHON WORK_DIR
set -u
bench=$1
python=$2
work=$3
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# The rtl's 4-tile chip has 64 KiB tiles: the model gets the same chip.
args=(train --tiles 4 --tile-mem 64 --matrix-unit on --batch 8 --hidden 16 --max-steps 6
      --epochs 1 --eval-images 32 --quiet --target-accuracy 1)

# same DIR: DIR's outputs equal the uninterrupted run's.
same() {
  if ! "$python" "$(dirname "$0")/same_train_run.py" "$work/ref" "$1" --across-devices \
       --files weights.npz --min-log-lines 0; then
    fail "$1 differs from the uninterrupted run"
  else
    echo "ok: $1 equals the uninterrupted run"
  fi
}

"$bench" "${args[@]}" --device model --out "$work/ref" --save-weights "$work/ref/weights.npz" \
  >"$work/ref.out" 2>&1 || fail "the uninterrupted run failed: $(cat "$work/ref.out")"

for pair in model:rtl rtl:model; do
  from=${pair%:*}
  to=${pair#*:}
  dir="$work/$from-to-$to"
  mkdir -p "$dir"
  # Paused at step 3 (after the checkpoint of step 2) by the test hook, then killed.
  TESSERA_TRAIN_TEST_PAUSE=step:3 "$bench" "${args[@]}" --device "$from" --out "$dir" \
    --save-weights "$dir/weights.npz" --checkpoint-every 2 >"$dir.out" 2>"$dir.err" &
  pid=$!
  paused=0
  for _ in $(seq 1200); do
    grep -q "paused at" "$dir.err" && { paused=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$paused" = 0 ]; then
    fail "$dir: never paused at step 3: $(cat "$dir.err")"
    kill -9 "$pid" 2>/dev/null
    continue
  fi
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  if "$bench" "${args[@]}" --device "$to" --out "$dir" --save-weights "$dir/weights.npz" \
       --checkpoint-every 2 --resume "$dir/checkpoints" >"$dir.resume.out" 2>&1; then
    same "$dir"
  else
    fail "$dir: resume on $to failed: $(cat "$dir.resume.out")"
  fi
done

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
