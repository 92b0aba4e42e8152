// The compiler: exchanges checked by running them (every word where it should be), its errors,
// and one compiled executable giving identical results and cycle counts on every backend.
#include "tessera/compiler.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <numeric>
#include <random>

#include "backends.hpp"
#include "exchange_scheduler.hpp"
#include "tessera/engine.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

std::vector<float> floatsOf(const std::vector<uint8_t>& bytes) {
  std::vector<float> f(bytes.size() / 4);
  std::memcpy(f.data(), bytes.data(), bytes.size());
  return f;
}

std::unique_ptr<Device> open(const std::string& spec, unsigned tiles) {
  DeviceOptions o;
  o.tiles = tiles;
  return openDevice(spec, o);
}

// Two runs' results agree bit for bit.
void expectBitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(b[i])) << "element " << i;
  }
}

// A one-tile graph built by build(g, prog, variant), compiled and run on the model: tile 0's
// tensor bytes and the exposed tensor "a" afterwards.
struct OneTileRun {
  uint32_t tensorBytes = 0;
  std::vector<float> a;
};
OneTileRun runOneTile(const std::function<void(Graph&, Sequence&, bool)>& build, bool variant) {
  Graph g(Target{1, 65536, 6});
  Sequence prog;
  build(g, prog, variant);
  Compiled c = compile(g, prog);
  auto dev = open("model", 1);
  Engine e(*dev, c.executable);
  EXPECT_EQ(e.run(50'000'000).reason, StopReason::Halted);
  return {c.report.tiles[0].tensors, floatsOf(e.readTensor("a"))};
}

// Random gathers (vertex inputs: guarded buffers, multicast, self transfers) and a random
// permuting Copy (receives into tensors' home memory), run on the model; every value is checked.
TEST(CompilerExchange, RandomTransfersArriveWhereTheyShould) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937 rng(seed);
    const unsigned tiles = 2 + rng() % 7;
    Graph g(Target{tiles, 65536, 6});
    const size_t n = 40 + rng() % 400;
    Tensor src = g.addVariable(ElemType::Float32, {n}, "src");
    std::vector<float> vals(n);
    for (size_t i = 0; i < n; ++i) vals[i] = static_cast<float>(i) + 0.5f;
    g.setInitialValue(src, vals);
    for (size_t i = 0; i < n;) {
      const size_t len = 1 + rng() % 50;
      g.setTileMapping(src.slice(i, std::min(n, i + len)), rng() % tiles);
      i += len;
    }
    ComputeSet cs = g.addComputeSet("gather");
    std::vector<std::pair<Tensor, std::vector<size_t>>> gathers;  // output, expected source indexes
    const unsigned nv = 1 + rng() % 12;
    for (unsigned v = 0; v < nv; ++v) {
      std::vector<size_t> idx;
      const unsigned pieces = 1 + rng() % 4;
      std::vector<Tensor> parts;
      for (unsigned p = 0; p < pieces; ++p) {
        const size_t b = rng() % n, e = b + 1 + rng() % std::min<size_t>(n - b, 60);
        Tensor piece = src.slice(b, e);
        std::vector<size_t> pidx(e - b);
        std::iota(pidx.begin(), pidx.end(), b);
        if (rng() % 3 == 0) {  // the same elements twice (a broadcast)
          piece = concat({piece, piece}, 0);
          pidx.insert(pidx.end(), pidx.begin(), pidx.end());
        }
        if (rng() % 3 == 0) {  // reversed
          std::vector<size_t> perm(piece.numElements());
          std::iota(perm.rbegin(), perm.rend(), 0);
          std::vector<Tensor> rev;
          for (size_t k : perm) rev.push_back(piece.slice(k, k + 1));
          piece = concat(rev, 0);
          std::reverse(pidx.begin(), pidx.end());
        }
        parts.push_back(piece);
        idx.insert(idx.end(), pidx.begin(), pidx.end());
      }
      Tensor in = concat(parts, 0);
      Tensor out = g.addVariable(ElemType::Float32, {in.numElements()}, fmt::format("out{}", v));
      const unsigned tile = rng() % tiles;
      g.setTileMapping(out, tile);
      VertexRef vx = g.addVertex(cs, "Scale", {{"in", in}, {"out", out}});
      g.setFieldValue(vx, "scale", 1.0f);
      g.setTileMapping(vx, tile);
      g.exposeTensor(fmt::format("out{}", v), out);
      gathers.emplace_back(out, idx);
    }
    // A Copy of src, permuted, into a tensor mapped at random.
    Tensor dst = g.addVariable(ElemType::Float32, {n}, "dst");
    for (size_t i = 0; i < n;) {
      const size_t len = 1 + rng() % 70;
      g.setTileMapping(dst.slice(i, std::min(n, i + len)), rng() % tiles);
      i += len;
    }
    std::vector<size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t i = 0; i < n;) {  // reverse random blocks
      const size_t len = 1 + rng() % 30;
      std::reverse(perm.begin() + i, perm.begin() + std::min(n, i + len));
      i += len;
    }
    std::vector<Tensor> permuted;
    for (size_t k : perm) permuted.push_back(src.slice(k, k + 1));
    g.exposeTensor("dst", dst);
    Sequence prog({Execute(cs), Copy(concat(permuted, 0), dst)});
    Compiled c = compile(g, prog);
    for (const ExchangeReport& x : c.report.exchanges) {
      EXPECT_GE(x.cycles + x.localCopyWords, x.lowerBound) << x.name;
    }
    auto dev = open("model", tiles);
    Engine e(*dev, c.executable);
    RunResult r = e.run(10'000'000);
    ASSERT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
    for (unsigned v = 0; v < nv; ++v) {
      const auto got = floatsOf(e.readTensor(fmt::format("out{}", v)));
      const auto& idx = gathers[v].second;
      ASSERT_EQ(got.size(), idx.size());
      for (size_t i = 0; i < idx.size(); ++i)
        ASSERT_EQ(got[i], vals[idx[i]]) << "out" << v << "[" << i << "]";
    }
    const auto got = floatsOf(e.readTensor("dst"));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], vals[perm[i]]) << "dst[" << i << "]";
  }
}

