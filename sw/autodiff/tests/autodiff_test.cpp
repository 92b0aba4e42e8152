// Gradient checks of every built-in op (docs/autodiff.md, "Tests"): on each backend of
// the one backend list (host/testing/backends.hpp) the backward's result equals a host reference of
// the same operation order bit for bit, and it agrees with a central finite difference of a
// double-precision forward on the host; the optimizers against host references; the graph-building
// errors.
#include "tessera/autodiff.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "autodiff_util.hpp"
#include "gradient_check.hpp"
#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"
#include "tessera/mathf.h"

namespace tessera::autodiff {
namespace {

using namespace gradcheck;

class AutodiffTest : public GradientCheckTest {};

// op(x) op(y) on the host in the order the backward uses: from zero in k order (accumulate, the
// path of a block-mapped leaf), or ops::matmul's k parts.
Floats hostProduct(const Graph& g, const Floats& x, const Floats& y, size_t m, size_t k, size_t n,
                   bool tx, bool ty, bool accumulate) {
  const size_t parts = accumulate ? 1 : ops::planMatMul(g, m, k, n).k;
  const size_t per = (k + parts - 1) / parts;
  Floats c(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float total = 0;
      for (size_t p = 0; p < parts; ++p) {
        float s = 0.0f;
        for (size_t q = p * per; q < std::min(k, (p + 1) * per); ++q) {
          s = std::fmaf(tx ? x[q * m + i] : x[i * k + q], ty ? y[j * k + q] : y[q * n + j], s);
        }
        total = p == 0 ? s : total + s;
      }
      c[i * n + j] = total;
    }
  }
  return c;
}

TEST_P(AutodiffTest, MatMulGradientsForEveryTranspose) {
  const size_t m = 5, k = 7, n = 6;
  struct Case {
    bool ta, tb;
  };
  const std::vector<Case> cases = {{false, false}, {true, false}, {false, true}, {true, true}};
  std::vector<std::pair<std::string, Tensor>> outs;
  std::vector<std::array<Value, 2>> ps;
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto [ta, tb] = cases[c];
    // a mapped linearly (ops::matmul's plan for its gradient), b in blocks (accumulated).
    const Value a = param(ta ? std::vector<size_t>{k, m} : std::vector<size_t>{m, k},
                          fmt::format("a{}", c), 10 + c);
    const Tensor bt = ops::createMatMulRhs(graph, m, tb ? n : k, tb ? k : n, fmt::format("b{}", c));
    values[fmt::format("b{}", c)] = randomFloats(bt.numElements(), 20 + c);
    graph.setInitialValue(bt, values[fmt::format("b{}", c)]);
    const Value b = tape.parameter(bt);
    const Value y = matmul(tape, a, b, fmt::format("mm{}", c), {ta, tb});
    const Tensor seed = variable({m, n}, fmt::format("seed{}", c), 30 + c);
    const std::vector<Tensor> g = tape.gradients(y, seed, {a, b}, bwd, fmt::format("bwd{}", c));
    outs.emplace_back(fmt::format("ga{}", c), g[0]);
    outs.emplace_back(fmt::format("gb{}", c), g[1]);
    ps.push_back({a, b});
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const auto [ta, tb] = cases[c];
    SCOPED_TRACE(fmt::format("ta={} tb={}", ta, tb));
    const Floats& a = values[fmt::format("a{}", c)];
    const Floats& b = values[fmt::format("b{}", c)];
    const Floats& s = values[fmt::format("seed{}", c)];
    const bool accA = blockMapped(graph, ps[c][0].tensor()),
               accB = blockMapped(graph, ps[c][1].tensor());
    // The table of ops.cpp's matmul backward.
    const Floats ga = !ta ? hostProduct(graph, s, b, m, n, k, false, !tb, accA)
                          : hostProduct(graph, b, s, k, n, m, tb, true, accA);
    const Floats gb = !tb ? hostProduct(graph, a, s, k, m, n, !ta, false, accB)
                          : hostProduct(graph, s, a, n, m, k, true, ta, accB);
    expectBitEqual(out[fmt::format("ga{}", c)], ga, "da");
    expectBitEqual(out[fmt::format("gb{}", c)], gb, "db");
    auto f = [&](const std::vector<Doubles>& in) {
      double total = 0;
      for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
          double acc = 0;
          for (size_t q = 0; q < k; ++q) {
            acc += (ta ? in[0][q * m + i] : in[0][i * k + q]) *
                   (tb ? in[1][j * k + q] : in[1][q * n + j]);
          }
          total += acc * s[i * n + j];
        }
      }
      return total;
    };
    expectNearFiniteDifference(out[fmt::format("ga{}", c)], f, {toDouble(a), toDouble(b)}, 0, "da");
    expectNearFiniteDifference(out[fmt::format("gb{}", c)], f, {toDouble(a), toDouble(b)}, 1, "db");
  }
}

