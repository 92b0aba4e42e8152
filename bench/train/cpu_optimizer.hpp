// The optimizers' updates on the CPU, element by element in the device's order (docs/autodiff.md,
// "Optimizers"), shared by the CPU references of LeNet and resnet-tiny.
#pragma once

#include <cstddef>
#include <vector>

namespace tessera::bench {

/// An optimizer as tessera::autodiff::OptimizerConfig describes it (docs/autodiff.md).
struct CpuOptimizerConfig {
  enum class Kind { Sgd, Momentum, Adam };
  Kind kind = Kind::Sgd;
  float learningRate = 0.01f;
  float momentum = 0.9f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weightDecay = 0.0f;
};

/// An optimizer's state over a model's parameter arrays: the velocity (momentum) or Adam's moments
/// per array, and Adam's bias-correction powers.
class CpuOptimizer {
 public:
  /// State for arrays of the sizes of `params`, all zero.
  CpuOptimizer(CpuOptimizerConfig config, const std::vector<std::vector<float>>& params);
  /// One step: each array p whose grads[p] is not empty is updated at the configured learning
  /// rate (an empty gradient is an array the caller updated itself, or one without a gradient).
  void step(std::vector<std::vector<float>>& params, const std::vector<std::vector<float>>& grads);
  /// The configuration (the learning rate changes between steps, as the device's "lr").
  CpuOptimizerConfig& config() { return config_; }
  /// The configuration.
  const CpuOptimizerConfig& config() const { return config_; }

 private:
  CpuOptimizerConfig config_;
  std::vector<std::vector<float>> state1_, state2_;  // velocity or Adam's m; Adam's v
  float beta1Power_ = 1.0f, beta2Power_ = 1.0f;
};

}  // namespace tessera::bench
