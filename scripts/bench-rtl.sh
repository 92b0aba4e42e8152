#!/usr/bin/env bash
# RTL simulation figures of docs/benchmarks.md, from one run:
#   1. chip_speed (bench/chip_speed.cpp) on a program run by every tile: model and Verilator RTL at
#      4 and 16 tiles and the model's mk2 preset, from the main build (chips verilated with one
#      thread), then the RTL at 4 and 16 tiles from a second build dir whose chips are verilated
#      with --threads 2 (TESSERA_VERILATOR_THREADS=2; each build dir verilates its chips once);
#   2. Icarus against Verilator on one program on tile 0 of the 4-tile chip, tiles 1..3 disabled:
#      rtl/tests/icarus/tess_chip_run_tb.sv timed (wall clock and CPU), next to tile_speed's
#      Verilator cycles/s for the same program and chip; the chip cycle counts must agree.
# Every measurement runs --repeat times (default 3); figures vary with the machine's load, so
# each line is printed and the best and spread are for the reader (docs/benchmarks.md).
# With --against OTHER_BUILD (the build dir of another tree, e.g. before a change; it is not
# built here) the script instead compares the two trees' verilated chips side by side: each round
# runs chip_speed (rtl:4, rtl:16, every tile busy) and tile_speed (a lone busy tile on the 16-tile
# chip, bench_int_loop) from this build and from OTHER_BUILD, in alternating order, on this
# build's programs; the cycle counts of the two must agree.
# Usage: scripts/bench-rtl.sh [--repeat N] [--seconds S] [--chip-program ELF]
#                             [--icarus-program ELF] [--no-threads] [--no-icarus]
#                             [--against OTHER_BUILD]
# Environment: BUILD_DIR (default build/), THREADS_BUILD_DIR (default build-vthreads2/), JOBS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
build2=${THREADS_BUILD_DIR:-$root/build-vthreads2}
jobs=${JOBS:-2}
bin="$build/sw/device-build/bin"

repeat=3
seconds=2
chip_program=""
icarus_program=""
run_threads=1
run_icarus=1
against=""
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --chip-program) chip_program=$2; shift 2 ;;
    --icarus-program) icarus_program=$2; shift 2 ;;
    --no-threads) run_threads=0; shift ;;
    --no-icarus) run_icarus=0; shift ;;
    --against) against=$(cd "$2" && pwd); shift 2 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
chip_program=${chip_program:-$bin/wl_int_fp_loop.elf}
icarus_program=${icarus_program:-$bin/wl_int_fp_loop.elf}

echo "== machine: $(nproc) cores; $(uptime)"

"$root/scripts/build.sh" chip_speed tile_speed tessera_sw

if [ -n "$against" ]; then
  for b in "$against"/bench/chip_speed "$against"/bench/tile_speed; do
    [ -x "$b" ] || { echo "bench-rtl: $b is missing (build chip_speed tile_speed there)" >&2; exit 2; }
  done
  lone_program=$bin/bench_int_loop.elf
  echo "== side by side: A = $build, B = $against; programs $(basename "$chip_program")," \
       "$(basename "$lone_program")"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  for ((i = 1; i <= repeat; i++)); do
    order="A B"
    if ((i % 2 == 0)); then order="B A"; fi
    for side in $order; do
      dir=$build
      if [ "$side" = B ]; then dir=$against; fi
      echo "-- round $i/$repeat, $side; load: $(cut -d' ' -f1-3 /proc/loadavg)"
      "$dir/bench/chip_speed" --seconds "$seconds" --configs rtl:4,rtl:16 "$chip_program" \
        | tee "$work/chip_$side.txt"
      "$dir/bench/tile_speed" --seconds "$seconds" --devices rtl --tiles 16 \
        --max-cycles 500000 "$lone_program" | tee "$work/tile_$side.txt"
    done
    # The cycle columns must agree (the same chip behaviour); the rates are what is compared.
    # (chip_speed: config, tiles, chip cycles; tile_speed: program, device, cycles, instrs.)
    if ! diff <(awk '{print $1, $2, $3}' "$work/chip_A.txt") \
              <(awk '{print $1, $2, $3}' "$work/chip_B.txt") >/dev/null ||
       ! diff <(awk '{print $1, $2, $3, $4}' "$work/tile_A.txt") \
              <(awk '{print $1, $2, $3, $4}' "$work/tile_B.txt") >/dev/null; then
      echo "bench-rtl: the two builds' cycle counts differ"; exit 1
    fi
  done
  exit 0
