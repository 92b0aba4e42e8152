// Merged compute sets (docs/compiler.md, "Merged compute sets"): which Executes join an earlier
// one's superstep and which may not, and that a merged program computes the same bits as the
// program run one compute set after the other, in fewer cycles.
#include "superstep_merge.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <functional>

#include "tessera/compiler.hpp"
#include "tessera/engine.hpp"
#include "tessera/ops.hpp"

namespace tessera {
namespace {

constexpr ElemType F32 = ElemType::Float32;

// The Executes of a compiled program in order, by their report names ("a + b" when merged).
std::vector<std::string> executes(const CompileReport& r) {
  std::vector<std::string> names;
  for (const ProgramNodeReport& n : r.program) {
    if (n.kind == "Execute") names.push_back(n.name);
  }
  return names;
}

// The tensors exposed as out0, out1, ... after a run on a 4-tile model, and the run's cycles.
struct MergeRun {
  CompileReport report;
  uint64_t cycles = 0;
  std::vector<std::vector<uint32_t>> outs;
};

MergeRun compileAndRun(const std::function<void(Graph&, Sequence&)>& build, bool merge,
                       unsigned outs) {
  Graph g(Target{4, 65536, 6});
  Sequence prog;
  build(g, prog);
  CompileOptions o;
  o.mergeComputeSets = merge;
  Compiled c = compile(g, prog, o);
  DeviceOptions d;
  d.tiles = 4;
  auto dev = openDevice("model", d);
  Engine e(*dev, c.executable);
  MergeRun r{c.report, 0, {}};
  const RunResult rr = e.run(50'000'000);
  EXPECT_EQ(rr.reason, StopReason::Halted);
  r.cycles = rr.cycles;
  for (unsigned i = 0; i < outs; ++i) {
    const std::vector<uint8_t> bytes = e.readTensor(fmt::format("out{}", i));
    std::vector<uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), bytes.size());
    r.outs.push_back(std::move(words));
  }
  return r;
}

Tensor input(Graph& g, const std::string& name, float base) {
  Tensor t = ops::createLinear(g, F32, {96}, name);
  std::vector<float> v(96);
  for (size_t i = 0; i < v.size(); ++i) v[i] = base + 0.25f * static_cast<float>(i);
  g.setInitialValue(t, v);
  return t;
}

