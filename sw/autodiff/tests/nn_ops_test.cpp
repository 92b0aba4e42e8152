// Gradient checks of the autodiff layer's nn ops (sw/autodiff/ops_nn.cpp) on every backend of the
// one backend list: each gradient (and forward) equals a host reference of the same operation
// order bit for bit (nn_reference.hpp, tessera/mathf.h, tessera/philox.h) and agrees with a
// central finite difference of a double-precision forward (gradient_check.hpp: 1e-4 of the
// largest gradient). Also the graph-building errors of these ops.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "gradient_check.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"
#include "tessera/mathf.h"
#include "tessera/nn.hpp"
#include "tessera/nn_reference.hpp"

namespace tessera::autodiff {
namespace {

using namespace gradcheck;

class NnOpsTest : public GradientCheckTest {};

TEST_P(NnOpsTest, TanhSigmoidAndGeluGradients) {
  const std::vector<size_t> shape = {5, 7};
  const Value x = param(shape, "x", 1);
  const Tensor seed = variable(shape, "seed", 2, 7);  // mapped unlike x: the backward gathers it
  const Value t = tanh(tape, x, "tanh"), s = sigmoid(tape, x, "sigmoid"), g = gelu(tape, x, "gelu");
  auto out = run({{"t", t.tensor()},
                  {"s", s.tensor()},
                  {"g", g.tensor()},
                  {"dt", tape.gradients(t, seed, {x}, bwd, "bwd_tanh")[0]},
                  {"ds", tape.gradients(s, seed, {x}, bwd, "bwd_sigmoid")[0]},
                  {"dg", tape.gradients(g, seed, {x}, bwd, "bwd_gelu")[0]}});
  const Floats &xv = values["x"], &dy = values["seed"];
  Floats e[6];
  for (size_t i = 0; i < xv.size(); ++i) {
    const float xi = xv[i];
    const float ti = tessera_tanhf(xi), si = 1.0f / (1.0f + tessera_expf(-xi));
    e[0].push_back(ti);
    e[1].push_back(si);
    e[3].push_back(dy[i] * (1.0f - ti * ti));
    e[4].push_back(dy[i] * (1.0f - si) * si);
  }
  e[2] = nnref::gelu(xv);
  e[5] = nnref::geluGrad(dy, xv);
  expectBitEqual(out["t"], e[0], "tanh");
  expectBitEqual(out["s"], e[1], "sigmoid");
  expectBitEqual(out["g"], e[2], "gelu");
  expectBitEqual(out["dt"], e[3], "tanh dx");
  expectBitEqual(out["ds"], e[4], "sigmoid dx");
  expectBitEqual(out["dg"], e[5], "gelu dx");
  auto elementwise = [&](double (*fn)(double)) {
    return [fn, &dy](const std::vector<Doubles>& in) {
      double l = 0;
      for (size_t i = 0; i < in[0].size(); ++i) l += double{dy[i]} * fn(in[0][i]);
      return l;
    };
  };
  const std::vector<Doubles> in = {toDouble(xv)};
  expectNearFiniteDifference(out["dt"], elementwise([](double a) { return std::tanh(a); }), in, 0,
                             "tanh dx");
  expectNearFiniteDifference(out["ds"],
                             elementwise([](double a) { return 1.0 / (1.0 + std::exp(-a)); }), in,
                             0, "sigmoid dx");
  expectNearFiniteDifference(out["dg"], elementwise([](double a) {
                               return 0.5 * a * (1.0 + std::erf(a / std::sqrt(2.0)));
                             }),
                             in, 0, "gelu dx");
}

TEST_P(NnOpsTest, SoftmaxAndLogSoftmaxGradients) {
  const std::vector<size_t> shape = {3, 4, 5};
  struct Case {
    bool log;
    size_t axis;
  };
  const std::vector<Case> cases = {{false, 2}, {true, 1}, {false, 0}, {true, 2}};
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const std::string id = std::to_string(c);
    const Value x = param(shape, "x" + id, 10 + static_cast<uint32_t>(c));
    const Value y = cases[c].log ? logSoftmax(tape, x, cases[c].axis, "logsoftmax" + id)
                                 : softmax(tape, x, cases[c].axis, "softmax" + id);
    const Tensor seed = variable(shape, "seed" + id, 20 + static_cast<uint32_t>(c));
    outs.emplace_back("y" + id, y.tensor());
    outs.emplace_back("dx" + id, tape.gradients(y, seed, {x}, bwd, "bwd" + id)[0]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto [log, axis] = cases[c];
    const std::string id = std::to_string(c);
    SCOPED_TRACE(fmt::format("{} along {}", log ? "logSoftmax" : "softmax", axis));
    const Floats &xv = values["x" + id], &dy = values["seed" + id];
    const Floats y = nnref::softmax(xv, shape, axis, log);
    expectBitEqual(out["y" + id], y, "forward");
    expectBitEqual(out["dx" + id], nnref::softmaxGrad(dy, y, shape, axis, log), "dx");
    expectNearFiniteDifference(
        out["dx" + id],
        [&](const std::vector<Doubles>& in) {
          return dot(dy, nnref::softmaxDouble(in[0], shape, axis, log));
        },
        {toDouble(xv)}, 0, "dx");
  }
}

TEST_P(NnOpsTest, LayerNormalizationGradients) {
  // Normalised over the last two dimensions [2, 4]: 6 rows of 8.
  const std::vector<size_t> shape = {3, 2, 2, 4};
  const float eps = 1e-5f;
  const Value x = param(shape, "x", 30), w = param({2, 4}, "w", 31), b = param({2, 4}, "b", 32);
  const Value y = layerNorm(tape, x, w, b, eps, "ln");
  const Tensor seed = variable(shape, "seed", 33, 5);
  const std::vector<Tensor> g = tape.gradients(y, seed, {x, w, b}, bwd, "bwd");
  auto out = run({{"y", y.tensor()}, {"dx", g[0]}, {"dw", g[1]}, {"db", g[2]}});
  const Floats &xv = values["x"], &wv = values["w"], &bv = values["b"], &dy = values["seed"];
  const nnref::Norm r = nnref::layerNorm(xv, wv, bv, dy, 8, eps);
  expectBitEqual(out["y"], r.out, "forward");
  expectBitEqual(out["dx"], r.dx, "dx");
  expectBitEqual(out["dw"], r.dw, "dscale");
  expectBitEqual(out["db"], r.db, "dbias");
  auto f = [&](const std::vector<Doubles>& in) {
    return dot(dy, nnref::layerNormDouble(in[0], in[1], in[2], 8, eps));
  };
  const std::vector<Doubles> in = {toDouble(xv), toDouble(wv), toDouble(bv)};
  expectNearFiniteDifference(out["dx"], f, in, 0, "dx");
  expectNearFiniteDifference(out["dw"], f, in, 1, "dscale");
  expectNearFiniteDifference(out["db"], f, in, 2, "dbias");
}

TEST_P(NnOpsTest, BatchNormalizationGradientsAndRunningStatistics) {
  const size_t n = 3, c = 2, h = 2, wd = 3, s = h * wd;
  const float eps = 1e-5f, momentum = 0.1f;
  const std::vector<size_t> shape = {n, c, h, wd};
  const Value x = param(shape, "x", 40), w = param({c}, "w", 41), b = param({c}, "b", 42);
  const Tensor rmT = variable({c}, "rm", 43);
  const Tensor rvT = initialise(ops::createLinear(graph, ElemType::Float32, {c}, "rv"),
                                randomFloats(c, 44, 0.5f, 2.0f));
  const Value rm = tape.input(rmT), rv = tape.input(rvT);
  // Evaluation first: it reads the running statistics before training updates them.
  const Value ye = batchNorm(tape, x, w, b, rm, rv, false, eps, momentum, "bn_eval");
  const Value yt = batchNorm(tape, x, w, b, rm, rv, true, eps, momentum, "bn_train");
  const Tensor seed = variable(shape, "seed", 45);
  const std::vector<Tensor> ge = tape.gradients(ye, seed, {x, w, b}, bwd, "bwd_eval");
  const std::vector<Tensor> gt = tape.gradients(yt, seed, {x, w, b}, bwd, "bwd_train");
  auto out = run({{"ye", ye.tensor()},
                  {"dxe", ge[0]},
                  {"dwe", ge[1]},
                  {"dbe", ge[2]},
                  {"yt", yt.tensor()},
                  {"dxt", gt[0]},
                  {"dwt", gt[1]},
                  {"dbt", gt[2]},
                  {"rm", rmT},
                  {"rv", rvT}});
  const Floats &xv = values["x"], &wv = values["w"], &bv = values["b"], &dy = values["seed"],
               &rmv = values["rm"], &rvv = values["rv"];
  const size_t parts = ops::batchNormParts(graph, c, n * s);
  const nnref::Norm e =
      nnref::batchNorm(xv, wv, bv, dy, rmv, rvv, n, c, s, eps, momentum, false, parts);
  const nnref::Norm t =
      nnref::batchNorm(xv, wv, bv, dy, rmv, rvv, n, c, s, eps, momentum, true, parts);
  expectBitEqual(out["ye"], e.out, "evaluation forward");
  expectBitEqual(out["dxe"], e.dx, "evaluation dx");
  expectBitEqual(out["dwe"], e.dw, "evaluation dscale");
  expectBitEqual(out["dbe"], e.db, "evaluation dbias");
  expectBitEqual(out["yt"], t.out, "training forward");
  expectBitEqual(out["dxt"], t.dx, "training dx");
  expectBitEqual(out["dwt"], t.dw, "training dscale");
  expectBitEqual(out["dbt"], t.db, "training dbias");
  expectBitEqual(out["rm"], t.runMean, "running mean");
  expectBitEqual(out["rv"], t.runVar, "running variance");
  const std::vector<Doubles> in = {toDouble(xv), toDouble(wv), toDouble(bv)};
  const Doubles rmd = toDouble(rmv), rvd = toDouble(rvv);
  auto fe = [&](const std::vector<Doubles>& a) {
    return dot(dy, nnref::batchNormDouble(a[0], a[1], a[2], n, c, s, eps, &rmd, &rvd));
  };
  auto ft = [&](const std::vector<Doubles>& a) {
    return dot(dy, nnref::batchNormDouble(a[0], a[1], a[2], n, c, s, eps));
  };
  const char* what[3] = {"dx", "dscale", "dbias"};
  const char* evaluation[3] = {"dxe", "dwe", "dbe"};
  const char* training[3] = {"dxt", "dwt", "dbt"};
  for (size_t i = 0; i < 3; ++i) {
    expectNearFiniteDifference(out[evaluation[i]], fe, in, i,
                               fmt::format("evaluation {}", what[i]));
    expectNearFiniteDifference(out[training[i]], ft, in, i, fmt::format("training {}", what[i]));
  }
}

TEST_P(NnOpsTest, DropoutGradientUsesTheForwardMask) {
  const std::vector<size_t> shape = {6, 9};
  const float p = 0.3f;
  const uint32_t stream = 7;
  const Value x = param(shape, "x", 50);
  const Value seedV = tape.input(ops::createDropoutSeed(graph, 1234, "dropout_seed"));
  const Value y = dropout(tape, x, seedV, p, stream, "drop");
  const Tensor seed = variable(shape, "seed", 51);
  const Tensor dx = tape.gradients(y, seed, {x}, bwd, "bwd")[0];
  auto out = run({{"y", y.tensor()}, {"dx", dx}});
  const Floats &xv = values["x"], &dy = values["seed"];
  const Floats mask = nnref::dropout(Floats(xv.size(), 1.0f), 1234, 0, p, stream);
  std::vector<bool> keep;
  for (float m : mask) keep.push_back(m != 0.0f);
  expectBitEqual(out["y"], nnref::dropout(xv, 1234, 0, p, stream), "forward");
  expectBitEqual(out["dx"], nnref::dropout(dy, 1234, 0, p, stream), "dx");
  expectNearFiniteDifference(
      out["dx"],
      [&](const std::vector<Doubles>& in) {
        double l = 0;
        for (size_t i = 0; i < in[0].size(); ++i)
          l += keep[i] ? double{dy[i]} * in[0][i] / (1.0 - double{p}) : 0.0;
        return l;
      },
      {toDouble(xv)}, 0, "dx");
}

TEST_P(NnOpsTest, GatherScatterAddsTheTableGradient) {
  const size_t vocab = 10, dim = 4;
  const Tensor tableT = ops::createEmbeddingTable(graph, vocab, dim, "table");
  const Value table = tape.parameter(initialise(tableT, randomFloats(vocab * dim, 60)));
  const std::vector<int32_t> idx = {3, 0, 9, 3, 5, 3};  // repeats: the scatter adds them
  Tensor indT = ops::createLinear(graph, ElemType::Int32, {2, 3}, "idx");
  graph.setInitialValue(indT, idx);
  const Value y = embedding(tape, table, tape.input(indT), "emb");
  ASSERT_EQ(y.tensor().shape(), (std::vector<size_t>{2, 3, dim}));
  const Tensor seed = variable({2, 3, dim}, "seed", 61);
  const Tensor dt = tape.gradients(y, seed, {table}, bwd, "bwd")[0];
  auto out = run({{"y", y.tensor()}, {"dt", dt}});
  const Floats &tv = values["table"], &dy = values["seed"];
  Floats want, wantGrad(vocab * dim, 0.0f);
  for (size_t r = 0; r < idx.size(); ++r) {
    for (size_t j = 0; j < dim; ++j) {
      want.push_back(tv[static_cast<size_t>(idx[r]) * dim + j]);
      wantGrad[static_cast<size_t>(idx[r]) * dim + j] += dy[r * dim + j];
    }
  }
  expectBitEqual(out["y"], want, "forward");
  expectBitEqual(out["dt"], wantGrad, "dtable");
  expectNearFiniteDifference(
      out["dt"],
      [&](const std::vector<Doubles>& in) {
        double l = 0;
        for (size_t r = 0; r < idx.size(); ++r) {
          for (size_t j = 0; j < dim; ++j)
            l += double{dy[r * dim + j]} * in[0][static_cast<size_t>(idx[r]) * dim + j];
        }
        return l;
      },
      {toDouble(tv)}, 0, "dtable");
}

TEST_P(NnOpsTest, BatchedMatMulGradientsForEveryTranspose) {
  const size_t batch = 2, m = 3, k = 4, n = 2;
  const int cases = 4;
  std::vector<std::pair<std::string, Tensor>> outs;
  for (int flags = 0; flags < cases; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    const std::string id = std::to_string(flags);
    const uint32_t sd = 70 + 10 * static_cast<uint32_t>(flags);
    const Value a = param(ta ? std::vector<size_t>{batch, k, m} : std::vector<size_t>{batch, m, k},
                          "a" + id, sd);
    const Value b = param(tb ? std::vector<size_t>{batch, n, k} : std::vector<size_t>{batch, k, n},
                          "b" + id, sd + 1);
    const Value c = matmul(tape, a, b, "bmm" + id, {ta, tb});
    const Tensor seed = variable({batch, m, n}, "seed" + id, sd + 2);
    const std::vector<Tensor> g = tape.gradients(c, seed, {a, b}, bwd, "bwd" + id);
    outs.emplace_back("c" + id, c.tensor());
    outs.emplace_back("da" + id, g[0]);
    outs.emplace_back("db" + id, g[1]);
  }
  auto out = run(outs);
  for (int flags = 0; flags < cases; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    const std::string id = std::to_string(flags);
    SCOPED_TRACE(fmt::format("transA {} transB {}", ta, tb));
    const Floats &a = values["a" + id], &b = values["b" + id], &dc = values["seed" + id];
    expectBitEqual(out["c" + id], nnref::batchMatMul(graph, a, b, batch, m, k, n, ta, tb),
                   "forward");
    // The products batchMatMulBackwardA/B form, in each input's stored layout.
    const Floats da = ta ? nnref::batchMatMul(graph, b, dc, batch, k, n, m, tb, true)
                         : nnref::batchMatMul(graph, dc, b, batch, m, n, k, false, !tb);
    const Floats db = tb ? nnref::batchMatMul(graph, dc, a, batch, n, m, k, true, ta)
                         : nnref::batchMatMul(graph, a, dc, batch, k, m, n, !ta, false);
    expectBitEqual(out["da" + id], da, "da");
    expectBitEqual(out["db" + id], db, "db");
    auto f = [&](const std::vector<Doubles>& in) {
      return dot(dc, nnref::batchMatMulDouble(in[0], in[1], batch, m, k, n, ta, tb));
    };
    const std::vector<Doubles> in = {toDouble(a), toDouble(b)};
    expectNearFiniteDifference(out["da" + id], f, in, 0, "da");
    expectNearFiniteDifference(out["db" + id], f, in, 1, "db");
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, NnOpsTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

// ---- Graph-building errors: each names the op's debug name, the tensors and their shapes.

using NnOpsBuilding = GraphBuilding;

TEST_F(NnOpsBuilding, ShapeMismatchesNameTheOpTensorsAndShapes) {
  const Value x = param({4, 6}, "acts"), w = param({5}, "gamma"), b = param({5}, "beta");
  expectThrowContaining([&] { layerNorm(tape, x, w, b, 1e-5f, "enc/ln"); },
                        {"enc/ln (LayerNormalization)", "\"gamma\"", "[5]", "\"acts\"", "[4,6]"});
  const Value img = param({2, 3, 4, 4}, "img");
  expectThrowContaining(
      [&] { batchNorm(tape, img, w, b, Value(), Value(), true, 1e-5f, 0.1f, "bn0"); },
      {"bn0 (BatchNormalization)", "\"gamma\"", "[5]", "\"img\"", "[2,3,4,4]"});
  const Value q = param({2, 3, 4}, "q"), kt = param({2, 5, 3}, "k");
  expectThrowContaining([&] { matmul(tape, q, kt, "attn/qk"); },
                        {"attn/qk (MatMul)", "\"q\"", "[2,3,4]", "\"k\"", "[2,5,3]"});
  expectThrowContaining([&] { softmax(tape, x, 2, "sm"); },
                        {"sm (Softmax)", "\"acts\"", "[4,6]", "axis 2"});
  const Tensor notSeed = ops::createLinear(graph, ElemType::Float32, {2}, "notseed");
  expectThrowContaining([&] { dropout(tape, x, tape.input(notSeed), 0.1f, 0, "drop"); },
                        {"drop (Dropout)", "\"notseed\"", "[2]", "int32"});
  const Tensor idx = ops::createLinear(graph, ElemType::Float32, {3}, "ids");
  expectThrowContaining([&] { embedding(tape, x, tape.input(idx), "emb"); },
                        {"emb (Gather)", "\"ids\"", "[3]", "int32"});
}

TEST_F(NnOpsBuilding, RunningStatisticsHaveNoGradient) {
  // A running statistic that is a parameter: asking for its gradient names the op and tensor.
  const Value x = param({2, 3, 2, 2}, "x"), w = param({3}, "w"), b = param({3}, "b");
  const Value rm = param({3}, "mean_as_param"), rv = param({3}, "var");
  const Value y = batchNorm(tape, x, w, b, rm, rv, true, 1e-5f, 0.1f, "bn");
  expectThrowContaining([&] { tape.gradients(y, {rm}, bwd); },
                        {"bn (BatchNormalization)", "\"mean_as_param\"", "[3]", "no gradient"});
}

}  // namespace
}  // namespace tessera::autodiff
