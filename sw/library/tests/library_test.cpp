// Every library op against a host reference on random shapes, on each backend of the one list
// (host/testing/backends.hpp): bit-exact, since each op's order of operations is fixed
// (docs/library.md).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "backends.hpp"
#include "library_testing.hpp"
#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/ops.hpp"
#include "tessera/optimizers.hpp"

namespace tessera {
namespace {

using libtest::expectBitEqual;
using libtest::randomFloats;

class LibraryTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { backends::skipIfExcluded(GetParam()); }
  static constexpr unsigned kTiles = 4;
  Graph graph{Target{kTiles, 65536, 6}};
  Sequence prog;

  Tensor input(std::vector<size_t> shape, const std::string& name, uint32_t seed,
               size_t grain = 1) {
    Tensor t = ops::createLinear(graph, ElemType::Float32, shape, name, grain);
    std::vector<float> v = randomFloats(t.numElements(), seed);
    graph.setInitialValue(t, v);
    values[name] = v;
    return t;
  }

  // Compile, run on the parameter's device, and return each output's floats.
  std::map<std::string, std::vector<float>> run(
      const std::vector<std::pair<std::string, Tensor>>& outputs) {
    for (const auto& [name, t] : outputs) graph.exposeTensor(name, t);
    Compiled c = compile(graph, prog);
    DeviceOptions o;
    o.tiles = kTiles;
    const backends::Opened dev = backends::open(GetParam(), o);
    Engine engine(*dev.device, c.executable);
    RunResult r = engine.run(200'000'000);
    EXPECT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
    cycles = r.cycles;
    std::map<std::string, std::vector<float>> out;
    for (const auto& [name, t] : outputs) {
      std::vector<uint8_t> bytes = engine.readTensor(name);
      std::vector<float> f(bytes.size() / 4);
      std::memcpy(f.data(), bytes.data(), bytes.size());
      out[name] = f;
    }
    return out;
  }

