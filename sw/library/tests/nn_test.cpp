// The layer ops of tessera/nn.hpp against host references, on each backend of
// the one backend list (host/testing/backends.hpp): forward and backward bit-exact against a float
// reference of the same order of operations (and the same tessera/mathf.h and tessera/philox.h
// code), and every backward against central finite differences of a double-precision forward
// (docs/library.md, "Tests").
#include "tessera/nn.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>

#include "backends.hpp"
#include "library_testing.hpp"
#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/mathf.h"
#include "tessera/nn_reference.hpp"
#include "tessera/philox.h"

namespace tessera {
namespace {

namespace nnref = autodiff::gradcheck::nnref;
using libtest::expectBitEqual;
using libtest::randomFloats;
using libtest::toDouble;

using Floats = std::vector<float>;
using Doubles = std::vector<double>;

// Gradient check: the device's gradient of L = sum(dy * f(x)) with respect to x against central
// differences of a double-precision f with step h = 1e-3. Tolerance 1e-4 + 1e-3 |fd|: the
// difference quotient's truncation error is O(h^2) (below 1e-5 for these smooth functions of
// inputs in [-2, 2]), and the device computes in float (24-bit significands, sums of at most a
// few dozen terms: relative error near 1e-6), so a wrong formula (a missing term is O(1)) cannot
// pass while rounding cannot fail.
void expectGradient(const std::function<Doubles(const Doubles&)>& f, const Floats& x,
                    const Floats& dy, const Floats& deviceGrad, const std::string& what) {
  ASSERT_EQ(x.size(), deviceGrad.size()) << what;
  const double h = 1e-3;
  Doubles xd = toDouble(x);
  for (size_t i = 0; i < x.size(); ++i) {
    const double keep = xd[i];
    xd[i] = keep + h;
    const Doubles up = f(xd);
    xd[i] = keep - h;
    const Doubles down = f(xd);
    xd[i] = keep;
    double l = 0.0;
    for (size_t j = 0; j < up.size(); ++j) l += static_cast<double>(dy[j]) * (up[j] - down[j]);
    const double fd = l / (2.0 * h);
    ASSERT_NEAR(deviceGrad[i], fd, 1e-4 + 1e-3 * std::abs(fd)) << what << " element " << i;
  }
}

class NnOpsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backends::skipIfExcluded(GetParam()); }
  static constexpr unsigned kTiles = 4;
  Graph graph{Target{kTiles, 65536, 6}};
  Sequence prog;
  std::map<std::string, Floats> values;

  Tensor input(std::vector<size_t> shape, const std::string& name, uint32_t seed,
               size_t grain = 1) {
    Tensor t = ops::createLinear(graph, ElemType::Float32, shape, name, grain);
    Floats v = randomFloats(t.numElements(), seed);
    graph.setInitialValue(t, v);
    values[name] = v;
    return t;
  }

  Tensor indices(std::vector<size_t> shape, const std::vector<int32_t>& v,
                 const std::string& name) {
    Tensor t = ops::createLinear(graph, ElemType::Int32, shape, name);
    graph.setInitialValue(t, v);
    return t;
  }

  std::map<std::string, Floats> run(const std::vector<std::pair<std::string, Tensor>>& outputs) {
    for (const auto& [name, t] : outputs) graph.exposeTensor(name, t);
    Compiled c = compile(graph, prog);
    DeviceOptions o;
    o.tiles = kTiles;
    const backends::Opened dev = backends::open(GetParam(), o);
    Engine engine(*dev.device, c.executable);
    RunResult r = engine.run(400'000'000);
    EXPECT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
    std::map<std::string, Floats> out;
    for (const auto& [name, t] : outputs) {
      std::vector<uint8_t> bytes = engine.readTensor(name);
      Floats f(bytes.size() / 4);
      std::memcpy(f.data(), bytes.data(), bytes.size());
      out[name] = f;
    }
    return out;
  }
};

// ---- activations ----

