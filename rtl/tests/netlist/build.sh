#!/usr/bin/env bash
# Post-synthesis simulation of the iCE40 board's chip: Yosys synthesises tess_chip exactly as
# scripts/fpga-ice40.sh synthesises the board top (`fpga-ice40.sh --chip-netlist`: the same
# sources, defines, parameters and synth_ice40 options; the chip alone, so its ports stay),
# writes the netlist of iCE40 cells
# (SB_LUT4, SB_CARRY, SB_DFF*, SB_RAM40_4K*) as tess_chip_netlist, and Verilator builds it with
# Yosys' cell models (ice40/cells_sim.v) and the run testbench (rtl/tests/icarus/tess_chip_run_tb.sv,
# TESS_NETLIST: the image goes in through the host port) into OUTDIR/vobj/Vtess_chip_run_tb.
# Verilator rather than Icarus: the netlist runs about 200 clocks a second on Icarus and tens of
# thousands verilated. Flip-flops start at 0 and block RAM at 0 (Yosys leaves the EBR's INIT
# undefined, which icepack writes as 0): as after configuring the FPGA (--x-initial 0,
# --x-assign 0; Verilator is two-state).
# The arguments are the ICE40 configuration's values (run-ice40.sh reads them from rtl/params.json);
# the synthesis takes exchange and checkpoints from there itself, the testbench from here.
# Usage: rtl/tests/netlist/build.sh OUTDIR TILES MEM_BYTES FPU MULDIV CONTEXTS COUNTER_BITS
#                                   EXCHANGE CHECKPOINT MATRIX_UNIT
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
[ $# -eq 10 ] || { sed -n '/^# Usage/,/^[^#]/s/^# //p' "$0" >&2; exit 2; }
out=$1 tiles=$2 mem=$3 fpu=$4 muldiv=$5 contexts=$6 counter_bits=$7 exchange=$8 checkpoint=$9 matrix=${10}
mkdir -p "$out"
# Yosys' data directory (ice40/cells_sim.v), beside its binary as Yosys itself finds it.
cells="$(dirname "$(readlink -f "$(command -v yosys)")")/../share/yosys/ice40/cells_sim.v"
[ -f "$cells" ] || { echo "netlist: $cells missing (scripts/setup.sh installs Yosys)" >&2; exit 1; }
FPGA_OUT="$out" "$root/scripts/fpga-ice40.sh" --chip-netlist --tiles "$tiles" --mem-bytes "$mem" \
  --contexts "$contexts" --counter-bits "$counter_bits" --matrix-unit "$matrix" \
  $([ "$fpu" = 1 ] && echo --fpu) $([ "$muldiv" = 1 ] && echo --muldiv)
echo "== verilator --binary (netlist, cell models, testbench)"
# The cell models and the flat netlist are not lint-clean Verilog of ours: their warnings are
# not errors here (the RTL's lint is scripts/lint-rtl.sh). NO_ICE40_DEFAULT_ASSIGNMENTS: Yosys
# connects every cell port it uses; the models' port defaults are SystemVerilog Verilator takes,
# but they would only hide an unconnected port.
verilator --binary --timing -O1 --x-assign 0 --x-initial 0 \
  -Wno-fatal -Wno-lint -Wno-style -Wno-UNOPTFLAT -Wno-TIMESCALEMOD \
  -DTESS_NETLIST -DNO_ICE40_DEFAULT_ASSIGNMENTS -I"$root/rtl/tests/common" \
  --top-module tess_chip_run_tb -GNumTiles="$tiles" -GMemBytes="$mem" -GHasFpu="$fpu" \
  -GHasMulDiv="$muldiv" -GCounterBits="$counter_bits" -GContexts="$contexts" \
  -GHasExchange="$exchange" -GHasCheckpoint="$checkpoint" -GMatrixUnit="$matrix" --Mdir "$out/vobj" \
  "$out/gen/tess_params_pkg.sv" "$cells" "$out/tess_chip_netlist.v" \
  "$root/rtl/tests/icarus/tess_chip_run_tb.sv" > "$out/verilator.log" 2>&1 ||
  { echo "netlist: Verilator FAILED (see $out/verilator.log)" >&2; exit 1; }