TEST_P(AutodiffTest, ElementwiseGradients) {
  const std::vector<size_t> shape = {6, 9};
  const Value a = param(shape, "a", 1), b = param(shape, "b", 2);
  const Tensor seed = variable(shape, "seed", 3);
  struct Op {
    std::string name;
    std::function<Value()> build;
    std::function<double(double, double)> f;
  };
  const std::vector<Op> opsList = {
      {"add", [&] { return add(tape, a, b, "add"); }, [](double x, double y) { return x + y; }},
      {"sub", [&] { return sub(tape, a, b, "sub"); }, [](double x, double y) { return x - y; }},
      {"mul", [&] { return mul(tape, a, b, "mul"); }, [](double x, double y) { return x * y; }},
      {"scale", [&] { return scale(tape, a, 0.375f, "scale"); },
       [](double x, double) { return x * 0.375; }},
      {"relu", [&] { return relu(tape, a, "relu"); },
       [](double x, double) { return x > 0 ? x : 0.0; }},
  };
  std::vector<std::pair<std::string, Tensor>> outs;
  for (const Op& op : opsList) {
    const Value y = op.build();
    const bool binary = op.name == "add" || op.name == "sub" || op.name == "mul";
    std::vector<Value> wrt = {a};
    if (binary) wrt.push_back(b);
    const std::vector<Tensor> g = tape.gradients(y, seed, wrt, bwd, "bwd_" + op.name);
    outs.emplace_back(op.name + "_ga", g[0]);
    if (binary) outs.emplace_back(op.name + "_gb", g[1]);
  }
  auto out = run(outs);
  const Floats &av = values["a"], &bv = values["b"], &s = values["seed"];
  const size_t n = av.size();
  Floats ga(n), gb(n);
  // add: the seed itself; sub: seed and seed * -1; mul: seed * b and seed * a; scale: seed *
  // 0.375; relu: the seed where the output is positive.
  expectBitEqual(out["add_ga"], s, "add da");
  expectBitEqual(out["add_gb"], s, "add db");
  for (size_t i = 0; i < n; ++i) gb[i] = s[i] * -1.0f;
  expectBitEqual(out["sub_ga"], s, "sub da");
  expectBitEqual(out["sub_gb"], gb, "sub db");
  for (size_t i = 0; i < n; ++i) ga[i] = s[i] * bv[i], gb[i] = s[i] * av[i];
  expectBitEqual(out["mul_ga"], ga, "mul da");
  expectBitEqual(out["mul_gb"], gb, "mul db");
  for (size_t i = 0; i < n; ++i) ga[i] = s[i] * 0.375f;
  expectBitEqual(out["scale_ga"], ga, "scale da");
  for (size_t i = 0; i < n; ++i) ga[i] = av[i] > 0 ? s[i] : 0.0f;
  expectBitEqual(out["relu_ga"], ga, "relu da");
  for (const Op& op : opsList) {
    auto f = [&](const std::vector<Doubles>& in) {
      double t = 0;
      for (size_t i = 0; i < n; ++i) t += op.f(in[0][i], in[1][i]) * s[i];
      return t;
    };
    expectNearFiniteDifference(out[op.name + "_ga"], f, {toDouble(av), toDouble(bv)}, 0,
                               op.name + " da");
    if (out.count(op.name + "_gb")) {
      expectNearFiniteDifference(out[op.name + "_gb"], f, {toDouble(av), toDouble(bv)}, 1,
                                 op.name + " db");
    }
  }
}