TEST_P(NnOpsTest, ActivationsAndTheirGradients) {
  const std::vector<size_t> shape{7, 13};
  Tensor x = input(shape, "x", 1);
  Tensor dy = input(shape, "dy", 2, 13);  // mapped unlike x: the backward gathers it
  Tensor t = ops::tanh(graph, x, prog, "tanh");
  Tensor s = ops::sigmoid(graph, x, prog, "sigmoid");
  Tensor g = ops::gelu(graph, x, prog, "gelu");
  Tensor dt = ops::tanhBackward(graph, dy, t, prog, "tanhGrad");
  Tensor ds = ops::sigmoidBackward(graph, dy, s, prog, "sigmoidGrad");
  Tensor dg = ops::geluBackward(graph, dy, x, prog, "geluGrad");
  auto out = run({{"tanh", t}, {"sigmoid", s}, {"gelu", g}, {"dt", dt}, {"ds", ds}, {"dg", dg}});
  const Floats& vx = values["x"];
  const Floats& vd = values["dy"];
  Floats e[6];
  for (size_t i = 0; i < vx.size(); ++i) {
    const float xi = vx[i];
    const float ti = tessera_tanhf(xi), si = 1.0f / (1.0f + tessera_expf(-xi));
    e[0].push_back(ti);
    e[1].push_back(si);
    e[3].push_back(vd[i] * (1.0f - ti * ti));
    e[4].push_back(vd[i] * (1.0f - si) * si);
  }
  e[2] = nnref::gelu(vx);
  e[5] = nnref::geluGrad(vd, vx);
  expectBitEqual(out["tanh"], e[0], "tanh");
  expectBitEqual(out["sigmoid"], e[1], "sigmoid");
  expectBitEqual(out["gelu"], e[2], "gelu");
  expectBitEqual(out["dt"], e[3], "tanhBackward");
  expectBitEqual(out["ds"], e[4], "sigmoidBackward");
  expectBitEqual(out["dg"], e[5], "geluBackward");
  auto map = [](double (*fn)(double)) {
    return [fn](const Doubles& v) {
      Doubles r;
      for (double a : v) r.push_back(fn(a));
      return r;
    };
  };
  expectGradient(map([](double a) { return std::tanh(a); }), vx, vd, out["dt"], "tanh gradient");
  expectGradient(map([](double a) { return 1.0 / (1.0 + std::exp(-a)); }), vx, vd, out["ds"],
                 "sigmoid gradient");
  expectGradient(map([](double a) { return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0))); }), vx,
                 vd, out["dg"], "gelu gradient");
}

// ---- softmax ----

TEST_P(NnOpsTest, SoftmaxAndLogSoftmaxAlongEveryAxis) {
  const std::vector<size_t> shape{3, 5, 4};
  Tensor x = input(shape, "x", 3);
  Tensor dy = input(shape, "dy", 4, 5);
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t axis = 0; axis < 3; ++axis) {
    for (bool log : {false, true}) {
      const std::string id = fmt::format("{}{}", log ? "log" : "sm", axis);
      Tensor y =
          log ? ops::logSoftmax(graph, x, axis, prog, id) : ops::softmax(graph, x, axis, prog, id);
      Tensor dx = log ? ops::logSoftmaxBackward(graph, dy, y, axis, prog, id + "/grad")
                      : ops::softmaxBackward(graph, dy, y, axis, prog, id + "/grad");
      ASSERT_EQ(y.shape(), shape);
      ASSERT_EQ(dx.shape(), shape);
      outs.emplace_back(id, y);
      outs.emplace_back(id + "/grad", dx);
    }
  }
  auto out = run(outs);
  for (size_t axis = 0; axis < 3; ++axis) {
    for (bool log : {false, true}) {
      const std::string id = fmt::format("{}{}", log ? "log" : "sm", axis);
      const Floats y = nnref::softmax(values["x"], shape, axis, log);
      expectBitEqual(out[id], y, id);
      expectBitEqual(out[id + "/grad"], nnref::softmaxGrad(values["dy"], y, shape, axis, log),
                     id + " gradient");
      expectGradient([&](const Doubles& v) { return nnref::softmaxDouble(v, shape, axis, log); },
                     values["x"], values["dy"], out[id + "/grad"], id + " gradient check");
    }
  }
}

// ---- layer normalisation ----