fi

echo "== chip_speed, chips verilated with 1 thread ($build), program $(basename "$chip_program")"
for ((i = 1; i <= repeat; i++)); do
  echo "-- run $i/$repeat; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$build/bench/chip_speed" --seconds "$seconds" \
    --configs model:4,rtl:4,model:16,rtl:16,model:mk2 "$chip_program"
done

if [ "$run_threads" = 1 ]; then
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
  if [ ! -f "$build2/build.ninja" ]; then
    cmake -S "$root" -B "$build2" -G Ninja -DCMAKE_BUILD_TYPE="${build_type:-Release}" \
      -DTESSERA_VERILATOR_THREADS=2
  fi
  ninja -C "$build2" -j "$jobs" chip_speed
  echo "== chip_speed, chips verilated with 2 threads ($build2)"
  for ((i = 1; i <= repeat; i++)); do
    echo "-- run $i/$repeat; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$build2/bench/chip_speed" --seconds "$seconds" --configs rtl:4,rtl:16 "$chip_program"
  done
fi

if [ "$run_icarus" = 1 ]; then
  echo "== Icarus vs Verilator: $(basename "$icarus_program") on tile 0 of the 4-tile chip"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$root/rtl/tests/icarus/build.sh" "$work"
  mem_bytes=$(sed -n 's/.* TILE_MEM_BYTES = 32.h\([0-9a-fA-F]*\);.*/0x\1/p' \
    "$work/src/tess_params_pkg.sv")
  python3 "$root/rtl/tests/icarus/elf2memh.py" "$icarus_program" "$work/image.memh" "$mem_bytes"

  echo "-- Verilator (tile_speed --devices rtl)"
  "$build/bench/tile_speed" --seconds "$seconds" --devices rtl "$icarus_program" \
    | tee "$work/verilator.txt"
  v_cycles=$(awk 'NR == 2 {print $3}' "$work/verilator.txt")
  v_cps=$(awk 'NR == 2 {print $6}' "$work/verilator.txt")

  for ((i = 1; i <= repeat; i++)); do
    echo "-- Icarus run $i/$repeat; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    /usr/bin/time -f "%e %U %S" -o "$work/time.txt" \
      vvp -n "$work/run.vvp" "+image=$work/image.memh" > "$work/icarus.txt"
    grep -q '^PASS' "$work/icarus.txt" || { cat "$work/icarus.txt"; echo "icarus: FAILED"; exit 1; }
    i_cycles=$(sed -n 's/^RESULT .*cycles=\([0-9]*\) .*/\1/p' "$work/icarus.txt")
    if [ "$i_cycles" != "$v_cycles" ]; then
      echo "icarus: $i_cycles chip cycles, Verilator $v_cycles"; exit 1
    fi
    read -r wall user sys < "$work/time.txt"
    # tile_speed's cycles/s are per CPU second: compared with Icarus's CPU time.
    awk -v c="$i_cycles" -v w="$wall" -v u="$user" -v s="$sys" -v v="$v_cps" 'BEGIN {
      printf "icarus: %d cycles, wall %.2f s (%.0f cycles/s), cpu %.2f s (%.0f cycles/s); " \
             "verilator %.0f cycles per CPU second = %.0fx icarus (cpu)\n",
             c, w, c / w, u + s, c / (u + s), v, v / (c / (u + s)) }'
  done
fi
