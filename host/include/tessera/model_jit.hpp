// What the model's translating engine did (docs/tile.md, "The translating engine"): how many of
// the instructions a model device simulated ran as translated host code, and how many windows of
// several contexts it kept or undid. For benchmarks and reports; other backends report zeros.
#pragma once

#include <cstdint>

namespace tessera {

class Device;

/// The translating engine's counts over this process's tiles since the device was opened.
struct ModelJitStatistics {
  uint64_t instructions = 0;     ///< instructions executed (every context, every tile, every load)
  uint64_t translated = 0;       ///< of them, run as translated host code
  uint64_t windows = 0;          ///< windows of several contexts kept
  uint64_t windowFallbacks = 0;  ///< windows undone and left to the interpreter
};

/// The counts of dev if it is an in-process model device (zeros otherwise, or for the
/// interpreter).
ModelJitStatistics modelJitStatistics(Device& dev);

}  // namespace tessera