// An all-to-all of equal blocks (the shape of a matmul's partial-sum reduction) is scheduled as
// permutations: within 1.1x of the lower bound; a tile's own block is copied by its supervisor
// where the engine would write junk over a block received earlier.
TEST(CompilerExchange, AllToAllIsNearTheLowerBound) {
  const unsigned tiles = 8;
  const size_t block = 256;
  Graph g(Target{tiles, 65536, 6});
  Tensor parts = g.addVariable(ElemType::Float32, {tiles, tiles * block}, "parts");
  for (unsigned t = 0; t < tiles; ++t) g.setTileMapping(parts[t], t);
  Sequence prog;
  Tensor sum = ops::reduceSum(g, parts, 0, prog, "sum");
  Compiled c = compile(g, prog);
  ASSERT_EQ(c.report.exchanges.size(), 1u);
  const ExchangeReport& x = c.report.exchanges[0];
  // Tile 0's own block is the first of its buffer (below it only the guard): the engine moves it.
  EXPECT_EQ(x.lowerBound, tiles * block);
  EXPECT_EQ(x.localCopyWords, (tiles - 1) * block);
  EXPECT_LE(x.cycles, 1.1 * x.lowerBound) << c.report.summary();
}

// A graph with streams, a Repeat, a RepeatWhile, a matmul and elementwise ops: the same outputs
// and cycle counts on each backend in process and on the model behind tessera-server.
struct LoopRun {
  uint64_t cycles = 0;
  std::vector<uint8_t> out, acc;
};

LoopRun runLoopGraph(Device& dev) {
  const unsigned tiles = dev.info().tiles;
  Graph g(Target::of(dev.info()));
  Sequence prog;
  DataStream in = g.addHostToDeviceFIFO("in", ElemType::Float32, 6 * 10);
  DataStream out = g.addDeviceToHostFIFO("out", ElemType::Float32, 6 * 5);
  Tensor x = ops::createLinear(g, ElemType::Float32, {6, 10}, "x", 10);
  Tensor w = ops::createLinear(g, ElemType::Float32, {10, 5}, "w");
  std::vector<float> wv(50);
  for (size_t i = 0; i < 50; ++i) wv[i] = 0.125f * static_cast<float>(static_cast<int>(i % 7) - 3);
  g.setInitialValue(w, wv);
  Tensor acc = ops::createLinear(g, ElemType::Float32, {6, 5}, "acc");
  Tensor counter = g.addVariable(ElemType::Int32, {1}, "counter");
  g.setTileMapping(counter, tiles - 1);
  const int32_t three[1] = {3};
  g.setInitialValue(counter, three);
  Sequence body;
  body.add(Copy(in, x));
  Tensor h = ops::relu(g, ops::matmul(g, x, w, body, "mm"), body, "h");
  ops::scaledAddTo(g, acc, h, 0.5f, body, "acc");
  body.add(Copy(h, out));
  prog.add(Repeat(2, body));
  // RepeatWhile: counter counts down from 3; each pass doubles acc.
  ComputeSet dec = g.addComputeSet("dec");
  VertexRef dv = g.addVertex(dec, "AddInt", {{"x", counter}});
  g.setFieldValue(dv, "delta", static_cast<uint32_t>(-1));
  g.setTileMapping(dv, tiles - 1);
  Sequence loop;
  ops::scaledAddTo(g, acc, acc, 1.0f, loop, "double");
  prog.add(RepeatWhile(Execute(dec), counter, loop));
  g.exposeTensor("acc", acc);
  Compiled c = compile(g, prog);
  Engine e(dev, c.executable);
  std::vector<uint8_t> inBytes(2 * 60 * 4), outBytes(2 * 30 * 4);
  for (size_t i = 0; i < 120; ++i) {
    const float v = 0.25f * static_cast<float>(static_cast<int>(i % 11) - 4);
    std::memcpy(&inBytes[4 * i], &v, 4);
  }
  e.connectStream("in", inBytes);
  e.connectStream("out", outBytes);
  RunResult r = e.run(50'000'000);
  EXPECT_EQ(r.reason, StopReason::Halted) << describeTrap(r.trap);
  return LoopRun{r.cycles, outBytes, e.readTensor("acc")};
}

