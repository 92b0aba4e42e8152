// Gradient checks of the autodiff layer's convolution and pooling ops (Conv, MaxPool,
// AveragePool, Flatten; sw/autodiff/ops_conv.cpp) on every backend of the one backend list: the
// forward and each gradient equal tessera/conv_reference.hpp bit for bit (the same operation
// order), and each gradient agrees with a central finite difference of a double-precision forward
// (gradient_check.hpp: 1e-4 of the largest gradient). Also the graph-building errors of these ops.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "gradient_check.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/conv.hpp"
#include "tessera/conv_reference.hpp"
#include "tessera/error.hpp"

namespace tessera::autodiff {
namespace {

using namespace gradcheck;
namespace ref = ops::reference;

// conv2d in double (any order: double rounding is far below the tolerance).
Doubles convDouble(const ref::ConvGeom& g, const Doubles& x, const Doubles& w, const Doubles* b) {
  Doubles y(size_t(g.N * g.OC * g.OH * g.OW));
  for (long n = 0; n < g.N; ++n)
    for (long o = 0; o < g.OC; ++o)
      for (long oy = 0; oy < g.OH; ++oy)
        for (long ox = 0; ox < g.OW; ++ox) {
          double s = b ? (*b)[size_t(o)] : 0.0;
          for (long c = 0; c < g.icg; ++c)
            for (long kh = 0; kh < g.KH; ++kh)
              for (long kw = 0; kw < g.KW; ++kw) {
                const long iy = oy * g.sh - g.ph + kh * g.dh, ix = ox * g.sw - g.pw + kw * g.dw;
                if (iy < 0 || iy >= g.H || ix < 0 || ix >= g.W) continue;
                s += x[size_t(((n * g.C + (o / g.ocg) * g.icg + c) * g.H + iy) * g.W + ix)] *
                     w[size_t(((o * g.icg + c) * g.KH + kh) * g.KW + kw)];
              }
          y[size_t(((n * g.OC + o) * g.OH + oy) * g.OW + ox)] = s;
        }
  return y;
}

// Pooling in double: the largest element of the window (inputs are distinct) or the window's sum
// over KH * KW (count_include_pad).
Doubles poolDouble(const ref::PoolGeom& g, const Doubles& x, bool max) {
  Doubles y(size_t(g.N * g.C * g.OH * g.OW));
  for (long p = 0; p < g.N * g.C; ++p)
    for (long oy = 0; oy < g.OH; ++oy)
      for (long ox = 0; ox < g.OW; ++ox) {
        double best = -INFINITY, sum = 0;
        for (long ky = 0; ky < g.KH; ++ky)
          for (long kx = 0; kx < g.KW; ++kx) {
            const long iy = oy * g.sh - g.ph + ky * g.dh, ix = ox * g.sw - g.pw + kx * g.dw;
            if (iy >= 0 && iy < g.H && ix >= 0 && ix < g.W) {
              const double v = x[size_t((p * g.H + iy) * g.W + ix)];
              best = std::max(best, v), sum += v;
            }
          }
        y[size_t((p * g.OH + oy) * g.OW + ox)] = max ? best : sum / double(g.KH * g.KW);
      }
  return y;
}

// n distinct values spread over [-2, 2], at least 4 / n apart (more than twice the finite
// difference's step for the sizes here), in random order: max pooling's windows then have one
// maximum, which a step of the finite difference does not change.
Floats distinctFloats(size_t n, uint32_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  Floats v(n);
  for (size_t i = 0; i < n; ++i) v[i] = -2.0f + 4.0f * float(order[i]) / float(n);
  return v;
}

ops::Conv2dParams convParams(std::array<size_t, 2> s, std::array<size_t, 2> p,
                             std::array<size_t, 2> d, size_t groups) {
  ops::Conv2dParams c;
  c.stride = s, c.padding = p, c.dilation = d, c.groups = groups;
  return c;
}

ops::Pool2dParams poolParams(std::array<size_t, 2> k, std::array<size_t, 2> s,
                             std::array<size_t, 2> p, std::array<size_t, 2> d = {1, 1},
                             bool ceil = false) {
  ops::Pool2dParams c;
  c.kernel = k, c.stride = s, c.padding = p, c.dilation = d, c.ceilMode = ceil;
  return c;
}

class ConvOpsTest : public GradientCheckTest {};

TEST_P(ConvOpsTest, ConvGradientsWithStridePaddingDilationAndGroups) {
  struct Case {
    std::vector<size_t> in, w;
    ops::Conv2dParams p;
    bool bias, convMapped;
  };
  // Padding with bias on an input mapped as conv2d maps it; strides, dilation and two groups
  // without bias; depthwise with bias.
  const std::vector<Case> cases = {
      {{2, 3, 6, 5}, {4, 3, 3, 3}, convParams({1, 1}, {1, 1}, {1, 1}, 1), true, true},
      {{1, 4, 7, 7}, {4, 2, 3, 2}, convParams({2, 1}, {1, 0}, {1, 2}, 2), false, false},
      {{2, 3, 5, 5}, {3, 1, 3, 3}, convParams({1, 1}, {1, 1}, {1, 1}, 3), true, false},
  };
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string s = std::to_string(c);
    const uint32_t seed = 100 + 10 * static_cast<uint32_t>(c);
    const Tensor xt = k.convMapped ? ops::createConv2dInput(graph, k.in, "x" + s)
                                   : ops::createLinear(graph, ElemType::Float32, k.in, "x" + s);
    const Value x = tape.parameter(initialise(xt, randomFloats(xt.numElements(), seed)));
    const Value w = param(k.w, "w" + s, seed + 1);
    const Value b = k.bias ? param({k.w[0]}, "b" + s, seed + 2) : Value();
    const Value y = conv2d(tape, x, w, b, "conv" + s, k.p);
    const Tensor seedT = variable(y.tensor().shape(), "seed" + s, seed + 3);
    std::vector<Value> wrt = {x, w};
    if (k.bias) wrt.push_back(b);
    const std::vector<Tensor> g = tape.gradients(y, seedT, wrt, bwd, "bwd" + s);
    outs.emplace_back("y" + s, y.tensor());
    outs.emplace_back("gx" + s, g[0]);
    outs.emplace_back("gw" + s, g[1]);
    if (k.bias) outs.emplace_back("gb" + s, g[2]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string s = std::to_string(c);
    SCOPED_TRACE(
        fmt::format("conv{}: in [{}] w [{}]", c, fmt::join(k.in, ","), fmt::join(k.w, ",")));
    const ref::ConvGeom geom(k.in, k.w, k.p);
    const Floats &x = values["x" + s], &w = values["w" + s], &dy = values["seed" + s];
    const Floats* b = k.bias ? &values["b" + s] : nullptr;
    expectBitEqual(out["y" + s], ref::conv2d(geom, x, w, b), "forward");
    expectBitEqual(out["gx" + s], ref::conv2dBackwardInput(geom, dy, w), "dx");
    expectBitEqual(out["gw" + s], ref::conv2dBackwardWeights(geom, x, dy), "dw");
    if (k.bias) expectBitEqual(out["gb" + s], ref::conv2dBackwardBias(geom, dy), "db");
    auto f = [&](const std::vector<Doubles>& in) {
      return dot(dy, convDouble(geom, in[0], in[1], k.bias ? &in[2] : nullptr));
    };
    std::vector<Doubles> in = {toDouble(x), toDouble(w)};
    if (k.bias) in.push_back(toDouble(*b));
    expectNearFiniteDifference(out["gx" + s], f, in, 0, "dx");
    expectNearFiniteDifference(out["gw" + s], f, in, 1, "dw");
    if (k.bias) expectNearFiniteDifference(out["gb" + s], f, in, 2, "db");
    if (HasFatalFailure()) return;
  }
}

TEST_P(ConvOpsTest, MaxAndAveragePoolGradients) {
  struct Case {
    std::vector<size_t> in;
    ops::Pool2dParams p;
    bool max;
  };
  // LeNet's 2x2 max pooling (stride 0: the kernel), a padded 3x3 window with stride 2 for both
  // kinds, and an average pool whose stride exceeds its kernel.
  std::vector<Case> cases = {
      {{2, 3, 6, 6}, poolParams({2, 2}, {0, 0}, {0, 0}), true},
      {{1, 2, 7, 5}, poolParams({3, 3}, {2, 2}, {1, 1}), true},
      {{1, 2, 7, 5}, poolParams({3, 3}, {2, 2}, {1, 1}), false},
      {{2, 2, 7, 9}, poolParams({2, 3}, {3, 4}, {1, 0}), false},
      // Dilated max pooling (MaxPoolDilated): PyTorch's MaxPool2d(3, 1, 1, dilation 2), a 2x3
      // window dilated 3x2 with stride 2x1 and ceil mode, and windows that overlap.
      {{1, 2, 9, 8}, poolParams({3, 3}, {1, 1}, {1, 1}, {2, 2}), true},
      {{2, 2, 10, 7}, poolParams({2, 3}, {2, 1}, {1, 1}, {3, 2}, true), true},
      {{1, 3, 8, 8}, poolParams({2, 2}, {0, 0}, {0, 0}, {2, 2}), true},
  };
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string s = std::to_string(c);
    const uint32_t seed = 200 + 10 * static_cast<uint32_t>(c);
    const Tensor xt = ops::createLinear(graph, ElemType::Float32, k.in, "x" + s);
    const Value x = tape.parameter(initialise(xt, distinctFloats(xt.numElements(), seed)));
    const Value y =
        k.max ? maxPool2d(tape, x, "maxpool" + s, k.p) : avgPool2d(tape, x, "avgpool" + s, k.p);
    const Tensor seedT = variable(y.tensor().shape(), "seed" + s, seed + 1);
    outs.emplace_back("y" + s, y.tensor());
    outs.emplace_back("gx" + s, tape.gradients(y, seedT, {x}, bwd, "bwd" + s)[0]);
  }
  auto out = run(outs);
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& k = cases[c];
    const std::string s = std::to_string(c);
    SCOPED_TRACE(
        fmt::format("{} pool {}: in [{}]", k.max ? "max" : "average", c, fmt::join(k.in, ",")));
    const ref::PoolGeom geom(k.in, k.p);
    const Floats &x = values["x" + s], &dy = values["seed" + s];
    expectBitEqual(out["y" + s], k.max ? ref::maxPool2d(geom, x) : ref::avgPool2d(geom, x),
                   "forward");
    expectBitEqual(out["gx" + s],
                   k.max ? ref::maxPool2dBackward(geom, x, dy) : ref::avgPool2dBackward(geom, dy),
                   "dx");
    auto f = [&](const std::vector<Doubles>& in) {
      return dot(dy, poolDouble(geom, in[0], k.max));
    };
    expectNearFiniteDifference(out["gx" + s], f, {toDouble(x)}, 0, "dx");
    if (HasFatalFailure()) return;
  }
}

