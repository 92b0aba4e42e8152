#!/usr/bin/env bash
# Simulation speed, one table from one run (docs/benchmarks.md explains how to read it):
#   1. kernels on tile 0 of the 4-tile chip (the other tiles disabled), model and Verilator RTL side
#      by side (bench/tile_speed): the speed kernels of bench/programs/speed_kernels.c (integer
#      loop, inexact FMA chains, 32x32 fp32 matmul with fractional values) and the FMA loop of
#      bench/programs/fma_loop.c (exact FMAs) on 1 and 6 contexts; the model again with the
#      calling thread's MXCSR dirty (inexact flag set, round toward zero) to show its speed does
#      not depend on it. RTL runs stop after --rtl-cycles cycles (the kernels are long).
#   2. the same three speed kernels under qemu-riscv32 (a static rv32 Linux build of the same
#      source) and natively (host cc -O2 -march=native), where installed; instructions per second
#      use the model's instruction count of the kernel.
#   3. a lone busy tile on the 16-tile RTL chip; every tile busy on model and RTL at 4 and 16
#      tiles, the model's mk2 preset on 1 and 2 host threads (bench/chip_speed).
#   4. Icarus against Verilator on one program (tile 0 of the 4-tile chip).
# Rates are per CPU second (the process's CPU time) unless the column says wall; each is the
# median of --repeat measurements of at least --seconds wall time.
# Usage: scripts/bench.sh [--seconds S] [--repeat N] [--rtl-cycles C] [--no-rtl] [--no-icarus]
#                         [--no-chip]
# Environment: BUILD_DIR (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
seconds=1
repeat=3
rtl_cycles=500000
run_rtl=1
run_icarus=1
run_chip=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --rtl-cycles) rtl_cycles=$2; shift 2 ;;
    --no-rtl) run_rtl=0; run_icarus=0; shift ;;
    --no-icarus) run_icarus=0; shift ;;
    --no-chip) run_chip=0; shift ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done

"$root/scripts/build.sh" tile_speed chip_speed tessera_sw
bin="$build/sw/device-build/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kernels=(int_loop fma_inexact matmul)
tile_programs=(bench_int_loop bench_fma_inexact bench_matmul bench_fma_1ctx bench_fma_6ctx)
common=(--seconds "$seconds" --repeat "$repeat")

echo "== machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1);" \
  "load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
elfs=()
for p in "${tile_programs[@]}"; do elfs+=("$bin/$p.elf"); done

echo "-- model, 4-tile chip, lone tile"
"$build/bench/tile_speed" "${common[@]}" --devices=model "${elfs[@]}" | tee "$work/model.txt"
echo "-- model, calling thread's MXCSR = 0x7fa0 (inexact flag set, round toward zero)"
"$build/bench/tile_speed" "${common[@]}" --devices=model --host-mxcsr 7fa0 \
  "$bin/bench_fma_inexact.elf" "$bin/bench_matmul.elf" "$bin/bench_fma_1ctx.elf" \
  | tee "$work/model_dirty.txt"
if [ "$run_rtl" = 1 ]; then
  echo "-- rtl, 4-tile chip, lone tile, runs capped at $rtl_cycles cycles"
  "$build/bench/tile_speed" "${common[@]}" --devices=rtl --max-cycles "$rtl_cycles" "${elfs[@]}" \
    | tee "$work/rtl.txt"
  echo "-- rtl, 16-tile chip, lone tile"
  "$build/bench/tile_speed" "${common[@]}" --devices=rtl --tiles 16 --max-cycles "$rtl_cycles" \
    "$bin/bench_int_loop.elf" | tee "$work/rtl16.txt"
fi

# qemu-riscv32 and native builds of the same kernel source.
have_qemu=0
command -v qemu-riscv32 > /dev/null && have_qemu=1
cflags_rv=(--target=riscv32-unknown-linux-gnu -march=rv32imf -mabi=ilp32f -O2 -nostdlib -static
           -fuse-ld=lld -ffreestanding -fno-math-errno)
