// The training graph of the benchmark (docs/training.md): any model of model.hpp (the MLP by
// default, hence the names) with its forward and softmax cross-entropy recorded on an autodiff
// tape, the backward it generates and an optimizer step per minibatch, and a forward-only
// evaluation, all on the tiles; the parameters stay on the device between steps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/compiler.hpp"
#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera::bench {

/// The network and the training settings.
struct MlpConfig {
  /// The network; null: the MLP of inputs, hidden and classes. With a model, inputs and classes
  /// must be the model's (the trainer sizes its streams by them).
  std::shared_ptr<const Model> model;
  size_t inputs = 784;
  std::vector<size_t> hidden = {128};
  size_t classes = 10;
  size_t batch = 32;
  float learningRate = 0.05f;
  float momentum = 0.0f;  ///< SGD with momentum; without `optimizer`, 0 means plain SGD
  /// The optimizer; unset: plain SGD when momentum is 0 (no weight gradient stored), else
  /// SGD with momentum.
  std::optional<autodiff::OptimizerConfig::Kind> optimizer;
  float weightDecay = 0.0f;  ///< L2, added to the gradient (PyTorch's weight_decay)
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  ///< Adam
  uint32_t trainSteps = 1;                          ///< training minibatches per run of the program
  uint32_t evalSteps = 0;  ///< evaluation batches (of `batch` images) per run, after the training
  /// Data-parallel replicas (docs/training.md, "Replicas over MPI"): `batch` is one replica's share
  /// of a global minibatch of batch x replicas images, and the loss is averaged over all of them.
  uint32_t replicas = 1;
  /// Split the training step at a host sync: forward and backward, the gradients out on "grads",
  /// the replicas' summed gradients back on "grads_sum", then the SGD/momentum update.
  bool gradientSync = false;
  /// The static loss scale, a power of two (1: none): the loss's gradient is multiplied by it
  /// before the backward pass and every gradient divided by it (exactly) before the update or the
  /// replicas' sum, so that small float16 gradients of a halfPrecision model do not flush to zero
  /// (docs/training.md, "Mixed precision").
  float lossScale = 1.0f;
  /// A dynamic loss scale (ops::LossScaler; docs/training.md, "Dynamic loss scale"): lossScale is
  /// the initial scale, halved after a step whose gradients overflow (that step's update is
  /// skipped) and doubled after lossScaleInterval finite steps in a row. Its state is exposed as
  /// kLossScaleTensor (float32 [1]) and kLossScaleStateTensor (int32 [2]: finite steps in a row,
  /// steps skipped). With replicas the streamed gradients carry the scale (the replicas sum them
  /// so).
  bool dynamicLossScale = false;
  uint32_t lossScaleInterval = 2000;
  /// CompileOptions::mergeComputeSets (docs/compiler.md, "Merged compute sets").
  bool mergeComputeSets = true;
};

/// The exposed names of a dynamic loss scale's state (MlpConfig::dynamicLossScale).
inline constexpr const char* kLossScaleTensor = "loss_scale";
inline constexpr const char* kLossScaleStateTensor = "loss_scale/state";

/// The built graph's handles.
struct MlpGraph {
  Sequence program;  ///< Repeat(trainSteps, train step), then Repeat(evalSteps, eval step)
  std::vector<Tensor> parameters;  ///< the model's, in order, exposed under their names
  std::vector<Tensor> weights;     ///< the even parameters: w0, w1, ... [fan_in, fan_out] (MLP)
  std::vector<Tensor> biases;      ///< the odd ones: b0, b1, ... [fan_out] (MLP)
  Tensor learningRate;             ///< the device-side learning rate [1], exposed as "lr"
  std::optional<ops::LossScaler> lossScaler;  ///< MlpConfig::dynamicLossScale's state
};

/// The network of config: config.model, or the MLP of its sizes.
std::shared_ptr<const Model> modelOf(const MlpConfig& config);

/// The optimizer config.optimizer (or its default) with config's settings.
autodiff::OptimizerConfig optimizerOf(const MlpConfig& config);

/// MLP layer sizes: inputs, hidden..., classes (of the MLP of the sizes, whatever the model).
std::vector<size_t> layerSizes(const MlpConfig& config);

/// Floats of the "grads" and "grads_sum" streams: every parameter in order, in the device's
/// layout (MLP: gw0 row-major, gb0, gw1, gb1, ...).
size_t gradientCount(const MlpConfig& config);

/// Build the program. Streams, per step: "images" (batch x inputs float32) and "labels" (batch
/// int32) in, "loss" (batch float32, each row's loss) and "correct" (1 float32) out; per evaluation
/// batch: "eval_images", "eval_labels" in, "eval_correct" (1 float32) out. A label outside
/// [0, classes) never counts as correct (padding of a last, partial batch). The parameters are
/// exposed under their names (MLP: w0, b0, w1, b1, ...; LeNet: conv0.weight, ...), the learning
/// rate as "lr" (float32 [1], written by the host to
/// change it without recompiling). With gradientSync, "loss" and "correct" come before "grads", and
/// "grads_sum" (written by the host) is what the update uses.
MlpGraph buildMlp(Graph& graph, const MlpConfig& config);

/// The training graph of config compiled for target. Where the target has the matrix unit and the
/// graph does not fit its tiles with the unit's operand layouts, it is built again for the scalar
/// codelets, which give the same bits (docs/library.md, "matmul on the matrix unit"); *usedUnit
/// (if given) says which, and *unitRefusal (if given) why not (compileFitting). Throws
/// OutOfMemoryError when neither fits.
Compiled compileMlp(const Target& target, const MlpConfig& config, bool* usedUnit = nullptr,
                    std::string* unitRefusal = nullptr);

}  // namespace tessera::bench
