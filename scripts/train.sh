#!/usr/bin/env bash
# The main job: install what is missing, build, and run a short Fashion-MNIST training on the
# cycle-exact model (the 784-128-10 MLP on 16 tiles; a few hundred steps and an evaluation on part
# of the test set), then print the summary and where the log, trace and pictures are.
# The whole benchmark, to 85% test accuracy: build/bench/tessera-bench train (docs/training.md).
# Usage: scripts/train.sh [more tessera-bench train options]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
"$root/scripts/build.sh" tessera-bench
exec "$build/bench/tessera-bench" train --max-steps 400 --eval-images 2000 --out "$build/train" "$@"
