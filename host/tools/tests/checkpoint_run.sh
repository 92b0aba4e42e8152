#!/usr/bin/env bash
# tessera-run --checkpoint-at/--save/--restore end to end (docs/checkpoint.md):
#   1. a bare chip program stopped at its 3rd sync on the model and continued on the rtl prints the
#      same console and the same --stats counters as the uninterrupted run;
#   2. a *.tess with streams checkpointed at its 5th sync on the model and continued on the rtl
#      (and on the model) writes the same output file as the uninterrupted run;
#   3. what a checkpoint or the options say that cannot be right is refused: a --checkpoint-at the
#      run never reaches (nothing saved), stream positions that are not what the recorded host
#      syncs moved, counts that continuing would wrap (files edited with valid CRCs).
# Usage: checkpoint_run.sh TESSERA_RUN CHIP_ELF TESS MINIBATCH WORKDIR PYTHON
set -euo pipefail
run=$1 elf=$2 tess=$3 minibatch=$4 work=$5 python=$6
edit="$python $(dirname "$(readlink -f "$0")")/edit_app_section.py"
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

# 3. A --checkpoint-at past the last sync saves nothing and says so, with a failing status.
for prog in "$elf" "$tess"; do
  if "$run" --device model --all-tiles --checkpoint-at 100000 --save never.ckpt \
    --input minibatch="$minibatch" --output result=never.bin --unconnected-ok "$prog" \
    > /dev/null 2> never.err; then
    fail "--checkpoint-at past the end of $prog exited 0"
  fi
  grep -q "checkpoint-at 100000: the run ended after [0-9]* syncs; no checkpoint was saved" never.err ||
    fail "no message for a missed --checkpoint-at: $(cat never.err)"
  [ ! -e never.ckpt ] || fail "a missed --checkpoint-at wrote a file"
done
# Stream positions: each one edited alone (an input fed twice from 0, an output one byte short).
offsets=$(grep -a -o 'offsets[ 0-9]*' tess.ckpt | head -1 | cut -d' ' -f2-)
read -r -a pos <<< "$offsets"
[ "${#pos[@]}" -ge 2 ] || fail "expected two stream positions in tess.ckpt, got '$offsets'"
for i in 0 1; do
  for bad in 0 $((pos[i] - 1)); do
    edited=("${pos[@]}")
    edited[i]=$bad
    $edit tess.ckpt bad.ckpt offsets "${edited[@]}" || fail "edit offsets"
    if "$run" --device model --restore bad.ckpt --input minibatch="$minibatch" \
      --output result=bad.bin "$tess" > /dev/null 2> bad.err; then
      fail "stream positions '${edited[*]}' (saved '$offsets') accepted"
    fi
    grep -q 'bad.ckpt: checkpoint: stream ".*" is at byte '"$bad"', but the host syncs it records moved' bad.err ||
      fail "no message for stream positions '${edited[*]}': $(cat bad.err)"
  done
done
# A sync count that the next sync would wrap to 0 (it used to match an absent --checkpoint-at).
$edit bare.ckpt wrap.ckpt syncs 18446744073709551615 || fail "edit syncs"
if "$run" --device model --restore wrap.ckpt > /dev/null 2> wrap.err; then
  fail "a sync count of 2^64 - 1 accepted"
fi
grep -q 'wrap.ckpt: tessera-run item "syncs": "18446744073709551615" is not a count below 2^62' wrap.err ||
  fail "no message for a sync count of 2^64 - 1: $(cat wrap.err)"
echo PASS