// Two results whose inputs need exchanges (b rotated by a quarter, so each tile gathers another
// tile's part) and a third chained after the first: the second joins the first's superstep, the
// third waits for the first.
TEST(SuperstepMerge, IndependentExecutesShareASuperstep) {
  const auto build = [](Graph& g, Sequence& prog) {
    Tensor a = input(g, "a", 1.0f), b = input(g, "b", -3.0f), c = input(g, "c", 0.5f);
    Tensor bRot = concat({b.slice(24, 96), b.slice(0, 24)}, 0);
    Tensor x = ops::add(g, a, bRot, prog, "x");
    Tensor y = ops::mul(g, c, bRot, prog, "y");
    Tensor z = ops::scale(g, x, 1.5f, prog, "z");
    g.exposeTensor("out0", x);
    g.exposeTensor("out1", y);
    g.exposeTensor("out2", z);
  };
  const MergeRun apart = compileAndRun(build, false, 3), merged = compileAndRun(build, true, 3);
  if (HasFailure()) return;
  EXPECT_EQ(executes(apart.report), (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_EQ(executes(merged.report), (std::vector<std::string>{"x + y", "z"}));
  EXPECT_EQ(merged.report.computeSets, apart.report.computeSets);
  EXPECT_EQ(merged.report.mergedComputeSets, 1u);
  EXPECT_FALSE(merged.report.mergedDidNotFit);
  EXPECT_LT(merged.report.syncs, apart.report.syncs);
  EXPECT_EQ(merged.outs, apart.outs);
  EXPECT_LT(merged.cycles, apart.cycles);
}

// An Execute does not move before a step that writes what it reads (x then z = 2x), that reads
// what it writes (y reads a, then a += b), or that writes what it writes (a += b, a += c).
TEST(SuperstepMerge, DependentExecutesStayApart) {
  const auto build = [](Graph& g, Sequence& prog) {
    Tensor a = input(g, "a", 1.0f), b = input(g, "b", -3.0f), c = input(g, "c", 0.5f);
    Tensor x = ops::scale(g, b, 2.0f, prog, "x");
    Tensor z = ops::scale(g, x, 2.0f, prog, "z");   // reads x
    Tensor y = ops::mul(g, a, z, prog, "y");        // reads z
    ops::scaledAddTo(g, a, b, 1.0f, prog, "a+=b");  // writes what y reads
    ops::scaledAddTo(g, a, c, 1.0f, prog, "a+=c");  // writes what a+=b writes
    g.exposeTensor("out0", a);
    g.exposeTensor("out1", y);
  };
  const MergeRun apart = compileAndRun(build, false, 2), merged = compileAndRun(build, true, 2);
  if (HasFailure()) return;
  EXPECT_EQ(executes(merged.report), executes(apart.report));
  EXPECT_EQ(merged.outs, apart.outs);
}

// Nothing moves across a stream copy or into or out of a loop; a copy that writes what an
// Execute reads keeps it after the copy, one that does not lets it pass.
TEST(SuperstepMerge, StreamsLoopsAndCopiesAreRespected) {
  Graph g(Target{4, 65536, 6});
  Tensor a = input(g, "a", 1.0f), b = input(g, "b", 2.0f), c = input(g, "c", 3.0f);
  Tensor d = input(g, "d", 4.0f);
  Sequence prog, body;
  ops::scale(g, a, 2.0f, prog, "before-stream");
  prog.add(Copy(g.addHostToDeviceFIFO("in", F32, 96), d, "in"));
  ops::scale(g, b, 2.0f, prog, "after-stream");
  ops::scale(g, c, 2.0f, body, "in-loop");
  prog.add(Repeat(2, body, "loop"));
  ops::scale(g, c, 3.0f, prog, "after-loop");
  prog.add(Copy(a, b, "b=a"));
  ops::scale(g, d, 5.0f, prog, "reads-d");
  ops::scale(g, b, 4.0f, prog, "reads-b");
  const MergedProgram m = mergeComputeSets(g, *prog.node());
  std::vector<std::string> order;
  for (const auto& n : m.root->children) {
    order.push_back(n->kind == ProgramKind::Repeat ? "loop" : n->name);
  }
  // "reads-d" passes the copy and joins "after-loop"; "reads-b" may not pass it.
  EXPECT_EQ(order, (std::vector<std::string>{"before-stream", "in", "after-stream", "loop",
                                             "after-loop + reads-d", "b=a", "reads-b"}));
}

// A merged Execute is named after its first four sets and the count of the others.
TEST(SuperstepMerge, ManySetsNameTheirFirstFour) {
  Graph g(Target{4, 65536, 6});
  Sequence prog;
  for (int i = 0; i < 7; ++i) {
    ops::scale(g, input(g, fmt::format("in{}", i), 1.0f), 2.0f, prog, fmt::format("s{}", i));
  }
  const MergedProgram m = mergeComputeSets(g, *prog.node());
  ASSERT_EQ(m.root->children.size(), 1u);
  EXPECT_EQ(m.root->children[0]->name, "s0 + s1 + s2 + s3 + 3 more");
  EXPECT_EQ(m.sets.at(m.root->children[0].get()).size(), 7u);
}

// A compute set run twice runs twice, even one that writes nothing (here: no vertices at all).
TEST(SuperstepMerge, AComputeSetRunTwiceStaysTwoSteps) {
  Graph g(Target{4, 65536, 6});
  const ComputeSet empty = g.addComputeSet("empty");
  Sequence prog;
  prog.add(Execute(empty));
  prog.add(Execute(empty));
  EXPECT_EQ(mergeComputeSets(g, *prog.node()).root->children.size(), 2u);
}

// A codelet declared TESSERA_EXCLUSIVE_VERTEX (the unit's product) shares no tile with another
// compute set's vertices; on other tiles the sets merge.
TEST(SuperstepMerge, ExclusiveVerticesKeepTheirTiles) {
  Graph g(Target{4, 65536, 6});
  EXPECT_TRUE(g.codelet("MatMulAmp").exclusive);
  EXPECT_TRUE(g.codelet("CastToHalfSR").exclusive);
  EXPECT_FALSE(g.codelet("Scale").exclusive);
  EXPECT_FALSE(g.codelet("CastToHalf").exclusive);
  const auto program = [&](unsigned scaleTile) {
    Tensor m = g.addVariable(F32, {16}, fmt::format("m{}", scaleTile));
    Tensor s = g.addVariable(ElemType::Int32, {1}, fmt::format("sync{}", scaleTile));
    Tensor in = g.addVariable(F32, {4}, fmt::format("in{}", scaleTile));
    Tensor out = g.addVariable(F32, {4}, fmt::format("out{}", scaleTile));
    g.setTileMapping(m, 0);
    g.setTileMapping(s, 0);
    g.setTileMapping(in, scaleTile);
    g.setTileMapping(out, scaleTile);
    ComputeSet amp = g.addComputeSet(fmt::format("amp{}", scaleTile));
    ComputeSet scale = g.addComputeSet(fmt::format("scale{}", scaleTile));
    VertexRef v = g.addVertex(
        amp, "MatMulAmp",
        {{"a", m.slice(0, 4)}, {"b", m.slice(4, 8)}, {"c", m.slice(8, 16)}, {"sync", s}});
    g.setTileMapping(v, 0);
    VertexRef w = g.addVertex(scale, "Scale", {{"in", in}, {"out", out}});
    g.setTileMapping(w, scaleTile);
    Sequence prog;
    prog.add(Execute(amp));
    prog.add(Execute(scale));
    return prog;
  };
  EXPECT_EQ(mergeComputeSets(g, *program(0).node()).root->children.size(), 2u);
  const MergedProgram apart = mergeComputeSets(g, *program(1).node());
  ASSERT_EQ(apart.root->children.size(), 1u);
  EXPECT_EQ(apart.root->children[0]->name, "amp1 + scale1");
  EXPECT_EQ(apart.sets.at(apart.root->children[0].get()).size(), 2u);
}

// Two independent Executes each gathering 16 KiB onto tile 0 fit one after the other but not in
// one superstep: compile() merges, runs out of memory, and compiles them apart.
TEST(SuperstepMerge, AProgramThatFitsOnlyApartIsCompiledApart) {
  const auto build = [](Graph& g, Sequence& prog) {
    const size_t n = 4 * 1024;
    for (int i = 0; i < 2; ++i) {
      Tensor src = g.addVariable(F32, {n}, fmt::format("src{}", i));
      Tensor dst = g.addVariable(F32, {n}, fmt::format("dst{}", i));
      g.setTileMapping(src, 1 + i);
      g.setTileMapping(dst, 0);
      ComputeSet cs = g.addComputeSet(fmt::format("gather{}", i));
      VertexRef v = g.addVertex(cs, "Scale", {{"in", src}, {"out", dst}});
      g.setFieldValue(v, "scale", 1.0f);
      g.setTileMapping(v, 0);
      prog.add(Execute(cs));
    }
  };
  Graph g(Target{4, 65536, 6});
  Sequence prog;
  build(g, prog);
  CompileOptions apart;
  apart.mergeComputeSets = false;
  const Compiled a = compile(g, prog, apart);
  EXPECT_EQ(executes(a.report), (std::vector<std::string>{"gather0", "gather1"}));
  const MergedProgram m = mergeComputeSets(g, *prog.node());
  ASSERT_EQ(m.root->children.size(), 1u);  // the pass would merge them
  const Compiled c = compile(g, prog);
  EXPECT_EQ(executes(c.report), executes(a.report));
  EXPECT_TRUE(c.report.mergedDidNotFit);
  EXPECT_EQ(c.report.mergedComputeSets, 0u);
  EXPECT_FALSE(a.report.mergedDidNotFit);

  // A program that fits in no way is refused as out of memory, merged or not.
  Graph big(Target{4, 65536, 6});
  Sequence bigProg;
  Tensor src = big.addVariable(F32, {16 * 1024}, "src");
  Tensor dst = big.addVariable(F32, {16 * 1024}, "dst");
  big.setTileMapping(src, 1);
  big.setTileMapping(dst, 0);
  const ComputeSet cs = big.addComputeSet("too-big");
  VertexRef v = big.addVertex(cs, "Scale", {{"in", src}, {"out", dst}});
  big.setFieldValue(v, "scale", 1.0f);
  big.setTileMapping(v, 0);
  bigProg.add(Execute(cs));
  EXPECT_THROW(compile(big, bigProg), OutOfMemoryError);
}

}  // namespace
}  // namespace tessera
