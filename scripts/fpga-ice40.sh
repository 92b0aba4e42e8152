#!/usr/bin/env bash
# iCE40 UP5K (iCEBreaker) bitstream of the board top rtl/boards/icebreaker/ with the open flow:
# Yosys synth_ice40 -> nextpnr-ice40 (--up5k, sg48, pins from the .pcf, 12 MHz target) -> icepack.
# The chip is the board's reduced configuration, ICE40 in rtl/params.json ("configs": one
# RV32I tile of 4 KiB with two contexts, without M and F), with the iCE40 variant of the RTL
# (TESS_FPGA, TESS_ICE40: register files read from block RAM on the falling edge);
# --tiles/--mem-bytes/--contexts/--fpu/--muldiv/--counter-bits/--matrix-unit override it.
# Output in build/fpga/ice40/: tessera.bin (program it with `openFPGALoader -b ice40_generic
# tessera.bin`, docs/bringup.md), yosys.log, nextpnr.log, report.txt (utilisation and Fmax, or
# how far the design is from fitting) and modules.md (logic per module, --modules).
# Fails (non-zero) when the design does not fit, does not route or misses 12 MHz.
# --modules: also synthesise without flattening (a second Yosys run, a few minutes) and write
# the per-module table modules.md (LUT4, carries, flip-flops, EBR, DSP of each module's own
# logic, submodules excluded).
# --synth-only: stop after Yosys (no place and route).
# --chip-netlist: synthesise tess_chip alone (same sources, defines, parameters and synth_ice40
# options as the bitstream; its simulation ports stay) and write it as a netlist of iCE40 cells,
# tess_chip_netlist.v (module tess_chip_netlist), for post-synthesis simulation
# (rtl/tests/netlist/build.sh); no place and route.
# --bridge-only: the short form for the regular test run: synth_ice40 of the UART link bridge and
# UARTs alone (no chip, no place and route); fails unless the bridge's buffers map to block RAM
# and its logic fits the UP5K (5280 logic cells; it needs about 1200 LUT4 today).
# Usage: scripts/fpga-ice40.sh [--tiles N] [--mem-bytes N] [--contexts N] [--fpu] [--muldiv]
#                              [--counter-bits N] [--matrix-unit 0|1] [--modules] [--synth-only] [--bridge-only]
#                              [--chip-netlist]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${FPGA_OUT:-${BUILD_DIR:-$root/build}/fpga/ice40}
tiles=""
mem=""
fpu=""
muldiv=""
contexts=""
counter_bits=""
matrix=""
modules=0
synth_only=0
bridge_only=0
chip_netlist=0
usage="usage: $0 [--tiles N] [--mem-bytes N] [--contexts N] [--fpu] [--muldiv] [--counter-bits N] [--matrix-unit 0|1] [--modules] [--synth-only] [--bridge-only] [--chip-netlist]"
while [ $# -gt 0 ]; do
  case "$1" in
    --tiles) tiles=$2; shift 2 ;;
    --mem-bytes) mem=$2; shift 2 ;;
    --contexts) contexts=$2; shift 2 ;;
    --fpu) fpu=1; shift ;;
    --muldiv) muldiv=1; shift ;;
    --counter-bits) counter_bits=$2; shift 2 ;;
    --matrix-unit) matrix=$2; shift 2 ;;
    --modules) modules=1; shift ;;
    --synth-only) synth_only=1; shift ;;
    --bridge-only) bridge_only=1; shift ;;
    --chip-netlist) chip_netlist=1; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
for tool in yosys nextpnr-ice40 icepack; do
  command -v "$tool" >/dev/null || { echo "fpga-ice40: $tool missing (scripts/setup.sh)" >&2; exit 1; }
