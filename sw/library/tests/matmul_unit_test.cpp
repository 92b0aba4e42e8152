// matmul and matmulAccumulate on the matrix unit (codelet MatMulAmp, docs/library.md "matmul on
// the matrix unit") against the scalar codelets, bit for bit, on the model with the unit on: the
// same graph compiled for a target with the unit and for one without, shapes the unit takes and
// shapes it leaves to the scalar codelet (n or k not multiples of 4, k < 8), every layout, special
// values, and products split over tiles against the plan's host reference.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "library_testing.hpp"
#include "tessera/amp_matmul.h"
#include "tessera/compiler.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

using libtest::expectBitEqual;
using libtest::randomFloats;

struct Shape {
  size_t m, k, n;
  bool ta, tb;
};

// Signed zeros, subnormals, infinities, NaNs and large values among random ones: the unit's
// special cases are FMADD.S's (docs/tile.md, "Order of operations").
std::vector<float> specialFloats(size_t n, uint32_t seed) {
  std::vector<float> v = randomFloats(n, seed);
  const float special[] = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           -1e-39f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           3e38f,
                           -3e38f,
                           1e-20f};
  std::mt19937 rng(seed + 1);
  for (size_t i = 0; i < n; i += 7) v[i] = special[rng() % std::size(special)];
  return v;
}

struct Product {
  Shape shape;
  bool accumulate;
  std::vector<float> a, b, c0;
};

struct Result {
  std::vector<std::vector<float>> outputs;
  std::vector<std::string> codelets;
  uint64_t cycles = 0;
};

