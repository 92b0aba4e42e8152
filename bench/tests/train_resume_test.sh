#!/usr/bin/env bash
# tessera-bench train --checkpoint-every / --resume (docs/training.md, "Checkpoints and resume"):
# a short run (with the cosine learning-rate schedule) killed with SIGKILL at several points
# (between checkpoints, in the middle of a save, in the second epoch, twice in a row) and resumed
# ends with the uninterrupted run's result.json (all but the wall-clock figures), MLLOG lines (all
# but time_ms), trace, pictures and saved weights, byte for byte; SIGTERM and SIGINT save, say
# how to resume and resume the same; corrupt, truncated and mismatched (options, chip
# configuration) checkpoints are refused naming the file and what differs.
# On rtl, tcp and serial (a tessera-server fronting the model over TCP or a pty) the short form
# runs: the uninterrupted run
# and one SIGKILL halfway through a save, resumed. With mpi, 2 replicas under mpirun: rank 1
# killed halfway through its 3rd save (rank 0 has saved it: both resume from the one before),
# SIGTERM to rank 1 alone (both save at the same host sync), and other rank counts refused.
# Usage: train_resume_test.sh TESSERA_BENCH PYTHON WORK_DIR [model | rtl | tcp TESSERA_SERVER |
#        serial TESSERA_SERVER | mpi MPIRUN]
set -u
bench=$1
python=$2
work=$3
backend=${4:-model}
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

device=$backend
if [ "$backend" = tcp ]; then
  "$5" --device model --tiles 4 --listen 127.0.0.1:0 >"$work/server.log" 2>&1 &
  server_pid=$!
  trap 'kill $server_pid 2>/dev/null || true' EXIT
  port=
  for _ in $(seq 100); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$work/server.log" | cut -d: -f2 || true)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "FAIL: tessera-server did not start: $(cat "$work/server.log")"; exit 1; }
  device=tcp://127.0.0.1:$port
elif [ "$backend" = serial ]; then
  "$5" --device model --tiles 4 --pty >"$work/server.log" 2>&1 &
  server_pid=$!
  trap 'kill $server_pid 2>/dev/null || true' EXIT
  pty=
  for _ in $(seq 100); do
    pty=$(grep -o 'pty /dev/[^ ]*' "$work/server.log" | cut -d' ' -f2 || true)
    [ -n "$pty" ] && break
    sleep 0.1
  done
  [ -n "$pty" ] || { echo "FAIL: tessera-server --pty did not start: $(cat "$work/server.log")"; exit 1; }
  device=serial:$pty
fi

# The cosine schedule rewrites the device's lr at every step: a resumed run must go on with the
# rates of the steps it resumes at.
args=(train --device "$device" --tiles 4 --batch 8 --hidden 16 --max-steps 6 --epochs 2
      --eval-images 32 --quiet --target-accuracy 1 --lr-schedule cosine)

# same DIR [REF]: DIR's outputs equal the uninterrupted run's (REF, default ref).
same() {
  if ! "$python" "$(dirname "$0")/same_train_run.py" "${2:-$work/ref}" "$1"; then
    fail "$1 differs from the uninterrupted run"
  else
    echo "ok: $1 equals the uninterrupted run"
  fi
}

# start DIR POINT [CHECKPOINT_ARGS...]: run in the background until the test hook pauses it at
# POINT (TESSERA_TRAIN_TEST_PAUSE); sets pid.
start() {
  local dir=$1 point=$2
  shift 2
  TESSERA_TRAIN_TEST_PAUSE=$point "$bench" "${args[@]}" --out "$dir" --save-weights "$dir/weights.npz" \
    "$@" >"$dir.out" 2>"$dir.err" &
  pid=$!
  for _ in $(seq 600); do
    grep -q "paused at" "$dir.err" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  fail "$dir: never paused at $point: $(cat "$dir.err")"
  return 1
}

# resume DIR: continue from DIR/checkpoints to the end.
resume() {
  local dir=$1
  if ! "$bench" "${args[@]}" --out "$dir" --save-weights "$dir/weights.npz" \
       --checkpoint-every 2 --resume "$dir/checkpoints" >"$dir.resume.out" 2>&1; then
    fail "$dir: resume failed: $(cat "$dir.resume.out")"
    return 1
  fi
}

