// conv2d and pooling, forward and backward (tessera/conv.hpp), on every backend of the one list
// (host/testing/backends.hpp) against tessera/conv_reference.hpp bit for bit, over fixed awkward
// shapes and random ones; and the references' gradients against finite differences in double
// precision (docs/library.md, "conv2d and pooling").
#include "tessera/conv.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>

#include "backends.hpp"
#include "library_testing.hpp"
#include "tessera/compiler.hpp"
#include "tessera/conv_reference.hpp"
#include "tessera/engine.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

namespace ref = ops::reference;
using libtest::count;
using libtest::expectBitEqual;
using libtest::toDouble;

// Inputs in [-1, 1).
std::vector<float> randomFloats(size_t n, uint32_t seed) {
  return libtest::randomFloats(n, seed, -1.0f, 1.0f);
}

struct ConvCase {
  std::vector<size_t> in, w;
  ops::Conv2dParams p;
  bool bias;
  std::string text() const {
    return fmt::format("in [{}] w [{}] stride {}x{} pad {}x{} dil {}x{} groups {}{}",
                       fmt::join(in, ","), fmt::join(w, ","), p.stride[0], p.stride[1],
                       p.padding[0], p.padding[1], p.dilation[0], p.dilation[1], p.groups,
                       bias ? " bias" : "");
  }
};

ConvCase convCase(std::vector<size_t> in, std::vector<size_t> w, std::array<size_t, 2> s,
                  std::array<size_t, 2> pd, std::array<size_t, 2> d, size_t g, bool bias) {
  ConvCase c{std::move(in), std::move(w), {}, bias};
  c.p.stride = s, c.p.padding = pd, c.p.dilation = d, c.p.groups = g;
  return c;
}

// A random valid convolution whose tensors stay below `maxElems` elements each.
ConvCase randomConv(std::mt19937& rng, size_t maxElems) {
  auto pick = [&](size_t lo, size_t hi) {
    return std::uniform_int_distribution<size_t>(lo, hi)(rng);
  };
  for (;;) {
    const size_t g = pick(0, 3) == 0 ? pick(2, 3) : 1;
    const bool depthwise = pick(0, 4) == 0;
    const size_t C = depthwise ? pick(2, 5) : g * pick(1, 3);
    const size_t G = depthwise ? C : g;
    const size_t OC = G * pick(1, 3);
    ConvCase c = convCase({pick(1, 3), C, pick(3, 11), pick(3, 11)},
                          {OC, C / G, pick(1, 4), pick(1, 4)}, {pick(1, 3), pick(1, 3)},
                          {pick(0, 2), pick(0, 2)}, {pick(1, 2), pick(1, 2)}, G, pick(0, 1) == 1);
    std::vector<size_t> out;
    try {
      out = ops::conv2dOutputShape(c.in, c.w, c.p, "random");
    } catch (const Error&) {
      continue;
    }
    if (count(c.in) <= maxElems && count(out) <= maxElems) return c;
  }
}

class ConvTest : public ::testing::TestWithParam<std::string> {
 protected:
  static constexpr unsigned kTiles = 4;
  bool rtl() const { return GetParam() == "rtl"; }
  // Tile memory: the RTL's 64 KiB, more for the model-only larger shapes.
  uint32_t mem = 65536;