// LeNet's first stage in small: conv (padding 2) -> max pool 2 -> flatten, differentiated through
// all three with respect to the weights and the bias. The references chain: the seed viewed as the
// pool's output, max pooling's gradient at the conv's output, then the conv's.
TEST_P(ConvOpsTest, ConvMaxPoolFlattenChain) {
  const std::vector<size_t> in = {2, 1, 8, 8}, ws = {3, 1, 5, 5};
  const ops::Conv2dParams cp = convParams({1, 1}, {2, 2}, {1, 1}, 1);
  const ops::Pool2dParams pp = poolParams({2, 2}, {0, 0}, {0, 0});
  const Tensor xt = ops::createConv2dInput(graph, in, "x");
  const Value x = tape.input(initialise(xt, randomFloats(xt.numElements(), 300)));
  const Value w = param(ws, "w", 301), b = param({ws[0]}, "b", 302);
  const Value y = conv2d(tape, x, w, b, "conv", cp);
  const Value p = maxPool2d(tape, y, "pool", pp);
  const Value f = flatten(tape, p, 1, "flatten");
  ASSERT_EQ(f.tensor().shape(), (std::vector<size_t>{2, 3 * 4 * 4}));
  const Tensor seedT = variable(f.tensor().shape(), "seed", 303);
  const std::vector<Tensor> g = tape.gradients(f, seedT, {w, b}, bwd, "bwd");
  auto out = run({{"y", y.tensor()}, {"gw", g[0]}, {"gb", g[1]}});
  const ref::ConvGeom cg(in, ws, cp);
  const Floats &xv = values["x"], &wv = values["w"], &bv = values["b"], &dy = values["seed"];
  const Floats yv = ref::conv2d(cg, xv, wv, &bv);
  expectBitEqual(out["y"], yv, "conv forward");
  const ref::PoolGeom pg(ops::conv2dOutputShape(in, ws, cp, "conv"), pp);
  const Floats dConv = ref::maxPool2dBackward(pg, yv, dy);
  expectBitEqual(out["gw"], ref::conv2dBackwardWeights(cg, xv, dConv), "dw");
  expectBitEqual(out["gb"], ref::conv2dBackwardBias(cg, dConv), "db");
  // The finite difference is valid where no window's two largest conv outputs are within a step's
  // effect of each other: checked on this seed (a tie would show as an O(1) disagreement).
  const Doubles xd = toDouble(xv);
  auto loss = [&](const std::vector<Doubles>& a) {
    return dot(dy, poolDouble(pg, convDouble(cg, xd, a[0], &a[1]), true));
  };
  expectNearFiniteDifference(out["gw"], loss, {toDouble(wv), toDouble(bv)}, 0, "dw");
  expectNearFiniteDifference(out["gb"], loss, {toDouble(wv), toDouble(bv)}, 1, "db");
}

