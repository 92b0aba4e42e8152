#!/usr/bin/env bash
# tessera-run --shard with checkpoints (docs/scale-out.md, docs/checkpoint.md):
#   1. a bare chip program stopped at its 3rd sync under mpirun --shard saves the same bytes as
#      the unsharded model; the checkpoint continued with --shard (and without) prints the console
#      and --stats counters of the uninterrupted run;
#   2. a *.tess with streams checkpointed at its 5th sync with --shard and continued with --shard
#      writes the output file of the uninterrupted run.
# Usage: shard_checkpoint.sh MPIRUN RANKS TESSERA_RUN CHIP_ELF TESS MINIBATCH WORKDIR
set -euo pipefail
mpirun=$1 ranks=$2 run=$3 elf=$4 tess=$5 minibatch=$6 work=$7
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
shard() { "$mpirun" --oversubscribe -np "$ranks" "$run" --shard "$@"; }
counters() { grep -E '^(cycles|instructions|idle slots|sync wait|exchange|tile +[0-9]+):' "$1"; }

"$run" --all-tiles --tiles 5 --stats "$elf" > full.out 2> full.err || fail "full run"
"$run" --all-tiles --tiles 5 --checkpoint-at 3 --save plain.ckpt "$elf" > /dev/null 2>&1 ||
  fail "plain save"
shard --all-tiles --tiles 5 --checkpoint-at 3 --save shard.ckpt "$elf" > part.out 2> part.err ||
  fail "sharded save: $(cat part.err)"
[ "$(grep -c 'checkpoint at sync 3 (cycle [0-9]*) saved to shard.ckpt' part.err)" = 1 ] ||
  fail "not one save message: $(cat part.err)"
cmp plain.ckpt shard.ckpt || fail "the sharded checkpoint differs from the model's"
shard --restore shard.ckpt --stats > rest.out 2> rest.err || fail "sharded restore: $(cat rest.err)"
cmp -s full.out rest.out || fail "console after the sharded restore differs"
diff <(counters full.err) <(counters rest.err) || fail "counters after the sharded restore differ"
"$run" --restore shard.ckpt --stats > rest1.out 2> rest1.err || fail "restore: $(cat rest1.err)"
cmp -s full.out rest1.out || fail "console after the unsharded restore differs"
echo "bare program: $(stat -c %s shard.ckpt) checkpoint bytes as the model's, restored alike"

"$run" --input minibatch="$minibatch" --output result=full.bin "$tess" > /dev/null 2>&1 ||
  fail "full tess run"
shard --checkpoint-at 5 --save tess.ckpt --input minibatch="$minibatch" --output result=part.bin \
  "$tess" > /dev/null 2> tsave.err || fail "tess save: $(cat tsave.err)"
[ "$(stat -c %s part.bin)" -lt "$(stat -c %s full.bin)" ] || fail "the checkpointed run wrote everything"
shard --restore tess.ckpt --input minibatch="$minibatch" --output result=part.bin "$tess" \
  > /dev/null 2> trest.err || fail "tess restore: $(cat trest.err)"
cmp full.bin part.bin || fail "stream output after the sharded restore differs"
echo "tess: $(stat -c %s full.bin) output bytes as the uninterrupted run"
