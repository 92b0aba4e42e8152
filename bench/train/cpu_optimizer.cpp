#include "cpu_optimizer.hpp"

#include <fmt/format.h>

#include <cmath>

#include "tessera/error.hpp"

namespace tessera::bench {

CpuOptimizer::CpuOptimizer(CpuOptimizerConfig config, const std::vector<std::vector<float>>& params)
    : config_(config) {
  for (const std::vector<float>& v : params) {
    state1_.emplace_back(config_.kind == CpuOptimizerConfig::Kind::Sgd ? 0 : v.size(), 0.0f);
    state2_.emplace_back(config_.kind == CpuOptimizerConfig::Kind::Adam ? v.size() : 0, 0.0f);
  }
}

void CpuOptimizer::step(std::vector<std::vector<float>>& params,
                        const std::vector<std::vector<float>>& grads) {
  if (params.size() != state1_.size() || grads.size() != params.size())
    throw Error(fmt::format("cpu optimizer: {} parameter arrays and {} gradients, state for {}",
                            params.size(), grads.size(), state1_.size()));
  const CpuOptimizerConfig& o = config_;
  const float lr = o.learningRate;
  float stepSize = 0, bc2 = 0;
  if (o.kind == CpuOptimizerConfig::Kind::Adam) {
    beta1Power_ = beta1Power_ * o.beta1, beta2Power_ = beta2Power_ * o.beta2;
    stepSize = lr / (1.0f - beta1Power_);
    bc2 = std::sqrt(1.0f - beta2Power_);
  }
  for (size_t p = 0; p < params.size(); ++p) {
    if (grads[p].empty()) continue;
    std::vector<float>& w = params[p];
    const std::vector<float>& g = grads[p];
    if (g.size() != w.size())
      throw Error(fmt::format("cpu optimizer: array {} has {} values, its gradient {}", p, w.size(),
                              g.size()));
    std::vector<float>& m = state1_[p];
    std::vector<float>& v = state2_[p];
    for (size_t i = 0; i < w.size(); ++i) {
      const float d = o.weightDecay != 0.0f ? std::fmaf(o.weightDecay, w[i], g[i]) : g[i];
      switch (o.kind) {
        case CpuOptimizerConfig::Kind::Sgd:
          w[i] = std::fmaf(-lr, d, w[i]);
          break;
        case CpuOptimizerConfig::Kind::Momentum:
          m[i] = std::fmaf(o.momentum, m[i], d);
          w[i] = std::fmaf(-lr, m[i], w[i]);
          break;
        case CpuOptimizerConfig::Kind::Adam: {
          m[i] = std::fmaf(1.0f - o.beta1, d, m[i] * o.beta1);
          const float c2d = (1.0f - o.beta2) * d;
          v[i] = v[i] * o.beta2 + c2d * d;
          const float denom = std::sqrt(v[i]) / bc2 + o.eps;
          w[i] = std::fmaf(-stepSize, m[i] / denom, w[i]);
          break;
        }
      }
    }
  }
}

}  // namespace tessera::bench