src="$root/bench/programs/speed_kernels.c"
# CPU seconds of one run of a command: perf stat's task-clock over N runs when perf works, else
# user+system time of GNU time.
cpu_of() {
  local n=$1; shift
  if perf stat -x, -e task-clock -r "$n" "$@" > /dev/null 2> "$work/perf.txt" \
      && grep -q task-clock "$work/perf.txt"; then
    awk -F, '/task-clock/ {printf "%.6f\n", $1 / 1000}' "$work/perf.txt"
  else
    /usr/bin/time -f "%U %S" -o "$work/time.txt" "$@" > /dev/null
    awk '{printf "%.6f\n", $1 + $2}' "$work/time.txt"
  fi
}
: > "$work/host.txt"
for i in "${!kernels[@]}"; do
  k=${kernels[$i]}
  n=$((i + 1))
  q=-; nat=-
  if [ "$have_qemu" = 1 ]; then
    clang "${cflags_rv[@]}" -DBENCH_KERNEL=$n "$src" "$root/bench/programs/linux_start.c" \
      -o "$work/q_$k"
    qemu-riscv32 "$work/q_$k" || { echo "qemu-riscv32: $k exited with $?"; exit 1; }
    q=$(cpu_of "$repeat" qemu-riscv32 "$work/q_$k")
  fi
  if command -v cc > /dev/null; then
    cc -O2 -march=native -DBENCH_KERNEL=$n -DBENCH_NATIVE "$src" -o "$work/n_$k"
    "$work/n_$k" || { echo "native: $k exited with $?"; exit 1; }
    nat=$(cpu_of $((repeat * 10)) "$work/n_$k")
  fi
  echo "bench_$k.elf $q $nat" >> "$work/host.txt"
done
echo "-- qemu-riscv32 and native: CPU seconds per run"
cat "$work/host.txt"

if [ "$run_chip" = 1 ]; then
  chip_program="$bin/wl_int_fp_loop.elf"
  configs=model:4,model:16,model:mk2@1,model:mk2@2
  [ "$run_rtl" = 1 ] && configs=model:4,rtl:4,model:16,rtl:16,model:mk2@1,model:mk2@2
  echo "-- chip_speed: $(basename "$chip_program") on every tile"
  "$build/bench/chip_speed" "${common[@]}" --configs "$configs" "$chip_program" \
    | tee "$work/chip.txt"
fi

if [ "$run_icarus" = 1 ]; then
  icarus_program="$bin/wl_int_fp_loop.elf"
  echo "-- Icarus vs Verilator: $(basename "$icarus_program") on tile 0 of the 4-tile chip"
  "$root/rtl/tests/icarus/build.sh" "$work/icarus" > /dev/null
  mem_bytes=$(sed -n 's/.* TILE_MEM_BYTES = 32.h\([0-9a-fA-F]*\);.*/0x\1/p' \
    "$work/icarus/src/tess_params_pkg.sv")
  python3 "$root/rtl/tests/icarus/elf2memh.py" "$icarus_program" "$work/image.memh" "$mem_bytes"
  "$build/bench/tile_speed" "${common[@]}" --devices=rtl "$icarus_program" | tee "$work/vl.txt"
  /usr/bin/time -f "%e %U %S" -o "$work/time.txt" \
    vvp -n "$work/icarus/run.vvp" "+image=$work/image.memh" > "$work/icarus.txt"
  grep -q '^PASS' "$work/icarus.txt" || { cat "$work/icarus.txt"; echo "icarus: FAILED"; exit 1; }
  i_cycles=$(sed -n 's/^RESULT .*cycles=\([0-9]*\) .*/\1/p' "$work/icarus.txt")
  v_cycles=$(awk 'NR == 2 {print $3}' "$work/vl.txt")
  if [ "$i_cycles" != "$v_cycles" ]; then
    echo "icarus: $i_cycles chip cycles, Verilator $v_cycles"; exit 1
  fi
  read -r _ user sys < "$work/time.txt"
  echo "icarus $i_cycles $(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.3f", u + s}')" \
    > "$work/icarus_cpu.txt"
  cat "$work/icarus_cpu.txt"
fi

# ---- the table ----
fmt_rate() { awk -v x="$1" 'BEGIN {
  if (x == "" || x == "-") { print "-"; exit }
  if (x >= 1e9) printf "%.2f G", x / 1e9; else if (x >= 1e6) printf "%.1f M", x / 1e6;
  else if (x >= 1e3) printf "%.1f k", x / 1e3; else printf "%.0f", x }'; }
