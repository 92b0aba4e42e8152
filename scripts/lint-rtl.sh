#!/usr/bin/env bash
# Lint the RTL with the three tools the project supports (docs: STYLE.md, "RTL"):
#   1. Verilator --lint-only -Wall of the chip (4 tiles; 16 tiles through the verilated chips'
#      simulation top rtl/sim/tess_chip_sim.sv; the FPGA variant through the board top), of a lone
#      tile (also without M, and with 32-bit counters) and of the board top, also in the iCE40
#      board's reduced configuration (RV32I without M and F, 32-bit counters, no exchange engine,
#      no checkpoint registers, TESS_ICE40) (must be clean; waivers only in
#      rtl/lint/verilator.vlt),
#   2. Yosys: read and synthesise one tile alone (MemBytes=1024, with the FPU) and a 2-tile chip
#      with the same memory and integer-only tiles (the fabric around the tiles; a second and third
#      FPU would only double the time), both without the matrix unit, printing each `stat` cell
#      count (generic cells before ABC: `synth -noabc`, since ABC's logic optimisation took most of
#      the time and checks nothing the earlier passes do not); elaborate a tile with
#      the unit (no latch); the FPGA variant of the board top has no latch and
#      no asynchronous reset,
#   3. Icarus Verilog -g2012: elaborate the chip, then run the smoke tests
#      rtl/tests/smoke/tess_tile_smoke_tb.sv (a hand-encoded program to EXIT, with 64-bit and with
#      32-bit counters) and
#      rtl/tests/smoke/tess_chip_smoke_tb.sv (2 tiles: a sync and an exchange); each prints PASS.
# Usage: scripts/lint-rtl.sh [--no-yosys] [--no-icarus]
# Exit status is non-zero if any step that ran failed.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_yosys=1
run_icarus=1
for arg in "$@"; do
  case "$arg" in
    --no-yosys) run_yosys=0 ;;
    --no-icarus) run_icarus=0 ;;
    *) echo "usage: $0 [--no-yosys] [--no-icarus]" >&2; exit 2 ;;
  esac
done

# The sources in compile order, from rtl/sources.f (the list rtl/CMakeLists.txt reads too).
mapfile -t srcs < <("$root/scripts/rtl-sources.sh" "$work") || exit 1

status=0

# The FPGA variant (TESS_FPGA: tess_clock_gate without a gated clock) and the board top (UART
# link bridge + chip) are linted too.
# rtl/sim/tess_chip_sim.sv (the verilated chips' simulation top, not in sources.f) is linted too.
# A top lints every module under it, so the 16-tile chip is linted through tess_chip_sim and the
# FPGA variant of the chip through the board top (each alone took a minute and added nothing).
for cfg in "tess_chip -GNumTiles=4" "tess_chip_sim -GNumTiles=16" \
           "tess_tile" "tess_tile -GMatrixUnit=0" "tess_tile -GHasMulDiv=0" "tess_tile -GContexts=2" "tess_tile -GCounterBits=32" \
           "tess_board -GNumTiles=4 -DTESS_FPGA" \
           "tess_board -GNumTiles=1" \
           "tess_board -GNumTiles=1 -GMemBytes=4096 -GHasFpu=0 -GHasMulDiv=0 -GCounterBits=32 -GHasExchange=0 -GHasCheckpoint=0 -GContexts=2 -GMatrixUnit=0 -DTESS_FPGA -DTESS_ICE40"; do
  read -r top options <<<"$cfg"
  echo "== verilator --lint-only -Wall ($top $options)"
  # shellcheck disable=SC2086  # options are words without spaces
  if verilator --lint-only -Wall "-I$root/rtl/core" "$root/rtl/lint/verilator.vlt" "${srcs[@]}" \
       "$root/rtl/sim/tess_chip_sim.sv" --top-module "$top" $options; then
    echo "verilator: clean"
  else
    echo "verilator: FAILED"; status=1
  fi
done