TEST_P(NnOpsTest, LayerNormOverTrailingDimensions) {
  // Normalised over the last two dimensions [2, 5]: 6 rows of 10.
  const std::vector<size_t> shape{3, 2, 2, 5};
  const float eps = 1e-5f;
  Tensor x = input(shape, "x", 5);
  Tensor w = input({2, 5}, "w", 6);
  Tensor b = input({2, 5}, "b", 7);
  Tensor dy = input(shape, "dy", 8, 7);
  ops::NormResult f = ops::layerNorm(graph, x, w, b, eps, prog, "ln");
  ops::NormGradients g = ops::layerNormBackward(graph, dy, x, w, f.mean, f.invStd, prog, "lnGrad");
  ASSERT_EQ(f.out.shape(), shape);
  ASSERT_EQ(g.weight.shape(), w.shape());
  auto out = run({{"y", f.out},
                  {"mean", f.mean},
                  {"rstd", f.invStd},
                  {"dx", g.input},
                  {"dw", g.weight},
                  {"db", g.bias}});
  const nnref::Norm r =
      nnref::layerNorm(values["x"], values["w"], values["b"], values["dy"], 10, eps);
  expectBitEqual(out["y"], r.out, "layerNorm");
  expectBitEqual(out["mean"], r.mean, "layerNorm mean");
  expectBitEqual(out["rstd"], r.invStd, "layerNorm invStd");
  expectBitEqual(out["dx"], r.dx, "layerNorm input gradient");
  expectBitEqual(out["dw"], r.dw, "layerNorm weight gradient");
  expectBitEqual(out["db"], r.db, "layerNorm bias gradient");
  const Doubles wd = toDouble(values["w"]), bd = toDouble(values["b"]), xd = toDouble(values["x"]);
  expectGradient([&](const Doubles& v) { return nnref::layerNormDouble(v, wd, bd, 10, eps); },
                 values["x"], values["dy"], out["dx"], "layerNorm input gradient check");
  expectGradient([&](const Doubles& v) { return nnref::layerNormDouble(xd, v, bd, 10, eps); },
                 values["w"], values["dy"], out["dw"], "layerNorm weight gradient check");
  expectGradient([&](const Doubles& v) { return nnref::layerNormDouble(xd, wd, v, 10, eps); },
                 values["b"], values["dy"], out["db"], "layerNorm bias gradient check");
}

// ---- batch normalisation ----