TEST_P(AutodiffTest, AddBiasReduceSumAndViewGradients) {
  const size_t rows = 7, cols = 5;
  const Value x = param({rows, cols}, "x", 4), bias = param({cols}, "bias", 5);
  const Value y = addBias(tape, x, bias, "addbias");
  const Tensor seed = variable({rows, cols}, "seed", 6);
  std::vector<Tensor> g = tape.gradients(y, seed, {x, bias}, bwd, "bwd_bias");
  const Value r0 = reduceSum(tape, x, 0, "sum0"), r1 = reduceSum(tape, x, 1, "sum1");
  const Tensor s0 = variable({cols}, "s0", 7), s1 = variable({rows}, "s1", 8);
  const Tensor g0 = tape.gradients(r0, s0, {x}, bwd, "bwd_sum0")[0];
  const Tensor g1 = tape.gradients(r1, s1, {x}, bwd, "bwd_sum1")[0];
  // Views: reshape, transpose, slice and concat of slices, then a mul so the gradient is not the
  // seed alone.
  const Value t = transpose(tape, reshape(tape, x, {cols, rows}, "reshape"), {1, 0},
                            "transpose");  // [rows, cols]
  const Value cat =
      concat(tape, {slice(tape, t, 4, 7, 0, "tail"), slice(tape, t, 0, 2, 0, "head")}, 0, "cat");
  const Tensor sv = variable({5, cols}, "sv", 9);
  const Tensor gv = tape.gradients(cat, sv, {x}, bwd, "bwd_views")[0];
  auto out = run({{"gx", g[0]}, {"gb", g[1]}, {"g0", g0}, {"g1", g1}, {"gv", gv}});
  const Floats &s = values["seed"], &sv0 = values["s0"], &sv1 = values["s1"], &svv = values["sv"];
  Floats gb(cols, 0.0f), w0(rows * cols), w1(rows * cols), wv(rows * cols, 0.0f);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) gb[c] = r == 0 ? s[c] : gb[c] + s[r * cols + c];
  }
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) w0[r * cols + c] = sv0[c], w1[r * cols + c] = sv1[r];
  }
  // t[i][j] = x.flat[j * rows + i]; cat rows: t rows 4,5,6 then 0,1.
  const size_t tRows[5] = {4, 5, 6, 0, 1};
  for (size_t q = 0; q < 5; ++q) {
    for (size_t j = 0; j < cols; ++j) wv[j * rows + tRows[q]] = svv[q * cols + j];
  }
  expectBitEqual(out["gx"], s, "addBias dx");
  expectBitEqual(out["gb"], gb, "addBias dbias");
  expectBitEqual(out["g0"], w0, "reduceSum axis 0");
  expectBitEqual(out["g1"], w1, "reduceSum axis 1");
  expectBitEqual(out["gv"], wv, "views");
  const Doubles xd = toDouble(values["x"]), bd = toDouble(values["bias"]);
  auto fBias = [&](const std::vector<Doubles>& in) {
    double t2 = 0;
    for (size_t i = 0; i < rows * cols; ++i) t2 += (in[0][i] + in[1][i % cols]) * s[i];
    return t2;
  };
  expectNearFiniteDifference(out["gx"], fBias, {xd, bd}, 0, "addBias dx");
  expectNearFiniteDifference(out["gb"], fBias, {xd, bd}, 1, "addBias dbias");
  auto fSum = [&](const std::vector<Doubles>& in) {
    double t2 = 0;
    for (size_t i = 0; i < rows * cols; ++i) t2 += in[0][i] * (sv0[i % cols] + sv1[i / cols]);
    return t2;
  };
  Floats both(rows * cols);
  for (size_t i = 0; i < both.size(); ++i) both[i] = out["g0"][i] + out["g1"][i];
  expectNearFiniteDifference(both, fSum, {xd}, 0, "reduceSum");
  auto fViews = [&](const std::vector<Doubles>& in) {
    double t2 = 0;
    for (size_t q = 0; q < 5; ++q) {
      for (size_t j = 0; j < cols; ++j) t2 += in[0][j * rows + tRows[q]] * svv[q * cols + j];
    }
    return t2;
  };
  expectNearFiniteDifference(out["gv"], fViews, {xd}, 0, "views");
}