// The executable run to its end on a model of `tiles` x memBytes with the matrix unit; each named
// float32 tensor read back. cycles (if given) gets the run's cycles.
std::vector<std::vector<float>> runOnUnitModel(const Executable& exe, unsigned tiles,
                                               uint32_t memBytes,
                                               const std::vector<std::string>& names,
                                               uint64_t* cycles = nullptr) {
  DeviceOptions o;
  o.tiles = tiles;
  o.tileMemBytes = memBytes;
  o.matrixUnit = true;
  auto dev = openDevice("model", o);
  Engine e(*dev, exe);
  const RunResult r = e.run(2'000'000'000);
  EXPECT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
  if (cycles) *cycles = r.cycles;
  std::vector<std::vector<float>> out;
  for (const std::string& name : names) {
    const std::vector<uint8_t> bytes = e.readTensor(name);
    std::vector<float> f(bytes.size() / 4);
    std::memcpy(f.data(), bytes.data(), bytes.size());
    out.push_back(std::move(f));
  }
  return out;
}

// Every product in one program on `tiles` tiles, compiled for a target with or without the unit
// and run on a model with the unit.
// With `planned`, untransposed operands are made by createMatMulLhs / createMatMulRhs (b stored
// in the unit's layout where the plan gives the unit its blocks, as a model's weights are).
Result runProducts(const std::vector<Product>& products, bool unit, unsigned tiles,
                   uint32_t memBytes, bool planned = false) {
  Target target{tiles, memBytes, 6};
  target.hasMatrixUnit = unit;
  Graph g(target);
  Sequence prog;
  std::vector<Tensor> outs;
  for (size_t i = 0; i < products.size(); ++i) {
    const Product& p = products[i];
    const Shape& s = p.shape;
    auto input = [&](std::vector<size_t> shape, const std::vector<float>& v,
                     const std::string& name) {
      Tensor t = ops::createLinear(g, ElemType::Float32, shape, name);
      g.setInitialValue(t, v);
      return t;
    };
    Tensor a, b;
    if (planned && !s.ta) {
      a = ops::createMatMulLhs(g, s.m, s.k, s.n, fmt::format("a{}", i));
      g.setInitialValue(a, p.a);
    } else {
      a = input(s.ta ? std::vector<size_t>{s.k, s.m} : std::vector<size_t>{s.m, s.k}, p.a,
                fmt::format("a{}", i));
    }
    if (planned && !s.tb) {
      b = ops::createMatMulRhs(g, s.m, s.k, s.n, fmt::format("b{}", i));
      g.setInitialValue(b, p.b);
    } else {
      b = input(s.tb ? std::vector<size_t>{s.n, s.k} : std::vector<size_t>{s.k, s.n}, p.b,
                fmt::format("b{}", i));
    }
    if (p.accumulate) {
      Tensor c = ops::createMatMulRhs(g, 8, s.m, s.n, fmt::format("c{}", i));
      g.setInitialValue(c, p.c0);
      ops::matmulAccumulate(g, c, a, b, prog, fmt::format("acc{}", i), {s.ta, s.tb});
      outs.push_back(c);
    } else {
      outs.push_back(ops::matmul(g, a, b, prog, fmt::format("mm{}", i), {s.ta, s.tb}));
    }
    g.exposeTensor(fmt::format("out{}", i), outs.back());
  }
  Compiled c = compile(g, prog);
  std::vector<std::string> names;
  for (size_t i = 0; i < products.size(); ++i) names.push_back(fmt::format("out{}", i));
  Result res;
  res.outputs = runOnUnitModel(c.executable, tiles, memBytes, names, &res.cycles);
  res.codelets = c.report.codelets;
  return res;
}

bool usesUnit(const Result& r) {
  return std::find(r.codelets.begin(), r.codelets.end(), "MatMulAmp") != r.codelets.end();
}

Product makeProduct(const Shape& s, bool accumulate, uint32_t seed, bool special) {
  Product p{s, accumulate, {}, {}, {}};
  p.a = special ? specialFloats(s.m * s.k, seed) : randomFloats(s.m * s.k, seed);
  p.b = special ? specialFloats(s.k * s.n, seed + 50) : randomFloats(s.k * s.n, seed + 50);
  if (accumulate) p.c0 = randomFloats(s.m * s.n, seed + 99);
  return p;
}

// One tile: the plan is 1 x 1 x 1 with or without the unit, so the two graphs compute every
// element in the same order and must agree bit for bit.
TEST(MatMulUnit, EqualsTheScalarCodeletsOnOneTile) {
  const std::vector<Shape> unitShapes = {
      {1, 8, 4, false, false},
      {4, 8, 4, false, false},
      {5, 12, 8, false, false},
      {20, 16, 4, false, false},
      {21, 36, 12, false, false},
      {37, 44, 20, false, false},
      {32, 64, 16, true, false},
      {9, 20, 8, false, true},
      {13, 24, 12, true, true},
      {48, 48, 48, false, false},
      {3, 100, 8, false, false},
      // Several row blocks in one stretch: a fourth one with a partial quad (61 rows), three
      // with an odd number of k blocks (45 rows, k = 20).
      {61, 40, 12, false, false},
      {45, 20, 8, false, false},
      // k not a multiple of 4 (padded with +0 in a and -0 in b when not accumulating; b
      // transposed as the MLP's input gradient's W^T), and c's columns not a multiple of 4
      // (padded in a copy of c's block when accumulating: 10 and 6 columns).
      {5, 7, 8, false, false},
      {9, 10, 8, false, true},
      {32, 10, 16, false, true},
      {13, 18, 12, false, false},
      {12, 32, 10, true, false},
      {20, 16, 6, false, false},
      // Accumulating into column groups of whole quads (one chained pointer): three row blocks,
      // an odd number of k blocks.
      {44, 36, 8, false, false}};
  // The unit leaves these to MatMulBlocked: k < 8 even padded, or 4 columns or fewer to pad.
  const std::vector<Shape> scalarShapes = {
      {6, 8, 6, false, false}, {4, 4, 4, false, false}, {7, 3, 8, false, false}};
  std::vector<Product> products;
  uint32_t seed = 1;
  for (const Shape& s : unitShapes) {
    products.push_back(makeProduct(s, false, seed++, false));
    products.push_back(makeProduct(s, true, seed++, false));
  }
  products.push_back(makeProduct({12, 32, 8, false, false}, false, seed++, true));
  products.push_back(makeProduct({8, 16, 12, true, false}, true, seed++, true));
  // Special values through the padded k and the padded columns.
  products.push_back(makeProduct({9, 10, 8, false, true}, false, seed++, true));
  products.push_back(makeProduct({12, 32, 10, true, false}, true, seed++, true));
  for (const Shape& s : scalarShapes) products.push_back(makeProduct(s, false, seed++, false));

  const Result unit = runProducts(products, true, 1, 1u << 20);
  const Result scalar = runProducts(products, false, 1, 1u << 20);
  EXPECT_TRUE(usesUnit(unit));
  EXPECT_FALSE(usesUnit(scalar));
  for (size_t i = 0; i < products.size(); ++i) {
    const Shape& s = products[i].shape;
    expectBitEqual(unit.outputs[i], scalar.outputs[i],
                   fmt::format("product {}: {}x{}x{} ta={} tb={} accumulate={}", i, s.m, s.k, s.n,
                               s.ta, s.tb, products[i].accumulate));
  }
  // The unit did the work: fewer cycles than the scalar codelets.
  EXPECT_LT(unit.cycles, scalar.cycles);
}

// The row blocks of four and six rows a worker (docs/library.md, "How the codelet runs"): row
// counts around every block size (20 and 32 rows, the supervisor's first R - 4), so that row
// block 0 leaves contexts with some, one or none of their rows, with even and odd numbers of k
// blocks, several column groups, accumulating or not. Each is one product on one tile, against the
// scalar codelets bit for bit; the planner's R must be 4 for some and 6 for others.
TEST(MatMulUnit, RowBlocksOfFourAndSixRowsEqualTheScalarCodelets) {
  const size_t rows[] = {1, 2, 5, 6, 7, 19, 20, 21, 25, 26, 27, 31, 32, 33, 38, 52, 53, 64, 65, 97};
  const size_t ks[] = {8, 12, 16, 20, 44};
  const size_t ns[] = {4, 8, 12, 16};
  std::vector<Product> products;
  bool sawFour = false, sawSix = false;
  uint32_t seed = 500;
  for (size_t i = 0; i < std::size(rows); ++i) {
    const Shape s{rows[i], ks[i % std::size(ks)], ns[(i / 2) % std::size(ns)], false, false};
    const bool accumulate = i % 3 == 1;
    const unsigned r =
        tessera_amp_matmul_best_rows(static_cast<unsigned>(s.m), static_cast<unsigned>(s.n / 4),
                                     static_cast<unsigned>(s.k / 4), accumulate);
    sawFour = sawFour || r == 4;
    sawSix = sawSix || r == 6;
    products.push_back(makeProduct(s, accumulate, seed++, i % 5 == 0));
  }
  EXPECT_TRUE(sawFour && sawSix) << "the shapes must exercise both R";
  const Result unit = runProducts(products, true, 1, 1u << 20);
  const Result scalar = runProducts(products, false, 1, 1u << 20);
  EXPECT_TRUE(usesUnit(unit));
  for (size_t i = 0; i < products.size(); ++i) {
    const Shape& s = products[i].shape;
    expectBitEqual(unit.outputs[i], scalar.outputs[i],
                   fmt::format("product {}: {}x{}x{} accumulate={}", i, s.m, s.k, s.n,
                               products[i].accumulate));
  }
}

// Host reference of ops::matmul: the plan's k parts (ceil(k / parts) long), fused multiply-adds
// in k order from +0 within a part, the parts added in order.
std::vector<float> reference(const Graph& g, const Product& p) {
  const Shape& s = p.shape;
  const ops::MatMulPlan plan = ops::planMatMul(g, s.m, s.k, s.n);
  const size_t per = (s.k + plan.k - 1) / plan.k;
  std::vector<float> c(s.m * s.n);
  for (size_t i = 0; i < s.m; ++i) {
    for (size_t j = 0; j < s.n; ++j) {
      float total = 0.0f;
      for (size_t q = 0; q < plan.k && q * per < s.k; ++q) {
        float acc = 0.0f;
        for (size_t x = q * per; x < std::min(s.k, (q + 1) * per); ++x) {
          const float av = s.ta ? p.a[x * s.m + i] : p.a[i * s.k + x];
          const float bv = s.tb ? p.b[j * s.k + x] : p.b[x * s.n + j];
          acc = std::fmaf(av, bv, acc);
        }
        total = q == 0 ? acc : total + acc;
      }
      c[i * s.n + j] = total;
    }
  }
  return c;
}

// Split over 16 tiles (k parts reduced by the scalar ReduceSumStrided): the unit's blocks against
// the plan's reference, the MLP's layer shapes among them.
TEST(MatMulUnit, SplitOverTilesMatchesTheReference) {
  const std::vector<Shape> shapes = {{32, 784, 128, false, false},  {32, 128, 10, false, false},
                                     {128, 256, 192, false, false}, {784, 32, 128, true, false},
                                     {32, 128, 784, false, true},   {50, 60, 36, false, false}};
  std::vector<Product> products;
  uint32_t seed = 500;
  for (const Shape& s : shapes) products.push_back(makeProduct(s, false, seed++, false));
  constexpr unsigned kTiles = 16;
  constexpr uint32_t kMem = 624 * 1024;
  const Result unit = runProducts(products, true, kTiles, kMem);
  EXPECT_TRUE(usesUnit(unit));
  Target target{kTiles, kMem, 6};
  target.hasMatrixUnit = true;
  const Graph g(target);
  for (size_t i = 0; i < products.size(); ++i) {
    const Shape& s = products[i].shape;
    expectBitEqual(unit.outputs[i], reference(g, products[i]),
                   fmt::format("{}x{}x{} ta={} tb={}", s.m, s.k, s.n, s.ta, s.tb));
  }
}

// Products split over k whose columns are not a multiple of 4 (the MLP's 10-column last layer):
// the unit takes the blocks with their columns padded to a multiple of 4 (docs/library.md, "The
// 10-column layer on the unit"), special values included, bit for bit against the scalar codelets
// and (random operands) the plan's reference.
TEST(MatMulUnit, NarrowColumnsPaddedOnTheUnit) {
  const std::vector<Shape> shapes = {{32, 128, 10, false, false}, {24, 256, 6, false, false}};
  std::vector<Product> products;
  uint32_t seed = 900;
  for (const Shape& s : shapes) products.push_back(makeProduct(s, false, seed++, false));
  products.push_back(makeProduct(shapes[0], false, seed++, true));  // special values
  constexpr unsigned kTiles = 16;
  constexpr uint32_t kMem = 624 * 1024;
  for (const bool planned : {false, true}) {
    SCOPED_TRACE(planned ? "operands where the plan reads them" : "operands linear");
    const Result unit = runProducts(products, true, kTiles, kMem, planned);
    const Result scalar = runProducts(products, false, kTiles, kMem, planned);
    EXPECT_TRUE(usesUnit(unit));
    EXPECT_LT(unit.cycles, scalar.cycles);
    Target target{kTiles, kMem, 6};
    target.hasMatrixUnit = true;
    const Graph g(target);
    for (size_t i = 0; i < products.size(); ++i) {
      const Shape& s = products[i].shape;
      const std::string what = fmt::format("{}x{}x{}", s.m, s.k, s.n);
      expectBitEqual(unit.outputs[i], scalar.outputs[i], what);
      if (i < shapes.size()) expectBitEqual(unit.outputs[i], reference(g, products[i]), what);
    }
  }
}

// A chip of `tiles` tiles of memBytes, with or without the unit.
Target chip(unsigned tiles, uint32_t memBytes, bool unit) {
  Target target{tiles, memBytes, 6};
  target.hasMatrixUnit = unit;
  return target;
}

// The k parts of m x k x n's plan on `tiles` tiles of memBytes, with or without the unit.
size_t kParts(const Shape& s, bool unit, unsigned tiles, uint32_t memBytes) {
  const Graph g(chip(tiles, memBytes, unit));
  return ops::planMatMul(g, s.m, s.k, s.n).k;
}

// The unit keeps the scalar plan's k split where every part is a multiple of 4 (the same bits as
// the scalar codelets) and plans its own where one is not (docs/decisions.md, "The unit's own k
// split"): LeNet's dense layers (k parts of 50, 30 and 17 on the scalar plan) go to the unit
// whole, without padded copies, in fewer cycles, and match the reference of their own plan.
TEST(MatMulUnit, OwnKSplitWhereTheScalarPartsAreNotMultiplesOfFour) {
  constexpr unsigned kTiles = 16;
  constexpr uint32_t kMem = 624 * 1024;
  const std::vector<Shape> own = {
      {32, 400, 120, false, false}, {32, 120, 84, false, false}, {32, 84, 10, false, false}};
  const std::vector<Shape> kept = {{32, 784, 128, false, false}, {128, 256, 192, false, false}};
  for (const Shape& s : own) {
    const size_t scalar = kParts(s, false, kTiles, kMem), unit = kParts(s, true, kTiles, kMem);
    const size_t per = (s.k + scalar - 1) / scalar;
    EXPECT_NE(per % 4, 0u) << s.m << "x" << s.k << "x" << s.n << ": scalar parts of " << per;
    EXPECT_EQ((s.k + unit - 1) / unit % 4, 0u)
        << s.m << "x" << s.k << "x" << s.n << ": " << unit << " parts";
  }
  for (const Shape& s : kept)
    EXPECT_EQ(kParts(s, true, kTiles, kMem), kParts(s, false, kTiles, kMem));
  std::vector<Product> products;
  uint32_t seed = 1300;
  for (const Shape& s : own) products.push_back(makeProduct(s, false, seed++, false));
  for (const Shape& s : kept) products.push_back(makeProduct(s, false, seed++, false));
  const Result unit = runProducts(products, true, kTiles, kMem, true);
  const Result scalar = runProducts(products, false, kTiles, kMem, true);
  EXPECT_TRUE(usesUnit(unit));
  // No padded copies: every block's k is a multiple of 4.
  EXPECT_EQ(std::find(unit.codelets.begin(), unit.codelets.end(), "AmpRegroup"),
            unit.codelets.end());
  EXPECT_LT(unit.cycles, scalar.cycles);
  const Graph g(chip(kTiles, kMem, true));
  for (size_t i = 0; i < products.size(); ++i) {
    const Shape& s = products[i].shape;
    const std::string what = fmt::format("{}x{}x{}", s.m, s.k, s.n);
    expectBitEqual(unit.outputs[i], reference(g, products[i]), what);
    if (i >= own.size()) expectBitEqual(unit.outputs[i], scalar.outputs[i], what);
  }
}

// Operands made where the plan reads them: b in the unit's column-group layout (createMatMulRhs
// stores each tile's block [nb / 4][kb][4] under a [k, n] view), read in place by the forward
// product, and a weight in that layout updated in place by matmulAccumulate (the SGD step), all
// against the plan's reference and the scalar codelets, read back through the logical view.
TEST(MatMulUnit, WeightsInTheUnitsLayout) {
  const std::vector<Shape> shapes = {{32, 784, 128, false, false},
                                     {128, 256, 192, false, false},
                                     {32, 128, 10, false, false},
                                     {50, 60, 36, false, false}};
  std::vector<Product> products;
  uint32_t seed = 700;
  for (const Shape& s : shapes) products.push_back(makeProduct(s, false, seed++, false));
  // c [784, 128] += x^T [784, 32] dy [32, 128]: the MLP's first weight update.
  products.push_back(makeProduct({784, 32, 128, true, false}, true, seed++, false));
  constexpr unsigned kTiles = 16;
  constexpr uint32_t kMem = 624 * 1024;
  const Result unit = runProducts(products, true, kTiles, kMem, true);
  const Result scalar = runProducts(products, false, kTiles, kMem, true);
  EXPECT_TRUE(usesUnit(unit));
  Target target{kTiles, kMem, 6};
  target.hasMatrixUnit = true;
  const Graph g(target);
  for (size_t i = 0; i < products.size(); ++i) {
    const Shape& s = products[i].shape;
    const std::string what =
        fmt::format("{}x{}x{} ta={} accumulate={}", s.m, s.k, s.n, s.ta, products[i].accumulate);
    if (!products[i].accumulate) expectBitEqual(unit.outputs[i], reference(g, products[i]), what);
    // The scalar codelets' bits where both plans split k alike (50 x 60 x 36: the scalar plan's
    // parts of 15 do not suit the unit, which plans its own).
    if (products[i].accumulate || kParts(s, true, kTiles, kMem) == kParts(s, false, kTiles, kMem))
      expectBitEqual(unit.outputs[i], scalar.outputs[i], what);
  }
}

// createMatMulRhs on a target with the unit stores the blocks the unit takes in column groups
// behind the [k, n] view: writing the view and reading it back gives the logical layout.
TEST(MatMulUnit, RhsViewKeepsTheLogicalLayout) {
  Target target{16, 624 * 1024, 6};
  target.hasMatrixUnit = true;
  Graph g(target);
  const Tensor w = ops::createMatMulRhs(g, 32, 784, 128, "w");
  ASSERT_EQ(w.shape(), (std::vector<size_t>{784, 128}));
  EXPECT_GT(w.runs().size(), 1u);  // not row-major storage
  const std::vector<float> v = randomFloats(784 * 128, 3);
  g.setInitialValue(w, v);
  g.exposeTensor("w", w);
  Sequence prog;
  Compiled c = compile(g, prog);
  expectBitEqual(runOnUnitModel(c.executable, 16, 624 * 1024, {"w"})[0], v, "w read back");
}

// keepACopies / useACopies (the autodiff layer's weight gradient): the product keeps the op(a)
// blocks it gathers on their tiles and the accumulate reads its transposed a from them instead of
// an exchange; the weights come out bit for bit as without the copies, and the copy's source
// must be what was copied (Graph::addTileCopy refuses a copy of another size).
TEST(MatMulUnit, ACopiesKeptForTheWeightGradient) {
  const auto run = [](bool copies, uint64_t* aRowsWords) {
    Target target{16, 256 * 1024, 6};
    target.hasMatrixUnit = true;
    Graph g(target);
    // The MLP's first layer: plan 1 x 4 x 4, so each tile of a row block of w gathers the whole
    // of x's block for the product, and the update's transposes read a quarter of it.
    const Tensor x = ops::createMatMulLhs(g, 32, 784, 128, "x");
    const Tensor w = ops::createMatMulRhs(g, 32, 784, 128, "w");
    g.setInitialValue(x, randomFloats(32 * 784, 11));
    g.setInitialValue(w, randomFloats(784 * 128, 12));
    Sequence prog;
    ops::MatMulOptions fwd;
    fwd.keepACopies = copies;
    const Tensor y = ops::matmul(g, x, w, prog, "mm", fwd);
    ops::MatMulOptions grad;
    grad.transposeA = true;
    grad.useACopies = copies;
    ops::matmulAccumulate(g, w, x, y, prog, "acc", grad);
    g.exposeTensor("w", w);
    Compiled c = compile(g, prog);
    for (const auto& x : c.report.exchanges)
      if (x.name.find("acc/a-rows") != std::string::npos) *aRowsWords += x.words;
    return runOnUnitModel(c.executable, 16, 256 * 1024, {"w"})[0];
  };
  uint64_t plainWords = 0, copiedWords = 0;
  const std::vector<float> plain = run(false, &plainWords);
  const std::vector<float> copied = run(true, &copiedWords);
  expectBitEqual(copied, plain, "w with the copies");
  EXPECT_GT(plainWords, 0u);
  EXPECT_LT(copiedWords, plainWords);

  Target target{4, 65536, 6};
  target.hasMatrixUnit = true;
  Graph g(target);
  const Tensor a = g.addVariable(ElemType::Float32, {8}, "a");
  const Tensor b = g.addVariable(ElemType::Float32, {4}, "b");
  EXPECT_THROW(g.addTileCopy(a, 1, b), Error);
  g.addTileCopy(a.slice(0, 4), 1, b);
  EXPECT_TRUE(g.tileCopy(a.slice(0, 4), 1).has_value());
  EXPECT_FALSE(g.tileCopy(a.slice(0, 4), 2).has_value());
  EXPECT_FALSE(g.tileCopy(a.slice(4, 8), 1).has_value());
}

}  // namespace
}  // namespace tessera
