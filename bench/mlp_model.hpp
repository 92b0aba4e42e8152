// The MLP of the training benchmark as a tessera graph (docs/training.md): forward and softmax
// cross-entropy recorded on an autodiff tape, the backward it generates and an SGD step per
// minibatch, and a forward-only evaluation, all on the tiles; the weights stay on the device
// between steps.
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
  float momentum = 0.0f;    ///< 0: plain SGD (no weight gradient stored); else SGD with momentum
  uint32_t trainSteps = 1;  ///< training minibatches per run of the program
  uint32_t evalSteps = 0;   ///< evaluation batches (of `batch` images) per run, after the training
  /// Data-parallel replicas (docs/training.md, "Replicas over MPI"): `batch` is one replica's share
  /// of a global minibatch of batch x replicas images, and the loss is averaged over all of them.
  uint32_t replicas = 1;
  /// Split the training step at a host sync: forward and backward, the gradients out on "grads",
  /// the replicas' summed gradients back on "grads_sum", then the SGD/momentum update.
  bool gradientSync = false;
};

/// The built graph's handles.
struct MlpGraph {
  Sequence program;  ///< Repeat(trainSteps, train step), then Repeat(evalSteps, eval step)
  std::vector<Tensor> weights;  ///< w0, w1, ... [fan_in, fan_out]
  std::vector<Tensor> biases;   ///< b0, b1, ... [fan_out]
  Tensor learningRate;          ///< the device-side learning rate [1], exposed as "lr"
};

/// Layer sizes: inputs, hidden..., classes.
std::vector<size_t> layerSizes(const MlpConfig& config);

/// Floats of the "grads" and "grads_sum" streams: gw0 (row-major), gb0, gw1, gb1, ...
size_t gradientCount(const MlpConfig& config);

/// Build the program. Streams, per step: "images" (batch x inputs float32) and "labels" (batch
/// int32) in, "loss" (batch float32, each row's loss) and "correct" (1 float32) out; per evaluation
/// batch: "eval_images", "eval_labels" in, "eval_correct" (1 float32) out. A label outside
/// [0, classes) never counts as correct (padding of a last, partial batch). Weights and biases are
/// exposed as w0, b0, w1, b1, ..., the learning rate as "lr" (float32 [1], written by the host to
/// change it without recompiling). With gradientSync, "loss" and "correct" come before "grads", and
/// "grads_sum" (written by the host) is what the update uses.
MlpGraph buildMlp(Graph& graph, const MlpConfig& config);

}  // namespace tessera::bench