// Host reference of SoftmaxCrossEntropy's gradient with scale sc (its codelet's order).
Floats sceGrad(const Floats& x, const std::vector<int32_t>& labels, size_t classes, float sc) {
  Floats g(x.size());
  for (size_t r = 0; r < labels.size(); ++r) {
    const float* xr = &x[r * classes];
    float mx = xr[0];
    for (size_t j = 1; j < classes; ++j) mx = xr[j] > mx ? xr[j] : mx;
    float sum = 0;
    Floats e(classes);
    for (size_t j = 0; j < classes; ++j) e[j] = tessera_expf(xr[j] - mx), sum += e[j];
    const float inv = 1.0f / sum;
    for (size_t j = 0; j < classes; ++j) {
      g[r * classes + j] = (e[j] * inv - (static_cast<int32_t>(j) == labels[r] ? 1.0f : 0.0f)) * sc;
    }
  }
  return g;
}

TEST_P(AutodiffTest, SoftmaxCrossEntropyGradients) {
  const size_t rows = 9, classes = 6;
  std::vector<int32_t> lv(rows);
  for (size_t r = 0; r < rows; ++r) lv[r] = static_cast<int32_t>((r * 4 + 1) % classes);
  Tensor labels = ops::createLinear(graph, ElemType::Int32, {rows}, "labels");
  graph.setInitialValue(labels, lv);
  const Value lab = tape.input(labels);
  // Three losses over the same logits: the scale the forward expected, another scale, a tensor
  // seed.
  const Value x1 = param({rows, classes}, "x1", 11), x2 = param({rows, classes}, "x2", 11),
              x3 = param({rows, classes}, "x3", 11);
  const float scale = 1.0f / 9.0f;
  const Value l1 = softmaxCrossEntropy(tape, x1, lab, scale, "sce1");
  const Value l2 = softmaxCrossEntropy(tape, x2, lab, scale, "sce2");
  const Value l3 = softmaxCrossEntropy(tape, x3, lab, scale, "sce3");
  const Tensor g1 = tape.gradients(l1, {x1}, bwd, scale, "bwd1")[0];
  const Tensor g2 = tape.gradients(l2, {x2}, bwd, 0.25f, "bwd2")[0];
  const Tensor seed = variable({rows}, "seed", 12);
  const Tensor g3 = tape.gradients(l3, seed, {x3}, bwd, "bwd3")[0];
  auto out = run({{"g1", g1}, {"g2", g2}, {"g3", g3}, {"loss", l1.tensor()}});
  const Floats& x = values["x1"];
  const Floats& s = values["seed"];
  expectBitEqual(out["g1"], sceGrad(x, lv, classes, scale), "fused gradient");
  expectBitEqual(out["g2"], sceGrad(x, lv, classes, 0.25f), "recomputed gradient");
  Floats w3 = sceGrad(x, lv, classes, 1.0f);
  for (size_t i = 0; i < w3.size(); ++i) w3[i] = w3[i] * s[i / classes];
  expectBitEqual(out["g3"], w3, "tensor seed");
  auto f = [&](const std::vector<Doubles>& in, const std::function<double(size_t)>& weight) {
    double t = 0;
    for (size_t r = 0; r < rows; ++r) {
      const double* xr = &in[0][r * classes];
      double mx = xr[0], sum = 0;
      for (size_t j = 1; j < classes; ++j) mx = std::max(mx, xr[j]);
      for (size_t j = 0; j < classes; ++j) sum += std::exp(xr[j] - mx);
      t += weight(r) * (std::log(sum) - (xr[lv[r]] - mx));
    }
    return t;
  };
  expectNearFiniteDifference(
      out["g1"], [&](const auto& in) { return f(in, [&](size_t) { return double{scale}; }); },
      {toDouble(x)}, 0, "fused");
  expectNearFiniteDifference(
      out["g2"], [&](const auto& in) { return f(in, [](size_t) { return 0.25; }); }, {toDouble(x)},
      0, "recomputed");
  expectNearFiniteDifference(
      out["g3"], [&](const auto& in) { return f(in, [&](size_t r) { return double{s[r]}; }); },
      {toDouble(x)}, 0, "tensor seed");
}