TEST_P(NnOpsTest, BatchNormTrainingAndInference) {
  const size_t n = 4, c = 3, h = 2, wd = 3, s = h * wd;
  const float eps = 1e-5f, momentum = 0.1f;
  Tensor x = input({n, c, h, wd}, "x", 9);
  Tensor w = input({c}, "w", 10);
  Tensor b = input({c}, "b", 11);
  Tensor dy = input({n, c, h, wd}, "dy", 12, 5);
  Tensor rm = input({c}, "rm", 13);
  Tensor rv = ops::createLinear(graph, ElemType::Float32, {c}, "rv");
  values["rv"] = randomFloats(c, 14, 0.5f, 2.0f);
  graph.setInitialValue(rv, values["rv"]);
  // Inference first (it reads the running statistics before training updates them).
  ops::NormResult fi = ops::batchNormInference(graph, x, w, b, rm, rv, eps, prog, "bnEval");
  ops::NormGradients gi =
      ops::batchNormBackward(graph, dy, x, w, fi.mean, fi.invStd, false, prog, "bnEvalGrad");
  ops::NormResult ft = ops::batchNormTraining(graph, x, w, b, rm, rv, eps, momentum, prog, "bn");
  ops::NormGradients gt =
      ops::batchNormBackward(graph, dy, x, w, ft.mean, ft.invStd, true, prog, "bnGrad");
  // A 2-D [N, F] input: F channels, no update of running statistics.
  Tensor x2 = input({5, 3}, "x2", 15);
  Tensor dy2 = input({5, 3}, "dy2", 16);
  ops::NormResult f2 =
      ops::batchNormTraining(graph, x2, w, b, Tensor(), Tensor(), eps, momentum, prog, "bn2");
  ops::NormGradients g2 =
      ops::batchNormBackward(graph, dy2, x2, w, f2.mean, f2.invStd, true, prog, "bn2Grad");
  // Channels of 135 values: split into parts (33, 34, 34, 34 values) over the tiles.
  Tensor x3 = input({5, 2, 3, 9}, "x3", 17, 9);
  Tensor dy3 = input({5, 2, 3, 9}, "dy3", 18);
  Tensor w3 = input({2}, "w3", 19), b3 = input({2}, "b3", 20), rm3 = input({2}, "rm3", 21);
  Tensor rv3 = ops::createLinear(graph, ElemType::Float32, {2}, "rv3");
  values["rv3"] = randomFloats(2, 22, 0.5f, 2.0f);
  graph.setInitialValue(rv3, values["rv3"]);
  const size_t parts3 = ops::batchNormParts(graph, 2, 135);
  EXPECT_GT(parts3, 1u);
  ops::NormResult f3 =
      ops::batchNormTraining(graph, x3, w3, b3, rm3, rv3, eps, momentum, prog, "bn3");
  ops::NormGradients g3 =
      ops::batchNormBackward(graph, dy3, x3, w3, f3.mean, f3.invStd, true, prog, "bn3Grad");
  auto out = run({{"yEval", fi.out},     {"dxEval", gi.input}, {"dwEval", gi.weight},
                  {"dbEval", gi.bias},   {"y", ft.out},        {"mean", ft.mean},
                  {"invStd", ft.invStd}, {"dx", gt.input},     {"dw", gt.weight},
                  {"db", gt.bias},       {"rm", rm},           {"rv", rv},
                  {"y2", f2.out},        {"dx2", g2.input},    {"y3", f3.out},
                  {"dx3", g3.input},     {"dw3", g3.weight},   {"db3", g3.bias},
                  {"rm3", rm3},          {"rv3", rv3}});
  const nnref::Norm t3 =
      nnref::batchNorm(values["x3"], values["w3"], values["b3"], values["dy3"], values["rm3"],
                       values["rv3"], 5, 2, 27, eps, momentum, true, parts3);
  expectBitEqual(out["y3"], t3.out, "batchNormTraining in parts");
  expectBitEqual(out["dx3"], t3.dx, "batchNorm input gradient in parts");
  expectBitEqual(out["dw3"], t3.dw, "batchNorm weight gradient in parts");
  expectBitEqual(out["db3"], t3.db, "batchNorm bias gradient in parts");
  expectBitEqual(out["rm3"], t3.runMean, "running mean in parts");
  expectBitEqual(out["rv3"], t3.runVar, "running variance in parts");
  {
    const Doubles x3d = toDouble(values["x3"]), w3d = toDouble(values["w3"]),
                  b3d = toDouble(values["b3"]);
    expectGradient(
        [&](const Doubles& v) { return nnref::batchNormDouble(v, w3d, b3d, 5, 2, 27, eps); },
        values["x3"], values["dy3"], out["dx3"], "batchNorm in parts input gradient check");
    expectGradient(
        [&](const Doubles& v) { return nnref::batchNormDouble(x3d, v, b3d, 5, 2, 27, eps); },
        values["w3"], values["dy3"], out["dw3"], "batchNorm in parts weight gradient check");
  }
  const nnref::Norm e = nnref::batchNorm(values["x"], values["w"], values["b"], values["dy"],
                                         values["rm"], values["rv"], n, c, s, eps, momentum, false,
                                         ops::batchNormParts(graph, c, n * s));
  expectBitEqual(out["yEval"], e.out, "batchNormInference");
  expectBitEqual(out["dxEval"], e.dx, "batchNorm (evaluation) input gradient");
  expectBitEqual(out["dwEval"], e.dw, "batchNorm (evaluation) weight gradient");
  expectBitEqual(out["dbEval"], e.db, "batchNorm (evaluation) bias gradient");
  const nnref::Norm t = nnref::batchNorm(values["x"], values["w"], values["b"], values["dy"],
                                         values["rm"], values["rv"], n, c, s, eps, momentum, true,
                                         ops::batchNormParts(graph, c, n * s));
  expectBitEqual(out["y"], t.out, "batchNormTraining");
  expectBitEqual(out["mean"], t.mean, "batchNorm mean");
  expectBitEqual(out["invStd"], t.invStd, "batchNorm invStd");
  expectBitEqual(out["dx"], t.dx, "batchNorm input gradient");
  expectBitEqual(out["dw"], t.dw, "batchNorm weight gradient");
  expectBitEqual(out["db"], t.db, "batchNorm bias gradient");
  expectBitEqual(out["rm"], t.runMean, "running mean");
  expectBitEqual(out["rv"], t.runVar, "running variance");
  const nnref::Norm t2 = nnref::batchNorm(values["x2"], values["w"], values["b"], values["dy2"],
                                          values["rm"], values["rv"], 5, 3, 1, eps, momentum, true,
                                          ops::batchNormParts(graph, 3, 5));
  expectBitEqual(out["y2"], t2.out, "batchNormTraining [N, F]");
  expectBitEqual(out["dx2"], t2.dx, "batchNorm [N, F] input gradient");
  const Doubles xd = toDouble(values["x"]), wdd = toDouble(values["w"]), bd = toDouble(values["b"]);
  expectGradient([&](const Doubles& v) { return nnref::batchNormDouble(v, wdd, bd, n, c, s, eps); },
                 values["x"], values["dy"], out["dx"], "batchNorm input gradient check");
  expectGradient([&](const Doubles& v) { return nnref::batchNormDouble(xd, v, bd, n, c, s, eps); },
                 values["w"], values["dy"], out["dw"], "batchNorm weight gradient check");
  expectGradient([&](const Doubles& v) { return nnref::batchNormDouble(xd, wdd, v, n, c, s, eps); },
                 values["b"], values["dy"], out["db"], "batchNorm bias gradient check");
  expectGradient([&](const Doubles& v) { return nnref::batchNormDouble(v, wdd, bd, 5, 3, 1, eps); },
                 values["x2"], values["dy2"], out["dx2"], "batchNorm [N, F] input gradient check");
}