field() { awk -v p="$2" -v c="$3" '$1 == p {print $c; exit}' "$1" 2> /dev/null || true; }

echo
echo "## Kernels: one busy tile (4-tile chip); model and RTL rates per CPU second"
echo
echo "| kernel | instrs | IPC | model instr/s | model instr/s, dirty MXCSR | model cycles/s |" \
  "RTL cycles/s | model/RTL | qemu instr/s | model slowdown vs qemu | native time |" \
  "model slowdown vs native |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in "${tile_programs[@]}"; do
  e="$p.elf"
  instrs=$(field "$work/model.txt" "$e" 4)
  ipc=$(field "$work/model.txt" "$e" 5)
  mcps=$(field "$work/model.txt" "$e" 6)
  mips=$(field "$work/model.txt" "$e" 7)
  dirty=$(field "$work/model_dirty.txt" "$e" 7)
  rcps=$(field "$work/rtl.txt" "$e" 6)
  ratio=$(awk -v m="$mcps" -v r="$rcps" 'BEGIN { if (r > 0) printf "%.0f", m / r; else print "-" }')
  qcpu=$(field "$work/host.txt" "$e" 2)
  ncpu=$(field "$work/host.txt" "$e" 3)
  qips=-; qvs=-; nvs=-; nshow=-
  if [ -n "$qcpu" ] && [ "$qcpu" != - ]; then
    qips=$(awk -v i="$instrs" -v t="$qcpu" 'BEGIN {printf "%.0f", i / t}')
    qvs=$(awk -v q="$qips" -v m="$mips" 'BEGIN {printf "%.2f", q / m}')
  fi
  if [ -n "$ncpu" ] && [ "$ncpu" != - ]; then
    nshow=$(awk -v t="$ncpu" 'BEGIN {printf "%.2f ms", t * 1000}')
    nvs=$(awk -v t="$ncpu" -v i="$instrs" -v m="$mips" 'BEGIN {printf "%.0f", (i / m) / t}')
  fi
  echo "| ${p#bench_} | $instrs | $ipc | $(fmt_rate "$mips") | $(fmt_rate "$dirty") |" \
    "$(fmt_rate "$mcps") | $(fmt_rate "$rcps") | $ratio | $(fmt_rate "$qips") | $qvs |" \
    "$nshow | $nvs |"
done
if [ "$run_rtl" = 1 ]; then
  echo
  echo "Lone busy tile (bench_int_loop), RTL cycles/s: 4-tile chip" \
    "$(fmt_rate "$(field "$work/rtl.txt" bench_int_loop.elf 6)"), 16-tile chip" \
    "$(fmt_rate "$(field "$work/rtl16.txt" bench_int_loop.elf 6)")"
fi
if [ "$run_chip" = 1 ]; then
  echo
  echo "## Chips: $(basename "$chip_program") on every tile"
  echo
  echo "| config | tiles | chip cycles | chip cycles/s (wall) | tile-cycles/s (wall) | chip cycles/s (CPU) |"
  echo "|---|---:|---:|---:|---:|---:|"
  awk 'NR > 1 && NF >= 7 {print $1, $2, $3, $4, $5, $6}' "$work/chip.txt" |
    while read -r c t cy w tw cpu; do
      echo "| $c | $t | $cy | $(fmt_rate "$w") | $(fmt_rate "$tw") | $(fmt_rate "$cpu") |"
    done
fi
if [ "$run_icarus" = 1 ]; then
  read -r _ ic icpu < "$work/icarus_cpu.txt"
  vcps=$(awk 'NR == 2 {print $6}' "$work/vl.txt")
  icps=$(awk -v c="$ic" -v t="$icpu" 'BEGIN {printf "%.0f", c / t}')
  echo
  echo "Icarus vs Verilator ($(basename "$icarus_program"), $ic cycles, tile 0 of 4, CPU time incl." \
    "elaboration): Icarus $(fmt_rate "$icps") cycles/s, Verilator $(fmt_rate "$vcps") cycles/s," \
    "ratio $(awk -v v="$vcps" -v i="$icps" 'BEGIN {printf "%.0f", v / i}')"
fi