  std::map<std::string, std::vector<float>> values;
  uint64_t cycles = 0;
};

TEST_P(LibraryTest, ElementwiseOpsMatchTheHost) {
  const std::vector<size_t> shape{7, 13};
  Tensor a = input(shape, "a", 1), b = input(shape, "b", 2);
  Tensor sum = ops::add(graph, a, b, prog, "sum");
  Tensor diff = ops::sub(graph, a, b, prog, "diff");
  Tensor prod = ops::mul(graph, a, b, prog, "prod");
  Tensor sc = ops::scale(graph, a, 0.375f, prog, "scaled");
  Tensor r = ops::relu(graph, a, prog, "relu");
  Tensor rg = ops::reluGrad(graph, b, a, prog, "relugrad");
  // Clip's bounds are elements of a, so that the bounds themselves are clipped and stopped.
  const float lo = values["a"][3] < values["a"][5] ? values["a"][3] : values["a"][5];
  const float hi = values["a"][3] < values["a"][5] ? values["a"][5] : values["a"][3];
  Tensor cl = ops::clip(graph, a, lo, hi, prog, "clip");
  Tensor cg = ops::clipGrad(graph, b, a, lo, hi, prog, "clipgrad");
  Tensor c6 = ops::clip(graph, a, 0.0f, std::numeric_limits<float>::infinity(), prog, "clip0");
  auto out = run({{"sum", sum},
                  {"diff", diff},
                  {"prod", prod},
                  {"scaled", sc},
                  {"relu", r},
                  {"relugrad", rg},
                  {"clip", cl},
                  {"clipgrad", cg},
                  {"clip0", c6}});
  const auto& va = values["a"];
  const auto& vb = values["b"];
  std::vector<float> e[9];
  for (size_t i = 0; i < va.size(); ++i) {
    e[0].push_back(va[i] + vb[i]);
    e[1].push_back(va[i] - vb[i]);
    e[2].push_back(va[i] * vb[i]);
    e[3].push_back(va[i] * 0.375f);
    e[4].push_back(va[i] > 0 ? va[i] : 0.0f);
    e[5].push_back(va[i] > 0 ? vb[i] : 0.0f);
    e[6].push_back(std::min(std::max(va[i], lo), hi));
    e[7].push_back(va[i] > lo && va[i] < hi ? vb[i] : 0.0f);
    e[8].push_back(va[i] < 0 ? 0.0f : va[i]);
  }
  expectBitEqual(out["sum"], e[0], "add");
  expectBitEqual(out["diff"], e[1], "sub");
  expectBitEqual(out["prod"], e[2], "mul");
  expectBitEqual(out["scaled"], e[3], "scale");
  expectBitEqual(out["relu"], e[4], "relu");
  expectBitEqual(out["relugrad"], e[5], "reluGrad");
  expectBitEqual(out["clip"], e[6], "clip");
  expectBitEqual(out["clipgrad"], e[7], "clipGrad");
  expectBitEqual(out["clip0"], e[8], "clip to [0, inf)");
}

TEST_P(LibraryTest, MisalignedOperandsAreExchanged) {
  // b is mapped with another grain than a, so most of b's elements live on other tiles than a's.
  Tensor a = input({5, 11}, "a", 3, 1);
  Tensor b = input({5, 11}, "b", 4, 11);
  Tensor sum = ops::add(graph, a, b, prog, "sum");
  auto out = run({{"sum", sum}});
  std::vector<float> want;
  for (size_t i = 0; i < 55; ++i) want.push_back(values["a"][i] + values["b"][i]);
  expectBitEqual(out["sum"], want, "add");
}

TEST_P(LibraryTest, AddBiasAndSgdStep) {
  Tensor x = input({6, 9}, "x", 5, 9);
  Tensor bias = input({9}, "bias", 6);
  Tensor y = ops::addBias(graph, x, bias, prog, "y");
  Tensor w = input({6, 9}, "w", 7);
  ops::scaledAddTo(graph, w, x, -0.25f, prog, "sgd");
  Tensor g = input({6, 9}, "g", 8, 5);
  ops::scaleInPlace(graph, g, 0.1f, prog, "unscale");
  auto out = run({{"y", y}, {"w", w}, {"g", g}});
  std::vector<float> wy, ww, wg;
  for (size_t i = 0; i < 54; ++i) {
    wy.push_back(values["x"][i] + values["bias"][i % 9]);
    ww.push_back(std::fmaf(-0.25f, values["x"][i], values["w"][i]));
    wg.push_back(values["g"][i] * 0.1f);
  }
  expectBitEqual(out["y"], wy, "addBias");
  expectBitEqual(out["w"], ww, "scaledAddTo");
  expectBitEqual(out["g"], wg, "scaleInPlace");
}

// A dynamic loss scale's step (ops::lossScaleStep, ifLossScaleOk) on the matrix unit's check
// (NonFiniteFlagAmp) and the scalar one (NonFiniteFlag): each case has a large gradient (head,
// four-element body and tail of every chunk) and a small one; an infinity or a NaN anywhere skips
// the guarded update and halves the scale, finite values (the largest, subnormals, -0) let it run
// and double the scale after `interval` steps unless that overflows.
TEST_P(LibraryTest, LossScaleStepFindsEveryNonFiniteValue) {
  struct Case {
    const char* what;
    size_t tensor = 0, index = 0;  // where the value goes (tensor 0: 2001 elements, 1: 37)
    uint32_t bits = 0;             // 0: every value finite
    float scale = 1024.0f;
    uint32_t interval = 1;
  };
  const std::vector<Case> cases = {
      {"finite, grows", 0, 0, 0},
      {"+inf first", 0, 0, 0x7f800000u},
      {"-inf last", 0, 2000, 0xff800000u},
      {"quiet NaN with a payload in the middle", 0, 1001, 0x7fc12345u},
      {"signalling NaN in the small one", 1, 36, 0x7f800001u},
      {"-NaN at a chunk's second element", 0, 1, 0xffc00000u},
      {"-inf in the middle of the small one", 1, 17, 0xff800000u},
      {"finite, interval 3", 0, 0, 0, 64.0f, 3},
      {"finite, growth past float32 refused", 0, 0, 0, 0x1p127f, 1},
  };
  for (const bool unit : {true, false}) {
    SCOPED_TRACE(unit ? "matrix unit" : "scalar");
    Target target{kTiles, 65536, 6};
    target.hasMatrixUnit = unit;
    Graph g(target);
    Sequence p;
    std::vector<ops::LossScaler> scalers;
    std::vector<Tensor> ws;
    for (size_t c = 0; c < cases.size(); ++c) {
      std::vector<Tensor> grads;
      for (size_t t = 0; t < 2; ++t) {
        const size_t n = t == 0 ? 2001 : 37;
        Tensor x = ops::createLinear(g, ElemType::Float32, {n}, fmt::format("g{}_{}", c, t));
        std::vector<float> v = randomFloats(n, static_cast<uint32_t>(100 + c * 2 + t));
        v[5 % n] = std::numeric_limits<float>::max();
        v[7 % n] = std::numeric_limits<float>::denorm_min();
        v[9 % n] = -0.0f;
        if (cases[c].bits != 0 && cases[c].tensor == t)
          v[cases[c].index] = std::bit_cast<float>(cases[c].bits);
        g.setInitialValue(x, v);
        grads.push_back(x);
      }
      scalers.push_back(
          ops::createLossScaler(g, cases[c].scale, cases[c].interval, fmt::format("s{}", c)));
      ops::lossScaleStep(g, scalers.back(), grads, p, fmt::format("s{}/step", c));
      // The guarded update: w += 1 on every element.
      Tensor w = ops::createLinear(g, ElemType::Float32, {8}, fmt::format("w{}", c));
      const std::vector<float> zeros(8, 0.0f), ones(8, 1.0f);
      g.setInitialValue(w, zeros);
      const Tensor one = g.addConstant({8}, ones, fmt::format("one{}", c));
      g.setTileMapping(one, 1);
      Sequence body;
      ops::scaledAddTo(g, w, one, 1.0f, body, fmt::format("w{}/add", c));
      p.add(ops::ifLossScaleOk(g, scalers.back(), body, fmt::format("s{}/if", c)));
      ws.push_back(w);
      g.exposeTensor(fmt::format("scale{}", c), scalers.back().scale);
      g.exposeTensor(fmt::format("inv{}", c), scalers.back().inv);
      g.exposeTensor(fmt::format("state{}", c), scalers.back().state);
      g.exposeTensor(fmt::format("w{}", c), w);
    }
    Compiled compiled = compile(g, p);
    const std::vector<std::string>& used = compiled.report.codelets;
    EXPECT_NE(std::find(used.begin(), used.end(), unit ? "NonFiniteFlagAmp" : "NonFiniteFlag"),
              used.end());
    DeviceOptions o;
    o.tiles = kTiles;
    const backends::Opened dev = backends::open(GetParam(), o);
    Engine engine(*dev.device, compiled.executable);
    const RunResult r = engine.run(200'000'000);
    ASSERT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
    auto read = [&](const std::string& name, size_t i) {
      const std::vector<uint8_t> b = engine.readTensor(name);
      uint32_t u = 0;
      std::memcpy(&u, b.data() + 4 * i, 4);
      return u;
    };
    for (size_t c = 0; c < cases.size(); ++c) {
      const Case& k = cases[c];
      SCOPED_TRACE(k.what);
      const bool finite = k.bits == 0;
      const bool grows = finite && k.interval == 1 && k.scale < 0x1p127f;
      const float want = !finite ? k.scale * 0.5f : grows ? k.scale * 2.0f : k.scale;
      EXPECT_EQ(std::bit_cast<float>(read(fmt::format("scale{}", c), 0)), want);
      EXPECT_EQ(std::bit_cast<float>(read(fmt::format("inv{}", c), 0)), 1.0f / k.scale);
      EXPECT_EQ(read(fmt::format("state{}", c), 0), finite && k.interval > 1 ? 1u : 0u);
      EXPECT_EQ(read(fmt::format("state{}", c), 1), finite ? 0u : 1u);
      for (size_t i = 0; i < 8; ++i)
        EXPECT_EQ(std::bit_cast<float>(read(fmt::format("w{}", c), i)), finite ? 1.0f : 0.0f);
    }
  }
}

TEST_P(LibraryTest, OpsOnColumnBlocksSpanATilesRuns) {
  // x [26, 20] held in column blocks, as a product's result is: tile t holds columns [5t, 5t + 5)
  // of every row, 26 runs of 5. The element-by-element ops cut each tile's 130 elements into one
  // chunk per context across its runs (spanChunks, Graph::setSpanRuns: chunks of 22, which start
  // inside a run), addBias through AddBiasFrom, addBiasRelu through AddBiasReluFrom.
  graph.setSpanRuns(true);
  Tensor x = graph.addVariable(ElemType::Float32, {26, 20}, "x");
  for (unsigned t = 0; t < kTiles; ++t) graph.setTileMapping(x.slice(5 * t, 5 * t + 5, 1), t);
  values["x"] = randomFloats(520, 11);
  graph.setInitialValue(x, values["x"]);
  Tensor bias = input({20}, "bias", 12);
  Tensor y = ops::addBias(graph, x, bias, prog, "y");
  Tensor r = ops::relu(graph, y, prog, "relu");
  Tensor g = ops::reluGrad(graph, x, r, prog, "grad");
  Tensor fused = ops::addBiasRelu(graph, x, bias, prog, "fused");
  size_t spanning = 0, spanningRelu = 0, perRun = 0;
  for (const GraphVertex& v : graph.vertices()) {
    spanning += v.codelet == "AddBiasFrom";
    spanningRelu += v.codelet == "AddBiasReluFrom";
    perRun += v.codelet == "Add" || v.codelet == "AddBias";
  }
  EXPECT_EQ(spanning, kTiles * 6);
  EXPECT_EQ(spanningRelu, kTiles * 6);
  EXPECT_EQ(perRun, 0u);
  EXPECT_EQ(graph.vertices().size(), 4 * kTiles * 6);
  auto out = run({{"y", y}, {"relu", r}, {"grad", g}, {"fused", fused}});
  std::vector<float> wy, wr, wg;
  for (size_t i = 0; i < 520; ++i) {
    wy.push_back(values["x"][i] + values["bias"][i % 20]);
    wr.push_back(wy[i] > 0 ? wy[i] : 0.0f);
    wg.push_back(wr[i] > 0 ? values["x"][i] : 0.0f);
  }
  expectBitEqual(out["y"], wy, "addBias");
  expectBitEqual(out["relu"], wr, "relu");
  expectBitEqual(out["grad"], wg, "reluGrad");
  expectBitEqual(out["fused"], wr, "addBiasRelu");
}

TEST_P(LibraryTest, AddBiasReluWithoutColumnBlocksIsAddBiasThenRelu) {
  // Whole rows on each tile: the fused op falls back to addBias and relu.
  graph.setSpanRuns(true);
  Tensor x = input({6, 9}, "x", 13, 9);
  Tensor bias = input({9}, "bias", 14);
  Tensor y = ops::addBiasRelu(graph, x, bias, prog, "y");
  for (const GraphVertex& v : graph.vertices()) EXPECT_NE(v.codelet, "AddBiasReluFrom");
  auto out = run({{"y", y}});
  std::vector<float> want;
  for (size_t i = 0; i < 54; ++i) {
    const float s = values["x"][i] + values["bias"][i % 9];
    want.push_back(s > 0 ? s : 0.0f);
  }
  expectBitEqual(out["y"], want, "addBiasRelu");
}

TEST_P(LibraryTest, Reductions) {
  Tensor x = input({10, 7}, "x", 8);
  Tensor s0 = ops::reduceSum(graph, x, 0, prog, "s0");
  Tensor s1 = ops::reduceSum(graph, x, 1, prog, "s1");
  Tensor mx = ops::reduceMax(graph, x, prog, "mx");
  auto out = run({{"s0", s0}, {"s1", s1}, {"mx", mx}});
  const auto& v = values["x"];
  std::vector<float> w0(7), w1(10), wm(7);
  for (size_t j = 0; j < 7; ++j) {
    float s = v[j], m = v[j];
    for (size_t i = 1; i < 10; ++i) s += v[i * 7 + j], m = v[i * 7 + j] > m ? v[i * 7 + j] : m;
    w0[j] = s;
    wm[j] = m;
  }
  for (size_t i = 0; i < 10; ++i) {
    float s = v[i * 7];
    for (size_t j = 1; j < 7; ++j) s += v[i * 7 + j];
    w1[i] = s;
  }
  expectBitEqual(out["s0"], w0, "reduceSum axis 0");
  expectBitEqual(out["s1"], w1, "reduceSum axis 1");
  expectBitEqual(out["mx"], wm, "reduceMax");
}

// Host reference of ops::matmul: the same k parts, fused multiply-adds in k order, parts in order.
std::vector<float> referenceMatMul(const Graph& g, const std::vector<float>& a,
                                   const std::vector<float>& b, size_t m, size_t k, size_t n,
                                   bool ta, bool tb) {
  const ops::MatMulPlan plan = ops::planMatMul(g, m, k, n);
  const size_t per = (k + plan.k - 1) / plan.k;
  std::vector<float> c(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float total = 0;
      for (size_t p = 0; p < plan.k; ++p) {
        float s = 0.0f;
        for (size_t q = p * per; q < std::min(k, (p + 1) * per); ++q) {
          const float x = ta ? a[q * m + i] : a[i * k + q];
          const float y = tb ? b[j * k + q] : b[q * n + j];
          s = std::fmaf(x, y, s);
        }
        total = p == 0 ? s : total + s;
      }
      c[i * n + j] = total;
    }
  }
  return c;
}

