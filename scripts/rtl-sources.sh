#!/usr/bin/env bash
# Print the chip's RTL sources, one absolute path per line, in compile order (rtl/sources.f),
# after generating the chip-parameter package into OUTDIR (it comes first).
# With --icarus, print instead copies in OUTDIR with always_comb spelled always @* (see below),
# plus the include files (rtl/core/*.svh and the testbench ones of rtl/tests/common) beside
# them, so `iverilog -I OUTDIR` finds every include.
# Extra files (testbenches) given after the options get the same treatment and come last.
#
# Why --icarus: Icarus 11 can loop forever at time 0 in its always_comb scheduling when chained
# always_comb blocks assign a default and then override it (e.g. tess_csr's new_value ->
# fcsr_new); the same blocks written as always @* simulate correctly. Only a block without inputs
# would behave differently (staying X), which would make a test fail rather than pass.
# Usage: scripts/rtl-sources.sh OUTDIR [--icarus] [extra.sv ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR [--icarus] [extra.sv ...]}
shift
icarus=0
if [ "${1:-}" = "--icarus" ]; then
  icarus=1
  shift
fi
mkdir -p "$out"
python3 "$root/scripts/gen_params.py" "$root/rtl/params.json" "$out/tess_params_pkg.sv" \
  "$out/chip_params.h"
srcs=("$out/tess_params_pkg.sv")
while read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  srcs+=("$root/rtl/$line")
done < "$root/rtl/sources.f"
srcs+=("$@")
if [ "$icarus" = 0 ]; then
  printf '%s\n' "${srcs[@]}"
  exit 0
fi
for f in "${srcs[@]}"; do
  dst="$out/$(basename "$f")"
  if [ "$f" != "$dst" ]; then
    sed 's/\balways_comb\b/always @*/' "$f" > "$dst"
  fi
  echo "$dst"
done
cp "$root"/rtl/core/*.svh "$root"/rtl/tests/common/*.svh "$out/"
