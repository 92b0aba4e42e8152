// tessera-bench conv: the efficiency of conv2d and its gradients, and the cycles of max pooling
// and its gradient (docs/library.md, "conv2d and pooling").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/device.hpp"

namespace tessera::bench {

/// Options of `tessera-bench conv`.
struct ConvBenchOptions {
  std::string device = "model";
  unsigned tiles = 16;
  uint32_t memKiB = 624;  ///< the IPU's; LeNet's first layer at batch 32 does not fit 64 KiB tiles
  size_t batch = 32;
  bool backward = true;    ///< also the gradients to the input and to the weights
  std::string matrixUnit;  ///< "", "on", "off": DeviceOptions::matrixUnit (default the chip's)
  ModelEngine modelEngine = defaultModelEngine();  ///< DeviceOptions::modelEngine
};

/// Compile and run each conv layer of LeNet (one op per program) and print cycles, fused
/// multiply-adds per cycle per tile and the share of the tile's peak (16 multiply-adds a cycle
/// with the matrix unit, 1 without), then the cycles of its two max-pooling layers and their
/// gradients; 0 on success.
int runConvBench(const ConvBenchOptions& options);

}  // namespace tessera::bench