// One SGD step of a small LeNet-like network (conv, relu, max pool, flatten, linear, softmax
// cross-entropy) by Optimizer::minimize equals its gradients from Tape::gradients applied by hand:
// the conv's weights and bias and the linear bias take SgdUpdate (w = fmaf(-lr, g, w)) bit for
// bit; the linear weights, whose update is fused into the matmul (-lr g accumulated into w), agree
// to float rounding.
TEST_P(ConvOpsTest, SgdStepThroughConvAndPoolingMatchesTheGradients) {
  const size_t n = 2, classes = 3;
  const std::vector<size_t> in = {n, 1, 6, 6}, ws = {2, 1, 3, 3};
  const ops::Conv2dParams cp = convParams({1, 1}, {1, 1}, {1, 1}, 1);
  const Tensor xt = ops::createConv2dInput(graph, in, "x");
  initialise(xt, randomFloats(xt.numElements(), 400));
  Tensor labels = ops::createLinear(graph, ElemType::Int32, {n}, "labels");
  graph.setInitialValue(labels, std::vector<int32_t>{2, 0});
  const float lr = 0.125f, lossScale = 0.5f;
  struct Net {
    Value w, b, fw, fb, loss;
  };
  // The same network twice over the same initial values: once for its gradients, once trained.
  auto build = [&](Tape& t, const std::string& p) {
    Net net;
    net.w = t.parameter(initialise(ops::createLinear(graph, ElemType::Float32, ws, p + "w"),
                                   randomFloats(18, 401)));
    net.b = t.parameter(initialise(ops::createLinear(graph, ElemType::Float32, {2}, p + "b"),
                                   randomFloats(2, 402)));
    const Tensor fwT = ops::createMatMulRhs(graph, n, 18, classes, p + "fw");
    net.fw = t.parameter(initialise(fwT, randomFloats(18 * classes, 403)));
    net.fb =
        t.parameter(initialise(ops::createLinear(graph, ElemType::Float32, {classes}, p + "fb"),
                               randomFloats(classes, 404)));
    const Value h = relu(t, conv2d(t, t.input(xt), net.w, net.b, p + "conv", cp), p + "relu");
    const Value f = flatten(t, maxPool2d(t, h, p + "pool"), 1, p + "flatten");
    const Value logits = addBias(t, matmul(t, f, net.fw, p + "fc"), net.fb, p + "fc/bias");
    net.loss = softmaxCrossEntropy(t, logits, t.input(labels), lossScale, p + "loss");
    return net;
  };
  Tape other(graph, fwd);
  const Net a = build(tape, "a/"), b = build(other, "b/");
  const std::vector<Tensor> g = tape.gradients(a.loss, {a.w, a.b, a.fw, a.fb}, bwd, lossScale);
  OptimizerConfig oc;
  oc.learningRate = lr;
  Optimizer opt(graph, oc, "lr");
  opt.minimize(other, b.loss, {b.w, b.b, b.fw, b.fb}, bwd, lossScale);
  auto out = run({{"gw", g[0]},
                  {"gb", g[1]},
                  {"gfw", g[2]},
                  {"gfb", g[3]},
                  {"w", b.w.tensor()},
                  {"b", b.b.tensor()},
                  {"fw", b.fw.tensor()},
                  {"fb", b.fb.tensor()}});
  const std::vector<std::pair<std::string, std::string>> sgd = {
      {"w", "gw"}, {"b", "gb"}, {"fb", "gfb"}};
  for (const auto& [w, gw] : sgd) {
    const Floats& w0 = values["a/" + w];
    Floats want(w0.size());
    for (size_t i = 0; i < w0.size(); ++i) want[i] = std::fmaf(-lr, out[gw][i], w0[i]);
    expectBitEqual(out[w], want, w + " after the step");
  }
  const Floats& fw0 = values["a/fw"];
  for (size_t i = 0; i < fw0.size(); ++i) {
    const float want = fw0[i] - lr * out["gfw"][i];
    EXPECT_NEAR(out["fw"][i], want, 1e-6f * (1.0f + std::fabs(want))) << "fw element " << i;
  }
  // The step moved every parameter the loss reaches (a zero gradient would pass vacuously).
  EXPECT_NE(out["w"], values["a/w"]);
  EXPECT_NE(out["fw"], values["a/fw"]);
}