// A chain through several ops: gradients add where a value is used twice, in reverse op order.
TEST_P(AutodiffTest, SharedValueGradientsAccumulate) {
  const Value a = param({4, 6}, "a", 21), b = param({4, 6}, "b", 22);
  const Value p = mul(tape, a, b, "p");
  const Value q = add(tape, p, a, "q");  // d/da = seed * b + seed
  const Tensor seed = variable({4, 6}, "seed", 23);
  const Tensor g = tape.gradients(q, seed, {a}, bwd, "bwd")[0];
  auto out = run({{"g", g}});
  const Floats &s = values["seed"], &bv = values["b"];
  Floats want(s.size());
  // Reverse order: q's backward first gives seed (for a), then p's gives seed * b; added in that
  // order.
  for (size_t i = 0; i < s.size(); ++i) want[i] = s[i] + s[i] * bv[i];
  expectBitEqual(out["g"], want, "accumulated gradient");
}

// Optimizers: three steps with the learning rate written by the host between runs, against host
// references of each codelet's order.
TEST_P(AutodiffTest, OptimizersOnTheTiles) {
  // 117 elements: each tile's vertices get 4 or more, with every remainder of 4 (the unrolled
  // loops' tails).
  const std::vector<size_t> shape = {9, 13};
  struct Kind {
    std::string name;
    OptimizerConfig config;
  };
  std::vector<Kind> kinds(6);
  kinds[0] = {"sgd", {}};
  kinds[0].config.weightDecay = 0.01f;
  kinds[1] = {"momentum", {}};
  kinds[1].config.kind = OptimizerConfig::Kind::Momentum;
  kinds[1].config.weightDecay = 0.02f;
  kinds[2] = {"adam", {}};
  kinds[2].config.kind = OptimizerConfig::Kind::Adam;
  kinds[3] = {"adamwd", {}};
  kinds[3].config.kind = OptimizerConfig::Kind::Adam;
  kinds[3].config.weightDecay = 0.1f;
  kinds[4] = {"sgdplain", {}};       // no weight decay: SgdUpdate's unrolled loop
  kinds[5] = {"momentumplain", {}};  // and SgdMomentumUpdate's
  kinds[5].config.kind = OptimizerConfig::Kind::Momentum;
  std::vector<std::pair<std::string, Tensor>> outs;
  std::vector<Optimizer> opts;
  opts.reserve(kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    kinds[i].config.learningRate = 0.1f;
    const Tensor w = variable(shape, "w_" + kinds[i].name, 40 + static_cast<uint32_t>(i));
    const Tensor g = variable(shape, "g_" + kinds[i].name, 50 + static_cast<uint32_t>(i));
    opts.emplace_back(graph, kinds[i].config, "lr_" + kinds[i].name);
    opts.back().update({w}, {g}, bwd, "opt_" + kinds[i].name);
    outs.emplace_back("w_" + kinds[i].name, w);
  }
  for (const auto& [name, t] : outs) graph.exposeTensor(name, t);
  Compiled c = compile(graph, prog);
  DeviceOptions o;
  o.tiles = kTiles;
  const backends::Opened dev = backends::open(GetParam(), o);
  Engine engine(*dev.device, c.executable);
  const float lrs[3] = {0.1f, 0.05f, 0.025f};
  for (int step = 0; step < 3; ++step) {
    if (step > 0) engine.restart();
    for (const Kind& k : kinds) {
      const float lr = lrs[step];
      std::vector<uint8_t> bytes(4);
      std::memcpy(bytes.data(), &lr, 4);
      engine.writeTensor("lr_" + k.name, bytes);
    }
    RunResult r = engine.run(200'000'000);
    ASSERT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
  }
  for (const Kind& k : kinds) {
    SCOPED_TRACE(k.name);
    Floats w = values["w_" + k.name];
    const Floats& g = values["g_" + k.name];
    Floats m(w.size(), 0.0f), v(w.size(), 0.0f);
    float p1 = 1.0f, p2 = 1.0f;
    const OptimizerConfig& cf = k.config;
    for (int step = 0; step < 3; ++step) {
      const float lr = lrs[step];
      p1 = p1 * cf.beta1, p2 = p2 * cf.beta2;
      const float stepSize = lr / (1.0f - p1), bc2 = std::sqrt(1.0f - p2);
      for (size_t i = 0; i < w.size(); ++i) {
        const float d = cf.weightDecay != 0.0f ? std::fmaf(cf.weightDecay, w[i], g[i]) : g[i];
        if (cf.kind == OptimizerConfig::Kind::Sgd) {
          w[i] = std::fmaf(-lr, d, w[i]);
        } else if (cf.kind == OptimizerConfig::Kind::Momentum) {
          m[i] = std::fmaf(cf.momentum, m[i], d);
          w[i] = std::fmaf(-lr, m[i], w[i]);
        } else {
          m[i] = std::fmaf(1.0f - cf.beta1, d, m[i] * cf.beta1);
          const float c2d = (1.0f - cf.beta2) * d;
          v[i] = v[i] * cf.beta2 + c2d * d;
          const float denom = std::sqrt(v[i]) / bc2 + cf.eps;
          w[i] = std::fmaf(-stepSize, m[i] / denom, w[i]);
        }
      }
    }
    std::vector<uint8_t> bytes = engine.readTensor("w_" + k.name);
    Floats got(bytes.size() / 4);
    std::memcpy(got.data(), bytes.data(), bytes.size());
    expectBitEqual(got, w, k.name);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AutodiffTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

// Graph-building errors name the op, the tensor and the shapes.
using AutodiffErrors = GraphBuilding;

TEST_F(AutodiffErrors, ShapeMismatchNamesTheOpTensorsAndShapes) {
  const Value a = param({3, 4}, "lhs"), b = param({5, 2}, "rhs");
  expectThrowContaining([&] { matmul(tape, a, b, "layer1/mm"); },
                        {"layer1/mm", "lhs", "rhs", "[3,4]", "[5,2]"});
  expectThrowContaining([&] { add(tape, a, b, "sum"); }, {"sum", "lhs", "[3,4]", "rhs", "[5,2]"});
  expectThrowContaining([&] { tape.apply1("Frobnicate", {a}, {}, "f0"); },
                        {"f0", "Frobnicate", "MatMul"});
}

TEST_F(AutodiffErrors, OpWithoutGradientNamesTheOp) {
  OpRegistry reg = OpRegistry::builtin();
  reg.add({"Sign", [](ForwardContext& ctx) { return std::vector<Tensor>{ctx.inputs[0]}; }, {}});
  Tape t(graph, fwd, reg);
  const Value a = t.parameter(ops::createLinear(graph, ElemType::Float32, {2, 3}, "w"));
  const Value y = t.apply1("Sign", {a}, {}, "head/sign");
  const Value z = scale(t, y, 2.0f, "head/scale");
  expectThrowContaining([&] { t.gradients(z, {a}, bwd); },
                        {"head/sign", "Sign", "no gradient", "\"w\"", "[2,3]"});
}

TEST_F(AutodiffErrors, ParameterThatDoesNotReachTheLoss) {
  const Value a = param({2, 3}, "used"), b = param({2, 3}, "unused");
  const Value y = scale(tape, a, 2.0f, "y");
  expectThrowContaining(
      [&] {
        tape.gradients(y, {a, b}, bwd);
      },
      {"unused", "[2,3]", "does not reach"});
}

}  // namespace
}  // namespace tessera::autodiff
