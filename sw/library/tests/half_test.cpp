// float16 tensors, casts and the float16 matmul (docs/library.md, "fp16 tensors, casts and
// matmul") against host references built on host/fp/fp16.hpp (the conversions the model executes)
// and the unit's chain order (docs/tile.md, "fp16 inputs and conversions"), bit for bit: on the
// model and on the 4-tile RTL chip, in lockstep (model against rtl, to the cycle), and the larger
// shapes on the model.
#include "tessera/half.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <span>

#include "../tile_chunks.hpp"
#include "fp16.hpp"
#include "lockstep.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/compiler.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

using fp::f16_to_f32;
using fp::f32_to_f16;

uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}
float value(uint32_t b) {
  return std::bit_cast<float>(b);
}
float widen(uint16_t h) {
  return value(f16_to_f32(h));
}

// The core's NaN rule: every NaN an operation produces is the canonical 0x7fc00000.
float canonical(float x) {
  return std::isnan(x) ? value(0x7fc00000u) : x;
}

// binary32 values around binary16's edges: signed zeros, binary32 subnormals, binary16
// subnormals and normals, ties, the largest half, the overflow threshold, infinities, NaN payloads.
std::vector<float> castInputs(size_t n, uint32_t seed) {
  const float special[] = {0.0f,
                           -0.0f,
                           value(0x00000001u),
                           -1e-39f,
                           5.96046448e-8f,  // 2^-24, the smallest half
                           2.98023224e-8f,  // 2^-25: a tie to 0
                           4.4703484e-8f,   // 1.5 * 2^-25: rounds up to 2^-24
                           6.097555e-5f,    // a binary16 subnormal
                           6.1035156e-5f,   // 2^-14, the smallest normal half
                           1.00048828125f,  // 1 + 2^-11: a tie to even (1)
                           1.00146484375f,  // 1 + 3 * 2^-11: a tie to even (up)
                           65504.0f,
                           65519.0f,
                           65520.0f,  // rounds to infinity
                           -1e10f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           value(0x7fc00001u),
                           value(0xff800123u),
                           0.1f,
                           -3.14159265f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  std::uniform_real_distribution<float> small(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i % 3 == 0 ? dist(rng) : small(rng) * 0.01f;
  for (size_t i = 0; i < std::size(special) && 2 * i < n; ++i) v[2 * i + 1] = special[i];
  return v;
}

// Random binary16 bit patterns of moderate magnitude with special halves among them: signed
// zeros, subnormals, the largest half, infinities, NaNs (quiet and signalling payloads).
std::vector<uint16_t> halfInputs(size_t n, uint32_t seed, bool special) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<uint16_t> v(n);
  for (uint16_t& h : v) h = f32_to_f16(bits(dist(rng)), false, 0);
  if (special) {
    const uint16_t s[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400,
                          0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7d01};
    for (size_t i = 0; i < n; i += 13) v[i] = s[rng() % std::size(s)];
  }
  return v;
}

std::vector<uint16_t> halves(const std::vector<uint8_t>& bytes) {
  std::vector<uint16_t> v(bytes.size() / 2);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}
// v [rows, cols] transposed.
std::vector<uint16_t> transposed(const std::vector<uint16_t>& v, size_t rows, size_t cols) {
  std::vector<uint16_t> t(v.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = v[i * cols + j];
  return t;
}
std::vector<float> floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

void expectHalvesEqual(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << what << " element " << i << std::hex << ": got 0x" << got[i]
                               << ", want 0x" << want[i];
}

void expectFloatsEqual(const std::vector<float>& got, const std::vector<float>& want,
                       const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(bits(got[i]), bits(want[i]))
        << what << " element " << i << ": got " << got[i] << ", want " << want[i];
}

// Host reference of the float16 matmul: the plan's k parts (multiples of 8), in each the chain
// fma(w(a), w(b), s) over k in increasing order from +0, then the parts added in order.
std::vector<float> matmulReference(const Graph& g, size_t m, size_t k, size_t n,
                                   const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  const ops::MatMulPlan plan = ops::planMatMulHalf(g, m, k, n);
  const size_t per = ((k + plan.k - 1) / plan.k + 7) / 8 * 8;
  std::vector<float> c(m * n);
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float total = 0.0f;
      for (size_t q = 0; q < plan.k && q * per < k; ++q) {
        float acc = 0.0f;
        for (size_t x = q * per; x < std::min(k, (q + 1) * per); ++x)
          acc = canonical(std::fmaf(widen(a[i * k + x]), widen(b[x * n + j]), acc));
        total = q == 0 ? acc : canonical(total + acc);
      }
      c[i * n + j] = total;
    }
  }
  return c;
}

