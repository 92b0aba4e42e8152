#include "cpu_mlp.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "minibatcher.hpp"
#include "tessera/error.hpp"

namespace tessera::bench {
namespace {

// Four Gaussian blobs in 8 dimensions, one per class.
void blobs(size_t n, uint32_t seed, std::vector<float>& x, std::vector<int32_t>& y) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  x.clear();
  y.clear();
  for (size_t i = 0; i < n; ++i) {
    const int32_t c = static_cast<int32_t>(i % 4);
    for (int d = 0; d < 8; ++d) x.push_back((d % 4 == c ? 1.0f : 0.0f) + noise(rng));
    y.push_back(c);
  }
}

TEST(CpuMlp, InitializationIsSeededGlorotUniform) {
  const MlpParameters a = MlpParameters::initialize({784, 128, 10}, 1);
  const MlpParameters b = MlpParameters::initialize({784, 128, 10}, 1);
  const MlpParameters c = MlpParameters::initialize({784, 128, 10}, 2);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_NE(a.weights, c.weights);
  ASSERT_EQ(a.layers(), 2u);
  const float limit0 = std::sqrt(6.0f / 912.0f);
  float lo = 0, hi = 0;
  double mean = 0;
  for (float w : a.weights[0]) {
    lo = std::min(lo, w);
    hi = std::max(hi, w);
    mean += w;
  }
  mean /= static_cast<double>(a.weights[0].size());
  EXPECT_GE(lo, -limit0);
  EXPECT_LT(hi, limit0);
  EXPECT_GT(hi, 0.99f * limit0);
  EXPECT_LT(lo, -0.99f * limit0);
  EXPECT_NEAR(mean, 0.0, 0.002);
  for (const auto& bias : a.biases)
    for (float v : bias) EXPECT_EQ(v, 0.0f);
  // The documented draw: the first weight from the first output of mt19937(1).
  std::mt19937 rng(1);
  const float u = static_cast<float>(rng() >> 8) * 0x1p-24f;
  EXPECT_EQ(a.weights[0][0], limit0 * (2.0f * u - 1.0f));
  EXPECT_EQ(a.inputScale, 1.0f / 255.0f);
}

TEST(CpuMlp, GradientMatchesFiniteDifferences) {
  MlpParameters p = MlpParameters::initialize({5, 4, 3, 3}, 3);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& b : p.biases)
    for (float& v : b) v = 0.1f * dist(rng);
  std::vector<float> x(4 * 5);
  for (float& v : x) v = dist(rng);
  const std::vector<int32_t> y{0, 2, 1, 2};
  CpuMlp net(p, 0.1f);
  const CpuMlp::Gradients g = net.gradients(x, y);
  ASSERT_EQ(g.weights.size(), 3u);
  const float h = 1e-3f;
  auto numeric = [&](float& param) {
    const float saved = param;
    param = saved + h;
    const double up = net.forward(x, y).meanLoss;
    param = saved - h;
    const double down = net.forward(x, y).meanLoss;
    param = saved;
    return (up - down) / (2.0 * h);
  };
  size_t checked = 0;
  double largest = 0;
  for (size_t l = 0; l < 3; ++l) {
    for (size_t i = 0; i < g.weights[l].size(); ++i) {
      const double fd = numeric(net.parameters().weights[l][i]);
      EXPECT_NEAR(g.weights[l][i], fd, 2e-3 + 0.02 * std::fabs(fd)) << "w" << l << "[" << i << "]";
      largest = std::max(largest, std::fabs(fd));
      ++checked;
    }
    for (size_t j = 0; j < g.biases[l].size(); ++j) {
      const double fd = numeric(net.parameters().biases[l][j]);
      EXPECT_NEAR(g.biases[l][j], fd, 2e-3 + 0.02 * std::fabs(fd)) << "b" << l << "[" << j << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20u + 4u + 12u + 3u + 9u + 3u);
  EXPECT_GT(largest, 0.02);  // the gradients are not all tiny, so the comparison means something
}

TEST(CpuMlp, SgdStepIsWeightMinusLearningRateTimesGradient) {
  const MlpParameters p = MlpParameters::initialize({6, 5, 3}, 8);
  std::vector<float> x(7 * 6);
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  for (float& v : x) v = dist(rng);
  const std::vector<int32_t> y{0, 1, 2, 0, 1, 2, 0};
  CpuMlp net(p, 0.5f);
  const CpuMlp::Gradients g = net.gradients(x, y);
  const CpuMlp::StepResult before = net.forward(x, y);
  const CpuMlp::StepResult r = net.trainStep(x, y);
  EXPECT_EQ(r.meanLoss, before.meanLoss);  // the step reports the loss before its update
  EXPECT_EQ(r.rowLoss.size(), 7u);
  for (size_t l = 0; l < 2; ++l) {
    for (size_t i = 0; i < p.weights[l].size(); ++i)
      EXPECT_NEAR(net.parameters().weights[l][i], p.weights[l][i] - 0.5f * g.weights[l][i], 1e-6f);
    for (size_t j = 0; j < p.biases[l].size(); ++j)
      EXPECT_EQ(net.parameters().biases[l][j], std::fma(-0.5f, g.biases[l][j], p.biases[l][j]));
  }
  EXPECT_LT(net.forward(x, y).meanLoss, r.meanLoss);
}

// The replica step's reference: shares of a global batch, each with the loss scaled by the global
// batch, summed in replica order, then the update.
TEST(CpuMlp, ReplicaGradientsSumToTheGlobalBatchsGradient) {
  std::vector<float> x;
  std::vector<int32_t> y;
  blobs(16, 3, x, y);
  const MlpParameters p = MlpParameters::initialize({8, 16, 4}, 4);
  const CpuMlp net(p, 0.1f);
  const CpuMlp::Gradients whole = net.gradients(x, y);
  // One replica is the whole batch, bit for bit.
  const CpuMlp::Gradients one = net.replicaGradients(x, y, 16);
  EXPECT_EQ(one.weights, whole.weights);
  EXPECT_EQ(one.biases, whole.biases);
  for (const size_t replicas : {2u, 4u}) {
    const size_t rows = 16 / replicas;
    std::vector<CpuMlp::Gradients> parts;
    float lossSum = 0;
    for (size_t r = 0; r < replicas; ++r) {
      CpuMlp::StepResult sr;
      parts.push_back(
          net.replicaGradients(std::span<const float>(x).subspan(r * rows * 8, rows * 8),
                               std::span<const int32_t>(y).subspan(r * rows, rows), 16, &sr));
      ASSERT_EQ(sr.rowLoss.size(), rows);
      for (float v : sr.rowLoss) lossSum += v;
    }
    EXPECT_EQ(lossSum / 16.0f, net.forward(x, y).meanLoss) << replicas;  // rows in the same order
    const CpuMlp::Gradients sum = CpuMlp::sumInReplicaOrder(parts);
    for (size_t l = 0; l < 2; ++l) {
      for (size_t i = 0; i < sum.weights[l].size(); ++i)
        EXPECT_NEAR(sum.weights[l][i], whole.weights[l][i], 1e-6f)
            << replicas << " replicas, layer " << l;
      for (size_t j = 0; j < sum.biases[l].size(); ++j) {
        float want = parts[0].biases[l][j];
        for (size_t r = 1; r < replicas; ++r) want += parts[r].biases[l][j];
        EXPECT_EQ(sum.biases[l][j], want);
      }
    }
  }
  {
    std::vector<CpuMlp::Gradients> bad{whole, whole};
    bad[1].biases[1].pop_back();
    EXPECT_THROW(CpuMlp::sumInReplicaOrder(bad), Error);
  }
}

TEST(CpuMlp, ApplyingOneReplicasGradientsIsTheMomentumStep) {
  std::vector<float> x;
  std::vector<int32_t> y;
  blobs(12, 8, x, y);
  const MlpParameters p = MlpParameters::initialize({8, 16, 4}, 9);
  CpuMlp stepped(p, 0.05f, 0.9f), applied(p, 0.05f, 0.9f);
  for (int s = 0; s < 3; ++s) {
    stepped.trainStep(x, y);
    applied.applyGradients(applied.replicaGradients(x, y, 12));
  }
  EXPECT_EQ(applied.parameters().weights, stepped.parameters().weights);
  EXPECT_EQ(applied.parameters().biases, stepped.parameters().biases);
  // Plain SGD: w = fmaf(-lr, g, w).
  CpuMlp plain(p, 0.5f);
  const CpuMlp::Gradients g = plain.replicaGradients(x, y, 12);
  plain.applyGradients(g);
  EXPECT_EQ(plain.parameters().weights[1][3], std::fma(-0.5f, g.weights[1][3], p.weights[1][3]));
  EXPECT_EQ(plain.parameters().biases[0][2], std::fma(-0.5f, g.biases[0][2], p.biases[0][2]));
}

TEST(CpuMlp, LossDecreasesOnASyntheticProblem) {
  for (const float momentum : {0.0f, 0.9f}) {
    std::vector<float> x;
    std::vector<int32_t> y;
    blobs(64, 5, x, y);
    CpuMlp net(MlpParameters::initialize({8, 16, 4}, 6), momentum == 0.0f ? 0.2f : 0.05f, momentum);
    const float first = net.trainStep(x, y).meanLoss;
    EXPECT_NEAR(first, std::log(4.0f), 0.5f);
    CpuMlp::StepResult last;
    for (int s = 0; s < 300; ++s) last = net.trainStep(x, y);
    EXPECT_LT(last.meanLoss, 0.25f * first) << "momentum " << momentum;
    EXPECT_GE(last.correct, 60u) << "momentum " << momentum;
    // Held-out points from the same blobs.
    std::vector<float> tx;
    std::vector<int32_t> ty;
    blobs(200, 99, tx, ty);
    EXPECT_GE(net.forward(tx, ty).correct, 180u);
  }
}

TEST(CpuMlp, RowLossesAndCountsFollowTheCodelets) {
  // One layer, hand-checkable: logits = x W + b with W = identity-like.
  MlpParameters p;
  p.sizes = {2, 2};
  p.weights = {{1.0f, 0.0f, 0.0f, 1.0f}};
  p.biases = {{0.0f, 0.0f}};
  CpuMlp net(p, 0.1f);
  const std::vector<float> x{2.0f, 0.0f, 1.0f, 1.0f};
  const CpuMlp::StepResult r = net.forward(x, std::vector<int32_t>{0, 1});
  // Row 0: log(1 + e^-2); row 1: a tie, log 2, and argmax takes the first (0): wrong.
  EXPECT_NEAR(r.rowLoss[0], std::log1p(std::exp(-2.0)), 1e-6);
  EXPECT_NEAR(r.rowLoss[1], std::log(2.0), 1e-6);
  EXPECT_EQ(r.correct, 1u);
  // An invalid label gives a NaN loss for its row, as on the device.
  EXPECT_TRUE(std::isnan(net.forward(x, std::vector<int32_t>{0, 5}).rowLoss[1]));
  EXPECT_THROW(net.forward(std::vector<float>(3), std::vector<int32_t>{0, 1}), Error);
}

TEST(CpuMlp, KSplitsFollowTheDevicesPartialSums) {
  MlpParameters p = MlpParameters::initialize({7, 3}, 12);
  p.biases[0] = {0.5f, -0.25f, 0.125f};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(2 * 7);
  for (float& v : x) v = dist(rng);
  CpuMlp whole(p, 0.1f);
  CpuMlp split(p, 0.1f);
  split.setKSplits({{3}, {}});
  const std::vector<float> lw = whole.logits(x);
  const std::vector<float> ls = split.logits(x);
  ASSERT_EQ(ls.size(), 6u);
  for (size_t r = 0; r < 2; ++r) {
    for (size_t j = 0; j < 3; ++j) {
      // k = 7 in 3 parts of ceil(7/3) = 3 terms: [0,3) [3,6) [6,7), each a chain from 0.0f.
      float part[3] = {0.0f, 0.0f, 0.0f};
      for (size_t k = 0; k < 7; ++k)
        part[k / 3] = std::fma(x[r * 7 + k], p.weights[0][k * 3 + j], part[k / 3]);
      float sum = part[0] + part[1];
      sum = sum + part[2];
      EXPECT_EQ(ls[r * 3 + j], sum + p.biases[0][j]) << r << "," << j;
      float chain = 0.0f;
      for (size_t k = 0; k < 7; ++k) chain = std::fma(x[r * 7 + k], p.weights[0][k * 3 + j], chain);
      EXPECT_EQ(lw[r * 3 + j], chain + p.biases[0][j]) << r << "," << j;
      EXPECT_NEAR(ls[r * 3 + j], lw[r * 3 + j], 1e-5f);
    }
  }
  // Backward splits change only rounding: the gradients stay those of the unsplit network.
  MlpParameters deep = MlpParameters::initialize({4, 6, 5}, 2);
  std::vector<float> xd(3 * 4);
  for (float& v : xd) v = dist(rng);
  const std::vector<int32_t> y{0, 4, 2};
  CpuMlp a(deep, 0.1f);
  CpuMlp b(deep, 0.1f);
  b.setKSplits({{2, 3}, {1, 2}});
  const CpuMlp::Gradients ga = a.gradients(xd, y);
  const CpuMlp::Gradients gb = b.gradients(xd, y);
  for (size_t l = 0; l < 2; ++l)
    for (size_t i = 0; i < ga.weights[l].size(); ++i)
      EXPECT_NEAR(ga.weights[l][i], gb.weights[l][i], 1e-6f);
}

// A short run on the real data set: the reference learns Fashion-MNIST.
TEST(CpuMlp, LearnsFashionMnist) {
  ASSERT_TRUE(std::filesystem::exists(FashionMnist::defaultDir())) << "run scripts/setup.sh";
  const FashionMnist data = FashionMnist::load();
  MlpParameters p = MlpParameters::initialize({784, 32, 10}, 1);
  CpuMlp net(p, 0.1f);
  Minibatcher mb(data.train(), 32, 2, p.inputScale, p.inputOffset);
  std::vector<float> x(32 * 784);
  std::vector<int32_t> y(32);
  for (int s = 0; s < 600; ++s) {
    mb.next(x, y);
    net.trainStep(x, y);
  }
  const CpuMlp::Evaluation e = net.evaluate(data.test());
  EXPECT_EQ(e.count, 10000u);
  EXPECT_GT(e.accuracy, 0.75);
  EXPECT_LT(e.meanLoss, 0.75);
}

}  // namespace
}  // namespace tessera::bench
