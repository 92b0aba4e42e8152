#!/usr/bin/env bash
# tessera-run --checkpoint-at/--save/--restore end to end (docs/checkpoint.md):
#   1. a bare chip program stopped at its 3rd sync on the model and continued on the rtl prints the
#      same console and the same --stats counters as the uninterrupted run;
#   2. a *.tess with streams checkpointed at its 5th sync on the model and continued on the rtl
#      (and on the model) writes the same output file as the uninterrupted run.
# Usage: checkpoint_run.sh TESSERA_RUN CHIP_ELF TESS MINIBATCH WORKDIR
set -euo pipefail
run=$1 elf=$2 tess=$3 minibatch=$4 work=$5
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
# The --stats lines that must match (host time differs).
counters() { grep -E '^(cycles|instructions|idle slots|sync wait|exchange|tile +[0-9]+):' "$1"; }

"$run" --device model --all-tiles --stats "$elf" > full.out 2> full.err || fail "full run"
"$run" --device model --all-tiles --checkpoint-at 3 --save bare.ckpt "$elf" > part.out 2> part.err ||
  fail "save: $(cat part.err)"
grep -q "checkpoint at sync 3 (cycle [0-9]*) saved to bare.ckpt" part.err || fail "no save message"
for dev in rtl model; do
  "$run" --device $dev --restore bare.ckpt --stats > rest.out 2> rest.err || fail "restore on $dev: $(cat rest.err)"
  cmp -s full.out rest.out || fail "console after restore on $dev differs"
  diff <(counters full.err) <(counters rest.err) > /dev/null || fail "counters after restore on $dev differ"
done
# --checkpoint-at at or before the restored sync is refused.
if "$run" --restore bare.ckpt --checkpoint-at 2 --save x.ckpt > /dev/null 2> refused.err; then
  fail "--checkpoint-at 2 after sync 3 accepted"
fi
grep -q "already at sync 3" refused.err || fail "no refusal message"

"$run" --device model --input minibatch="$minibatch" --output result=full.bin "$tess" > /dev/null 2>&1 ||
  fail "full tess run"
for dev in rtl model; do
  "$run" --device model --checkpoint-at 5 --save tess.ckpt --input minibatch="$minibatch" \
    --output result=$dev.bin "$tess" > /dev/null 2> tsave.err || fail "tess save: $(cat tsave.err)"
  [ "$(stat -c %s $dev.bin)" -lt "$(stat -c %s full.bin)" ] || fail "the checkpointed run wrote everything"
  "$run" --device $dev --restore tess.ckpt --input minibatch="$minibatch" --output result=$dev.bin \
    "$tess" > /dev/null 2> trest.err || fail "tess restore on $dev: $(cat trest.err)"
  cmp -s full.bin $dev.bin || fail "stream output after restore on $dev differs"
done
echo PASS
