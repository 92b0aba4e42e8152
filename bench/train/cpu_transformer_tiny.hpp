// The CPU reference of the benchmark's transformer-tiny (model_parameters.hpp,
// transformerTinyShapes()): the device's forward, the backward the autodiff tape generates and the
// optimizer step, operation for operation in the device's order (docs/training.md,
// "transformer-tiny's CPU reference"), so that the two agree to the last bit. Matmuls are
// cpu_dense.hpp's split fmaf chains; softmax, layer normalisation, GELU and dropout
// tessera/nn_reference.hpp's; softmax cross-entropy and the updates those of the other references
// (cpu_dense.hpp, cpu_optimizer.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "cpu_mlp.hpp"
#include "cpu_optimizer.hpp"
#include "model_parameters.hpp"

namespace tessera::bench {

/// Trains transformer-tiny on the CPU.
class CpuTransformerTiny {
 public:
  using StepResult = CpuMlp::StepResult;
  /// The k parts of the device's plan for a product op(a) [m, k] x op(b) [k, n]:
  /// ops::planMatMul(graph, m, k, n).k on the device's graph. Empty: one part.
  using KParts = std::function<size_t(size_t m, size_t k, size_t n)>;
  /// The model's dropout (TransformerTinyModel::kDropout, kDropoutKey): Philox under (key, step),
  /// where step is 1 in the first training step and grows by one per step, as the device's seed
  /// variable. rate 0: no dropout (the finite-difference check).
  struct Dropout {
    float rate = 0.0f;
    uint32_t key = 0;
  };

  /// Train `params` (transformerTinyShapes(), PyTorch layouts) with `optimizer`, the device's
  /// matmul plans and dropout.
  CpuTransformerTiny(ModelParameters params, CpuOptimizerConfig optimizer, KParts kParts,
                     Dropout dropout);
  /// One training step on a batch (images [batch, 784] already scaled, labels [batch]); returns
  /// the loss and correct count before the update, as the device reports them.
  StepResult trainStep(std::span<const float> images, std::span<const int32_t> labels);
  /// Loss and correct count of a batch without updating (the next step's dropout mask).
  StepResult forward(std::span<const float> images, std::span<const int32_t> labels) const;
  /// The gradients of the mean loss of a batch (PyTorch layouts, the arrays' order), as the tape
  /// computes them when no update is fused into the backward; nothing is updated.
  std::vector<std::vector<float>> gradients(std::span<const float> images,
                                            std::span<const int32_t> labels) const;
  /// The current parameters.
  const ModelParameters& parameters() const { return params_; }

 private:
  struct Pass;
  void runForward(Pass& pass, std::span<const float> images, std::span<const int32_t> labels,
                  uint32_t step) const;
  // The backward of a pass. With fusedSgd the Linear weights are updated in place (the sink) and
  // their gradients left empty; the other gradients are returned.
  std::vector<std::vector<float>> runBackward(Pass& pass, bool fusedSgd, float lr);
  size_t parts(size_t m, size_t k, size_t n) const;

  ModelParameters params_;
  CpuOptimizer opt_;
  KParts kParts_;
  Dropout dropout_;
  uint32_t step_ = 0;  // training steps done
};

}  // namespace tessera::bench
