#!/usr/bin/env bash
# Compile the Icarus run testbench (tess_chip_run_tb.sv) with the chip RTL into OUTDIR/run.vvp.
# The RTL is copied with always_comb spelled always @* (the Icarus 11 workaround described in
# scripts/lint-rtl.sh); the source order mirrors scripts/lint-rtl.sh and rtl/CMakeLists.txt.
# Usage: rtl/tests/icarus/build.sh OUTDIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:?usage: $0 OUTDIR}
mkdir -p "$out/src"
python3 "$root/scripts/gen_params.py" "$root/rtl/params.json" "$out/src/tess_params_pkg.sv" \
  "$out/src/chip_params.h"
srcs=("$out/src/tess_params_pkg.sv" "$root/rtl/tess_pkg.sv")
for m in tess_fpu_round tess_fpu tess_fpu_divsqrt; do srcs+=("$root/rtl/fpu/$m.sv"); done
for m in tess_core_pkg tess_decoder tess_alu tess_mul tess_div tess_regfile tess_sram tess_csr \
         tess_mmio tess_result_queue tess_core tess_tile; do
  srcs+=("$root/rtl/core/$m.sv")
done
for m in tess_exchange tess_sync tess_chip; do srcs+=("$root/rtl/chip/$m.sv"); done
srcs+=("$root/rtl/tests/icarus/tess_chip_run_tb.sv")
sim_srcs=()
for f in "${srcs[@]}"; do
  dst="$out/src/$(basename "$f")"
  if [ "$f" != "$dst" ]; then
    sed 's/\balways_comb\b/always @*/' "$f" > "$dst.tmp" && mv "$dst.tmp" "$dst"
  fi
  sim_srcs+=("$dst")
done
cp "$root/rtl/core/tess_core_types.svh" "$out/src/"
# Icarus 11 prints a harmless "sorry" note per constant select in always_* and per unique case.
iverilog -g2012 "-I$out/src" -o "$out/run.vvp" -s tess_chip_run_tb "${sim_srcs[@]}" \
  2> >(grep -v -e "sorry: constant selects in always_" -e "sorry: Case unique" >&2)