TEST(CompiledExecutable, RunsIdenticallyOnEveryBackend) {
  auto model = open("model", 4);
  const LoopRun ref = runLoopGraph(*model);
  // Host reference of the outputs: h = relu(x w) per minibatch; acc = 0.5 (h1 + h2), doubled
  // twice (the counter goes 3 -> 2 -> 1 -> 0: the body runs while it is nonzero after the
  // decrement).
  std::vector<float> acc(30, 0.0f);
  for (int step = 0; step < 2; ++step) {
    for (int i = 0; i < 6; ++i) {
      for (int j = 0; j < 5; ++j) {
        float s = 0;
        for (int k = 0; k < 10; ++k) {
          const float xv = 0.25f * static_cast<float>((step * 60 + i * 10 + k) % 11 - 4);
          const float wv = 0.125f * static_cast<float>((k * 5 + j) % 7 - 3);
          s = std::fmaf(xv, wv, s);
        }
        const float hv = s > 0 ? s : 0.0f;
        float got;
        std::memcpy(&got, &ref.out[4 * (step * 30 + i * 5 + j)], 4);
        EXPECT_EQ(got, hv) << "out step " << step << " [" << i << "," << j << "]";
        acc[i * 5 + j] = std::fmaf(0.5f, hv, acc[i * 5 + j]);
      }
    }
  }
  for (float& v : acc) v = std::fmaf(1.0f, v, v), v = std::fmaf(1.0f, v, v);
  EXPECT_EQ(floatsOf(ref.acc), acc);
  for (const std::string& spec : backends::names()) {
    if (spec == "model") continue;
    DeviceOptions o;
    o.tiles = 4;
    backends::Opened dev = backends::open(spec, o);
    const LoopRun r = runLoopGraph(*dev.device);
    EXPECT_EQ(r.cycles, ref.cycles) << spec;
    EXPECT_EQ(r.out, ref.out) << spec;
    EXPECT_EQ(r.acc, ref.acc) << spec;
  }
}

// ---- errors name the tile, tensor, vertex or field at fault ----