struct MatMulShape {
  size_t m, k, n;
  bool ta, tb;
};

TEST_P(LibraryTest, MatMulOnAwkwardShapes) {
  const std::vector<MatMulShape> shapes = {{1, 1, 1, false, false},   {3, 7, 5, false, false},
                                           {13, 17, 2, false, false}, {2, 29, 3, true, false},
                                           {6, 5, 11, false, true},   {8, 64, 4, true, true}};
  std::vector<std::pair<std::string, Tensor>> outs;
  for (size_t s = 0; s < shapes.size(); ++s) {
    const MatMulShape& sh = shapes[s];
    Tensor a = input(sh.ta ? std::vector<size_t>{sh.k, sh.m} : std::vector<size_t>{sh.m, sh.k},
                     fmt::format("a{}", s), 100 + static_cast<uint32_t>(s));
    Tensor b = input(sh.tb ? std::vector<size_t>{sh.n, sh.k} : std::vector<size_t>{sh.k, sh.n},
                     fmt::format("b{}", s), 200 + static_cast<uint32_t>(s));
    outs.emplace_back(fmt::format("c{}", s),
                      ops::matmul(graph, a, b, prog, fmt::format("mm{}", s), {sh.ta, sh.tb}));
  }
  auto out = run(outs);
  for (size_t s = 0; s < shapes.size(); ++s) {
    const MatMulShape& sh = shapes[s];
    expectBitEqual(out[fmt::format("c{}", s)],
                   referenceMatMul(graph, values[fmt::format("a{}", s)],
                                   values[fmt::format("b{}", s)], sh.m, sh.k, sh.n, sh.ta, sh.tb),
                   fmt::format("matmul {}x{}x{} ta={} tb={}", sh.m, sh.k, sh.n, sh.ta, sh.tb));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, LibraryTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// The register-blocked matmul codelet against the plain one, vertex by vertex, on shapes that hit
// every edge block (rows and columns not multiples of 4 and 6, k odd), every layout, accumulate
// or not, and parts of a shared a, b and c: bit-equal.
TEST(MatMulCodelets, BlockedEqualsPlain) {
  Graph g(Target{1, 262144, 6});  // one model tile with room for all the cases
  ComputeSet cs = g.addComputeSet("both");
  struct Shape {
    size_t m, k, n;
  };
  const Shape shapes[] = {{1, 1, 1},  {4, 3, 6},  {5, 7, 13}, {9, 2, 8},
                          {3, 11, 5}, {8, 5, 12}, {13, 6, 7}};
  std::vector<std::pair<std::string, std::string>> pairs;
  uint32_t seed = 900;
  for (const Shape& s : shapes) {
    for (uint32_t flags = 0; flags < 8; ++flags) {
      const std::string id = fmt::format("{}x{}x{}f{}", s.m, s.k, s.n, flags);
      Tensor a = g.addVariable(ElemType::Float32, {s.m * s.k}, "a" + id);
      Tensor b = g.addVariable(ElemType::Float32, {s.k * s.n}, "b" + id);
      g.setInitialValue(a, randomFloats(s.m * s.k, seed++));
      g.setInitialValue(b, randomFloats(s.k * s.n, seed++));
      const std::vector<float> c0 = randomFloats(s.m * s.n, seed++);  // accumulate starts here
      // Two vertices share c, each computing one part: rows [0, r) x all columns, then the rest
      // of the rows split at a column (parts that start inside the block exercise the offsets).
      const uint32_t r = static_cast<uint32_t>(s.m / 2), col = static_cast<uint32_t>(s.n / 3);
      const uint32_t parts[3][4] = {
          {0, r, 0, static_cast<uint32_t>(s.n)},
          {r, static_cast<uint32_t>(s.m) - r, 0, col},
          {r, static_cast<uint32_t>(s.m) - r, col, static_cast<uint32_t>(s.n) - col}};
      for (const char* codelet : {"MatMul", "MatMulBlocked"}) {
        Tensor c = g.addVariable(ElemType::Float32, {s.m * s.n}, std::string(codelet) + id);
        g.setInitialValue(c, c0);
        for (const Tensor& t : {a, b, c}) g.setTileMapping(t, 0);
        for (const auto& p : parts) {
          if (p[1] == 0 || p[3] == 0) continue;
          VertexRef v = g.addVertex(cs, codelet, {{"a", a}, {"b", b}, {"c", c}});
          g.setFieldValue(v, "k", static_cast<uint32_t>(s.k));
          g.setFieldValue(v, "flags", flags);
          g.setFieldValue(v, "row", p[0]);
          g.setFieldValue(v, "rows", p[1]);
          g.setFieldValue(v, "col", p[2]);
          g.setFieldValue(v, "cols", p[3]);
          g.setTileMapping(v, 0);
        }
        g.exposeTensor(std::string(codelet) + id, c);
      }
      pairs.emplace_back("MatMul" + id, "MatMulBlocked" + id);
    }
  }
  Compiled c = compile(g, Execute(cs));
  DeviceOptions o;
  o.tiles = 1;
  o.tileMemBytes = 262144;
  auto dev = openDevice("model", o);
  Engine e(*dev, c.executable);
  ASSERT_EQ(e.run(100'000'000).reason, StopReason::Halted);
  for (const auto& [plain, blocked] : pairs) {
    EXPECT_EQ(e.readTensor(plain), e.readTensor(blocked)) << blocked;
  }
}

// Transpose2d, ReduceSumStrided and ReduceSumStridedOwn (register-blocked loops with tails)
// against host loops on shapes that hit every tail (rows and columns not multiples of 4, parts
// starting inside the block): bit-equal, NaN payloads and signed zeros moved unchanged by the
// transpose.
TEST(DataCodelets, TransposeAndStridedSumMatchTheHost) {
  Graph g(Target{1, 262144, 6});
  ComputeSet cs = g.addComputeSet("both");
  struct Shape {
    uint32_t a, b;  // Transpose2d: rows, cols; ReduceSumStrided: parts, width
  };
  const Shape shapes[] = {{1, 1}, {5, 3}, {9, 8}, {13, 7}, {196, 32}, {7, 12}, {4, 13}, {2, 9}};
  std::vector<std::pair<std::string, std::vector<float>>> want;
  uint32_t seed = 1700;
  for (const Shape& s : shapes) {
    const std::string id = fmt::format("{}x{}", s.a, s.b);
    std::vector<float> v = randomFloats(s.a * s.b, seed++);
    v[0] = -0.0f;
    if (v.size() > 2) v[2] = std::bit_cast<float>(0x7fc01234u);
    Tensor in = g.addVariable(ElemType::Float32, {v.size()}, "in" + id);
    g.setInitialValue(in, v);
    g.setTileMapping(in, 0);
    // Transpose2d: in is [cols = s.b, rows = s.a]; three vertices on row parts.
    Tensor t = g.addVariable(ElemType::Float32, {v.size()}, "t" + id);
    g.setTileMapping(t, 0);
    const uint32_t cut[4] = {0, s.a / 3, s.a / 3 + (s.a + 1) / 2 - s.a / 3, s.a};
    for (int p = 0; p < 3; ++p) {
      if (cut[p] == cut[p + 1]) continue;
      VertexRef vx = g.addVertex(cs, "Transpose2d",
                                 {{"in", in}, {"out", t.slice(cut[p] * s.b, cut[p + 1] * s.b)}});
      g.setFieldValue(vx, "rows", s.a);
      g.setFieldValue(vx, "cols", s.b);
      g.setFieldValue(vx, "row", cut[p]);
      g.setTileMapping(vx, 0);
    }
    std::vector<float> wt(v.size());
    for (uint32_t r = 0; r < s.a; ++r)
      for (uint32_t c = 0; c < s.b; ++c) wt[r * s.b + c] = v[c * s.a + r];
    g.exposeTensor("t" + id, t);
    want.emplace_back("t" + id, wt);
    // ReduceSumStrided: in is [parts = s.a, width = s.b]; vertices on column parts (a NaN's
    // payload is the host's to choose in a sum, so this input has none).
    if (v.size() > 2) v[2] = 1.5f;
    Tensor sin = g.addVariable(ElemType::Float32, {v.size()}, "sin" + id);
    g.setInitialValue(sin, v);
    g.setTileMapping(sin, 0);
    Tensor r = g.addVariable(ElemType::Float32, {s.b}, "r" + id);
    g.setTileMapping(r, 0);
    const uint32_t wcut[4] = {0, s.b / 3, s.b / 3 + (s.b + 1) / 2 - s.b / 3, s.b};
    for (int p = 0; p < 3; ++p) {
      if (wcut[p] == wcut[p + 1]) continue;
      VertexRef vx = g.addVertex(cs, "ReduceSumStrided",
                                 {{"in", sin}, {"out", r.slice(wcut[p], wcut[p + 1])}});
      g.setFieldValue(vx, "width", s.b);
      g.setFieldValue(vx, "offset", wcut[p]);
      g.setTileMapping(vx, 0);
    }
    std::vector<float> wr(s.b);
    for (uint32_t j = 0; j < s.b; ++j) {
      float sum = v[j];
      for (uint32_t p = 1; p < s.a; ++p) sum += v[p * s.b + j];
      wr[j] = sum;
    }
    g.exposeTensor("r" + id, r);
    want.emplace_back("r" + id, wr);
    // ReduceSumStridedOwn: the same sums with part `own` (first, middle, last) read from its own
    // variable and the others from [parts - 1, width].
    const std::set<uint32_t> owns =
        s.a < 2 ? std::set<uint32_t>{} : std::set<uint32_t>{0u, s.a / 2, s.a - 1};
    for (const uint32_t own : owns) {
      std::vector<float> others, mine(v.begin() + own * s.b, v.begin() + (own + 1) * s.b);
      for (uint32_t p = 0; p < s.a; ++p)
        if (p != own) others.insert(others.end(), v.begin() + p * s.b, v.begin() + (p + 1) * s.b);
      const std::string oid = fmt::format("{}o{}", id, own);
      Tensor oin = g.addVariable(ElemType::Float32, {others.size()}, "oin" + oid);
      Tensor omine = g.addVariable(ElemType::Float32, {mine.size()}, "omine" + oid);
      Tensor ro = g.addVariable(ElemType::Float32, {s.b}, "ro" + oid);
      g.setInitialValue(oin, others);
      g.setInitialValue(omine, mine);
      for (const Tensor& t : {oin, omine, ro}) g.setTileMapping(t, 0);
      for (int p = 0; p < 3; ++p) {
        if (wcut[p] == wcut[p + 1]) continue;
        VertexRef vx =
            g.addVertex(cs, "ReduceSumStridedOwn",
                        {{"in", oin}, {"mine", omine}, {"out", ro.slice(wcut[p], wcut[p + 1])}});
        g.setFieldValue(vx, "width", s.b);
        g.setFieldValue(vx, "offset", wcut[p]);
        g.setFieldValue(vx, "own", own);
        g.setTileMapping(vx, 0);
      }
      g.exposeTensor("ro" + oid, ro);
      want.emplace_back("ro" + oid, wr);
    }
  }
  Compiled c = compile(g, Execute(cs));
  DeviceOptions o;
  o.tiles = 1;
  o.tileMemBytes = 262144;
  auto dev = openDevice("model", o);
  Engine e(*dev, c.executable);
  ASSERT_EQ(e.run(100'000'000).reason, StopReason::Halted);
  for (const auto& [name, w] : want) {
    const std::vector<uint8_t> bytes = e.readTensor(name);
    std::vector<float> got(bytes.size() / 4);
    std::memcpy(got.data(), bytes.data(), bytes.size());
    expectBitEqual(got, w, name);
  }
}

}  // namespace
}  // namespace tessera

