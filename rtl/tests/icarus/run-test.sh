#!/usr/bin/env bash
# ctest icarus_chip_run: a device program run on Icarus (tess_chip_run_tb.sv) must halt with exit
# code 0 after as many chip cycles as the verilated chip gives (tessera-run --device rtl --stats,
# the same 4-tile chip with tiles 1..3 disabled).
# Usage: run-test.sh TESSERA_RUN PROGRAM.elf WORKDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=$1 elf=$2 work=$3
"$here/build.sh" "$work"
python3 "$here/elf2memh.py" "$elf" "$work/image.memh" \
  "$(sed -n 's/.* TILE_MEM_BYTES = 32.h\([0-9a-fA-F]*\);.*/0x\1/p' "$work/src/tess_params_pkg.sv")"
vvp -n "$work/run.vvp" "+image=$work/image.memh" | tee "$work/icarus.txt"
grep -q '^PASS' "$work/icarus.txt"
icarus=$(sed -n 's/^RESULT .*cycles=\([0-9]*\) .*/\1/p' "$work/icarus.txt")
verilator=$("$run" --device rtl --stats "$elf" 2>&1 >/dev/null | sed -n 's/^cycles: *\([0-9]*\).*/\1/p')
echo "icarus: $icarus chip cycles; verilator: $verilator"
[ -n "$icarus" ] && [ "$icarus" = "$verilator" ]
