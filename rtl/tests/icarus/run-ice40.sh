#!/usr/bin/env bash
# ctest icarus_ice40_model: the iCE40 board's reduced chip (rtl/params.json, configs: ICE40: one
# RV32I tile of 4 KiB without M and F, 32-bit tile counters, no exchange engine, no checkpoint
# registers), simulated by Icarus exactly as scripts/fpga-ice40.sh synthesises it (TESS_FPGA,
# TESS_ICE40: register-file reads from block RAM on the falling edge), against the model's preset
# ice40 (tessera-run --device model --preset ice40). For every program: the same end state, the same chip cycle count, the
# same exit code or the same trap (pc, cause, value), and the same tile counters (instructions,
# idle slots, sync-wait and exchange cycles, and each context's C_INSTRET read through CTX_SEL as the
# board's bridge reads it for STATS). Icarus runs each program twice, with CTRL.RESET and the
# image loaded again between the runs (the iCE40 register files are cleared after every reset by
# a sequencer, isa_reset_regs checks they read 0): both runs must end alike, the second is compared.
# The programs are linked for 4 KiB (sw/tests/isa, *_ice40.elf). A program must halt with exit
# code 0 on both, or, given as trap:PROGRAM.elf, trap on both at the same pc, cause and value.
# With --netlist the same comparison runs on Yosys' netlist of the chip instead of the RTL
# (rtl/tests/netlist/build.sh: synth_ice40 as for the bitstream, verilated with the cell models).
# Usage: run-ice40.sh [--netlist] TESSERA_RUN WORKDIR [trap:]PROGRAM.elf...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
netlist=0
if [ "${1:-}" = --netlist ]; then
  netlist=1
  shift