void expectError(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing \"" << needle << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Liveness: a chain of temporaries inside and outside a loop shares memory where lifetimes do not
// overlap, the results are those of the layout without sharing, and a value read before it is
// written (a velocity carried from run to run) keeps its memory across runs.
TEST(CompilerLiveness, TemporariesShareMemoryAndResultsDoNotChange) {
  auto build = [](Graph& g, Sequence& prog) {
    Tensor a = ops::createLinear(g, ElemType::Float32, {96}, "a");
    std::vector<float> av(96);
    for (size_t i = 0; i < av.size(); ++i) av[i] = 0.25f * static_cast<float>(i) - 3.0f;
    g.setInitialValue(a, av);
    Tensor carried = ops::createLinear(g, ElemType::Float32, {96}, "carried");  // zeros, read first
    Sequence body;
    Tensor t = a;
    for (int i = 0; i < 4; ++i) t = ops::scale(g, t, 1.5f, body, fmt::format("loop{}", i));
    ops::scaledAddTo(g, carried, t, 1.0f, body, "carry");
    prog.add(Repeat(3, body, "loop"));
    Tensor u = carried;
    for (int i = 0; i < 4; ++i)
      u = ops::relu(g, ops::scale(g, u, -0.5f, prog, fmt::format("tail{}", i)), prog,
                    fmt::format("relu{}", i));
    g.exposeTensor("carried", carried);
    g.exposeTensor("out", u);
  };
  std::vector<std::vector<float>> results;
  std::vector<uint32_t> tensorBytes;
  for (bool liveness : {false, true}) {
    Graph g(Target{4, 65536, 6});
    Sequence prog;
    build(g, prog);
    CompileOptions o;
    o.liveness = liveness;
    Compiled c = compile(g, prog, o);
    uint32_t bytes = 0, without = 0;
    for (const TileMemoryReport& t : c.report.tiles)
      bytes += t.tensors, without += t.tensorsWithoutLiveness;
    tensorBytes.push_back(bytes);
    if (liveness) {
      EXPECT_LT(bytes, without);
    } else {
      EXPECT_EQ(bytes, without);
    }
    auto dev = open("model", 4);
    Engine e(*dev, c.executable);
    for (int run = 0; run < 2; ++run) {
      if (run) e.restart();
      ASSERT_EQ(e.run(50'000'000).reason, StopReason::Halted);
    }
    std::vector<float> r = floatsOf(e.readTensor("out"));
    const std::vector<float> carried = floatsOf(e.readTensor("carried"));
    r.insert(r.end(), carried.begin(), carried.end());
    results.push_back(r);
  }
  EXPECT_LT(tensorBytes[1], tensorBytes[0]);
  expectBitEqual(results[0], results[1]);
  // The carried sum: six loop passes (three per run, two runs) of a * 1.5^4.
  EXPECT_EQ(results[1][96 + 5], 6 * ((0.25f * 5 - 3.0f) * 1.5f * 1.5f * 1.5f * 1.5f));
}

// Liveness of a result written in parts (a conv's chunks, a copy per half): it is a temporary
// when its parts cover it before anything reads it (no value from before is read), and keeps
// its memory for the whole program when a read comes between the parts.
TEST(CompilerLiveness, AResultWrittenInPartsBeforeItsFirstReadIsATemporary) {
  // order 0: one whole copy; 1: two halves, then the read; 2: a half, a read of it, the other half.
  auto build = [](Graph& g, Sequence& prog, int order) {
    Tensor a = ops::createLinear(g, ElemType::Float32, {96}, "a");
    std::vector<float> av(96);
    for (size_t i = 0; i < av.size(); ++i) av[i] = 0.25f * static_cast<float>(i) - 3.0f;
    g.setInitialValue(a, av);
    Tensor t = ops::createLinear(g, ElemType::Float32, {96}, "t");
    Tensor early;
    if (order == 0) {
      prog.add(Copy(a, t));
    } else {
      prog.add(Copy(a.slice(0, 48), t.slice(0, 48)));
      if (order == 2) early = ops::scale(g, t.slice(0, 48), 2.0f, prog, "early");
      prog.add(Copy(a.slice(48, 96), t.slice(48, 96)));
    }
    Tensor u = ops::scale(g, t, 1.5f, prog, "u");
    Tensor v = ops::scale(g, u, 1.5f, prog, "v");
    Tensor w = ops::scale(g, v, 1.5f, prog, "w");
    g.exposeTensor("w", w);
    if (early.valid()) g.exposeTensor("early", early);
  };
  std::vector<uint32_t> bytes;
  for (int order : {0, 1, 2}) {
    Graph g(Target{4, 65536, 6});
    Sequence prog;
    build(g, prog, order);
    Compiled c = compile(g, prog, CompileOptions{});
    uint32_t b = 0;
    for (const TileMemoryReport& t : c.report.tiles) b += t.tensors;
    bytes.push_back(b);
    auto dev = open("model", 4);
    Engine e(*dev, c.executable);
    ASSERT_EQ(e.run(50'000'000).reason, StopReason::Halted);
    const std::vector<float> w = floatsOf(e.readTensor("w"));
    for (size_t i = 0; i < w.size(); ++i) {
      ASSERT_EQ(w[i], (0.25f * static_cast<float>(i) - 3.0f) * 1.5f * 1.5f * 1.5f)
          << "order " << order << " element " << i;
    }
  }
  EXPECT_EQ(bytes[1], bytes[0]);  // t shares memory with v, as when it is written whole
  EXPECT_GE(bytes[2], bytes[0] + 4 * (96 + 48));  // t keeps its own memory, "early" is exposed
}

// An InOut field that a vertex only writes (Graph::setFieldWriteOnly: matmul's products that do
// not accumulate) counts as a write for liveness: the variable it writes whole, in a loop, is a
// temporary instead of living through the program, and the results do not change.
TEST(CompilerLiveness, WriteOnlyFieldsMakeTemporaries) {
  auto build = [](Graph& g, Sequence& prog, bool writeOnly) {
    Tensor a = ops::createLinear(g, ElemType::Float32, {8, 8}, "a");
    std::vector<float> av(64);
    for (size_t i = 0; i < av.size(); ++i) av[i] = 0.5f * static_cast<float>(i % 13) - 2.0f;
    g.setInitialValue(a, av);
    Tensor c = g.addVariable(ElemType::Float32, {8, 8}, "c");
    g.setTileMapping(c, 0);
    Sequence body;
    ComputeSet cs = g.addComputeSet("product");
    VertexRef v = g.addVertex(cs, "MatMulBlocked",
                              {{"a", a.flatten()}, {"b", a.flatten()}, {"c", c.flatten()}});
    for (const char* f : {"k", "rows", "cols"}) g.setFieldValue(v, f, 8u);
    for (const char* f : {"flags", "row", "col"}) g.setFieldValue(v, f, 0u);
    g.setTileMapping(v, 0);
    if (writeOnly) g.setFieldWriteOnly(v, "c");
    body.add(Execute(cs, "product"));
    const Tensor r = ops::relu(g, c, body, "relu");
    const Tensor r2 = ops::scale(g, r, -0.5f, body, "scale");
    ops::scaledAddTo(g, a, r2, 0.125f, body, "update");
    prog.add(Repeat(2, body, "loop"));
    g.exposeTensor("a", a);
  };
  const OneTileRun plain = runOneTile(build, false), changed = runOneTile(build, true);
  if (HasFailure()) return;
  // c (256 bytes) shares the pool with the scaled result (their lives do not meet) instead of a
  // place of its own.
  EXPECT_LE(changed.tensorBytes + 256, plain.tensorBytes);
  expectBitEqual(plain.a, changed.a);
  // Only an InOut field can be declared so.
  Graph g(Target{1, 65536, 6});
  ComputeSet cs = g.addComputeSet("cs");
  const Tensor t = ops::createLinear(g, ElemType::Float32, {4}, "t");
  VertexRef v = g.addVertex(cs, "Relu", {{"in", t}, {"out", t}});
  EXPECT_THROW(g.setFieldWriteOnly(v, "out"), Error);
}

// A variable written whole over several steps before it is read (matmulAccumulate's transposed
// rows: each tile's own part by a compute set, the rest by a copy) is a temporary, as one written
// whole by one step is; the results do not change.
TEST(CompilerLiveness, AVariableWrittenWholeOverTwoStepsIsATemporary) {
  auto build = [](Graph& g, Sequence& prog, bool twoSteps) {
    Tensor a = ops::createLinear(g, ElemType::Float32, {64}, "a");
    std::vector<float> av(64);
    for (size_t i = 0; i < av.size(); ++i) av[i] = 0.5f * static_cast<float>(i % 13) - 2.0f;
    g.setInitialValue(a, av);
    Tensor c = g.addVariable(ElemType::Float32, {64}, "c");
    g.setTileMapping(c, 0);
    Sequence body;
    if (twoSteps) {
      body.add(Copy(a.slice(0, 32), c.slice(0, 32), "low"));
      body.add(Copy(a.slice(32, 64), c.slice(32, 64), "high"));
    } else {
      body.add(Copy(a, c, "all"));
    }
    const Tensor r = ops::scale(g, c, 1.5f, body, "scale");
    const Tensor r2 = ops::scale(g, r, -0.5f, body, "again");
    ops::scaledAddTo(g, a, r2, 0.125f, body, "update");
    prog.add(Repeat(2, body, "loop"));
    g.exposeTensor("a", a);
  };
  const OneTileRun plain = runOneTile(build, false), changed = runOneTile(build, true);
  if (HasFailure()) return;
  // c shares the pool with the second scale's result in both (a carried c would add 256 bytes).
  EXPECT_EQ(changed.tensorBytes, plain.tensorBytes);
  expectBitEqual(plain.a, changed.a);
}

// The report's program tree and live bytes per step (the browser report's liveness and program
// views, docs/report.md): every step, exchange and host sync belongs to exactly one node, and the
// live bytes never exceed what the tile reserved for tensors.
TEST(CompilerReport, ProgramTreeAndLiveBytesPerStep) {
  for (bool liveness : {false, true}) {
    Graph g(Target{4, 65536, 6});
    Sequence prog, body;
    Tensor a = ops::createLinear(g, ElemType::Float32, {96}, "a");
    Tensor t = a;
    for (int i = 0; i < 3; ++i) t = ops::scale(g, t, 1.5f, body, fmt::format("loop{}", i));
    prog.add(Copy(g.addHostToDeviceFIFO("in", ElemType::Float32, 96), a));
    prog.add(Repeat(2, body, "loop"));
    Tensor u = ops::relu(g, ops::scale(g, t, -0.5f, prog, "tail"), prog, "relu");
    prog.add(Copy(u, g.addDeviceToHostFIFO("out", ElemType::Float32, 96)));
    CompileOptions o;
    o.liveness = liveness;
    const CompileReport r = compile(g, prog, o).report;
    ASSERT_FALSE(r.program.empty());
    EXPECT_EQ(r.program[0].kind, "Sequence");
    EXPECT_EQ(r.program[0].parent, -1);
    std::vector<int> stepOwners(r.steps, 0), exchangeOwners(r.exchanges.size(), 0);
    unsigned hostSyncs = 0, repeats = 0;
    for (size_t i = 0; i < r.program.size(); ++i) {
      const ProgramNodeReport& n = r.program[i];
      if (i > 0) {
        EXPECT_LT(n.parent, static_cast<int>(i)) << "node " << i;
      }
      if (n.kind == "Repeat") {
        EXPECT_EQ(n.count, 2u);
        EXPECT_EQ(n.name, "loop");
        ++repeats;
      }
      if (n.step >= 0) ++stepOwners.at(n.step);
      for (int32_t s : n.syncs) {
        if (s < 0) {
          ++hostSyncs;
        } else {
          ++exchangeOwners.at(s);
        }
      }
    }
    EXPECT_EQ(repeats, 1u);
    EXPECT_GT(r.steps, 5u);
    for (int c : stepOwners) EXPECT_EQ(c, 1);
    for (int c : exchangeOwners) EXPECT_EQ(c, 1);
    EXPECT_EQ(hostSyncs, r.hostSyncs);
    bool varies = false;
    for (const TileMemoryReport& tile : r.tiles) {
      ASSERT_EQ(tile.liveTensors.size(), r.steps) << "tile " << tile.tile;
      const auto [lo, hi] = std::minmax_element(tile.liveTensors.begin(), tile.liveTensors.end());
      EXPECT_LE(*hi, tile.tensors) << "tile " << tile.tile;
      if (!liveness) {
        EXPECT_EQ(*lo, tile.tensors) << "tile " << tile.tile;
      }
      varies = varies || *lo < *hi;
    }
    EXPECT_EQ(varies, liveness);
  }
}

// FLOPs and sync ids in the report (the browser report's FLOPs and its replay of the trace,
// docs/report.md): an Execute carries its vertices' FLOPs, and the ids the device reports at
// every sync break are the report's, in the program's order, through a data-dependent loop.
TEST(CompilerReport, FlopsAndSyncIdsFollowTheProgram) {
  auto dev = open("model", 4);
  Graph g(Target::of(dev->info()));
  constexpr size_t m = 12, k = 64, n = 8;
  const ops::MatMulPlan plan = ops::planMatMul(g, m, k, n);
  Tensor a = ops::createMatMulLhs(g, m, k, n, "a");
  Tensor b = ops::createMatMulRhs(g, m, k, n, "b");
  Tensor counter = g.addVariable(ElemType::Int32, {1}, "counter");
  g.setTileMapping(counter, 3);
  const int32_t three[1] = {3};
  g.setInitialValue(counter, three);
  Sequence prog, body;
  Tensor c = ops::matmul(g, a, b, prog, "mm");
  ops::scaledAddTo(g, c, c, 0.5f, body, "axpy");
  ComputeSet dec = g.addComputeSet("dec");
  VertexRef dv = g.addVertex(dec, "AddInt", {{"x", counter}});
  g.setFieldValue(dv, "delta", static_cast<uint32_t>(-1));
  g.setTileMapping(dv, 3);
  prog.add(RepeatWhile(Execute(dec), counter, body, "loop"));
  Compiled comp = compile(g, prog);
  const CompileReport& r = comp.report;

  // FLOPs: the matmul's multiply-adds (2 m k n) and the sums of its k split's partials; the
  // loop body's multiply-add per element; the integer decrement none.
  uint64_t mm = 0, axpy = 0, other = 0;
  int loopNode = -1;
  for (size_t i = 0; i < r.program.size(); ++i) {
    const ProgramNodeReport& node = r.program[i];
    if (node.kind == "RepeatWhile") loopNode = static_cast<int>(i);
    if (node.kind != "Execute") {
      EXPECT_EQ(node.flops, 0u) << node.kind << " " << node.name;
      continue;
    }
    EXPECT_LE(node.computeAfter, node.syncs.size()) << node.name;
    if (node.name.starts_with("mm")) {
      mm += node.flops;
    } else if (node.name == "axpy") {
      axpy += node.flops;
    } else {
      other += node.flops;
    }
  }
  EXPECT_EQ(mm, 2 * m * k * n + (plan.k - 1) * m * n) << "k split in " << plan.k;
  EXPECT_EQ(axpy, 2 * m * n);
  EXPECT_EQ(other, 0u);
  ASSERT_GE(loopNode, 0);
  ASSERT_EQ(r.program[loopNode].syncs.size(), 1u);  // the predicate's multicast
  const uint32_t predicate = r.exchanges.at(r.program[loopNode].syncs[0]).syncId;

  // Every exchange has its own id; the device reports them at its sync breaks.
  std::map<uint32_t, size_t> exchangeOfId;
  for (size_t i = 0; i < r.exchanges.size(); ++i) {
    EXPECT_TRUE(exchangeOfId.emplace(r.exchanges[i].syncId, i).second)
        << "sync id " << r.exchanges[i].syncId << " twice";
  }
  Engine e(*dev, comp.executable);
  std::vector<uint32_t> seen;
  e.setStopObserver([&](const RunResult& rr) {
    if (rr.reason == StopReason::SyncBreak) seen.push_back(rr.hostSyncId);
  });
  dev->setSyncBreak(true);
  ASSERT_EQ(e.run(50'000'000).reason, StopReason::Halted);
  size_t predicates = 0;
  for (uint32_t id : seen) {
    EXPECT_TRUE(exchangeOfId.count(id)) << "sync id " << id << " is not in the report";
    predicates += id == predicate;
  }
  // The condition decrements before the predicate is read: 2 and 1 go on, 0 ends the loop, so
  // the predicate's sync comes three times and the body runs twice.
  EXPECT_EQ(predicates, 3u);
}

// CompileReport::flopsOf: a node's Executes and, under a Repeat, its body times the count; a
// RepeatWhile's body once.
TEST(CompilerReport, FlopsOfANodeCountRepeats) {
  Graph g(Target{4, 65536, 6});
  Tensor x = ops::createLinear(g, ElemType::Float32, {8, 4}, "x");
  Tensor counter = g.addVariable(ElemType::Int32, {1}, "counter");
  g.setTileMapping(counter, 0);
  Sequence body, loopBody, prog;
  ops::scaledAddTo(g, x, x, 0.5f, body, "axpy");
  ops::scaledAddTo(g, x, x, 0.25f, loopBody, "axpy2");
  prog.add(Repeat(3, body, "three"));
  prog.add(RepeatWhile(Sequence(), counter, loopBody, "loop"));
  const CompileReport r = compile(g, prog).report;
  const int three = r.findNode("Repeat", "three"), loop = r.findNode("RepeatWhile", "loop");
  ASSERT_GE(three, 0);
  ASSERT_GE(loop, 0);
  EXPECT_EQ(r.findNode("Repeat", "none"), -1);
  EXPECT_EQ(r.flopsOf(size_t(three)), 3u * 2 * 32);  // 3 runs of 32 multiply-adds
  EXPECT_EQ(r.flopsOf(size_t(loop)), 2u * 32);
  EXPECT_EQ(r.flopsOf(0), 4u * 2 * 32);  // the root: both
  EXPECT_THROW(r.flopsOf(r.program.size()), Error);
}

TEST(CompilerErrors, AnOverflowingTileNamesItselfAndItsLargestUsers) {
  // 60,000 B over the stacks' 7 KiB does not fit whatever the (per-graph) codelet image.
  Graph g(Target{4, 65536, 6});
  Tensor big = g.addVariable(ElemType::Float32, {15000}, "weights");
  g.setTileMapping(big, 2);
  Tensor small = g.addVariable(ElemType::Float32, {10}, "bias");
  g.setTileMapping(small, 2);
  expectError([&] { compile(g, Sequence()); }, "tile 2 is out of memory");
  expectError([&] { compile(g, Sequence()); }, "tensor \"weights\" 60000 B");
}

TEST(CompilerErrors, AVariableLargerThanTheWholeChipIsRefusedWhenCreated) {
  // Refused by addVariable, before any per-element bookkeeping: the message names the variable,
  // its shape and the chip. Shapes whose element count overflows 64 bits are refused the same way.
  Graph g(Target{4, 65536, 6});
  g.addVariable(ElemType::Float32, {65536}, "exactly the chip");
  expectError([&] { g.addVariable(ElemType::Float32, {65537}, "x"); },
              "variable \"x\" [65537] needs 262148 bytes, more than the whole chip holds (4 "
              "tiles of 65536 bytes)");
  expectError(
      [&] {
        g.addVariable(ElemType::Int32, {60000, 784}, "images");
      },
      "variable \"images\" [60000,784] needs 188160000 bytes");
  expectError(
      [&] {
        g.addVariable(ElemType::Float32, {size_t{1} << 40, size_t{1} << 40}, "huge");
      },
      "needs more than 2^64 bytes");
}

// Views are built from runs of variable elements; each view below is checked against its
// definition element by element, on views of views whose runs are fragmented (a transposed
// concatenation of two variables), so that slicing, concatenating and broadcasting across run
// boundaries is exercised.
TEST(TensorViews, SlicesConcatenationsAndBroadcastsPickTheElementsTheyDefine) {
  Graph g(Target{4, 262144, 6});
  const Tensor a = g.addVariable(ElemType::Float32, {3, 4}, "a");
  const Tensor b = g.addVariable(ElemType::Float32, {2, 4}, "b");
  const Tensor ab = concat({a, b}, 0).transpose();  // [4, 5], one run per element
  const auto all = ab.elements();
  auto at = [&](size_t i, size_t j) { return all[i * 5 + j]; };
  for (size_t d = 0; d < 2; ++d) {
    for (size_t begin = 0; begin <= ab.dim(d); ++begin) {
      for (size_t end = begin; end <= ab.dim(d); ++end) {
        const auto got = ab.slice(begin, end, d).elements();
        std::vector<std::pair<uint32_t, uint32_t>> want;
        for (size_t i = 0; i < 4; ++i) {
          for (size_t j = 0; j < 5; ++j) {
            const size_t k = d == 0 ? i : j;
            if (k >= begin && k < end) want.push_back(at(i, j));
          }
        }
        EXPECT_EQ(got, want) << "slice [" << begin << ", " << end << ") of dimension " << d;
      }
    }
  }
  // Concatenation along 1 of [4, 2] and [4, 3] slices, and three copies along each dimension.
  const auto joined = concat({ab.slice(0, 2, 1), ab.slice(2, 5, 1)}, 1).elements();
  EXPECT_EQ(joined, all);
  const auto rows = ab.broadcast(3, 0).elements();
  ASSERT_EQ(rows.size(), 60u);
  for (size_t r = 0; r < 12; ++r) {
    for (size_t j = 0; j < 5; ++j) EXPECT_EQ(rows[r * 5 + j], at(r % 4, j));
  }
  const auto cols = ab.broadcast(3, 1).elements();
  ASSERT_EQ(cols.size(), 60u);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t c = 0; c < 15; ++c) EXPECT_EQ(cols[i * 15 + c], at(i, c % 5));
  }
  // A whole variable sliced keeps one run per contiguous piece: runs merge where they continue.
  const Tensor whole = g.addVariable(ElemType::Float32, {6, 7}, "whole");
  EXPECT_EQ(whole.slice(2, 5, 0).runs().size(), 1u);
  EXPECT_EQ(whole.slice(1, 3, 1).runs().size(), 6u);
  EXPECT_EQ(concat({whole.slice(0, 2, 0), whole.slice(2, 6, 0)}, 0).runs(), whole.runs());
}