// ---- dropout ----

TEST_P(NnOpsTest, DropoutMaskIsTheSameOnEveryMapping) {
  const size_t rows = 9, cols = 23;
  const float p = 0.3f;
  Tensor x = input({rows, cols}, "x", 17);
  Tensor x2 =
      ops::createLinear(graph, ElemType::Float32, {rows, cols}, "x2", cols * 3);  // another mapping
  graph.setInitialValue(x2, values["x"]);
  Tensor dy = input({rows, cols}, "dy", 18);
  Tensor seed = ops::createDropoutSeed(graph, 1234, "seed");
  Tensor y = ops::dropout(graph, x, seed, p, 7, prog, "drop");
  Tensor y2 = ops::dropout(graph, x2, seed, p, 7, prog, "drop2");
  Tensor dx = ops::dropoutBackward(graph, dy, seed, p, 7, prog, "dropGrad");
  Tensor other = ops::dropout(graph, x, seed, p, 8, prog, "otherStream");
  auto out = run({{"y", y}, {"y2", y2}, {"dx", dx}, {"other", other}});
  const Floats want = nnref::dropout(values["x"], 1234, 0, p, 7);
  const Floats wantGrad = nnref::dropout(values["dy"], 1234, 0, p, 7);
  const Floats ones(rows * cols, 1.0f);
  const Floats mask = nnref::dropout(ones, 1234, 0, p, 7),
               mask8 = nnref::dropout(ones, 1234, 0, p, 8);
  size_t dropped = 0, differ = 0;
  for (size_t i = 0; i < rows * cols; ++i) {
    dropped += mask[i] == 0.0f;
    differ += (mask[i] == 0.0f) != (mask8[i] == 0.0f);
  }
  expectBitEqual(out["y"], want, "dropout");
  expectBitEqual(out["y2"], want, "dropout of a differently mapped input");
  expectBitEqual(out["dx"], wantGrad, "dropout gradient");
  EXPECT_NE(out["other"], out["y"]) << "another stream gives another mask";
  EXPECT_GT(differ, 0u);
  // 207 Bernoulli(0.3) draws: mean 62, standard deviation 6.6; 5 sigma either way.
  EXPECT_NEAR(static_cast<double>(dropped), p * rows * cols, 33.0);
}

// Philox-4x32-10 against the known-answer vectors of Random123 (kat_vectors: philox4x32_10).
TEST(Philox, KnownAnswers) {
  struct Kat {
    uint32_t ctr[4], k0, k1, out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       0xffffffff,
       0xffffffff,
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       0xa4093822,
       0x299f31d0,
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    uint32_t out[4];
    tessera_philox4x32(k.ctr, k.k0, k.k1, out);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], k.out[i]) << "word " << i;
  }
}

// ---- embedding ----