done
mkdir -p "$out"
mapfile -t srcs < <("$root/scripts/rtl-sources.sh" "$out/gen")
board="$root/rtl/boards/icebreaker"
# The ICE40 configuration of rtl/params.json, from the package rtl-sources.sh just generated.
pkg_value() {
  local hex
  hex=$(sed -n "s/.* $1 = 32'h\([0-9a-fA-F]*\);.*/\1/p" "$out/gen/tess_params_pkg.sv")
  [ -n "$hex" ] || { echo "fpga-ice40: $1 missing from rtl/params.json" >&2; exit 1; }
  echo $((16#$hex))
}
tiles=${tiles:-$(pkg_value ICE40_NUM_TILES)}
mem=${mem:-$(pkg_value ICE40_TILE_MEM_BYTES)}
fpu=${fpu:-$(pkg_value ICE40_HAS_FPU)}
muldiv=${muldiv:-$(pkg_value ICE40_HAS_MULDIV)}
contexts=${contexts:-$(pkg_value ICE40_NUM_CONTEXTS)}
counter_bits=${counter_bits:-$(pkg_value ICE40_COUNTER_BITS)}
matrix=${matrix:-$(pkg_value ICE40_MATRIX_UNIT)}
# synth_ice40's options, for the bitstream and the chip netlist alike. -abc9 (ABC with the
# carry chains and flip-flops as boxes) packs into 5,169 logic cells and reaches 15.1 MHz where
# the default ABC pass gives 5,294 cells, more than the UP5K has (docs/bringup.md, "Timing").
synth_opts="-dsp -abc9"
if [ "$bridge_only" = 1 ]; then
  echo "== yosys synth_ice40 of tess_link_bridge (iCEBreaker sizes)"
  yosys -q -l "$out/bridge.log" -p "read_verilog -sv -DTESS_FPGA -I$root/rtl/core ${srcs[*]}; \
      chparam -set NumTiles $tiles -set MemBytes $mem -set MaxPayload 256 -set ConsoleBytes 256 \
        -set CyclesPerMs 12000 tess_link_bridge; \
      synth_ice40 -dsp -top tess_link_bridge; tee -o $out/bridge_stat.txt stat" >/dev/null \
      2>"$out/bridge.warnings"
  read -r luts ffs _ bram _ < <(python3 "$root/scripts/fpga-resources.py" "$out/bridge_stat.txt" | tr '\t' ' ')
  echo "bridge: $luts LUT4, $ffs FFs, block RAM: $bram"
  ebr=$(grep -cE "^\s+SB_RAM40_4K" "$out/bridge_stat.txt" || true)
  if [ "$ebr" -eq 0 ] || [ "$luts" -ge 5280 ]; then
    echo "fpga-ice40: FAILED: the bridge's buffers are not in block RAM or it needs $luts LUT4" >&2
    exit 1
  fi
  exit 0
fi
# The sources and the configuration, for the board top and the chip alone alike.
read_src="read_verilog -sv -DTESS_FPGA -DTESS_ICE40 -I$root/rtl/core ${srcs[*]} \
    $board/tess_board_icebreaker.sv"
cfg_params="-set NumTiles $tiles -set MemBytes $mem -set HasFpu $fpu -set HasMulDiv $muldiv \
    -set Contexts $contexts -set CounterBits $counter_bits -set MatrixUnit $matrix"
if [ "$chip_netlist" = 1 ]; then
  echo "== yosys synth_ice40 $synth_opts of tess_chip ($tiles tile(s), $mem bytes, $contexts contexts)"
  # The board top passes the ICE40 exchange and checkpoint settings down; alone, the chip gets them here.
  yosys -q -l "$out/chip_netlist.log" -p "$read_src; \
      chparam $cfg_params -set HasExchange $(pkg_value ICE40_HAS_EXCHANGE) \
        -set HasCheckpoint $(pkg_value ICE40_HAS_CHECKPOINT) tess_chip; \
      synth_ice40 $synth_opts -top tess_chip; rename -top tess_chip_netlist; \
      tee -o $out/chip_netlist_stat.txt stat; write_verilog -noattr $out/tess_chip_netlist.v" \
      >/dev/null 2>"$out/chip_netlist.warnings" ||
    { echo "fpga-ice40: Yosys FAILED (see $out/chip_netlist.log)" >&2; exit 1; }
  echo "fpga-ice40: $out/tess_chip_netlist.v"
  exit 0
fi
fpu_label=$([ "$fpu" = 1 ] && echo "with FPU" || echo "integer-only")
fpu_label+=$([ "$muldiv" = 1 ] && echo ", with M" || echo ", without M")
fpu_label+=", $contexts contexts, $counter_bits-bit counters"
echo "== yosys synth_ice40 ($tiles tile(s), $mem bytes per tile, $fpu_label)"
read_cmd="$read_src; chparam $cfg_params tess_board_icebreaker"
start=$(date +%s)
yosys -q -l "$out/yosys.log" -p "$read_cmd; \
    synth_ice40 $synth_opts -top tess_board_icebreaker -json $out/tessera.json; \
    tee -o $out/yosys_stat.txt stat" >/dev/null 2>"$out/yosys.warnings" ||
  { echo "fpga-ice40: Yosys FAILED (see $out/yosys.log)" >&2; exit 1; }
{
  echo "configuration: $tiles tile(s) x $mem bytes, $fpu_label (rtl/params.json ICE40 unless overridden)"
  python3 "$root/scripts/fpga-resources.py" "$out/yosys_stat.txt" |
    awk -F'\t' '{print "yosys: " $1 " LUT4, " $2 " FFs, block RAM " $4 ", " $5 " DSP"}'
  echo "yosys seconds: $(( $(date +%s) - start ))"
} | tee "$out/report.txt"
if [ "$modules" = 1 ]; then
  echo "== yosys synth_ice40 -noflatten (per-module table)"
  yosys -q -l "$out/yosys_modules.log" -p "$read_cmd; \
      synth_ice40 $synth_opts -noflatten -top tess_board_icebreaker; \
      tee -o $out/yosys_modules_stat.txt stat" >/dev/null 2>>"$out/yosys.warnings" ||
    { echo "fpga-ice40: Yosys -noflatten FAILED (see $out/yosys_modules.log)" >&2; exit 1; }
  python3 "$root/scripts/fpga-ice40-modules.py" "$out/yosys_modules_stat.txt" | tee "$out/modules.md"
fi
[ "$synth_only" = 1 ] && exit 0
echo "== nextpnr-ice40 --up5k --package sg48"
if ! nextpnr-ice40 --up5k --package sg48 --pcf "$board/tess_board_icebreaker.pcf" \
     --json "$out/tessera.json" --asc "$out/tessera.asc" --freq 12 -l "$out/nextpnr.log" \
     >/dev/null 2>&1; then
  grep -E "ERROR|Device utilisation|ICESTORM_LC|ICESTORM_RAM|ICESTORM_DSP|ICESTORM_SPRAM" \
    "$out/nextpnr.log" | head -20 | tee -a "$out/report.txt"
  echo "fpga-ice40: FAILED: the design does not fit, route or meet 12 MHz (see $out/nextpnr.log)" >&2
  exit 1
fi
sed -n '/Device utilisation/,/^$/p' "$out/nextpnr.log" | tee -a "$out/report.txt"
grep "Max frequency for clock" "$out/nextpnr.log" | tail -1 | tee -a "$out/report.txt"
icepack "$out/tessera.asc" "$out/tessera.bin"
echo "fpga-ice40: $out/tessera.bin"
