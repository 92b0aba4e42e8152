#!/usr/bin/env bash
# Configure (once) and build everything into build/ (override with BUILD_DIR).
# Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}
stamp=$build/gen/params.stamp
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
  touch "$stamp"
elif [ ! -f "$stamp" ] || [ "$root/rtl/params.json" -nt "$stamp" ] ||
     [ "$root/scripts/gen_params.py" -nt "$stamp" ]; then
  # A changed parameter file must reach the generated package before ninja re-verilates: the
  # verilated chips' file lists are inputs of build.ninja, so ninja would regenerate them with
  # the old package (and fail on a new parameter) before CMake regenerates it.
  cmake -S "$root" -B "$build"
  touch "$stamp"
fi
ninja -C "$build" -j "$jobs" "$@"
