// The MLP of the training benchmark as a tessera graph (docs/benchmarks.md, "MLP"): forward,
// softmax cross-entropy, backward and an SGD step per minibatch, everything on the tiles.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera::bench {

/// Sizes and training settings.
struct MlpConfig {
  size_t inputs = 784;
  std::vector<size_t> hidden = {128};
  size_t classes = 10;
  size_t batch = 32;
  float learningRate = 0.05f;
  uint32_t steps = 1;  ///< minibatches per run of the program
};

/// The built graph's handles.
struct MlpGraph {
  Sequence program;              ///< Repeat(steps, one training step)
  std::vector<Tensor> weights;   ///< w0, w1, ... [fan_in, fan_out]
  std::vector<Tensor> biases;    ///< b0, b1, ... [fan_out]
};

/// Build the training program. Streams: "images" (batch x inputs float32 per step), "labels"
/// (batch int32), out "loss" (batch float32: each row's loss) and "correct" (1 float32). Weights
/// and biases are exposed as w0, b0, w1, b1, ...
MlpGraph buildMlpTraining(Graph& graph, const MlpConfig& config);

}  // namespace tessera::bench