TEST_P(NnOpsTest, EmbeddingLookupAndScatterAddGradient) {
  const size_t vocab = 10, dim = 7;
  Tensor table = ops::createEmbeddingTable(graph, vocab, dim, "table");
  values["table"] = randomFloats(vocab * dim, 19);
  graph.setInitialValue(table, values["table"]);
  const std::vector<int32_t> idx = {3, 0, 9, 3, 5, 3,
                                    1, 0, 9, 2, 8, 3};  // repeats: the scatter adds them
  Tensor ind = indices({3, 4}, idx, "idx");
  Tensor dy = input({3, 4, dim}, "dy", 20);
  Tensor y = ops::embedding(graph, table, ind, prog, "emb");
  Tensor dt = ops::embeddingBackward(graph, dy, ind, vocab, prog, "embGrad");
  ASSERT_EQ(y.shape(), (std::vector<size_t>{3, 4, dim}));
  auto out = run({{"y", y}, {"dt", dt}});
  Floats want, wantGrad(vocab * dim, 0.0f);
  for (size_t r = 0; r < idx.size(); ++r) {
    for (size_t j = 0; j < dim; ++j) {
      want.push_back(values["table"][static_cast<size_t>(idx[r]) * dim + j]);
      wantGrad[static_cast<size_t>(idx[r]) * dim + j] += values["dy"][r * dim + j];
    }
  }
  expectBitEqual(out["y"], want, "embedding");
  expectBitEqual(out["dt"], wantGrad, "embedding gradient");
  expectGradient(
      [&](const Doubles& t) {
        Doubles r;
        for (int32_t i : idx) {
          for (size_t j = 0; j < dim; ++j) r.push_back(t[static_cast<size_t>(i) * dim + j]);
        }
        return r;
      },
      values["table"], values["dy"], out["dt"], "embedding gradient check");
}

// ---- batched matmul ----

TEST_P(NnOpsTest, BatchMatMulWithTransposesAndGradients) {
  const size_t batch = 2, m = 5, k = 6, n = 3;
  std::vector<std::pair<std::string, Tensor>> outs;
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    const std::string id = fmt::format("f{}", flags);
    const uint32_t sd = static_cast<uint32_t>(flags);
    Tensor a = input(ta ? std::vector<size_t>{batch, k, m} : std::vector<size_t>{batch, m, k},
                     "a" + id, 30 + sd);
    Tensor b = input(tb ? std::vector<size_t>{batch, n, k} : std::vector<size_t>{batch, k, n},
                     "b" + id, 40 + sd);
    Tensor dc = input({batch, m, n}, "dc" + id, 50 + sd);
    outs.emplace_back("c" + id, ops::batchMatMul(graph, a, b, prog, "bmm" + id, {ta, tb}));
    outs.emplace_back("da" + id,
                      ops::batchMatMulBackwardA(graph, dc, b, prog, "bmmA" + id, {ta, tb}));
    outs.emplace_back("db" + id,
                      ops::batchMatMulBackwardB(graph, dc, a, prog, "bmmB" + id, {ta, tb}));
    ASSERT_EQ(outs[outs.size() - 2].second.shape(), a.shape());
    ASSERT_EQ(outs.back().second.shape(), b.shape());
  }
  auto out = run(outs);
  auto read = [&](const std::string& name) { return out[name]; };
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    const std::string id = fmt::format("f{}", flags);
    const Floats& a = values["a" + id];
    const Floats& b = values["b" + id];
    const Floats& dc = values["dc" + id];
    expectBitEqual(read("c" + id), nnref::batchMatMul(graph, a, b, batch, m, k, n, ta, tb),
                   "batchMatMul " + id);
    // The gradients' own products, as batchMatMulBackwardA/B form them.
    const Floats da = ta ? nnref::batchMatMul(graph, b, dc, batch, k, n, m, tb, true)
                         : nnref::batchMatMul(graph, dc, b, batch, m, n, k, false, !tb);
    const Floats db = tb ? nnref::batchMatMul(graph, dc, a, batch, n, m, k, true, ta)
                         : nnref::batchMatMul(graph, a, dc, batch, k, m, n, !ta, false);
    expectBitEqual(read("da" + id), da, "batchMatMul gradient of a " + id);
    expectBitEqual(read("db" + id), db, "batchMatMul gradient of b " + id);
    const Doubles ad = toDouble(a), bd = toDouble(b);
    expectGradient(
        [&](const Doubles& v) { return nnref::batchMatMulDouble(v, bd, batch, m, k, n, ta, tb); },
        a, dc, read("da" + id), "batchMatMul gradient check of a " + id);
    expectGradient(
        [&](const Doubles& v) { return nnref::batchMatMulDouble(ad, v, batch, m, k, n, ta, tb); },
        b, dc, read("db" + id), "batchMatMul gradient check of b " + id);
  }
}