if [ "$backend" = mpi ]; then
  mpirun=$5
  mpi_args=(train --tiles 4 --hidden 16 --batch 16 --max-steps 6 --epochs 2 --eval-images 64
            --quiet --target-accuracy 1 --replicas 2)
  # mpi_run DIR [RANK1_PAUSE] -- ARGS...: 2 ranks, rank 1 with TESSERA_TRAIN_TEST_PAUSE set.
  mpi_start() {
    local dir=$1 pause=$2
    shift 2
    mkdir -p "$dir"
    "$mpirun" --oversubscribe -np 1 "$bench" "${mpi_args[@]}" --out "$dir" "$@" : \
      -np 1 env TESSERA_TRAIN_TEST_PAUSE="$pause" "$bench" "${mpi_args[@]}" --out "$dir" "$@" \
      >"$dir.out" 2>"$dir.err" &
    mpi_pid=$!
  }
  mpi_paused_rank() {
    for _ in $(seq 600); do
      rank_pid=$(grep -o "paused at .* (pid [0-9]*)" "$1.err" | grep -o "pid [0-9]*" | cut -d' ' -f2)
      [ -n "$rank_pid" ] && return 0
      sleep 0.1
    done
    fail "$1: rank 1 never paused: $(cat "$1.err")"
    return 1
  }
  mpi_resume() {
    if ! timeout 300 "$mpirun" --oversubscribe -np 2 "$bench" "${mpi_args[@]}" --out "$1" \
         --checkpoint-every 2 --resume "$1/checkpoints" >"$1.resume.out" 2>&1; then
      fail "$1: resume failed: $(cat "$1.resume.out")"
      return 1
    fi
  }
  timeout 300 "$mpirun" --oversubscribe -np 2 "$bench" "${mpi_args[@]}" --out "$work/ref" \
    >"$work/ref.out" 2>&1 || fail "the uninterrupted run failed: $(cat "$work/ref.out")"
  dir="$work/kill-rank1-save-3"
  mpi_start "$dir" save:3 --checkpoint-every 2
  if mpi_paused_rank "$dir"; then
    sleep 1  # rank 0 finishes its 3rd save and waits for rank 1 in the next step
    kill -9 "$rank_pid"
    wait "$mpi_pid" 2>/dev/null
    n0=$(ls "$dir/checkpoints" | grep -c 'ckpt$')
    new0=$(ls "$dir/checkpoints" | grep 'ckpt$' | tail -1)
    new1=$(ls "$dir/checkpoints/rank-1" | grep 'ckpt$' | tail -1)
    [ "$n0" -eq 2 ] && [ "$new0" != "$new1" ] ||
      fail "want rank 0 one checkpoint ahead of rank 1: $new0, $new1"
    mpi_resume "$dir" && same "$dir" && same "$dir/rank-1" "$work/ref/rank-1"
  fi
  dir="$work/term-rank1"
  mpi_start "$dir" step:5 --checkpoint-every 100
  if mpi_paused_rank "$dir"; then
    kill -TERM "$rank_pid"
    wait "$mpi_pid"
    [ $? -ne 0 ] || fail "SIGTERM: mpirun exited 0"
    grep -q "stopped by SIGTERM after step 5" "$dir.err" || fail "SIGTERM: no resume hint: $(cat "$dir.err")"
    [ "$(ls "$dir/checkpoints" | grep 'ckpt$' | tail -1)" = "$(ls "$dir/checkpoints/rank-1" | grep 'ckpt$' | tail -1)" ] ||
      fail "SIGTERM: the ranks saved at different host syncs"
    mpi_resume "$dir" && same "$dir" && same "$dir/rank-1" "$work/ref/rank-1"
  fi
  # Other rank counts.
  out=$(timeout 120 "$mpirun" --oversubscribe -np 4 "$bench" train --tiles 4 --hidden 16 --batch 16 \
        --max-steps 6 --epochs 2 --eval-images 64 --quiet --target-accuracy 1 --replicas 4 \
        --out "$dir" --resume "$dir/checkpoints" 2>&1)
  grep -q "they were saved by fewer ranks than this run's 4\|saved with replicas 2, this run has replicas 4" <<<"$out" ||
    fail "4 ranks resumed a 2-rank checkpoint: $out"
  out=$("$bench" train --tiles 4 --hidden 16 --batch 16 --max-steps 6 --epochs 2 --eval-images 64 \
        --quiet --target-accuracy 1 --out "$dir" --resume "$dir/checkpoints" 2>&1)
  grep -q "saved with replicas 2, this run has replicas 1" <<<"$out" ||
    fail "1 rank resumed a 2-rank checkpoint: $out"
  [ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
  echo "all passed"
  exit 0
fi
"$bench" "${args[@]}" --out "$work/ref" --save-weights "$work/ref/weights.npz" >"$work/ref.out" 2>&1 ||
  fail "the uninterrupted run failed: $(cat "$work/ref.out")"
# Checkpoints alone change nothing.
"$bench" "${args[@]}" --out "$work/saving" --save-weights "$work/saving/weights.npz" \
  --checkpoint-every 2 >"$work/saving.out" 2>&1 || fail "the saving run failed"
same "$work/saving"
if [ "$backend" != model ]; then
  dir="$work/kill-save-3"
  mkdir -p "$dir"
  if start "$dir" save:3 --checkpoint-every 2; then
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    resume "$dir" && same "$dir"
  fi
  [ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
  echo "all passed"
  exit 0
fi
[ "$(ls "$work/saving/checkpoints" | wc -l)" -eq 2 ] ||
  fail "the saving run kept $(ls "$work/saving/checkpoints") (want the newest two)"

# SIGKILL at: step 3 (between the checkpoints of steps 2 and 4), halfway through the 3rd save (its
# temporary file torn), step 9 (second epoch), halfway through the 5th save.
for point in step:3 save:3 step:9 save:5; do
  dir="$work/kill-${point/:/-}"
  mkdir -p "$dir"
  start "$dir" "$point" --checkpoint-every 2 || continue
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  resume "$dir" && same "$dir"
done
# Killed twice: at step 3, then the resumed run halfway through its 2nd save.
dir="$work/kill-twice"
mkdir -p "$dir"
if start "$dir" step:3 --checkpoint-every 2; then
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  if start "$dir" save:2 --checkpoint-every 2 --resume "$dir/checkpoints"; then
    kill -9 "$pid"
    wait "$pid" 2>/dev/null
    resume "$dir" && same "$dir"
  fi
fi

# SIGTERM and SIGINT: a checkpoint at the next host sync, a clean exit (128 + signal) that says
# how to resume, and the resumed run equal to the uninterrupted one.
for sig in TERM INT; do
  dir="$work/sig$sig"
  mkdir -p "$dir"
  start "$dir" step:5 --checkpoint-every 100 || continue
  kill -$sig "$pid"
  wait "$pid"
  rc=$?
  want=$((128 + $(kill -l $sig)))
  [ "$rc" -eq "$want" ] || fail "SIG$sig: exit code $rc, want $want"
  grep -q "stopped by SIG$sig after step 5: saved .*; continue with the same command and --resume $dir/checkpoints" "$dir.err" ||
    fail "SIG$sig: no resume hint: $(cat "$dir.err")"
  resume "$dir" && same "$dir"
done

# refused DIR "ARGS" "MESSAGE": resuming from DIR/checkpoints with ARGS fails naming MESSAGE.
refused() {
  local dir=$1 extra=$2 want=$3 out
  # shellcheck disable=SC2086  # extra is a word list on purpose
  out=$("$bench" "${args[@]}" --out "$dir" --resume "$dir/checkpoints" $extra 2>&1)
  if [ $? -eq 0 ]; then
    fail "resume with '$extra' was accepted"
  elif ! grep -qF -- "$want" <<<"$out"; then
    fail "resume with '$extra': want \"$want\", got: $out"
  else
    echo "ok: refused: $want"
  fi
}
dir="$work/mismatch"
mkdir -p "$dir"
if start "$dir" step:5 --checkpoint-every 2; then
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  ckpt=$(ls "$dir"/checkpoints/train-*.ckpt | tail -1)
  refused "$dir" "--seed 2" "checkpoint $ckpt: saved with seed 1, this run has seed 2"
  refused "$dir" "--lr 0.5" "checkpoint $ckpt: saved with lr 0.05, this run has lr 0.5"
  refused "$dir" "--model lenet" "checkpoint $ckpt: saved with model mlp, this run has model lenet"
  refused "$dir" "--tile-mem 64" "checkpoint $ckpt: saved with tile-mem 0, this run has tile-mem 64"
  # A chip of another configuration: the rtl's 64 KiB tiles, the model's 128 KiB for this MLP.
  out=$("$bench" train --device rtl --tiles 4 --batch 8 --hidden 16 --max-steps 6 --epochs 2 \
        --eval-images 32 --quiet --target-accuracy 1 --lr-schedule cosine --out "$dir" \
        --resume "$dir/checkpoints" 2>&1)
  want="checkpoint $ckpt: checkpoint: saved on a chip of 4 tiles x 131072 bytes (6 contexts); this device has 4 tiles x 65536 bytes"
  if grep -qF -- "$want" <<<"$out"; then echo "ok: refused: $want"; else fail "rtl resume: want \"$want\", got: $out"; fi
  cp "$ckpt" "$work/good.ckpt"
  # A flipped byte in the middle, then the file cut short.
  size=$(stat -c %s "$ckpt")
  printf '\x5a' | dd of="$ckpt" bs=1 seek=$((size / 2)) conv=notrunc status=none
  refused "$dir" "" "checkpoint $ckpt: checkpoint: section"
  cp "$work/good.ckpt" "$ckpt"
  truncate -s $((size - 100)) "$ckpt"
  refused "$dir" "" "checkpoint $ckpt: checkpoint: the file is truncated"
  cp "$work/good.ckpt" "$ckpt"
  resume "$dir" && same "$dir"
fi
refused "$work/none" "" "--resume $work/none/checkpoints: not a directory of checkpoints"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