struct DeviceRun {
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<std::string> codelets;
  uint64_t cycles = 0;
};

DeviceRun runGraph(const std::string& device, const Graph& g, const Sequence& prog,
                   size_t outputs) {
  const Compiled c = compile(g, prog);
  DeviceOptions o;
  o.tiles = g.target().tiles;
  o.tileMemBytes = g.target().tileMemBytes;
  auto dev = openDevice(device, o);
  Engine e(*dev, c.executable);
  const RunResult r = e.run(4'000'000'000);
  EXPECT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
  DeviceRun out;
  out.cycles = r.cycles;
  out.codelets = c.report.codelets;
  for (size_t i = 0; i < outputs; ++i) out.outputs.push_back(e.readTensor(fmt::format("out{}", i)));
  return out;
}

bool uses(const DeviceRun& r, const char* codelet) {
  return std::find(r.codelets.begin(), r.codelets.end(), codelet) != r.codelets.end();
}

// The casts' graph on 4 tiles: x (float32) to float16 (nearest-even and stochastic), back to
// float32, and float16 constants widened.
struct CastGraph {
  static constexpr size_t kN = 96;
  static constexpr uint32_t kSeed = 0x1234567u;
  Graph g{Target{4, 65536, 6}};
  Sequence prog;
  std::vector<float> x = castInputs(kN, 7);
  std::vector<uint16_t> h0 = halfInputs(kN, 8, true);
  Tensor hs;
  CastGraph() {
    const Tensor xt = ops::createLinear(g, ElemType::Float32, {kN}, "x", 2);
    g.setInitialValue(xt, x);
    const Tensor h0t = ops::createLinear(g, ElemType::Float16, {kN}, "h0", 2);
    g.setInitialValue(h0t, h0);
    const Tensor h = ops::cast(g, xt, ElemType::Float16, prog, "to-half");
    const Tensor w = ops::cast(g, h, ElemType::Float32, prog, "to-float");
    hs = ops::castStochastic(g, xt, kSeed, prog, "to-half-sr");
    const Tensor w0 = ops::cast(g, h0t, ElemType::Float32, prog, "widen");
    const Tensor outs[] = {h, w, hs, w0};
    for (size_t i = 0; i < std::size(outs); ++i) g.exposeTensor(fmt::format("out{}", i), outs[i]);
  }
  // castStochastic's vertices in order, each over its chunk with its own seed.
  std::vector<uint16_t> stochasticReference() const {
    std::vector<uint16_t> want(kN);
    uint32_t v = 0;
    for (const ops::Chunk& c : ops::tileChunks(g, hs.flatten(), ops::kPerContext, 2)) {
      uint32_t s = ops::castStochasticSeed(kSeed, v++);
      for (size_t i = c.begin; i < c.end; i += 2) {
        s = fp::amp_sr_step(s);
        want[i] = f32_to_f16(bits(x[i]), true, s & 0xffffu);
        want[i + 1] = f32_to_f16(bits(x[i + 1]), true, s >> 16);
      }
    }
    return want;
  }
};

struct HalfShape {
  size_t m, k, n;
};

// Float16 products a{i} [m, k] x b{i} [k, n] exposed as out{i}, their operands from halfInputs
// (seeds seedA + i and seedB + i; special values where special(i)), added to g and prog.
template <class Special>
void addHalfProducts(Graph& g, Sequence& prog, std::span<const HalfShape> shapes, uint32_t seedA,
                     uint32_t seedB, Special special, std::vector<std::vector<uint16_t>>& a,
                     std::vector<std::vector<uint16_t>>& b) {
  for (size_t i = 0; i < shapes.size(); ++i) {
    const HalfShape& s = shapes[i];
    a.push_back(halfInputs(s.m * s.k, seedA + static_cast<uint32_t>(i), special(i)));
    b.push_back(halfInputs(s.k * s.n, seedB + static_cast<uint32_t>(i), special(i)));
    const Tensor at =
        ops::createMatMulLhs(g, s.m, s.k, s.n, fmt::format("a{}", i), ElemType::Float16);
    const Tensor bt =
        ops::createMatMulRhs(g, s.m, s.k, s.n, fmt::format("b{}", i), ElemType::Float16);
    g.setInitialValue(at, a.back());
    g.setInitialValue(bt, b.back());
    g.exposeTensor(fmt::format("out{}", i), ops::matmul(g, at, bt, prog, fmt::format("mm{}", i)));
  }
}

// The float16 products' graph on 4 tiles of 64 KiB: blocks on the unit (one and several row
// blocks, an odd number of 8-k blocks), and the odd shapes MatMulHalf takes (k not a multiple of 8,
// n not of 4, m = 1), special values among the operands.
struct ProductGraph {
  using Shape = HalfShape;
  static constexpr Shape kShapes[] = {
      {20, 32, 16}, {44, 48, 8}, {24, 40, 12}, {1, 20, 6}, {9, 12, 10}};
  Graph g{Target{4, 65536, 6}};
  Sequence prog;
  std::vector<std::vector<uint16_t>> a, b;
  ProductGraph() {
    addHalfProducts(
        g, prog, kShapes, 100, 200, [](size_t) { return true; }, a, b);
  }
};

class HalfOnDevice : public ::testing::TestWithParam<std::string> {};

TEST_P(HalfOnDevice, CastsMatchTheConversionsBitForBit) {
  const CastGraph cg;
  const DeviceRun r = runGraph(GetParam(), cg.g, cg.prog, 4);
  std::vector<uint16_t> h(CastGraph::kN);
  std::vector<float> w(CastGraph::kN), w0(CastGraph::kN);
  for (size_t i = 0; i < CastGraph::kN; ++i) {
    h[i] = f32_to_f16(bits(cg.x[i]), false, 0);
    w[i] = widen(h[i]);
    w0[i] = widen(cg.h0[i]);
  }
  expectHalvesEqual(halves(r.outputs[0]), h, "cast to float16 (nearest-even)");
  expectFloatsEqual(floats(r.outputs[1]), w, "cast back to float32");
  expectHalvesEqual(halves(r.outputs[2]), cg.stochasticReference(), "stochastic cast");
  expectFloatsEqual(floats(r.outputs[3]), w0, "float16 constants widened");
  // The stochastic cast rounds some values the other way than nearest-even.
  EXPECT_NE(halves(r.outputs[2]), h);
}

TEST_P(HalfOnDevice, ProductsMatchTheChainReference) {
  const ProductGraph pg;
  const DeviceRun r = runGraph(GetParam(), pg.g, pg.prog, std::size(ProductGraph::kShapes));
  EXPECT_TRUE(uses(r, "MatMulAmpH"));
  EXPECT_TRUE(uses(r, "MatMulHalf"));
  for (size_t i = 0; i < std::size(ProductGraph::kShapes); ++i) {
    const auto& s = ProductGraph::kShapes[i];
    expectFloatsEqual(floats(r.outputs[i]), matmulReference(pg.g, s.m, s.k, s.n, pg.a[i], pg.b[i]),
                      fmt::format("{}x{}x{}", s.m, s.k, s.n));
  }
}

// transposeHalf moves every half as it is (NaN payloads, signed zeros, subnormals), whatever the
// tiles its source lies on: a row block of several tiles and a linearly mapped one.
TEST_P(HalfOnDevice, TransposeMovesEveryHalf) {
  Graph g(Target{4, 65536, 6});
  Sequence prog;
  const HalfShape shapes[] = {{6, 10, 0}, {34, 20, 0}};
  std::vector<std::vector<uint16_t>> in;
  for (size_t i = 0; i < std::size(shapes); ++i) {
    const size_t m = shapes[i].m, n = shapes[i].k;
    in.push_back(halfInputs(m * n, 500 + static_cast<uint32_t>(i), true));
    const Tensor t = i == 0 ? ops::createLinear(g, ElemType::Float16, {m, n}, "t0", 2)
                            : ops::createMatMulLhs(g, m, n, 16, "t1", ElemType::Float16);
    g.setInitialValue(t, in.back());
    g.exposeTensor(fmt::format("out{}", i),
                   ops::transposeHalf(g, t, prog, fmt::format("transpose{}", i)));
  }
  const DeviceRun r = runGraph(GetParam(), g, prog, std::size(shapes));
  EXPECT_TRUE(uses(r, "TransposeHalf"));
  for (size_t i = 0; i < std::size(shapes); ++i) {
    const size_t m = shapes[i].m, n = shapes[i].k;
    expectHalvesEqual(halves(r.outputs[i]), transposed(in[i], m, n),
                      fmt::format("{}x{} transposed", m, n));
  }
}

// Products with transposed float16 operands: the operand transposed by transposeHalf, then the
// plain product, so the reference is the plain product's of the transposes.
TEST_P(HalfOnDevice, TransposedProductsAreThePlainProductsOfTheTransposes) {
  constexpr size_t m = 10, k = 24, n = 12;
  Graph g(Target{4, 65536, 6});
  Sequence prog;
  const std::vector<uint16_t> at = halfInputs(k * m, 600, true), bt = halfInputs(n * k, 601, true);
  auto variable = [&](const char* name, size_t rows, size_t cols, const std::vector<uint16_t>& v) {
    const Tensor t = ops::createLinear(g, ElemType::Float16, {rows, cols}, name, 2);
    g.setInitialValue(t, v);
    return t;
  };
  const Tensor a = variable("aT", k, m, at), b = variable("bT", n, k, bt);
  g.exposeTensor("out0", ops::matmul(g, a, b, prog, "ab", {true, true}));
  const Tensor a2 = variable("a", m, k, halfInputs(m * k, 602, false));
  g.exposeTensor("out1", ops::matmul(g, a2, b, prog, "a2b", {false, true}));
  const DeviceRun r = runGraph(GetParam(), g, prog, 2);
  expectFloatsEqual(floats(r.outputs[0]),
                    matmulReference(g, m, k, n, transposed(at, k, m), transposed(bt, n, k)),
                    "a^T b^T");
  expectFloatsEqual(
      floats(r.outputs[1]),
      matmulReference(g, m, k, n, halfInputs(m * k, 602, false), transposed(bt, n, k)), "a b^T");
}

// The float16 product on the tape (autodiff::matmul of two casts of float32 parameters): its
// forward is matmulHalf; its backward narrows the seed to float16 once and computes the float16
// products g16 b16^T and a16^T g16 (each with the plan of its own shape), whose transposes
// (ops::transposeHalf) are exact. Small seed values show the narrowing (2^-26 flushes to zero).
TEST_P(HalfOnDevice, ProductGradientsAreHalfProducts) {
  constexpr size_t m = 12, k = 24, n = 16;
  Graph g(Target{4, 65536, 6});
  Sequence fwd, bwd;
  autodiff::Tape tape(g, fwd);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  auto randoms = [&](size_t count, float scale) {
    std::vector<float> v(count);
    for (float& x : v) x = dist(rng) * scale;
    return v;
  };
  const std::vector<float> a = randoms(m * k, 1.0f), b = randoms(k * n, 1.0f);
  std::vector<float> seed = randoms(m * n, 1.0f);
  for (size_t i = 0; i < seed.size(); i += 5) seed[i] = std::ldexp(seed[i], -26);
  auto variable = [&](const char* name, std::vector<size_t> shape, const std::vector<float>& v) {
    const Tensor t = ops::createLinear(g, ElemType::Float32, std::move(shape), name, 2);
    g.setInitialValue(t, v);
    return t;
  };
  const autodiff::Value av = tape.parameter(variable("a", {m, k}, a));
  const autodiff::Value bv = tape.parameter(variable("b", {k, n}, b));
  const autodiff::Value y =
      autodiff::matmul(tape, autodiff::cast(tape, av, ElemType::Float16, "a16"),
                       autodiff::cast(tape, bv, ElemType::Float16, "b16"), "mm");
  const std::vector<Tensor> grads =
      tape.gradients(y, variable("seed", {m, n}, seed), {av, bv}, bwd);
  g.exposeTensor("out0", y.tensor());
  g.exposeTensor("out1", grads.at(0));
  g.exposeTensor("out2", grads.at(1));
  Sequence prog;
  prog.add(fwd);
  prog.add(bwd);
  const DeviceRun r = runGraph(GetParam(), g, prog, 3);
  auto narrow = [](const std::vector<float>& v) {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = f32_to_f16(bits(v[i]), false, 0);
    return h;
  };
  const std::vector<uint16_t> a16 = narrow(a), b16 = narrow(b), g16 = narrow(seed);
  expectFloatsEqual(floats(r.outputs[0]), matmulReference(g, m, k, n, a16, b16), "forward");
  expectFloatsEqual(floats(r.outputs[1]), matmulReference(g, m, n, k, g16, transposed(b16, k, n)),
                    "gradient of a");
  expectFloatsEqual(floats(r.outputs[2]), matmulReference(g, k, m, n, transposed(a16, m, k), g16),
                    "gradient of b");
}

INSTANTIATE_TEST_SUITE_P(Backends, HalfOnDevice, ::testing::Values("model", "rtl"));

// The casts and the products model against RTL, to the cycle, and both halt (a context late for
// its row block would stop at the codelet's EBREAK).
TEST(HalfLockstep, ModelAndRtlAgree) {
  for (int which = 0; which < 2; ++which) {
    const CastGraph cg;
    const ProductGraph pg;
    const Compiled c = which == 0 ? compile(cg.g, cg.prog) : compile(pg.g, pg.prog);
    LockstepOptions o;
    o.maxCycles = 50'000'000;
    const LockstepReport rep = runLockstep(c.executable, {}, "model", "rtl", o);
    EXPECT_TRUE(rep.agree()) << rep.describe();
    EXPECT_EQ(rep.a.result.reason, StopReason::Halted) << describeTrap(rep.a.result.trap);
  }
}

// The layer shapes of the MLP and a larger product on 16 tiles of the model.
TEST(HalfMatMul, SplitOverTilesMatchesTheReference) {
  const HalfShape shapes[] = {{32, 784, 128}, {32, 128, 10}, {128, 256, 192}};
  Graph g(Target{16, 624 * 1024, 6});
  Sequence prog;
  std::vector<std::vector<uint16_t>> a, b;
  addHalfProducts(
      g, prog, shapes, 300, 400, [](size_t i) { return i == 0; }, a, b);
  const DeviceRun r = runGraph("model", g, prog, std::size(shapes));
  EXPECT_TRUE(uses(r, "MatMulAmpH"));
  for (size_t i = 0; i < std::size(shapes); ++i) {
    const HalfShape& s = shapes[i];
    expectFloatsEqual(floats(r.outputs[i]), matmulReference(g, s.m, s.k, s.n, a[i], b[i]),
                      fmt::format("{}x{}x{}", s.m, s.k, s.n));
  }
}

// On the tape: x (float32) to float16 and back; the gradient of each cast is the cast back, so
// x's gradient is the seed narrowed to float16 (nearest-even) and widened again.
TEST(HalfAutodiff, CastGradientIsTheCastBack) {
  constexpr size_t kN = 48;
  Graph g(Target{4, 65536, 6});
  Sequence fwd, bwd;
  autodiff::Tape tape(g, fwd);
  const std::vector<float> x = castInputs(kN, 11), seed = castInputs(kN, 12);
  const Tensor xt = ops::createLinear(g, ElemType::Float32, {kN}, "x", 2);
  g.setInitialValue(xt, x);
  const Tensor st = ops::createLinear(g, ElemType::Float32, {kN}, "seed", 2);
  g.setInitialValue(st, seed);
  const autodiff::Value xv = tape.parameter(xt);
  const autodiff::Value h = autodiff::cast(tape, xv, ElemType::Float16, "to-half");
  const autodiff::Value y = autodiff::cast(tape, h, ElemType::Float32, "to-float");
  EXPECT_EQ(h.tensor().elementType(), ElemType::Float16);
  const std::vector<Tensor> grads = tape.gradients(y, st, {xv}, bwd);
  g.exposeTensor("out0", y.tensor());
  g.exposeTensor("out1", grads.at(0));
  Sequence prog;
  prog.add(fwd);
  prog.add(bwd);
  const DeviceRun r = runGraph("model", g, prog, 2);
  std::vector<float> wantY(kN), wantG(kN);
  for (size_t i = 0; i < kN; ++i) {
    wantY[i] = widen(f32_to_f16(bits(x[i]), false, 0));
    wantG[i] = widen(f32_to_f16(bits(seed[i]), false, 0));
  }
  expectFloatsEqual(floats(r.outputs[0]), wantY, "forward");
  expectFloatsEqual(floats(r.outputs[1]), wantG, "gradient");
}

// What float16 refuses, with the tensor or op named: a target without the unit, odd counts, a
// view whose elements do not pair up in words, transposed products.
TEST(HalfErrors, ClearMessages) {
  {
    Target t{1, 65536, 6};
    t.hasMatrixUnit = false;
    Graph g(t);
    Sequence prog;
    const Tensor x = g.addVariable(ElemType::Float32, {8}, "x");
    g.setTileMapping(x, 0);
    EXPECT_THROW(ops::cast(g, x, ElemType::Float16, prog, "c"), Error);
    const Tensor a = g.addVariable(ElemType::Float16, {4, 16}, "a");
    g.setTileMapping(a, 0);
    EXPECT_THROW(ops::matmul(g, a, a.reshape({16, 4}), prog, "mm"), Error);
  }
  Graph g(Target{1, 65536, 6});
  Sequence prog;
  const Tensor odd = g.addVariable(ElemType::Float32, {7}, "odd");
  g.setTileMapping(odd, 0);
  EXPECT_THROW(ops::cast(g, odd, ElemType::Float16, prog, "c"), Error);
  const Tensor h = g.addVariable(ElemType::Float16, {4, 4}, "h");
  g.setTileMapping(h, 0);
  const Tensor h3 = g.addVariable(ElemType::Float16, {3, 4}, "h3");
  g.setTileMapping(h3, 0);
  EXPECT_THROW(ops::matmul(g, h3, h, prog, "mm", {true, false}), Error);  // odd: no transposeHalf
  // A transpose of a float16 tensor does not pair its elements in words: the compiler says so.
  Sequence p2;
  ops::cast(g, h.transpose(), ElemType::Float32, p2, "t");
  try {
    compile(g, p2);
    ADD_FAILURE() << "compiled a float16 view that does not pair up";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"h"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("word"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