TEST(CompilerErrors, BadConnectionsAreNamed) {
  Graph g(Target{4, 65536, 6});
  Tensor f = ops::createLinear(g, ElemType::Float32, {8}, "f");
  Tensor i = ops::createLinear(g, ElemType::Int32, {8}, "i");
  ComputeSet cs = g.addComputeSet("cs");
  expectError([&] { g.addVertex(cs, "NoSuchCodelet"); }, "unknown codelet \"NoSuchCodelet\"");
  VertexRef v = g.addVertex(cs, "Add");
  expectError([&] { g.connect(v, "c", f); }, "no field \"c\" (fields: a, b, out)");
  expectError([&] { g.connect(v, "a", i); }, "field \"a\" is float, tensor \"i\" is int32");
  VertexRef s = g.addVertex(cs, "Scale", {{"in", f}, {"out", f}});
  expectError([&] { g.setFieldValue(s, "scale", 2u); }, "field \"scale\" is float, got an integer");
  expectError([&] { g.connect(s, "scale", f); }, "field \"scale\" is a Param");
  g.connect(v, "a", f);
  g.connect(v, "b", f);
  g.connect(v, "out", f.slice(0, 4).broadcast(2, 0));
  g.setTileMapping(v, 0);
  g.setFieldValue(s, "scale", 2.0f);
  g.setTileMapping(s, 1);
  expectError([&] { compile(g, Execute(cs)); }, "output field \"out\" is connected to tensor");
  Graph g2(Target{4, 65536, 6});
  Tensor u = g2.addVariable(ElemType::Float32, {4}, "unmapped");
  expectError([&] { compile(g2, Sequence()); }, "tensor \"unmapped\": element 0 is not mapped");
  Tensor m = ops::createLinear(g2, ElemType::Float32, {4}, "m");
  ComputeSet cs2 = g2.addComputeSet("cs2");
  VertexRef r = g2.addVertex(cs2, "Relu", {{"in", m}});
  g2.setTileMapping(u, 0);
  g2.setTileMapping(r, 0);
  expectError([&] { compile(g2, Execute(cs2)); },
              "vertex 0 (Relu): field \"out\" is not connected");
  g2.connect(r, "out", u);
  VertexRef r2 = g2.addVertex(cs2, "Relu", {{"in", m}, {"out", u}});
  (void)r2;
  expectError([&] { compile(g2, Execute(cs2)); }, "vertex 1 (Relu): not mapped to a tile");
  expectError([&] { g2.setTileMapping(m, 4); }, "tile 4, but the target has 4 tiles");
  expectError([&] { Copy(m, ops::createLinear(g2, ElemType::Float32, {5}, "five")); }, "differ");
}