fi
[ $# -gt 2 ] || { echo "usage: $0 [--netlist] TESSERA_RUN WORKDIR PROGRAM.elf..." >&2; exit 2; }
run=$1 work=$2
shift 2
mkdir -p "$work"
pkg_value() {  # NAME -> decimal value of tess_params_pkg::NAME
  local hex
  hex=$(sed -n "s/.* $1 = 32'h\([0-9a-fA-F]*\);.*/\1/p" "$work/params/tess_params_pkg.sv")
  [ -n "$hex" ] || { echo "run-ice40: $1 not in rtl/params.json" >&2; exit 1; }
  echo $((16#$hex))
}
"$here/../../../scripts/rtl-sources.sh" "$work/params" >/dev/null
tiles=$(pkg_value ICE40_NUM_TILES)
mem=$(pkg_value ICE40_TILE_MEM_BYTES)
fpu=$(pkg_value ICE40_HAS_FPU)
muldiv=$(pkg_value ICE40_HAS_MULDIV)
counter_bits=$(pkg_value ICE40_COUNTER_BITS)
exchange=$(pkg_value ICE40_HAS_EXCHANGE)
checkpoint=$(pkg_value ICE40_HAS_CHECKPOINT)
matrix=$(pkg_value ICE40_MATRIX_UNIT)
contexts=$(pkg_value ICE40_NUM_CONTEXTS)
if [ "$netlist" = 1 ]; then
  "$here/../netlist/build.sh" "$work" "$tiles" "$mem" "$fpu" "$muldiv" "$contexts" \
    "$counter_bits" "$exchange" "$checkpoint" "$matrix"
  sim=("$work/vobj/Vtess_chip_run_tb")
  simname=netlist
else
  "$here/build.sh" "$work" -Ptess_chip_run_tb.NumTiles="$tiles" -Ptess_chip_run_tb.MemBytes="$mem" \
    -Ptess_chip_run_tb.HasFpu="$fpu" -Ptess_chip_run_tb.HasMulDiv="$muldiv" \
    -Ptess_chip_run_tb.CounterBits="$counter_bits" -Ptess_chip_run_tb.Contexts="$contexts" \
    -Ptess_chip_run_tb.HasExchange="$exchange" \
    -Ptess_chip_run_tb.HasCheckpoint="$checkpoint" -Ptess_chip_run_tb.MatrixUnit="$matrix" \
    -DTESS_FPGA -DTESS_ICE40
  sim=(vvp -n "$work/run.vvp")
  simname=icarus
fi
status=0
for arg in "$@"; do
  elf=${arg#trap:}
  expect_trap=0
  [ "$elf" = "$arg" ] || expect_trap=1
  name=$(basename "$elf" .elf)
  python3 "$here/elf2memh.py" "$elf" "$work/$name.memh" "$mem"
  "${sim[@]}" "+image=$work/$name.memh" +runs=2 > "$work/$name.$simname.txt"
  # The testbench: RESULT state=S cycles=C exit=E ...; ERROR pc=P cause=K value=V in the error state.
  read -r state cycles exit_code < <(sed -n \
    's/^RESULT state=\([0-9]*\) cycles=\([0-9]*\) exit=\([0-9]*\) .*/\1 \2 \3/p' \
    "$work/$name.$simname.txt")
  sim_trap=$(sed -n 's/^ERROR pc=\([0-9a-f]*\) cause=\([0-9]*\) value=\([0-9a-f]*\)/pc 0x\1 cause \2 value 0x\3/p' \
    "$work/$name.$simname.txt")
  # Model: --stats prints "cycles: C"; a trap "... trapped at pc 0xP: ... (cause K), value 0xV".
  set +e
  "$run" --device model --preset ice40 --stats "$elf" > "$work/$name.model.out" \
    2> "$work/$name.model.txt"
  model_status=$?
  set -e
  model_cycles=$(sed -n 's/^cycles: *\([0-9]*\).*/\1/p' "$work/$name.model.txt")
  sim_counters=$(sed -n 's/^COUNTERS \(.*\)/\1/p' "$work/$name.$simname.txt")
  model_counters="instr=$(sed -n 's/^instructions: *\([0-9]*\).*/\1/p' "$work/$name.model.txt")"
  model_counters+=" idle=$(sed -n 's/^idle slots: *\([0-9]*\).*/\1/p' "$work/$name.model.txt")"
  model_counters+=" syncwait=$(sed -n 's/^sync wait: *\([0-9]*\).*/\1/p' "$work/$name.model.txt")"
  model_counters+=" exch=$(sed -n 's/^exchange: *\([0-9]*\).*/\1/p' "$work/$name.model.txt")"
  model_counters+=" ctx=$(sed -n 's/^instructions: .*(per context: \([0-9 ]*\)).*/\1/p' \
    "$work/$name.model.txt")"
  model_trap=$(sed -n 's/.*trapped at pc \(0x[0-9a-f]*\): .* (cause \([0-9]*\)), value \(0x[0-9a-f]*\).*/pc \1 cause \2 value \3/p' \
    "$work/$name.model.txt")
  line="$name: $simname state $state, $cycles cycles, exit $exit_code${sim_trap:+, trap $sim_trap};"
  line+=" model $model_cycles cycles, status $model_status${model_trap:+, trap $model_trap}"
  line+="; counters $simname ${sim_counters:-none}, model $model_counters"
  # The first of the two runs (RUN 1, before CTRL.RESET) must end as the second.
  first_run=$(sed -n 's/^RUN 1 \(state=.*\)/\1/p' "$work/$name.$simname.txt")
  line+="; first run ${first_run:-missing}"
  ok=1
  [ "$first_run" = "state=$state cycles=$cycles exit=$exit_code" ] || ok=0
  [ -n "$cycles" ] && [ "$cycles" = "$model_cycles" ] || ok=0
  [ -n "$sim_counters" ] && [ "$sim_counters" = "$model_counters" ] || ok=0
  if [ "$expect_trap" = 1 ]; then
    [ -n "$sim_trap" ] && [ "$model_trap" = "$sim_trap" ] || ok=0
  else
    # A program that halts must pass its own checks on both (exit code 0).
    [ "$state" = "$(pkg_value ST_HALTED)" ] && [ "$exit_code" = 0 ] && [ "$model_status" = 0 ] ||
      ok=0
  fi
  if [ "$ok" = 1 ]; then echo "PASS $line"; else echo "FAIL $line"; status=1; fi
done
exit $status