// ---- awkward shapes ----

// Sizes of one, primes, more rows or channels than tiles times workers, p = 0 and p = 1.
TEST_P(NnOpsTest, AwkwardShapes) {
  const float eps = 1e-3f;
  Tensor a = input({37, 1}, "a", 60);  // softmax over length 1, 37 rows
  Tensor v = input({29}, "v", 61);     // rank 1: one row
  Tensor lw = input({29}, "lw", 62), lb = input({29}, "lb", 63);
  Tensor bx = input({1, 31, 2}, "bx", 64, 7);  // N = 1, C = 31 > 4 tiles x 6 workers
  Tensor bw = input({31}, "bw", 65), bb = input({31}, "bb", 66);
  Tensor bdy = input({1, 31, 2}, "bdy", 67);
  Tensor seed = ops::createDropoutSeed(graph, 99, "seed");
  Tensor table = ops::createEmbeddingTable(graph, 3, 1, "table");  // D = 1: one tile
  values["table"] = randomFloats(3, 68);
  graph.setInitialValue(table, values["table"]);
  const std::vector<int32_t> idx = {2, 2, 0, 7,
                                    -1};  // out of range: NaN rows, skipped by the gradient
  Tensor ind = indices({5}, idx, "idx");
  Tensor edy = input({5, 1}, "edy", 69);
  Tensor ma = input({1, 1, 9}, "ma", 70), mb = input({1, 9, 1}, "mb", 71);
  std::vector<std::pair<std::string, Tensor>> outs = {
      {"sm", ops::softmax(graph, a, 1, prog, "sm")},
      {"ls", ops::logSoftmax(graph, v, 0, prog, "ls")},
      {"ln", ops::layerNorm(graph, v, lw, lb, eps, prog, "ln").out},
      {"d0", ops::dropout(graph, v, seed, 0.0f, 1, prog, "d0")},
      {"d1", ops::dropout(graph, v, seed, 1.0f, 1, prog, "d1")},
      {"emb", ops::embedding(graph, table, ind, prog, "emb")},
      {"embGrad", ops::embeddingBackward(graph, edy, ind, 3, prog, "embGrad")},
      {"mm", ops::batchMatMul(graph, ma, mb, prog, "mm")}};
  ops::NormResult bn =
      ops::batchNormTraining(graph, bx, bw, bb, Tensor(), Tensor(), eps, 0.1f, prog, "bn");
  ops::NormGradients bg =
      ops::batchNormBackward(graph, bdy, bx, bw, bn.mean, bn.invStd, true, prog, "bnGrad");
  outs.emplace_back("bn", bn.out);
  outs.emplace_back("bnGrad", bg.input);
  auto out = run(outs);
  expectBitEqual(out["sm"], nnref::softmax(values["a"], {37, 1}, 1, false),
                 "softmax over length 1");
  expectBitEqual(out["ls"], nnref::softmax(values["v"], {29}, 0, true), "log-softmax of a vector");
  const Floats zeros(29, 0.0f);
  expectBitEqual(out["ln"],
                 nnref::layerNorm(values["v"], values["lw"], values["lb"], zeros, 29, eps).out,
                 "layerNorm of a vector");
  Floats d0, d1;
  for (float x : values["v"]) d0.push_back(x * 1.0f), d1.push_back(0.0f);
  expectBitEqual(out["d0"], d0, "dropout p = 0");
  expectBitEqual(out["d1"], d1, "dropout p = 1");
  ASSERT_EQ(out["emb"].size(), 5u);
  EXPECT_EQ(out["emb"][0], values["table"][2]);
  EXPECT_EQ(out["emb"][2], values["table"][0]);
  EXPECT_TRUE(std::isnan(out["emb"][3]) && std::isnan(out["emb"][4]))
      << "indices outside the table";
  expectBitEqual(out["embGrad"], {values["edy"][2], 0.0f, values["edy"][0] + values["edy"][1]},
                 "embedding gradient");
  expectBitEqual(out["mm"],
                 nnref::batchMatMul(graph, values["ma"], values["mb"], 1, 1, 9, 1, false, false),
                 "1x9x1");
  const Floats noStats(31, 0.0f);  // running statistics: not updated here
  const nnref::Norm r =
      nnref::batchNorm(values["bx"], values["bw"], values["bb"], values["bdy"], noStats, noStats, 1,
                       31, 2, eps, 0.1f, true, ops::batchNormParts(graph, 31, 2));
  expectBitEqual(out["bn"], r.out, "batchNorm, 31 channels");
  expectBitEqual(out["bnGrad"], r.dx, "batchNorm gradient, 31 channels");
}

