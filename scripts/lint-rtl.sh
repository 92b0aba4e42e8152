#!/usr/bin/env bash
# Lint the tile RTL with the three tools the project supports (docs: STYLE.md, "RTL"):
#   1. Verilator --lint-only -Wall (must be clean; waivers only in rtl/lint/verilator.vlt),
#   2. Yosys: read and synthesise tess_tile with a small memory (MemBytes=4096) and print `stat`,
#   3. Icarus Verilog -g2012 elaboration.
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

python3 "$root/scripts/gen_params.py" "$root/rtl/params.json" "$work/tess_params_pkg.sv" \
  "$work/chip_params.h" || exit 1

pkgs=("$work/tess_params_pkg.sv" "$root/rtl/tess_pkg.sv")
fpu=("$root/rtl/fpu/tess_fpu_round.sv" "$root/rtl/fpu/tess_fpu.sv" "$root/rtl/fpu/tess_fpu_divsqrt.sv")
core=()
for m in tess_core_pkg tess_decoder tess_alu tess_mul tess_div tess_regfile tess_sram tess_csr \
         tess_mmio tess_result_queue tess_core tess_tile; do
  core+=("$root/rtl/core/$m.sv")
done

status=0

echo "== verilator --lint-only -Wall"
if verilator --lint-only -Wall "$root/rtl/lint/verilator.vlt" "${pkgs[@]}" "${fpu[@]}" "${core[@]}" \
     --top-module tess_tile; then
  echo "verilator: clean"
else
  echo "verilator: FAILED"; status=1
fi

if [ "$run_yosys" = 1 ]; then
  echo "== yosys synth -top tess_tile (MemBytes=4096)"
  if yosys -q -l "$work/yosys.log" -p "read_verilog -sv ${pkgs[*]} ${fpu[*]} ${core[*]}; \
        chparam -set MemBytes 4096 tess_tile; synth -top tess_tile; tee -o $work/stat.txt stat" \
        >/dev/null; then
    grep -E "Number of (cells|wires):" "$work/stat.txt" | tail -2
    echo "yosys: clean"
  else
    grep -m3 ERROR "$work/yosys.log"
    echo "yosys: FAILED"; status=1
  fi
fi

if [ "$run_icarus" = 1 ]; then
  echo "== iverilog -g2012"
  if iverilog -g2012 -o "$work/tile.vvp" -s tess_tile "${pkgs[@]}" "${fpu[@]}" "${core[@]}"; then
    echo "icarus: clean"
  else
    echo "icarus: FAILED"; status=1
  fi
fi

exit $status
