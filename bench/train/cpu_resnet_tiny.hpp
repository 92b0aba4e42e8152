// The CPU reference of the benchmark's resnet-tiny (model_parameters.hpp, resnetTinyShapes()): the
// device's forward, generated backward and optimizer step, operation for operation in the
// device's order (docs/training.md, "The CPU references"), so that the two agree to the last bit.
// Convolutions and pooling are tessera/conv_reference.hpp's, batch normalisation
// tessera/nn_reference.hpp's, the Linear layer, softmax cross-entropy and the updates those of
// LeNet's reference (cpu_dense.hpp, cpu_lenet.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cpu_lenet.hpp"
#include "cpu_optimizer.hpp"
#include "model_parameters.hpp"

namespace tessera::bench {

/// Trains resnet-tiny on the CPU.
class CpuResnetTiny {
 public:
  using StepResult = CpuMlp::StepResult;
  /// The device plans the reference must follow: the k splits of fc0's matmul (forward) and of its
  /// input gradient (ops::planMatMul(...).k), and the parts each batch normalisation's channel is
  /// summed in (ops::batchNormParts for 16 channels of batch x 14 x 14 values).
  struct Plans {
    size_t fcForward = 1, fcBackward = 1, bnParts = 1;
  };

  /// Train `params` (resnetTinyShapes(), PyTorch layouts) with `optimizer` and the device's plans.
  CpuResnetTiny(ModelParameters params, CpuOptimizerConfig optimizer, Plans plans);
  /// One training step on a batch (images [batch, 784] already scaled, labels [batch]); returns
  /// the loss and correct count before the update, as the device reports them.
  StepResult trainStep(std::span<const float> images, std::span<const int32_t> labels);
  /// The current parameters (running statistics included).
  const ModelParameters& parameters() const { return params_; }

 private:
  ModelParameters params_;
  CpuOptimizer opt_;
  Plans plans_;
};

}  // namespace tessera::bench