INSTANTIATE_TEST_SUITE_P(Devices, ConvOpsTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

// ---- Graph-building errors: each names the op's debug name, the tensors and their shapes.

using ConvOpsBuilding = GraphBuilding;

TEST_F(ConvOpsBuilding, ShapeMismatchesNameTheOpTensorsAndShapes) {
  const Value x = param({2, 3, 8, 8}, "images"), w = param({6, 4, 5, 5}, "kernel");
  expectThrowContaining([&] { conv2d(tape, x, w, Value(), "c1"); },
                        {"c1 (Conv)", "\"images\"", "\"kernel\"", "[2,3,8,8]", "[6,4,5,5]"});
  const Value w2 = param({6, 3, 5, 5}, "kernel2"), b = param({5}, "bias");
  expectThrowContaining([&] { conv2d(tape, x, w2, b, "c2"); },
                        {"c2 (Conv)", "\"bias\"", "[5]", "\"kernel2\"", "[6,3,5,5]"});
  const Value flat = param({4, 16}, "flat");
  expectThrowContaining([&] { conv2d(tape, flat, w2, Value(), "c3"); },
                        {"c3 (Conv)", "\"flat\"", "[4,16]", "4-D"});
  expectThrowContaining([&] { maxPool2d(tape, flat, "p1"); },
                        {"p1 (MaxPool)", "\"flat\"", "[4,16]"});
  ops::Pool2dParams big;
  big.kernel = {9, 9};
  expectThrowContaining([&] { avgPool2d(tape, x, "p2", big); },
                        {"p2 (AveragePool)", "\"images\"", "[2,3,8,8]", "larger"});
  expectThrowContaining([&] { flatten(tape, flat, 3, "f1"); },
                        {"f1 (Flatten)", "\"flat\"", "[4,16]"});
}

TEST_F(ConvOpsBuilding, UnsupportedAttributesNameTheOp) {
  const Value x = param({1, 2, 6, 6}, "x"), w = param({2, 2, 3, 3}, "w");
  expectThrowContaining(
      [&] {
        tape.apply1("Conv", {x, w}, {{"pads", std::vector<int64_t>{0, 0, 1, 1}}}, "asym");
      },
      {"asym (Conv)", "asymmetric", "[0,0,1,1]"});
  expectThrowContaining(
      [&] {
        tape.apply1("AveragePool", {x},
                    {{"kernel_shape", std::vector<int64_t>{2, 2}},
                     {"dilations", std::vector<int64_t>{2, 2}}},
                    "dil");
      },
      {"dil (AveragePool)", "dilations", "[2,2]", "dilated average pooling"});
  expectThrowContaining([&] { tape.apply1("MaxPool", {x}, {}, "nokernel"); },
                        {"nokernel (MaxPool)", "kernel_shape"});
}

// ONNX's attribute defaults: pooling strides 1 when absent (not the kernel), count_include_pad 0
// accepted without padding.
TEST_F(ConvOpsBuilding, OnnxDefaultsGiveOnnxShapes) {
  const Value x = param({1, 2, 6, 6}, "x");
  const Value m = tape.apply1("MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}}, "m");
  EXPECT_EQ(m.tensor().shape(), (std::vector<size_t>{1, 2, 5, 5}));
  const Value a = avgPool2d(tape, x, "a");
  EXPECT_EQ(a.tensor().shape(), (std::vector<size_t>{1, 2, 3, 3}));
  const Value f = tape.apply1("Flatten", {x}, {}, "f");
  EXPECT_EQ(f.tensor().shape(), (std::vector<size_t>{1, 72}));
}

}  // namespace
}  // namespace tessera::autodiff
