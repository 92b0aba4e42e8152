// The models' host-side parameters (model_parameters.hpp) and the gradients of LeNet's and
// transformer-tiny's CPU references.
#include "model_parameters.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "cpu_lenet.hpp"
#include "cpu_transformer_tiny.hpp"
#include "tessera/error.hpp"
#include "test_util.hpp"

namespace tessera::bench {
namespace {

using testing::TempDir;

// Runs f, which must throw a tessera::Error whose message contains part.
template <typename F>
void expectErrorContains(F f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(ModelParameters, LenetInitializationIsPytorchsKaimingUniform) {
  const ModelParameters a = ModelParameters::kaimingUniform(lenetShapes(), 1);
  const ModelParameters b = ModelParameters::kaimingUniform(lenetShapes(), 1);
  const ModelParameters c = ModelParameters::kaimingUniform(lenetShapes(), 2);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NE(a.values, c.values);
  a.validate();
  // fan_in: 1*5*5, 6*5*5, 400, 120, 84; a bias takes its weight's bound.
  const float fanIn[5] = {25, 150, 400, 120, 84};
  for (size_t i = 0; i < a.values.size(); ++i) {
    const float bound = 1.0f / std::sqrt(fanIn[i / 2]);
    float lo = 0, hi = 0;
    for (float v : a.values[i]) lo = std::min(lo, v), hi = std::max(hi, v);
    EXPECT_GE(lo, -bound) << a.shapes[i].name;
    EXPECT_LT(hi, bound) << a.shapes[i].name;
    if (a.values[i].size() >= 400) {
      EXPECT_GT(hi, 0.95f * bound) << a.shapes[i].name;
    }
  }
  // The documented draw: conv0.weight[0] from the first output of mt19937(1), conv0.bias[0] from
  // the 151st.
  std::mt19937 rng(1);
  auto next = [&] { return static_cast<float>(rng() >> 8) * 0x1p-24f; };
  const float u0 = next();
  EXPECT_EQ(a["conv0.weight"][0], 0.2f * (2.0f * u0 - 1.0f));
  for (int i = 1; i < 150; ++i) next();
  EXPECT_EQ(a["conv0.bias"][0], 0.2f * (2.0f * next() - 1.0f));
}

// resnet-tiny and transformer-tiny: a normalisation's arrays draw nothing and hold PyTorch's
// defaults; every other array draws from the one generator in order, a bias with the bound of the
// weight before it (in_proj_bias too).
TEST(ModelParameters, NormalisationArraysGetPytorchsDefaults) {
  const ModelParameters r = ModelParameters::kaimingUniform(resnetTinyShapes(), 1);
  r.validate();
  for (const char* bn : {"bn0", "bn1", "bn2"}) {
    const std::string n = bn;
    EXPECT_EQ(r[n + ".weight"], std::vector<float>(16, 1.0f)) << n;
    EXPECT_EQ(r[n + ".bias"], std::vector<float>(16, 0.0f)) << n;
    EXPECT_EQ(r[n + ".running_mean"], std::vector<float>(16, 0.0f)) << n;
    EXPECT_EQ(r[n + ".running_var"], std::vector<float>(16, 1.0f)) << n;
  }
  // conv1.weight is drawn right after conv0.weight's 144 values: the BatchNorm draws nothing.
  std::mt19937 rng(1);
  auto next = [&] { return static_cast<float>(rng() >> 8) * 0x1p-24f; };
  for (int i = 0; i < 144; ++i) next();
  EXPECT_EQ(r["conv1.weight"][0], (1.0f / std::sqrt(9.0f)) * (2.0f * next() - 1.0f));
  const ModelParameters t = ModelParameters::kaimingUniform(transformerTinyShapes(), 1);
  t.validate();
  EXPECT_EQ(t["encoder.norm2.weight"], std::vector<float>(32, 1.0f));
  EXPECT_EQ(t["encoder.norm2.bias"], std::vector<float>(32, 0.0f));
  const float bound = 1.0f / std::sqrt(32.0f);
  float lo = 0, hi = 0;
  for (float v : t["encoder.self_attn.in_proj_bias"]) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_GE(lo, -bound);
  EXPECT_LT(hi, bound);
  EXPECT_GT(hi - lo, bound);  // drawn, not zero
}

TEST(ModelParameters, NpzRoundTripAndErrors) {
  TempDir dir;
  ModelParameters p = ModelParameters::kaimingUniform(lenetShapes(), 3);
  p.inputScale = 0.5f;
  p.toNpz().save(dir.file("l.npz"));
  const ModelParameters q =
      ModelParameters::fromNpz(NpzFile::load(dir.file("l.npz")), lenetShapes(), "l.npz");
  EXPECT_EQ(q.values, p.values);
  EXPECT_EQ(q.inputScale, 0.5f);
  NpzFile bad = p.toNpz();
  bad.set("fc1.weight", {120, 84}, p["fc1.weight"]);
  expectErrorContains([&] { ModelParameters::fromNpz(bad, lenetShapes(), "bad.npz"); },
                      "bad.npz: fc1.weight has shape (120, 84), the model needs (84, 120)");
  NpzFile extra = p.toNpz();
  extra.set("fc3.weight", {1, 1}, {0.0f});
  expectErrorContains([&] { ModelParameters::fromNpz(extra, lenetShapes(), "x.npz"); },
                      "x.npz: array fc3.weight is not a parameter of the model");
  // NaN or infinity in a parameter or in the input scaling is refused, naming where.
  std::vector<float> w = p["fc1.weight"];
  w[17] = std::numeric_limits<float>::quiet_NaN();
  NpzFile nan = p.toNpz();
  nan.set("fc1.weight", {84, 120}, w);
  expectErrorContains([&] { ModelParameters::fromNpz(nan, lenetShapes(), "n.npz"); },
                      "n.npz: fc1.weight element 17 is nan (parameters must be finite)");
  NpzFile inf = p.toNpz();
  inf.setScalar("input_scale", std::numeric_limits<float>::infinity());
  expectErrorContains([&] { ModelParameters::fromNpz(inf, lenetShapes(), "i.npz"); },
                      "i.npz: input_scale and input_offset must be finite, got inf and");
  NpzFile noScale;
  for (const ParameterShape& s : lenetShapes()) noScale.set(s.name, s.shape, p[s.name]);
  expectErrorContains([&] { ModelParameters::fromNpz(noScale, lenetShapes(), "s.npz"); },
                      "s.npz: no array input_scale");
}

// The reference's gradients (recovered from an SGD step with learning rate 1) against central
// finite differences of its own forward pass: a check of its backward independent of the device.
TEST(CpuLenet, GradientsMatchFiniteDifferences) {
  const ModelParameters p = ModelParameters::kaimingUniform(lenetShapes(), 5);
  std::mt19937 rng(6);
  std::vector<float> x(2 * 784);
  for (float& v : x) v = static_cast<float>(rng() >> 8) * 0x1p-24f;
  const std::vector<int32_t> y{3, 7};
  CpuOptimizerConfig sgd;
  sgd.learningRate = 1.0f;
  CpuLenet net(p, sgd);
  net.trainStep(x, y);
  const float h = 1e-3f;
  double largest = 0;
  for (size_t a = 0; a < p.values.size(); ++a) {
    for (size_t i = 0; i < p.values[a].size(); i += p.values[a].size() / 5 + 1) {
      const double analytic =
          static_cast<double>(p.values[a][i]) - static_cast<double>(net.parameters().values[a][i]);
      ModelParameters up = p, down = p;
      up.values[a][i] += h;
      down.values[a][i] -= h;
      const double fd = (static_cast<double>(CpuLenet(up, sgd).forward(x, y).meanLoss) -
                         CpuLenet(down, sgd).forward(x, y).meanLoss) /
                        (2.0 * h);
      EXPECT_NEAR(analytic, fd, 2e-3 + 0.05 * std::fabs(fd)) << p.shapes[a].name << "[" << i << "]";
      largest = std::max(largest, std::fabs(fd));
    }
  }
  EXPECT_GT(largest, 0.02);  // the gradients are not all tiny, so the comparison means something
}

// transformer-tiny's reference gradients (without dropout, one k part per product) against
// central finite differences of its own float forward pass, h = 1e-3 on a few elements of every
// array: within 2e-3 + 5% (LeNet's tolerance: the float loss, rounded to ~2e-7, over a
// difference of 2h dominates the error of the estimate, while a missing or wrong term is of the
// order of the gradient itself).
TEST(CpuTransformerTiny, GradientsMatchFiniteDifferences) {
  const ModelParameters p = ModelParameters::kaimingUniform(transformerTinyShapes(), 5);
  std::mt19937 rng(6);
  std::vector<float> x(2 * 784);
  for (float& v : x) v = static_cast<float>(rng() >> 8) * 0x1p-24f;
  const std::vector<int32_t> y{3, 7};
  const CpuOptimizerConfig sgd;
  const CpuTransformerTiny net(p, sgd, {}, {});
  const std::vector<std::vector<float>> grads = net.gradients(x, y);
  ASSERT_EQ(grads.size(), p.values.size());
  const float h = 1e-3f;
  double largest = 0;
  for (size_t a = 0; a < p.values.size(); ++a) {
    ASSERT_EQ(grads[a].size(), p.values[a].size()) << p.shapes[a].name;
    for (size_t i = 0; i < p.values[a].size(); i += p.values[a].size() / 5 + 1) {
      ModelParameters up = p, down = p;
      up.values[a][i] += h;
      down.values[a][i] -= h;
      const double fd =
          (static_cast<double>(CpuTransformerTiny(up, sgd, {}, {}).forward(x, y).meanLoss) -
           CpuTransformerTiny(down, sgd, {}, {}).forward(x, y).meanLoss) /
          (2.0 * h);
      EXPECT_NEAR(grads[a][i], fd, 2e-3 + 0.05 * std::fabs(fd))
          << p.shapes[a].name << "[" << i << "]";
      largest = std::max(largest, std::fabs(fd));
    }
  }
  EXPECT_GT(largest, 0.02);  // the gradients are not all tiny, so the comparison means something
}

}  // namespace
}  // namespace tessera::bench