if [ "$run_yosys" = 1 ]; then
  # The full synthesis leaves the matrix unit out (MatrixUnit 0): its 16 FMAs take Yosys' generic
  # synth most of an hour. The unit is read, elaborated and proc'd below and in the FPGA check,
  # and synthesised by scripts/fpga-estimate.sh --tile (fpga.estimate_tile, label fpga-long).
  for cfg in "tess_chip chparam -set NumTiles 2 -set MemBytes 1024 -set MatrixUnit 0 -set HasFpu 0 tess_chip" \
             "tess_tile chparam -set MemBytes 1024 -set MatrixUnit 0 tess_tile"; do
    read -r top chparam <<<"$cfg"
    echo "== yosys synth -top $top ($chparam)"
    if yosys -q -l "$work/yosys_$top.log" -p "read_verilog -sv -I$root/rtl/core \
          ${srcs[*]}; $chparam; synth -noabc -top $top; \
          tee -o $work/stat_$top.txt stat" >/dev/null; then
      grep -E "Number of (cells|wires|memories):" "$work/stat_$top.txt" | tail -3
      echo "yosys: clean"
    else
      grep -m3 ERROR "$work/yosys_$top.log"
      echo "yosys: FAILED"; status=1
    fi
  done
fi

if [ "$run_yosys" = 1 ]; then
  echo "== yosys: a tile with the matrix unit elaborates (hierarchy -check, proc)"
  if yosys -q -l "$work/yosys_amp.log" -p "read_verilog -sv -I$root/rtl/core ${srcs[*]}; \
        chparam -set MemBytes 1024 tess_tile; hierarchy -check -top tess_tile; proc; \
        select -assert-none t:\$dlatch" >/dev/null; then
    echo "yosys: clean"
  else
    grep -m3 ERROR "$work/yosys_amp.log"
    echo "yosys: FAILED"; status=1
  fi
fi

if [ "$run_yosys" = 1 ]; then
  # The FPGA variant (TESS_FPGA) of the board top must have no latch (no gated clock) and no
  # asynchronous reset flop (docs/bringup.md, "FPGA-clean RTL").
  echo "== yosys: FPGA variant of tess_board has no latch and no asynchronous reset"
  if yosys -q -l "$work/yosys_fpga.log" -p "read_verilog -sv -DTESS_FPGA -I$root/rtl/core \
        ${srcs[*]}; chparam -set NumTiles 2 -set MemBytes 1024 tess_board; \
        hierarchy -top tess_board; proc; flatten; \
        select -assert-none t:\$dlatch t:\$adff t:\$adffe t:\$dffsr t:\$aldff" >/dev/null; then
    echo "yosys: clean"
  else
    grep -m3 ERROR "$work/yosys_fpga.log"
    echo "yosys: FAILED"; status=1
  fi
fi

if [ "$run_icarus" = 1 ]; then
  echo "== iverilog -g2012"
  # Icarus 11 prints a "sorry" note for every constant select in an always_* block and every
  # unique case; both are harmless (wider sensitivity, no uniqueness check) and hide real errors.
  quiet() { grep -v -e "sorry: constant selects in always_" -e "sorry: Case unique/unique0"; }
  if iverilog -g2012 "-I$root/rtl/core" -o "$work/chip.vvp" -s tess_chip "${srcs[@]}" \
       2> >(quiet >&2); then
    echo "icarus: clean"
  else
    echo "icarus: FAILED"; status=1
  fi

  echo "== icarus smoke test (rtl/tests/smoke)"
  # The simulation runs on copies with always_comb spelled always @* (the Icarus 11 workaround
  # explained in scripts/rtl-sources.sh).
  # The tile's smoke test runs with 64-bit (the default) and with 32-bit counters.
  for cfg in "tess_tile_smoke_tb" "tess_tile_smoke_tb CounterBits=32" "tess_chip_smoke_tb"; do
    read -r tb param <<<"$cfg"
    name="$tb${param:+_${param#*=}}"
    sim="$work/icarus_$name"
    mapfile -t sim_srcs < <("$root/scripts/rtl-sources.sh" "$sim" --icarus \
                              "$root/rtl/tests/smoke/$tb.sv")
    if iverilog -g2012 "-I$sim" ${param:+"-P$tb.$param"} -o "$work/$name.vvp" -s "$tb" \
         "${sim_srcs[@]}" 2> >(quiet >&2) &&
       timeout 300 vvp -n "$work/$name.vvp" | tee "$work/$name.log" &&
       grep -q "^PASS" "$work/$name.log"; then
      echo "icarus smoke ($tb${param:+ $param}): passed"
    else
      echo "icarus smoke ($tb${param:+ $param}): FAILED"; status=1
    fi
  done
fi

exit $status