// ---- errors ----

TEST(NnOpsErrors, NameTheOpTheTensorAndTheShapes) {
  Graph g(Target{4, 65536, 6});
  Sequence prog;
  Tensor x = ops::createLinear(g, ElemType::Float32, {4, 3, 5}, "acts");
  Tensor w = ops::createLinear(g, ElemType::Float32, {4}, "gamma");
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string ln = message([&] { ops::layerNorm(g, x, w, w, 1e-5f, prog, "encoder/ln1"); });
  EXPECT_NE(ln.find("encoder/ln1"), std::string::npos) << ln;
  EXPECT_NE(ln.find("gamma"), std::string::npos) << ln;
  EXPECT_NE(ln.find("[4,3,5]"), std::string::npos) << ln;
  const std::string bn = message(
      [&] { ops::batchNormTraining(g, x, w, w, Tensor(), Tensor(), 1e-5f, 0.1f, prog, "bn0"); });
  EXPECT_NE(bn.find("bn0"), std::string::npos) << bn;
  EXPECT_NE(bn.find("[3]"), std::string::npos) << bn;
  const std::string sm = message([&] { ops::softmax(g, x, 3, prog, "attn/softmax"); });
  EXPECT_NE(sm.find("attn/softmax"), std::string::npos) << sm;
  EXPECT_NE(sm.find("axis 3"), std::string::npos) << sm;
  const std::string dr = message([&] { ops::dropout(g, x, w, 0.1f, 0, prog, "drop0"); });
  EXPECT_NE(dr.find("drop0"), std::string::npos) << dr;
  const std::string bm = message([&] { ops::batchMatMul(g, x, w, prog, "qk"); });
  EXPECT_NE(bm.find("qk"), std::string::npos) << bm;
  EXPECT_NE(bm.find("gamma"), std::string::npos) << bm;
}

// ---- device math ----

// The functions added to tessera/mathf.h for these layers against the host's libm (in double).
TEST(MathF, Expm1TanhAndErfAreWithinTheirUlpBounds) {
  auto ulps = [](float a, double b) {
    const int32_t ia = std::bit_cast<int32_t>(a),
                  ib = std::bit_cast<int32_t>(static_cast<float>(b));
    return std::abs(static_cast<int64_t>(ia) - ib);
  };
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> wide(-12.0f, 12.0f), narrow(-1.0f, 1.0f);
  std::uniform_real_distribution<float> mag(-30.0f, 0.0f);
  for (int i = 0; i < 200000; ++i) {
    float x = i % 3 == 0   ? wide(rng)
              : i % 3 == 1 ? narrow(rng)
                           : std::exp2(mag(rng)) * (i % 2 ? 1.0f : -1.0f);
    ASSERT_LE(ulps(tessera_expm1f(x), std::expm1(static_cast<double>(x))), 4)
        << "expm1f(" << x << ")";
    ASSERT_LE(ulps(tessera_tanhf(x), std::tanh(static_cast<double>(x))), 3) << "tanhf(" << x << ")";
    ASSERT_LE(ulps(tessera_erff(x), std::erf(static_cast<double>(x))), 3) << "erff(" << x << ")";
  }
  EXPECT_EQ(tessera_tanhf(50.0f), 1.0f);
  EXPECT_EQ(tessera_tanhf(-50.0f), -1.0f);
  EXPECT_EQ(tessera_erff(5.0f), 1.0f);
  EXPECT_EQ(tessera_erff(-5.0f), -1.0f);
  EXPECT_TRUE(std::isnan(tessera_erff(NAN)) && std::isnan(tessera_tanhf(NAN)) &&
              std::isnan(tessera_expm1f(NAN)));
  EXPECT_EQ(tessera_expm1f(-100.0f), -1.0f);
}

INSTANTIATE_TEST_SUITE_P(Devices, NnOpsTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera
