// The CPU reference of the benchmark's LeNet-5 (model_parameters.hpp has its layers): the
// device's forward, generated backward and optimizer step, operation for operation in the
// device's order (docs/training.md, "The CPU reference"), so that the two agree to the last bit.
// Convolutions and pooling are tessera/conv_reference.hpp's; the dense layers, softmax
// cross-entropy and the updates are those of the MLP's reference (cpu_dense.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cpu_mlp.hpp"
#include "cpu_optimizer.hpp"
#include "model_parameters.hpp"

namespace tessera::bench {

/// Trains and evaluates LeNet-5 on the CPU.
class CpuLenet {
 public:
  using StepResult = CpuMlp::StepResult;

  /// Train `params` (lenetShapes(), PyTorch layouts) with `optimizer`.
  CpuLenet(ModelParameters params, CpuOptimizerConfig optimizer);

  /// The k splits of the device's fc0, fc1 and fc2 matmul plans (as CpuMlp::setKSplits; forward[l]
  /// for fc l, backward[l] for the input gradient of fc l, l >= 1 ... and l = 0, whose input
  /// gradient flows on to the convolutions).
  void setKSplits(CpuMlp::KSplits splits) { splits_ = std::move(splits); }
  /// One training step on a batch (images [batch, 784] already scaled, labels [batch]); returns
  /// the loss and correct count before the update, as the device reports them.
  StepResult trainStep(std::span<const float> images, std::span<const int32_t> labels);
  /// Loss and correct count of a batch without updating.
  StepResult forward(std::span<const float> images, std::span<const int32_t> labels) const;
  /// The logits [batch, 10] of a batch.
  std::vector<float> logits(std::span<const float> images) const;

  /// The current parameters.
  const ModelParameters& parameters() const { return params_; }
  /// Change the learning rate (as the host rewrites the device's "lr" between runs).
  void setLearningRate(float lr) { opt_.config().learningRate = lr; }

 private:
  struct Pass;
  void runForward(Pass& pass, std::span<const float> images, std::span<const int32_t> labels) const;
  void runBackward(Pass& pass);

  ModelParameters params_;
  CpuOptimizer opt_;
  CpuMlp::KSplits splits_;
};

}  // namespace tessera::bench
