#!/usr/bin/env bash
# Build the host code with AddressSanitizer + UndefinedBehaviorSanitizer (TESSERA_SANITIZE; the
# verilated chip stays uninstrumented unless -DTESSERA_SANITIZE_RTL=ON) into
# build-sanitize/ (override with BUILD_DIR) and run the tests that take hostile input: the link
# codec, server and end-to-end tests, the ELF loader, the *.tess reader and packer, tessera-run.
# Any sanitizer finding aborts its test. Usage: scripts/test-sanitize.sh [extra ctest args]
# SANITIZE=address,undefined by default; TESTS overrides the ctest regex; TARGETS (a space list)
# builds only those targets (e.g. the unit tests, without the verilated chip).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-sanitize}
sanitize=${SANITIZE:-address,undefined}
tests=${TESTS:-'^link\.|^loader\.|^Executable|^Packer|^Crc32|^tessera_run\.|^tessera_pack\.|^device\.'}
if [ ! -f "$build/build.ninja" ]; then
  # Release, as the regular build: the (uninstrumented) verilated chip then comes from ccache.
  # Warnings stay on but not fatal: GCC's flow warnings give false positives in libstdc++ code
  # instrumented by the sanitizers (-Wstringop-overflow in std::fill_n).
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSERA_SANITIZE="$sanitize" -DTESSERA_WERROR=OFF
fi
# shellcheck disable=SC2086  # TARGETS is a list
ninja -C "$build" -j "${JOBS:-$(nproc)}" ${TARGETS:-}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j "${JOBS:-$(nproc)}" -LE sweep -R "$tests" "$@"