#include "tessera/mathf.h"

namespace tessera {
namespace {

// tessera_expf/logf (shared by codelets and references) against the host's libm.
TEST(MathF, ExpAndLogAreWithinTwoUlp) {
  auto ulps = [](float a, float b) {
    const int32_t ia = std::bit_cast<int32_t>(a), ib = std::bit_cast<int32_t>(b);
    return std::abs(static_cast<int64_t>(ia) - ib);
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> ex(-87.0f, 88.0f), lx(1e-30f, 1e30f);
  for (int i = 0; i < 200000; ++i) {
    const float x = ex(rng);
    ASSERT_LE(ulps(tessera_expf(x), std::exp(x)), 2) << "expf(" << x << ")";
    const float y = i % 2 ? lx(rng) : std::exp(ex(rng));
    if (std::isnormal(y)) {
      ASSERT_LE(ulps(tessera_logf(y), std::log(y)), 2) << "logf(" << y << ")";
    }
  }
  EXPECT_EQ(tessera_expf(-200.0f), 0.0f);
  EXPECT_TRUE(std::isinf(tessera_expf(100.0f)));
  EXPECT_TRUE(std::isinf(tessera_logf(0.0f)) && tessera_logf(0.0f) < 0);
  EXPECT_TRUE(std::isnan(tessera_logf(-1.0f)));
}

class TrainingOpsTest : public LibraryTest {};

TEST_P(TrainingOpsTest, SoftmaxCrossEntropyArgMaxAndSgd) {
  const size_t rows = 11, classes = 7;
  Tensor logits = input({rows, classes}, "logits", 31, 3);  // rows split across tiles
  Tensor labels = ops::createLinear(graph, ElemType::Int32, {rows}, "labels");
  std::vector<int32_t> lv(rows);
  for (size_t r = 0; r < rows; ++r) lv[r] = static_cast<int32_t>((r * 5 + 2) % classes);
  graph.setInitialValue(labels, lv);
  auto sce = ops::softmaxCrossEntropy(graph, logits, labels, 1.0f / rows, prog, "sce");
  Tensor correct = ops::correctCount(graph, logits, labels, prog, "correct");
  Tensor w = input({rows, classes}, "w", 32);
  ops::sgdMomentum(graph, w, sce.grad, 0.5f, 0.9f, prog, "sgd1");
  auto out = run({{"loss", sce.loss}, {"grad", sce.grad}, {"correct", correct}, {"w", w}});
  const auto& x = values["logits"];
  std::vector<float> wantLoss(rows), wantGrad(rows * classes), wantW(rows * classes);
  int correctRows = 0;
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = &x[r * classes];
    float mx = xr[0];
    size_t best = 0;
    for (size_t j = 1; j < classes; ++j)
      mx = xr[j] > mx ? xr[j] : mx, best = xr[j] > xr[best] ? j : best;
    correctRows += static_cast<int32_t>(best) == lv[r];
    float sum = 0;
    std::vector<float> e(classes);
    for (size_t j = 0; j < classes; ++j) e[j] = tessera_expf(xr[j] - mx), sum += e[j];
    const float inv = 1.0f / sum;
    for (size_t j = 0; j < classes; ++j) {
      const float g =
          (e[j] * inv - (static_cast<int32_t>(j) == lv[r] ? 1.0f : 0.0f)) * (1.0f / rows);
      wantGrad[r * classes + j] = g;
      const float v = std::fmaf(0.9f, 0.0f, g);
      wantW[r * classes + j] = std::fmaf(-0.5f, v, values["w"][r * classes + j]);
    }
    wantLoss[r] = tessera_logf(sum) - (xr[lv[r]] - mx);
  }
  expectBitEqual(out["loss"], wantLoss, "softmax cross-entropy loss");
  expectBitEqual(out["grad"], wantGrad, "softmax cross-entropy gradient");
  expectBitEqual(out["correct"], {static_cast<float>(correctRows)}, "correct count");
  expectBitEqual(out["w"], wantW, "sgd with momentum");
}

// softmaxCrossEntropy's two forms on one graph: tiles with 1, 2 and 3 rows take the split form
// (exponentials, then gradient slices and the loss, over 6, 3 and 2 contexts a row), the tile
// with 7 rows the whole-row vertex. Both against the host's steps bit for bit, with labels in
// every slice, out of range (a NaN loss, no one-hot) and -inf, signed zeros and ties in the
// logits; 2, 5 and 10 classes (fewer classes than a row's contexts included).
TEST_P(TrainingOpsTest, SoftmaxCrossEntropySplitAndWholeRows) {
  const size_t rows = 13;
  const std::pair<size_t, size_t> tileRows[] = {{0, 1}, {1, 3}, {3, 6}, {6, 13}};
  std::vector<std::pair<std::string, Tensor>> outs;
  std::map<size_t, std::pair<std::vector<float>, std::vector<int32_t>>> inputs;
  for (const size_t classes : {2u, 5u, 10u}) {
    const std::string id = std::to_string(classes);
    Tensor logits = graph.addVariable(ElemType::Float32, {rows, classes}, "logits" + id);
    Tensor labels = graph.addVariable(ElemType::Int32, {rows}, "labels" + id);
    for (unsigned t = 0; t < kTiles; ++t) {
      graph.setTileMapping(logits.slice(tileRows[t].first, tileRows[t].second, 0), t);
      graph.setTileMapping(labels.slice(tileRows[t].first, tileRows[t].second), t);
    }
    std::vector<float> x = randomFloats(rows * classes, static_cast<uint32_t>(60 + classes));
    x[1] = -std::numeric_limits<float>::infinity();
    x[classes] = -0.0f, x[classes + 1] = 0.0f;   // signed zeros in row 1
    x[3 * classes] = x[3 * classes + 1] = 4.0f;  // a tie for the maximum in row 3
    std::vector<int32_t> lv(rows);
    for (size_t r = 0; r < rows; ++r) lv[r] = static_cast<int32_t>((r * 3 + 1) % classes);
    lv[2] = -1, lv[4] = static_cast<int32_t>(classes), lv[0] = static_cast<int32_t>(classes - 1);
    graph.setInitialValue(logits, x);
    graph.setInitialValue(labels, lv);
    inputs[classes] = {x, lv};
    auto sce = ops::softmaxCrossEntropy(graph, logits, labels, 0.125f, prog, "sce" + id);
    outs.emplace_back("loss" + id, sce.loss);
    outs.emplace_back("grad" + id, sce.grad);
  }
  auto out = run(outs);
  for (const auto& [classes, in] : inputs) {
    const auto& [x, lv] = in;
    std::vector<float> wantLoss(rows), wantGrad(rows * classes);
    for (size_t r = 0; r < rows; ++r) {
      const float* xr = &x[r * classes];
      float mx = xr[0];
      for (size_t j = 1; j < classes; ++j) mx = xr[j] > mx ? xr[j] : mx;
      std::vector<float> e(classes);
      float sum = 0;
      for (size_t j = 0; j < classes; ++j) e[j] = tessera_expf(xr[j] - mx), sum += e[j];
      const float inv = 1.0f / sum;
      for (size_t j = 0; j < classes; ++j) {
        wantGrad[r * classes + j] =
            (e[j] * inv - (static_cast<int32_t>(j) == lv[r] ? 1.0f : 0.0f)) * 0.125f;
      }
      const bool valid = lv[r] >= 0 && static_cast<size_t>(lv[r]) < classes;
      wantLoss[r] =
          valid ? tessera_logf(sum) - (xr[lv[r]] - mx) : std::bit_cast<float>(0x7fc00000u);
    }
    const std::string id = std::to_string(classes);
    expectBitEqual(out["loss" + id], wantLoss, "softmax cross-entropy loss, classes " + id);
    expectBitEqual(out["grad" + id], wantGrad, "softmax cross-entropy gradient, classes " + id);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, TrainingOpsTest, ::testing::ValuesIn(backends::names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST_P(TrainingOpsTest, MatMulAccumulateInPlace) {
  // c [m, n] laid out by createMatMulRhs (blocks), c += a^T b with a [k, m] and b [k, n].
  const size_t m = 23, k = 9, n = 14;
  Tensor c = ops::createMatMulRhs(graph, 5, m, n, "c");
  std::vector<float> c0 = randomFloats(m * n, 41);
  graph.setInitialValue(c, c0);
  Tensor a = input({k, m}, "a", 42);
  Tensor b = input({k, n}, "b", 43);
  ops::matmulAccumulate(graph, c, a, b, prog, "acc", {true, false});
  auto out = run({{"c", c}});
  std::vector<float> want(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float s = c0[i * n + j];
      for (size_t p = 0; p < k; ++p)
        s = std::fmaf(values["a"][p * m + i], values["b"][p * n + j], s);
      want[i * n + j] = s;
    }
  }
  expectBitEqual(out["c"], want, "matmulAccumulate");
}

// matmulInto: the same blocks computed from +0 whatever c held (NaNs included), on the unit's
// blocks (k a multiple of 4) and the scalar codelet's (k = 9).
TEST_P(TrainingOpsTest, MatMulIntoOverwrites) {
  const size_t m = 23, n = 16;
  const std::vector<size_t> ks = {9, 16};
  std::vector<std::vector<float>> initial;
  std::vector<std::pair<std::string, Tensor>> outs;
  for (const size_t k : ks) {
    const std::string c = fmt::format("c{}", k), a = fmt::format("a{}", k),
                      b = fmt::format("b{}", k);
    Tensor ct = ops::createMatMulRhs(graph, 5, m, n, c);
    std::vector<float> c0 = randomFloats(m * n, static_cast<uint32_t>(41 + k));
    c0[3] = std::numeric_limits<float>::quiet_NaN();
    c0[7] = std::numeric_limits<float>::infinity();
    graph.setInitialValue(ct, c0);
    Tensor at = input({k, m}, a, static_cast<uint32_t>(42 + k));
    Tensor bt = input({k, n}, b, static_cast<uint32_t>(43 + k));
    ops::matmulInto(graph, ct, at, bt, prog, "into" + c, {true, false});
    outs.emplace_back(c, ct);
  }
  auto out = run(outs);
  for (const size_t k : ks) {
    SCOPED_TRACE(fmt::format("k = {}", k));
    const std::vector<float>& av = values[fmt::format("a{}", k)];
    const std::vector<float>& bv = values[fmt::format("b{}", k)];
    std::vector<float> want(m * n);
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        float s = 0.0f;
        for (size_t p = 0; p < k; ++p) s = std::fmaf(av[p * m + i], bv[p * n + j], s);
        want[i * n + j] = s;
      }
    }
    expectBitEqual(out[fmt::format("c{}", k)], want, "matmulInto");
  }
}

}  // namespace
}  // namespace tessera
