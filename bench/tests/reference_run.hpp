// What the models' bit-exact tests share (lenet_trainer_test.cpp, model_zoo_test.cpp): random
// minibatches, the three optimizers they train with, and the comparison of a device run with a
// model's CPU reference.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cpu_optimizer.hpp"
#include "mlp_trainer.hpp"
#include "model.hpp"
#include "model_parameters.hpp"

namespace tessera::bench {

/// Step `step`'s minibatch of 28 x 28 images: pixels uniform in [0, 1), labels uniform in 0..9,
/// from a generator seeded by the step (the same on every device and in the references).
inline void randomImages(uint64_t step, std::span<float> images, std::span<int32_t> labels) {
  std::mt19937 rng(static_cast<uint32_t>(7000 + step));
  for (float& v : images) v = static_cast<float>(rng() >> 8) * 0x1p-24f;
  for (int32_t& l : labels) l = static_cast<int32_t>(rng() % 10);
}

/// Plain SGD, momentum with weight decay, and Adam, as the bit-exact tests train them.
inline std::vector<std::pair<const char*, CpuOptimizerConfig>> everyOptimizer() {
  CpuOptimizerConfig sgd;
  sgd.learningRate = 0.05f;
  CpuOptimizerConfig momentum = sgd;
  momentum.kind = CpuOptimizerConfig::Kind::Momentum;
  momentum.weightDecay = 0.001f;
  CpuOptimizerConfig adam;
  adam.kind = CpuOptimizerConfig::Kind::Adam;
  adam.learningRate = 0.001f;
  return {{"sgd", sgd}, {"momentum + weight decay", momentum}, {"adam", adam}};
}

/// The trainer's configuration of `model` for `steps` steps of `batch` with the reference's
/// optimizer `opt` (the device's optimizer of the same kind and hyperparameters).
inline MlpConfig referenceTrainConfig(const std::string& model, size_t batch, uint32_t steps,
                                      const CpuOptimizerConfig& opt) {
  MlpConfig c;
  c.model = makeModel(model);
  c.inputs = c.model->inputs();
  c.classes = c.model->classes();
  c.batch = batch;
  c.trainSteps = steps;
  c.learningRate = opt.learningRate;
  c.momentum = opt.momentum;
  using Kind = autodiff::OptimizerConfig::Kind;
  c.optimizer = opt.kind == CpuOptimizerConfig::Kind::Sgd        ? Kind::Sgd
                : opt.kind == CpuOptimizerConfig::Kind::Momentum ? Kind::Momentum
                                                                 : Kind::Adam;
  c.weightDecay = opt.weightDecay;
  c.beta1 = opt.beta1;
  c.beta2 = opt.beta2;
  c.eps = opt.eps;
  return c;
}

/// Runs t (its parameters set to p) on randomImages and trains `cpu` (a CPU reference starting
/// from p) on the same minibatches: every step's loss and correct count, and every array after
/// them, equal the reference's bit for bit, and every array moved. Returns the device's run.
template <typename Reference>
MlpRunResult expectRunMatchesReference(MlpTrainer& t, Reference& cpu, const ModelParameters& p,
                                       size_t batch, uint32_t steps) {
  const MlpRunResult r = t.run(randomImages, randomImages);
  EXPECT_EQ(r.stepLoss.size(), steps);
  for (uint64_t s = 0; s < steps && s < r.stepLoss.size(); ++s) {
    std::vector<float> img(batch * 784);
    std::vector<int32_t> lab(batch);
    randomImages(s, img, lab);
    const auto want = cpu.trainStep(img, lab);
    EXPECT_EQ(r.stepLoss[s], want.meanLoss) << "step " << s;
    EXPECT_EQ(r.stepCorrect[s], want.correct) << "step " << s;
  }
  const ModelParameters got = t.modelParameters();
  for (size_t i = 0; i < got.values.size(); ++i) {
    EXPECT_EQ(got.values[i], cpu.parameters().values[i]) << got.shapes[i].name;
    EXPECT_NE(got.values[i], p.values[i]) << got.shapes[i].name << " did not change";
  }
  return r;
}

}  // namespace tessera::bench
