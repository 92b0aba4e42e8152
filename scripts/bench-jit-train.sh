#!/usr/bin/env bash
# The training step on the model, interpreter against translating engine, side by side
# (docs/benchmarks.md, "The translating engine, third pass"): per model and round, interp then jit,
# each run's wall time per step, the process's CPU time (user + system, the whole run: compile,
# steps, evaluation), the translated share and why translated code stopped (the largest
# reasons), and the weights' hash, which must be the same on both engines (else exit 1).
#
# Usage: scripts/bench-jit-train.sh [STEPS] [ROUNDS] [MODEL...]
#   STEPS   training steps per run (default 10)
#   ROUNDS  interp/jit pairs per model (default 3)
#   MODEL   mlp, lenet, resnet-tiny, transformer-tiny (default: mlp lenet)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench=${BUILD_DIR:-$root/build}/bench/tessera-bench
steps=${1:-10}
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mlp lenet)
[ -x "$bench" ] || { echo "bench-jit-train: build tessera-bench first ($bench)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

status=0
echo "$(nproc) cores; $steps steps per run, 16 tiles"
for model in "${models[@]}"; do
  for round in $(seq "$rounds"); do
    for engine in interp jit; do
      load0=$(cut -d' ' -f1 /proc/loadavg)
      /usr/bin/time -f "%U %S" -o "$out/$model-$round-$engine.cpu" \
        "$bench" train --model "$model" --model-engine "$engine" --max-steps "$steps" \
        --trace-steps 0 --eval-images 32 --quiet --out "$out/$model-$round-$engine" >/dev/null
      python3 - "$out/$model-$round-$engine/result.json" "$model" "$round" "$engine" "$load0" \
        "$(cut -d' ' -f1 /proc/loadavg)" "$out/$model-$round-$engine.cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpu = sum(float(x) for x in open(sys.argv[7]).read().split()[-2:])
line = (f"{sys.argv[2]:16s} round {sys.argv[3]} {sys.argv[4]:6s} {1000 * r['step_wall_s']:9.1f} ms/step"
        f"  process CPU {cpu:7.1f} s  hash {r['weights_hash']}  load {sys.argv[5]} -> {sys.argv[6]}")
j = r.get("model_jit")
if j:
    line += f"  translated {100 * j['translated'] / j['instructions']:.1f}%"
    for kind in ("undone", "cut"):
        counts = j["stops"].get(kind, {})
        total = sum(counts.values())
        if total:
            top = sorted(counts.items(), key=lambda kv: -kv[1])[:3]
            line += f"  {kind} " + ",".join(f"{k} {100 * v / total:.0f}%" for k, v in top)
print(line)
PY
    done
    a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["weights_hash"])' \
      "$out/$model-$round-interp/result.json")
    b=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["weights_hash"])' \
      "$out/$model-$round-jit/result.json")
    if [ "$a" != "$b" ]; then
      echo "bench-jit-train: $model round $round: weights_hash differs (interp $a, jit $b)" >&2
      status=1
    fi
  done
done
exit $status