TEST(CompilerErrors, SharedOutputsMustBeWrittenInPlace) {
  Graph g(Target{4, 65536, 6});
  Tensor in = ops::createLinear(g, ElemType::Float32, {8}, "in");
  Tensor out = g.addVariable(ElemType::Float32, {8}, "out");
  g.setTileMapping(out, 1);
  ComputeSet cs = g.addComputeSet("cs");
  for (unsigned tile : {1u, 2u}) {  // the vertex on tile 2 would write out through a copy
    VertexRef v = g.addVertex(cs, "Relu", {{"in", in}, {"out", out}});
    g.setTileMapping(v, tile);
  }
  expectError([&] { compile(g, Execute(cs)); }, "also writes, and one of them is not in place");
}

// An exchange that cannot fit says why in the chip's terms, and names an address near 2^32 as
// a negative offset that wrapped (issue 29, item 10: "to tile 0 address 0xfff788c0").
TEST(ExchangeScheduler, AMessageThatDoesNotFitSaysWhy) {
  auto message = [](uint32_t src, uint32_t srcAddr, uint32_t dstTile, uint32_t dstAddr) {
    XMessage m;
    m.src = src;
    m.srcAddr = srcAddr;
    m.words = 4;
    m.dsts.push_back(XDest{dstTile, dstAddr, false});
    return m;
  };
  auto why = [](XMessage m) {
    try {
      scheduleExchange(4, 65536, {std::move(m)});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(why(message(1, 0, 0, 0xfff788c0)),
            "exchange: 4 words to tile 0 address 0xfff788c0: the address is beyond the tile's "
            "65536 bytes (a negative offset that wrapped)");
  EXPECT_EQ(why(message(1, 0, 0, 65528)),
            "exchange: 4 words to tile 0 address 0xfff8: 16 bytes from there end beyond the "
            "tile's 65536 bytes");
  EXPECT_EQ(why(message(1, 0, 7, 0)),
            "exchange: 4 words to tile 7 address 0x0: the chip has 4 tiles");
  EXPECT_EQ(why(message(1, 2, 0, 0)),
            "exchange: message of 4 words from tile 1 address 0x2: the address is not "
            "word-aligned");
  EXPECT_EQ(why(message(1, 0, 2, 256)), "accepted");
}

}  // namespace
}  // namespace tessera
