#!/usr/bin/env bash
# Install the Debian packages tessera needs, only those missing. Safe to run again.
# Usage: scripts/setup.sh
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config python3 git time
  clang-format                         # the format check (scripts/check-format.sh, CTest format.check)
  clang lld llvm                       # rv32 cross compiler, linker, objdump for device code
  verilator yosys iverilog             # RTL: simulate, synthesize, second simulator/linter
  nextpnr-ice40 fpga-icestorm          # FPGA: iCE40 place and route, bitstream (scripts/fpga-ice40.sh)
  libboost-dev libfmt-dev libcli11-dev nlohmann-json3-dev libelf-dev
  libgtest-dev libgmock-dev
  libasmjit-dev                        # the model's translating engine (x86-64; docs/tile.md)
  zlib1g-dev dataset-fashion-mnist     # training benchmark: gzipped IDX reader, Fashion-MNIST
  python3-numpy                        # checks that saved .npz weights load with numpy
  python3-torch python3-onnx           # framework models: PyTorch references, ONNX export (docs/onnx.md)
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX import in C++
  pybind11-dev python3-dev             # the Python module
  libopenmpi-dev openmpi-bin           # MPI: training replicas (docs/training.md), the sharded chip (docs/scale-out.md)
  qemu-user linux-perf                 # scripts/bench.sh: qemu-riscv32 comparison, CPU times, profiles
  chromium                             # the browser report's test (docs/report.md), headless
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
