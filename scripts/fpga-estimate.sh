#!/usr/bin/env bash
# Resource estimates of the tessera chip for FPGA families with Yosys (docs/bringup.md,
# "Resources"): synth_xilinx for a 7-series part (xc7a100t class) and an UltraScale+ part
# (xcvu9p class), synth_ecp5 for Lattice ECP5; the chip top (tess_chip, FPGA variant of the RTL:
# TESS_FPGA) with 64 KiB per tile at each tile count, or one tile alone (tess_tile) twice: with the
# matrix unit (rtl/params.json MATRIX_UNIT, the default) and without it (MatrixUnit = 0), so the
# unit's cost is the difference of the two rows (docs/tile.md, "Matrix unit").
# Synthesis only (no place and route): LUTs, FFs, LUT-RAM cells, block RAM and DSPs per run.
# The runs are sequential (one Yosys at a time). synth_xilinx keeps the hierarchy (the tile is
# synthesised once); synth_ecp5 flattens, so its time grows with the tile count; flow ecp5h is
# synth_ecp5 -noflatten (the hierarchy kept: the tile with the matrix unit, whose flattened
# synthesis outgrows 24 GiB, takes about 4 CPU minutes and 1.8 GB), the --tile default for ECP5.
# Output: build/fpga/estimate/<flow>_<top>.stat, .log and resources.md (one row per run).
# Usage: scripts/fpga-estimate.sh [--flows "xc7 xcup ecp5 ecp5h"] [--tiles "1 4 16"] [--tile]
#   --tile: synthesise tess_tile alone (the per-tile figure, with and without the matrix unit)
#           instead of the chip
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${FPGA_OUT:-${BUILD_DIR:-$root/build}/fpga/estimate}
flows=""
tiles="1 4 16"
tile_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --flows) flows=$2; shift 2 ;;
    --tiles) tiles=$2; shift 2 ;;
    --tile) tile_only=1; shift ;;
    *) echo "usage: $0 [--flows \"xc7 xcup ecp5 ecp5h\"] [--tiles \"1 4 16\"] [--tile]" >&2; exit 2 ;;
  esac
done
[ -n "$flows" ] || { [ "$tile_only" = 1 ] && flows="xc7 xcup ecp5h" || flows="xc7 xcup ecp5"; }
mkdir -p "$out"
mapfile -t srcs < <("$root/scripts/rtl-sources.sh" "$out/gen")
table="$out/resources.md"
[ -f "$table" ] || printf '| flow | design | LUTs | FFs | LUT-RAM cells | block RAM | DSP | Yosys s |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n' > "$table"

synth_cmd() {
  case "$1" in
    xc7)  echo "synth_xilinx -family xc7" ;;
    xcup) echo "synth_xilinx -family xcup" ;;
    ecp5) echo "synth_ecp5" ;;
    ecp5h) echo "synth_ecp5 -noflatten" ;;
    *) echo "unknown flow $1" >&2; return 1 ;;
  esac
}

designs=()
if [ "$tile_only" = 1 ]; then
  designs=("tess_tile:" "tess_tile:nounit")
else
  for n in $tiles; do designs+=("tess_chip:$n"); done
fi

status=0
for flow in $flows; do
  cmd=$(synth_cmd "$flow")
  for d in "${designs[@]}"; do
    top=${d%%:*}
    n=${d#*:}
    name="${flow}_${top}${n:+_$n}"
    chparam=""
    label="$top${n:+ ($n tiles)}"
    if [ "$n" = nounit ]; then
      chparam="chparam -set MatrixUnit 0 $top;"
      label="$top (no matrix unit)"
    elif [ -n "$n" ]; then
      chparam="chparam -set NumTiles $n $top;"
    elif [ "$top" = tess_tile ]; then
      label="$top (matrix unit)"
    fi
    echo "== $name: $cmd"
    start=$(date +%s)
    if yosys -q -l "$out/$name.log" -p "read_verilog -sv -DTESS_FPGA -I$root/rtl/core ${srcs[*]}; \
         $chparam $cmd -top $top; tee -o $out/$name.stat stat" >/dev/null 2>"$out/$name.warnings"; then
      secs=$(( $(date +%s) - start ))
      IFS=$'\t' read -r luts ffs lutram bram dsp < <(python3 "$root/scripts/fpga-resources.py" "$out/$name.stat")
      echo "| $flow | $label | $luts | $ffs | $lutram | $bram | $dsp | $secs |" | tee -a "$table"
    else
      echo "$name: Yosys FAILED (see $out/$name.log)"; status=1
    fi
  done
done
exit $status
