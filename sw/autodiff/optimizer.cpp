// Optimizers on the tiles over the autodiff tape (docs/autodiff.md, "Optimizers").
#include <fmt/format.h>

#include <cmath>

#include "autodiff_util.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"

namespace tessera::autodiff {

namespace {

void checkCounts(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::string& name) {
  if (params.size() != grads.size()) {
    throw Error(
        fmt::format("{}: {} gradients for {} parameters", name, grads.size(), params.size()));
  }
}

}  // namespace

Optimizer::Optimizer(Graph& graph, const OptimizerConfig& config, const std::string& lrName)
    : graph_(graph), config_(config) {
  lr_ = ops::createScalar(graph, config.learningRate, lrName);
  graph.exposeTensor(lrName, lr_);
  if (config.kind == OptimizerConfig::Kind::Adam) {
    adam_ = ops::createAdamScalars(graph, config.beta1, config.beta2, lrName + "/adam");
  }
}

std::vector<Tensor> Optimizer::state(const Tensor& param) {
  for (const auto& [p, s] : state_) {
    if (p.runs() == param.runs()) return s;
  }
  std::vector<Tensor> s;
  if (config_.kind == OptimizerConfig::Kind::Momentum) {
    s.push_back(likeMapped(graph_, param, param.debugName() + "/velocity"));
  } else if (config_.kind == OptimizerConfig::Kind::Adam) {
    s.push_back(likeMapped(graph_, param, param.debugName() + "/adam_m"));
    s.push_back(likeMapped(graph_, param, param.debugName() + "/adam_v"));
  }
  state_.emplace_back(param, s);
  return s;
}

void Optimizer::minimize(Tape& tape, const Value& loss, const std::vector<Value>& params,
                         Sequence& prog, float lossScale, const std::string& name) {
  if (config_.kind == OptimizerConfig::Kind::Sgd && config_.weightDecay == 0.0f) {
    std::vector<GradientSink> sinks;
    for (const Value& p : params) sinks.push_back({p.tensor(), lr_, -1.0f});
    tape.backwardInto(loss, params, sinks, prog, lossScale, name + "/bwd");
    return;
  }
  const std::vector<Tensor> grads = tape.gradients(loss, params, prog, lossScale, name + "/bwd");
  std::vector<Tensor> ps;
  for (const Value& p : params) ps.push_back(p.tensor());
  update(ps, grads, prog, name);
}

void Optimizer::update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       Sequence& prog, const std::string& name, float gradScale) {
  checkCounts(params, grads, name);
  ops::requirePowerOfTwoScale(gradScale, name + ": the gradient scale");
  Tensor lr = lr_;
  float weightDecay = config_.weightDecay;
  if (gradScale != 1.0f) {
    if (adam_) {
      for (size_t i = 0; i < grads.size(); ++i) {
        ops::scaleInPlace(graph_, grads[i], 1.0f / gradScale, prog,
                          fmt::format("{}/unscale{}", name, i));
      }
    } else {
      lr = ops::scale(graph_, lr_, 1.0f / gradScale, prog, name + "/lr");
      weightDecay *= gradScale;
    }
  }
  apply(params, grads, prog, name, lr, weightDecay);
}

void Optimizer::update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       Sequence& prog, const std::string& name, const ops::LossScaler& scaler) {
  checkCounts(params, grads, name);
  ops::lossScaleStep(graph_, scaler, grads, prog, name + "/loss_scale");
  Sequence step({}, name + "/step");
  Tensor lr = lr_;
  if (config_.kind == OptimizerConfig::Kind::Sgd && config_.weightDecay == 0.0f) {
    lr = ops::scaleByScalar(graph_, lr_, scaler.inv, 1.0f, step, name + "/lr");
  } else {
    for (size_t i = 0; i < grads.size(); ++i) {
      ops::scaleInPlaceByScalar(graph_, grads[i], scaler.inv, step,
                                fmt::format("{}/unscale{}", name, i));
    }
  }
  apply(params, grads, step, name, lr, config_.weightDecay);
  prog.add(ops::ifLossScaleOk(graph_, scaler, step, name + "/if_finite"));
}

void Optimizer::apply(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                      Sequence& prog, const std::string& name, const Tensor& lr,
                      float weightDecay) {
  if (adam_) ops::adamStep(graph_, *adam_, lr_, prog, name + "/adam_step");
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& w = params[i];
    const std::string step = fmt::format("{}/{}", name, w.debugName());
    const std::vector<Tensor> s = state(w);
    switch (config_.kind) {
      case OptimizerConfig::Kind::Sgd:
        ops::sgdUpdate(graph_, w, grads[i], lr, weightDecay, prog, step);
        break;
      case OptimizerConfig::Kind::Momentum:
        ops::sgdMomentumUpdate(graph_, w, s[0], grads[i], lr, config_.momentum, weightDecay, prog,
                               step);
        break;
      case OptimizerConfig::Kind::Adam:
        ops::adamUpdate(graph_, w, s[0], s[1], grads[i], *adam_, config_.eps, config_.weightDecay,
                        prog, step);
        break;
    }
  }
}

}  // namespace tessera::autodiff