  // Compile graph + prog, run on the parameter's device, read each output.
  std::map<std::string, std::vector<float>> run(
      Graph& graph, Sequence& prog, const std::vector<std::pair<std::string, Tensor>>& outputs) {
    for (const auto& [name, t] : outputs) graph.exposeTensor(name, t);
    Compiled c = compile(graph, prog);
    DeviceOptions o;
    o.tiles = kTiles;
    o.tileMemBytes = mem;
    backends::Opened opened = backends::open(GetParam(), o);
    Engine engine(*opened.device, c.executable);
    RunResult r = engine.run(2'000'000'000);
    EXPECT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
    std::map<std::string, std::vector<float>> out;
    for (const auto& [name, t] : outputs) {
      std::vector<uint8_t> bytes = engine.readTensor(name);
      std::vector<float> f(bytes.size() / 4);
      std::memcpy(f.data(), bytes.data(), bytes.size());
      out[name] = f;
    }
    return out;
  }

  // Forward and the three gradients of one convolution against the reference.
  void checkConv(const ConvCase& c, uint32_t seed, bool convMapped) {
    SCOPED_TRACE(c.text());
    Graph graph{Target{kTiles, mem, 6}};
    Sequence prog;
    const ref::ConvGeom g(c.in, c.w, c.p);
    const std::vector<size_t> outShape = ops::conv2dOutputShape(c.in, c.w, c.p, "conv");
    const std::vector<float> xv = randomFloats(count(c.in), seed),
                             wv = randomFloats(count(c.w), seed + 1),
                             bv = randomFloats(c.w[0], seed + 2),
                             dyv = randomFloats(count(outShape), seed + 3);
    Tensor x = convMapped ? ops::createConv2dInput(graph, c.in, "x")
                          : ops::createLinear(graph, ElemType::Float32, c.in, "x");
    Tensor w = ops::createLinear(graph, ElemType::Float32, c.w, "w");
    Tensor b = ops::createLinear(graph, ElemType::Float32, {c.w[0]}, "b");
    Tensor dy = ops::createLinear(graph, ElemType::Float32, outShape, "dy");
    graph.setInitialValue(x, xv);
    graph.setInitialValue(w, wv);
    graph.setInitialValue(b, bv);
    graph.setInitialValue(dy, dyv);
    Tensor y = ops::conv2d(graph, x, w, c.bias ? b : Tensor(), prog, "conv", c.p);
    Tensor dx = ops::conv2dBackwardInput(graph, dy, w, c.in, prog, "conv/dx", c.p);
    Tensor dw = ops::conv2dBackwardWeights(graph, x, dy, c.w, prog, "conv/dw", c.p);
    Tensor db = ops::conv2dBackwardBias(graph, dy, prog, "conv/db");
    auto out = run(graph, prog, {{"y", y}, {"dx", dx}, {"dw", dw}, {"db", db}});
    expectBitEqual(out["y"], ref::conv2d(g, xv, wv, c.bias ? &bv : nullptr), "conv2d");
    expectBitEqual(out["dx"], ref::conv2dBackwardInput(g, dyv, wv), "conv2dBackwardInput");
    expectBitEqual(out["dw"], ref::conv2dBackwardWeights(g, xv, dyv), "conv2dBackwardWeights");
    expectBitEqual(out["db"], ref::conv2dBackwardBias(g, dyv), "conv2dBackwardBias");
  }

  // conv2d and its gradients to the input and to the weights with the matrix unit
  // (Conv2dParams::Unit::Always) and with the scalar codelets (Never), against each other and the
  // reference, bit for bit. special: inputs that make the unit's chain differ from the scalar one
  // (docs/library.md, "conv2d on the matrix unit"): many +-0 inputs and gradients (results +-0,
  // chains through -0), -0 biases, an infinite weight, an infinite gradient and a NaN input (NaN
  // products at skipped taps), an underflowing product.
  void checkUnit(const ConvCase& c, uint32_t seed, bool special) {
    SCOPED_TRACE(c.text() + (special ? ", special values" : ""));
    const ref::ConvGeom g(c.in, c.w, c.p);
    const std::vector<size_t> outShape = ops::conv2dOutputShape(c.in, c.w, c.p, "conv");
    std::vector<float> xv = randomFloats(count(c.in), seed),
                       wv = randomFloats(count(c.w), seed + 1), bv = randomFloats(c.w[0], seed + 2),
                       dyv = randomFloats(count(outShape), seed + 3);
    if (special) {
      for (size_t i = 0; i < xv.size(); ++i) {
        if (i % 3) xv[i] = i % 2 ? 0.0f : -0.0f;
      }
      for (size_t i = 0; i < dyv.size(); ++i) {
        if (i % 4) dyv[i] = i % 2 ? -0.0f : 0.0f;
      }
      for (size_t i = 0; i < bv.size(); i += 2) bv[i] = -0.0f;
      xv[0] = 1e-30f, wv[0] = -1e-30f;  // a product that rounds to -0
      wv[wv.size() / 2] = std::numeric_limits<float>::infinity();
      xv[xv.size() - 1] = std::numeric_limits<float>::quiet_NaN();
      // A border output's infinite gradient: times a padding tap's +0, NaN on the unit.
      dyv[0] = std::numeric_limits<float>::infinity();
    }
    std::map<std::string, std::vector<float>> got[2];
    for (int unit = 0; unit < 2; ++unit) {
      Graph graph{Target{kTiles, mem, 6}};
      ASSERT_TRUE(graph.target().hasMatrixUnit);
      Sequence prog;
      ops::Conv2dParams p = c.p;
      p.unit = unit ? ops::Conv2dParams::Unit::Always : ops::Conv2dParams::Unit::Never;
      Tensor x = ops::createConv2dInput(graph, c.in, "x");
      Tensor w = ops::createLinear(graph, ElemType::Float32, c.w, "w");
      Tensor b = ops::createLinear(graph, ElemType::Float32, {c.w[0]}, "b");
      Tensor dy = ops::createConv2dInput(graph, outShape, "dy");
      graph.setInitialValue(x, xv);
      graph.setInitialValue(w, wv);
      graph.setInitialValue(b, bv);
      graph.setInitialValue(dy, dyv);
      Tensor y = ops::conv2d(graph, x, w, c.bias ? b : Tensor(), prog, "conv", p);
      Tensor dx = ops::conv2dBackwardInput(graph, dy, w, c.in, prog, "conv/dx", p);
      Tensor dw = ops::conv2dBackwardWeights(graph, x, dy, c.w, prog, "conv/dw", p);
      size_t unitVertices = 0;
      for (const GraphVertex& v : graph.vertices()) unitVertices += v.codelet == "MatMulAmp";
      // The three ops on the unit (six vertices a tile and step) where the shape allows: groups 1.
      if (unit && c.p.groups == 1) {
        EXPECT_GE(unitVertices, 3u * 6u);
      } else {
        EXPECT_EQ(unitVertices, 0u);
      }
      got[unit] = run(graph, prog, {{"y", y}, {"dx", dx}, {"dw", dw}});
    }
    // The host's fmaf gives its own NaN bits; the core gives the canonical NaN for every NaN
    // result (docs/tile.md, "Floating point"), which is what the reference means.
    auto canonical = [](std::vector<float> v) {
      for (float& f : v) {
        if (std::isnan(f)) f = std::bit_cast<float>(0x7fc00000u);
      }
      return v;
    };
    expectBitEqual(got[1]["y"], got[0]["y"], "conv2d: unit against scalar");
    expectBitEqual(got[1]["y"], canonical(ref::conv2d(g, xv, wv, c.bias ? &bv : nullptr)),
                   "conv2d: unit against the reference");
    expectBitEqual(got[1]["dx"], got[0]["dx"], "conv2dBackwardInput: unit against scalar");
    expectBitEqual(got[1]["dx"], canonical(ref::conv2dBackwardInput(g, dyv, wv)),
                   "conv2dBackwardInput: unit against the reference");
    expectBitEqual(got[1]["dw"], got[0]["dw"], "conv2dBackwardWeights: unit against scalar");
    expectBitEqual(got[1]["dw"], canonical(ref::conv2dBackwardWeights(g, xv, dyv)),
                   "conv2dBackwardWeights: unit against the reference");
  }

  void checkPool(const std::vector<size_t>& in, const ops::Pool2dParams& p, uint32_t seed,
                 bool special = false) {
    SCOPED_TRACE(fmt::format("in [{}] kernel {}x{} stride {}x{} pad {}x{}{}", fmt::join(in, ","),
                             p.kernel[0], p.kernel[1], p.stride[0], p.stride[1], p.padding[0],
                             p.padding[1], special ? " special values" : ""));
    Graph graph{Target{kTiles, mem, 6}};
    Sequence prog;
    const ref::PoolGeom g(in, p);
    const std::vector<size_t> outShape = ops::pool2dOutputShape(in, p, "pool");
    std::vector<float> xv = randomFloats(count(in), seed);
    // Ties, so that the first-maximum rule is exercised.
    for (size_t i = 0; i < xv.size(); i += 5) xv[i] = 0.5f;
    std::vector<float> dyv = randomFloats(count(outShape), seed + 1);
    if (special) {
      // NaNs (the core's canonical one, which the host's sums keep), -inf, whole windows of -inf
      // (the first two rows), zeros of both signs (equal: the first stays) and -0 gradients.
      const float nan = std::bit_cast<float>(0x7fc00000u);
      const float inf = std::numeric_limits<float>::infinity();
      for (size_t i = 0; i < xv.size(); ++i) {
        if (i % 13 == 3) xv[i] = nan;
        if (i % 17 == 5 || i < 2 * in[3]) xv[i] = -inf;
        if (i % 19 == 7) xv[i] = -0.0f;
        if (i % 19 == 8) xv[i] = 0.0f;
      }
      for (size_t i = 0; i < dyv.size(); i += 7) dyv[i] = -0.0f;
    }
    Tensor x = ops::createLinear(graph, ElemType::Float32, in, "x");
    Tensor dy = ops::createLinear(graph, ElemType::Float32, outShape, "dy");
    graph.setInitialValue(x, xv);
    graph.setInitialValue(dy, dyv);
    Tensor ym = ops::maxPool2d(graph, x, prog, "max", p);
    Tensor dxm = ops::maxPool2dBackward(graph, x, dy, prog, "max/dx", p);
    Tensor ya = ops::avgPool2d(graph, x, prog, "avg", p);
    Tensor dxa = ops::avgPool2dBackward(graph, dy, in, prog, "avg/dx", p);
    auto out = run(graph, prog, {{"ym", ym}, {"dxm", dxm}, {"ya", ya}, {"dxa", dxa}});
    expectBitEqual(out["ym"], ref::maxPool2d(g, xv), "maxPool2d");
    expectBitEqual(out["dxm"], ref::maxPool2dBackward(g, xv, dyv), "maxPool2dBackward");
    expectBitEqual(out["ya"], ref::avgPool2d(g, xv), "avgPool2d");
    expectBitEqual(out["dxa"], ref::avgPool2dBackward(g, dyv), "avgPool2dBackward");
  }
};

TEST_P(ConvTest, FixedShapes) {
  // Odd sizes, stride > kernel, padding, dilation, groups, depthwise, a 1x1 kernel, rows that
  // see only padding, more tiles than samples.
  std::vector<ConvCase> cases = {
      convCase({2, 3, 9, 7}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true),
      convCase({1, 4, 11, 10}, {6, 2, 3, 2}, {2, 3}, {1, 0}, {2, 1}, 2, false),
      convCase({3, 4, 7, 7}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, true),  // depthwise
      convCase({1, 2, 6, 9}, {3, 2, 1, 1}, {3, 4}, {2, 2}, {1, 1}, 1,
               true),  // stride > kernel, padding only rows
      convCase({2, 1, 12, 12}, {6, 1, 5, 5}, {1, 1}, {2, 2}, {1, 1}, 1,
               true),  // LeNet's first layer, small
      // Two samples a tile with 6 channels: the input gradient's two-sample codelet, rows of
      // odd width, padding.
      convCase({8, 6, 4, 5}, {4, 6, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true),
  };
  if (!rtl()) {
    cases.push_back(convCase({5, 6, 14, 14}, {16, 6, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, true));
    // Stride 1, one group: the channel-blocked input gradient's 1-channel blocks, then a 6- and
    // a 1-channel block on rows of odd width (a last element alone), with padding and dilation.
    cases.push_back(convCase({2, 5, 9, 8}, {7, 5, 3, 2}, {1, 1}, {1, 0}, {2, 1}, 1, false));
    cases.push_back(convCase({2, 7, 9, 9}, {5, 7, 3, 3}, {1, 1}, {2, 1}, {1, 2}, 1, true));
  }
  uint32_t seed = 10;
  for (const ConvCase& c : cases) {
    mem = count(c.in) > 1000 ? 262144 : 65536;
    checkConv(c, seed, seed % 20 == 10);
    seed += 10;
    if (HasFatalFailure()) return;
  }
}

TEST_P(ConvTest, RandomShapes) {
  std::mt19937 rng(2024);
  const int n = rtl() ? 2 : 12;
  for (int i = 0; i < n; ++i) {
    checkConv(randomConv(rng, rtl() ? 200 : 1200), 100 + 7 * static_cast<uint32_t>(i), i % 2 == 0);
    if (HasFatalFailure()) return;
  }
}

// The matrix unit's path (docs/library.md, "conv2d on the matrix unit") against the scalar
// codelets and the reference: padding, stride, dilation, k not a multiple of 4 (every case but the
// 2x2 one), results wider than a group of 4 and not a multiple of it, more tiles than samples,
// depthwise and grouped (the scalar codelets: the unit takes groups 1 only), with random and
// special values.
TEST_P(ConvTest, MatrixUnitSameBitsAsTheScalarCodelets) {
  std::vector<ConvCase> cases = {
      convCase({1, 2, 6, 5}, {4, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1, true),   // k 18
      convCase({2, 3, 7, 9}, {5, 3, 2, 3}, {2, 1}, {1, 2}, {1, 2}, 1, false),  // stride, dilation
      convCase({1, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4, true),   // depthwise
  };
  if (!rtl()) {
    cases.push_back(convCase({2, 1, 12, 12}, {6, 1, 5, 5}, {1, 1}, {2, 2}, {1, 1}, 1, true));
    cases.push_back(convCase({3, 6, 10, 10}, {16, 6, 5, 5}, {1, 1}, {0, 0}, {1, 1}, 1, true));
    cases.push_back(convCase({1, 4, 9, 11}, {6, 4, 2, 2}, {3, 2}, {2, 1}, {2, 3}, 1, true));
    cases.push_back(convCase({2, 4, 8, 7}, {6, 2, 3, 3}, {1, 2}, {1, 1}, {1, 1}, 2, true));
  }
  uint32_t seed = 500;
  for (const ConvCase& c : cases) {
    for (bool special : {false, true}) {
      if (rtl() && special != (seed % 20 == 0)) continue;  // the RTL: one of each, seconds
      // The RTL's 64 KiB tiles; more on the model, where the larger cases run in few steps.
      mem = rtl() ? 65536 : 262144;
      checkUnit(c, seed, special);
      if (HasFatalFailure()) return;
    }
    seed += 10;
  }
}

TEST_P(ConvTest, Pooling) {
  auto pp = [](std::array<size_t, 2> k, std::array<size_t, 2> s, std::array<size_t, 2> pd) {
    ops::Pool2dParams p;
    p.kernel = k, p.stride = s, p.padding = pd;
    return p;
  };
  checkPool({2, 3, 8, 8}, pp({2, 2}, {0, 0}, {0, 0}), 1);  // LeNet's max-pool 2
  checkPool({2, 3, 8, 8}, pp({2, 2}, {0, 0}, {0, 0}), 8, true);
  checkPool({1, 2, 9, 7}, pp({3, 3}, {2, 2}, {1, 1}), 9, true);
  checkPool({1, 2, 9, 7}, pp({3, 3}, {2, 2}, {1, 1}), 2);   // odd sizes, padding
  checkPool({2, 2, 7, 11}, pp({2, 3}, {3, 4}, {1, 0}), 3);  // stride > kernel
  // ceil_mode: a last, partial window on each axis (7 = 3 * 2 + 1; 9 + 2 = 4 * 2 + 3).
  ops::Pool2dParams ceil = pp({2, 2}, {2, 2}, {0, 0});
  ceil.ceilMode = true;
  checkPool({1, 2, 7, 7}, ceil, 4);
  ceil = pp({3, 3}, {2, 2}, {1, 1});
  ceil.ceilMode = true;
  checkPool({2, 2, 8, 9}, ceil, 5);
  // count_include_pad false: windows at the border divide by the elements inside the input.
  ops::Pool2dParams exclude = pp({3, 2}, {2, 2}, {1, 1});
  exclude.countIncludePad = false;
  checkPool({1, 3, 7, 6}, exclude, 6);
  exclude.ceilMode = true;
  checkPool({2, 2, 8, 9}, exclude, 7);
  if (!rtl()) {
    std::mt19937 rng(77);
    auto pick = [&](size_t lo, size_t hi) {
      return std::uniform_int_distribution<size_t>(lo, hi)(rng);
    };
    for (uint32_t i = 0; i < 6; ++i) {
      const std::array<size_t, 2> k{pick(1, 4), pick(1, 4)};
      checkPool({pick(1, 3), pick(1, 4), pick(4, 12), pick(4, 12)},
                pp(k, {pick(1, 4), pick(1, 4)}, {pick(0, k[0] / 2), pick(0, k[1] / 2)}), 10 + i);
      if (HasFatalFailure()) return;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ConvTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

// ---- Gradients against finite differences (host only: the device equals the reference) ----

// Loss = sum(f(v) * r) in double; its central difference along every element of v, compared with
// the float gradient `grad`: |grad - fd| <= tol * (1 + |fd|). The ops are linear (conv, avg pool)
// or piecewise linear (max pool, whose windows have distinct maxima here), so the difference is
// exact up to double rounding and the tolerance covers float accumulation only.
void checkFiniteDifferences(const std::function<std::vector<double>(const std::vector<double>&)>& f,
                            std::vector<double> v, const std::vector<double>& r,
                            const std::vector<float>& grad, double h, double tol,
                            const std::string& what) {
  ASSERT_EQ(grad.size(), v.size()) << what;
  auto loss = [&](const std::vector<double>& a) {
    const std::vector<double> y = f(a);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
    return s;
  };
  for (size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i];
    v[i] = keep + h;
    const double up = loss(v);
    v[i] = keep - h;
    const double down = loss(v);
    v[i] = keep;
    const double fd = (up - down) / (2 * h);
    ASSERT_LE(std::abs(double(grad[i]) - fd), tol * (1 + std::abs(fd))) << what << " element " << i;
  }
}

// conv2d in double (any order: double rounding is far below the tolerance).
std::vector<double> convDouble(const ref::ConvGeom& g, const std::vector<double>& x,
                               const std::vector<double>& w, const std::vector<double>& b) {
  std::vector<double> y(size_t(g.N * g.OC * g.OH * g.OW));
  for (long n = 0; n < g.N; ++n)
    for (long o = 0; o < g.OC; ++o)
      for (long oy = 0; oy < g.OH; ++oy)
        for (long ox = 0; ox < g.OW; ++ox) {
          double s = b[size_t(o)];
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

TEST(ConvGradientCheck, Conv2dAgainstFiniteDifferences) {
  // Tolerance 1e-4 relative: each float gradient sums at most ~200 products of values in [-1, 1]
  // (accumulated error below ~200 * 2^-24 * 200 = 2.4e-3 absolute in the worst case, typically
  // 1e-6); the double central difference of a linear loss is exact to ~1e-12.
  std::mt19937 rng(99);
  std::vector<ConvCase> cases = {
      convCase({2, 4, 7, 6}, {6, 2, 3, 3}, {2, 1}, {1, 2}, {1, 2}, 2, true),
      convCase({1, 3, 8, 8}, {3, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 3, true)};
  for (int i = 0; i < 4; ++i) cases.push_back(randomConv(rng, 300));
  uint32_t seed = 500;
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(c.text());
    const ref::ConvGeom g(c.in, c.w, c.p);
    const std::vector<size_t> outShape = ops::conv2dOutputShape(c.in, c.w, c.p, "conv");
    const std::vector<float> xv = randomFloats(count(c.in), seed),
                             wv = randomFloats(count(c.w), seed + 1),
                             bv = randomFloats(c.w[0], seed + 2),
                             r = randomFloats(count(outShape), seed + 3);
    seed += 10;
    const std::vector<double> xd = toDouble(xv), wd = toDouble(wv), bd = toDouble(bv),
                              rd = toDouble(r);
    checkFiniteDifferences([&](const std::vector<double>& a) { return convDouble(g, a, wd, bd); },
                           xd, rd, ref::conv2dBackwardInput(g, r, wv), 1e-3, 1e-4, "d/dx");
    checkFiniteDifferences([&](const std::vector<double>& a) { return convDouble(g, xd, a, bd); },
                           wd, rd, ref::conv2dBackwardWeights(g, xv, r), 1e-3, 1e-4, "d/dw");
    checkFiniteDifferences([&](const std::vector<double>& a) { return convDouble(g, xd, wd, a); },
                           bd, rd, ref::conv2dBackwardBias(g, r), 1e-3, 1e-4, "d/db");
    if (HasFatalFailure()) return;
  }
}

TEST(ConvGradientCheck, PoolingAgainstFiniteDifferences) {
  // Inputs are a shuffled grid with steps of 1/64, so a window's maximum leads its runner-up by
  // at least 1/64 and a step h = 1e-4 never changes which element wins; tolerance 1e-5 relative
  // (the gradients are sums of a few floats).
  std::mt19937 rng(5);
  for (const auto& [in, k, s, pd] :
       std::vector<std::tuple<std::vector<size_t>, std::array<size_t, 2>, std::array<size_t, 2>,
                              std::array<size_t, 2>>>{{{2, 2, 8, 8}, {2, 2}, {2, 2}, {0, 0}},
                                                      {{1, 3, 9, 7}, {3, 3}, {2, 2}, {1, 1}},
                                                      {{1, 2, 7, 10}, {2, 3}, {3, 1}, {1, 1}}}) {
    ops::Pool2dParams p;
    p.kernel = k, p.stride = s, p.padding = pd;
    const ref::PoolGeom g(in, p);
    std::vector<float> xv(count(in));
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = float(i) / 64.0f - 1.0f;
    std::shuffle(xv.begin(), xv.end(), rng);
    const std::vector<float> r = randomFloats(size_t(g.N * g.C * g.OH * g.OW), 7);
    auto maxD = [&](const std::vector<double>& a) {
      std::vector<double> y;
      for (long pl = 0; pl < g.N * g.C; ++pl)
        for (long oy = 0; oy < g.OH; ++oy)
          for (long ox = 0; ox < g.OW; ++ox) {
            double m = -INFINITY;
            for (long iy = std::max(0L, oy * g.sh - g.ph);
                 iy < std::min(g.H, oy * g.sh - g.ph + g.KH); ++iy)
              for (long ix = std::max(0L, ox * g.sw - g.pw);
                   ix < std::min(g.W, ox * g.sw - g.pw + g.KW); ++ix)
                m = std::max(m, a[size_t((pl * g.H + iy) * g.W + ix)]);
            y.push_back(m);
          }
      return y;
    };
    auto avgD = [&](const std::vector<double>& a) {
      std::vector<double> y;
      for (long pl = 0; pl < g.N * g.C; ++pl)
        for (long oy = 0; oy < g.OH; ++oy)
          for (long ox = 0; ox < g.OW; ++ox) {
            double s2 = 0;
            for (long iy = std::max(0L, oy * g.sh - g.ph);
                 iy < std::min(g.H, oy * g.sh - g.ph + g.KH); ++iy)
              for (long ix = std::max(0L, ox * g.sw - g.pw);
                   ix < std::min(g.W, ox * g.sw - g.pw + g.KW); ++ix)
                s2 += a[size_t((pl * g.H + iy) * g.W + ix)];
            y.push_back(s2 / double(g.KH * g.KW));
          }
      return y;
    };
    checkFiniteDifferences(maxD, toDouble(xv), toDouble(r), ref::maxPool2dBackward(g, xv, r), 1e-4,
                           1e-5, "max pool");
    checkFiniteDifferences(avgD, toDouble(xv), toDouble(r), ref::avgPool2dBackward(g, r), 1e-4,
                           1e-5, "avg pool");
    if (HasFatalFailure()) return;
  }
}

// FLOPs the conv builders declare (docs/compiler.md, "FLOPs"), summed over each compute set's
// vertices however the plan splits the work: forward and the weights' gradient exactly
// 2 N OC OH OW (C / groups) KH KW, the input's gradient the same up to its per-vertex rounding.
TEST(ConvFlops, EveryTapOfEveryOutputCountsTwoHoweverTheWorkIsSplit) {
  for (size_t groups : {size_t{1}, size_t{3}}) {
    SCOPED_TRACE(fmt::format("groups {}", groups));
    Graph graph{Target{4, 262144, 6}};
    Sequence prog;
    const std::vector<size_t> in{2, 6, 11, 9}, wshape{9, 6 / groups, 3, 2};
    ops::Conv2dParams p;
    p.stride = {2, 1}, p.padding = {1, 1}, p.groups = groups;
    const std::vector<size_t> out = ops::conv2dOutputShape(in, wshape, p, "conv");
    Tensor x = ops::createConv2dInput(graph, in, "x");
    Tensor w = ops::createLinear(graph, ElemType::Float32, wshape, "w");
    Tensor dy = ops::createLinear(graph, ElemType::Float32, out, "dy");
    ops::conv2d(graph, x, w, Tensor(), prog, "conv", p);
    ops::conv2dBackwardInput(graph, dy, w, in, prog, "dx", p);
    ops::conv2dBackwardWeights(graph, x, dy, wshape, prog, "dw", p);
    std::map<std::string, uint64_t> flops;
    for (const GraphVertex& v : graph.vertices())
      flops[graph.computeSetNames()[v.computeSet]] += v.flops;
    const uint64_t macs = uint64_t{2} * out[1] * out[2] * out[3] * wshape[1] * 3 * 2;
    EXPECT_EQ(flops["conv"], 2 * macs);
    EXPECT_LE(flops["dx"], 2 * macs);
    EXPECT_GE(flops["dx"], 2 * macs * 99 / 100);
    EXPECT_EQ(flops["dw"], 2 * macs);
    // The per-sample partial weights' sum: one add per weight and sample after the first.
    EXPECT_EQ(flops["dw/sum"], uint64_t{9} * wshape[1] * 3 * 2 * (2 - 1));
  }
}

TEST(ConvErrors, NameTheOpAndTheShapes) {
  Graph graph{Target{4, 65536, 6}};
  Sequence prog;
  Tensor x = ops::createLinear(graph, ElemType::Float32, {1, 3, 8, 8}, "x");
  Tensor w = ops::createLinear(graph, ElemType::Float32, {4, 2, 3, 3}, "w");
  try {
    ops::conv2d(graph, x, w, Tensor(), prog, "layer1");
    FAIL() << "a weight with the wrong channel count was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[1,3,8,8]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[4,2,3,3]"), std::string::npos) << e.what();
  }
  ops::Pool2dParams p;
  p.kernel = {2, 2}, p.padding = {2, 0};
  EXPECT_THROW(ops::maxPool2d(graph, x, prog, "pool1", p), Error);
}

}  // namespace
}  // namespace tessera
