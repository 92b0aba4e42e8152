#!/usr/bin/env bash
# Compile the Icarus run testbench (tess_chip_run_tb.sv) with the chip RTL into OUTDIR/run.vvp.
# The sources (rtl/sources.f) are copies with always_comb spelled always @*: the Icarus 11
# workaround explained in scripts/rtl-sources.sh.
# Extra arguments go to iverilog (e.g. -Ptess_chip_run_tb.NumTiles=1 -DTESS_ICE40).
# Usage: rtl/tests/icarus/build.sh OUTDIR [iverilog options...]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${1:?usage: $0 OUTDIR [iverilog options...]}
shift
mapfile -t sim_srcs < <("$root/scripts/rtl-sources.sh" "$out/src" --icarus \
                          "$root/rtl/tests/icarus/tess_chip_run_tb.sv")
# Icarus 11 prints a harmless "sorry" note per constant select in always_* and per unique case.
iverilog -g2012 "-I$out/src" -o "$out/run.vvp" -s tess_chip_run_tb "$@" "${sim_srcs[@]}" \
  2> >(grep -v -e "sorry: constant selects in always_" -e "sorry: Case unique" >&2)
