#!/usr/bin/env bash
# The MLP training step (tessera-bench train: 784-128-10, batch 32, 16 tiles x 128 KiB, SGD) on the
# model, before and after a change, side by side: device cycles per step, samples per
# device-second, model wall time per step, the matrix unit's use, the weights' hash (the same bits
# on both sides) and the machine's load average around each run (docs/training.md, "Results").
#
# Usage: scripts/bench-mlp-step.sh BEFORE [STEPS]
#   BEFORE  what ran before: the codelet library (libtessera_codelets.a) of the tree before, built
#           from its sw/device-build, with this build's host side (TESSERA_CODELETS selects the
#           library, docs/compiler.md); or, for a change of the host side (library, compiler), the
#           tessera-bench executable of a build of the tree before
#   STEPS   training steps per run (default 20; the first step's trace is included)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench=${BUILD_DIR:-$root/build}/bench/tessera-bench
before=${1:?usage: scripts/bench-mlp-step.sh BEFORE [STEPS]}
steps=${2:-20}
[ -f "$before" ] || { echo "bench-mlp-step: no codelet library or executable at $before" >&2; exit 2; }
[ -x "$bench" ] || { echo "bench-mlp-step: build tessera-bench first ($bench)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {  # name, the tessera-bench to run, then env(1) arguments for the run
  local name=$1 exe=$2
  shift 2
  local load0
  load0=$(cut -d' ' -f1 /proc/loadavg)
  env "$@" "$exe" train --max-steps "$steps" --eval-images 32 --quiet --out "$out/$name" \
    >/dev/null
  python3 - "$out/$name/result.json" "$name" "$load0" "$(cut -d' ' -f1 /proc/loadavg)" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:7s} {r['cycles_per_step']:>12,.0f} {r['samples_per_device_s']:>14,.0f} "
      f"{1000 * r['step_wall_s']:>10.1f} ms   unit {r['matrix_unit']:3s}  "
      f"hash {r['weights_hash']}  load {sys.argv[3]} -> {sys.argv[4]}")
EOF
}

echo "$(nproc) cores; $steps steps per run"
echo "run     cycles/step   samples/dev-s   wall/step"
if [[ "$before" == *.a ]]; then
  run before "$bench" TESSERA_CODELETS="$before"
else
  run before "$before" -u TESSERA_CODELETS
fi
run after "$bench" -u TESSERA_CODELETS
