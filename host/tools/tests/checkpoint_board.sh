#!/usr/bin/env bash
# A checkpoint saved on the model, restored through the RTL link bridge of the simulated board
# (serial: over a pty) and run to the end prints the console and --stats counters of the
# uninterrupted model run (docs/checkpoint.md).
# Usage: checkpoint_board.sh TESSERA_RUN BOARD_SIM CHIP_ELF WORKDIR
set -euo pipefail
run=$1 sim=$2 elf=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
counters() { grep -E '^(cycles|instructions|idle slots|sync wait|exchange|tile +[0-9]+):' "$1"; }
"$run" --device model --all-tiles --stats "$elf" > full.out 2> full.err || fail "full run"
"$run" --device model --all-tiles --checkpoint-at 3 --save board.ckpt "$elf" > /dev/null 2>&1 || fail "save"
"$here/with_board_sim.sh" "$sim" -- "$run" --device @DEVICE@ --restore board.ckpt --stats \
  > board.out 2> board.err || fail "restore over the board: $(cat board.err)"
cmp -s full.out board.out || fail "console differs"
diff <(counters full.err) <(counters board.err) > /dev/null || fail "counters differ"
echo PASS
