#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "flops.hpp"
#include "tessera/chip_params.h"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

std::vector<Chunk> tileChunks(const Graph& graph, const Tensor& t, size_t perTile, size_t align) {
  if (perTile == kPerContext) perTile = graph.target().contexts;
  const std::vector<int32_t> map = graph.tileMapping(t);
  std::map<unsigned, std::vector<std::pair<size_t, size_t>>> runs;
  for (size_t i = 0; i < map.size();) {
    if (map[i] < 0)
      throw Error(fmt::format("tensor \"{}\": element {} is not mapped", t.debugName(), i));
    size_t j = i + 1;
    while (j < map.size() && map[j] == map[i]) ++j;
    runs[static_cast<unsigned>(map[i])].emplace_back(i, j);
    i = j;
  }
  std::vector<Chunk> out;
  for (auto& [tile, list] : runs) {
    size_t total = 0;
    for (auto& [b, e] : list) total += e - b;
    const size_t units = (total + align - 1) / align;
    const size_t target = std::max<size_t>(1, (units + perTile - 1) / perTile) * align;
    for (auto& [b, e] : list) {
      for (size_t s = b; s < e;) {
        const size_t end = std::min(e, s + target);
        out.push_back({tile, s, end});
        s = end;
      }
    }
  }
  return out;
}

namespace {

// The number of elements of variable var.
size_t variableSize(const Graph& graph, uint32_t var) {
  size_t n = 1;
  for (size_t d : graph.variables()[var].shape) n *= d;
  return n;
}

// True when t holds every element of one variable exactly once in another order than the
// variable's, and the variable is stored for the matrix unit (aligned to its 16 bytes: a weight
// that createMatMulRhs stores in the unit's layout, or its like). Other views (a transpose of a
// whole variable) keep the logical order, so graphs without the unit's layouts do not change.
bool permutedVariable(const Graph& graph, const Tensor& t) {
  const std::vector<ElementRun>& runs = t.runs();
  if (runs.size() < 2) return false;
  const uint32_t var = runs[0].var;
  if (graph.variables()[var].align < TESS_AMP_STEP_BYTES) return false;
  std::vector<std::pair<uint32_t, uint32_t>> spans;
  for (const ElementRun& r : runs) {
    if (r.var != var) return false;
    spans.emplace_back(r.begin, r.end);
  }
  std::sort(spans.begin(), spans.end());
  uint32_t next = 0;
  for (const auto& [b, e] : spans) {
    if (b != next) return false;
    next = e;
  }
  return next == variableSize(graph, var);
}

}  // namespace

std::vector<Tensor> inStorageOrder(const Graph& graph, const std::vector<Tensor>& ts) {
  bool same = !ts.empty() && permutedVariable(graph, ts[0]);
  for (size_t i = 1; i < ts.size() && same; ++i) {
    const std::vector<ElementRun>& a = ts[0].runs();
    const std::vector<ElementRun>& b = ts[i].runs();
    same = permutedVariable(graph, ts[i]) && a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](const ElementRun& x, const ElementRun& y) {
             return x.begin == y.begin && x.end == y.end;
           });
  }
  std::vector<Tensor> out;
  for (const Tensor& t : ts) {
    if (!same) {
      out.push_back(t.flatten());
      continue;
    }
    const uint32_t var = t.runs()[0].var;
    out.push_back(Tensor::ofVariable(graph.id(), t.elementType(), {variableSize(graph, var)}, var,
                                     t.debugName()));
  }
  return out;
}

namespace {

// True when t is all of one variable in the variable's own order.
bool wholeVariable(const Graph& graph, const Tensor& t) {
  const std::vector<ElementRun>& runs = t.runs();
  return runs.size() == 1 && runs[0].begin == 0 && runs[0].end == variableSize(graph, runs[0].var);
}

}  // namespace

std::vector<SpanChunk> spanChunks(const Graph& graph, const std::vector<Tensor>& flats,
                                  size_t perTile) {
  if (perTile == kPerContext) perTile = graph.target().contexts;
  const std::vector<Chunk> chunks = tileChunks(graph, flats[0], perTile);
  std::map<unsigned, size_t> count;
  for (const Chunk& c : chunks) ++count[c.tile];
  bool spans = graph.spanRuns() && std::any_of(count.begin(), count.end(),
                                               [&](auto& tc) { return tc.second > perTile; });
  for (size_t i = 0; i < flats.size() && spans; ++i) {
    spans = wholeVariable(graph, flats[i]) && graph.variables()[flats[i].runs()[0].var].tileOf ==
                                                  graph.variables()[flats[0].runs()[0].var].tileOf;
  }
  std::vector<SpanChunk> out;
  std::map<unsigned, std::vector<std::pair<size_t, size_t>>> packed;
  for (const Chunk& c : chunks) {
    if (spans && count[c.tile] > perTile) {
      auto& runs = packed[c.tile];
      if (!runs.empty() && runs.back().second == c.begin) {
        runs.back().second = c.end;
      } else {
        runs.emplace_back(c.begin, c.end);
      }
    } else {
      out.push_back({c.tile, {{c.begin, c.end}}});
    }
  }
  for (auto& [tile, runs] : packed) {
    size_t total = 0;
    for (auto& [b, e] : runs) total += e - b;
    const size_t target = (total + perTile - 1) / perTile;
    SpanChunk cur{tile, {}, true};
    size_t have = 0;
    for (auto [b, e] : runs) {
      while (b < e) {
        const size_t end = std::min(e, b + (target - have));
        cur.ranges.emplace_back(b, end);
        have += end - b;
        b = end;
        if (have == target) {
          out.push_back(std::move(cur));
          cur = SpanChunk{tile, {}, true};
          have = 0;
        }
      }
    }
    if (have) out.push_back(std::move(cur));
  }
  return out;
}

Tensor spanOf(const Tensor& flat, const SpanChunk& c) {
  if (c.ranges.size() == 1) return flat.slice(c.ranges[0].first, c.ranges[0].second);
  std::vector<Tensor> parts;
  for (const auto& [b, e] : c.ranges) parts.push_back(flat.slice(b, e));
  return concat(parts, 0);
}

size_t spanSize(const SpanChunk& c) {
  size_t n = 0;
  for (const auto& [b, e] : c.ranges) n += e - b;
  return n;
}

Tensor cloneMapped(Graph& graph, const Tensor& t, ElemType type, const std::string& name) {
  if (permutedVariable(graph, t)) {
    // The same storage: the same order, tiles and alignment, and the same view over it.
    const GraphVariable& from = graph.variables()[t.runs()[0].var];
    const std::vector<int32_t> map = from.tileOf;
    const uint32_t align = from.align;
    Tensor store = graph.addVariable(type, {map.size()}, name);
    for (size_t i = 0; i < map.size();) {
      if (map[i] < 0)
        throw Error(fmt::format("tensor \"{}\": element {} of its storage is not mapped",
                                t.debugName(), i));
      size_t j = i + 1;
      while (j < map.size() && map[j] == map[i]) ++j;
      graph.setTileMapping(store.slice(i, j), static_cast<unsigned>(map[i]));
      i = j;
    }
    if (align > 4) graph.setAlignment(store, align);
    std::vector<ElementRun> runs = t.runs();
    for (ElementRun& r : runs) r.var = store.runs()[0].var;
    return Tensor::fromRuns(graph.id(), type, t.shape(), runs, name);
  }
  Tensor out = graph.addVariable(type, t.shape(), name);
  const std::vector<int32_t> map = graph.tileMapping(t);
  const Tensor flat = out.flatten();
  for (size_t i = 0; i < map.size();) {
    if (map[i] < 0)
      throw Error(fmt::format("tensor \"{}\": element {} is not mapped", t.debugName(), i));
    size_t j = i + 1;
    while (j < map.size() && map[j] == map[i]) ++j;
    graph.setTileMapping(flat.slice(i, j), static_cast<unsigned>(map[i]));
    i = j;
  }
  return out;
}

Tensor elementwise(Graph& graph, const std::string& codelet,
                   const std::vector<std::pair<std::string, Tensor>>& inputs,
                   const std::string& outField, Sequence& prog, const std::string& name,
                   const std::function<void(VertexRef)>& params, const Tensor& like) {
  const Tensor out =
      cloneMapped(graph, like.valid() ? like : inputs[0].second, ElemType::Float32, name);
  elementwiseInto(graph, codelet, inputs, outField, out, prog, name, params);
  return out;
}

void elementwiseInto(Graph& graph, const std::string& codelet,
                     const std::vector<std::pair<std::string, Tensor>>& inputs,
                     const std::string& outField, const Tensor& out, Sequence& prog,
                     const std::string& name, const std::function<void(VertexRef)>& params) {
  ComputeSet cs = graph.addComputeSet(name);
  // Element by element, so in storage order where all share one (weights in the unit's layout).
  std::vector<Tensor> all{out};
  for (const auto& [field, t] : inputs) all.push_back(t);
  const std::vector<Tensor> flats = inStorageOrder(graph, all);
  const Tensor& flat = flats[0];
  for (const SpanChunk& c : spanChunks(graph, flats)) {
    std::vector<std::pair<std::string, Tensor>> conn;
    for (size_t i = 0; i < inputs.size(); ++i)
      conn.emplace_back(inputs[i].first, spanOf(flats[i + 1], c));
    conn.emplace_back(outField, spanOf(flat, c));
    VertexRef v = graph.addVertex(cs, codelet, conn);
    graph.setTileMapping(v, c.tile);
    setElementwiseFlops(graph, v, codelet, spanSize(c));
    if (params) params(v);
  }
  prog.add(Execute(cs, name));
}

namespace {

void checkSame(const Tensor& a, const Tensor& b, const std::string& name) {
  if (a.shape() != b.shape()) {
    throw Error(fmt::format("{}: shapes {} (\"{}\") and {} (\"{}\") differ", name, a.shapeString(),
                            a.debugName(), b.shapeString(), b.debugName()));
  }
  if (a.elementType() != ElemType::Float32 || b.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: float32 tensors expected", name));
  }
}

}  // namespace

Tensor add(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
           const std::string& name) {
  checkSame(a, b, name);
  return elementwise(graph, "Add", {{"a", a}, {"b", b}}, "out", prog, name);
}

Tensor sub(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
           const std::string& name) {
  checkSame(a, b, name);
  return elementwise(graph, "Sub", {{"a", a}, {"b", b}}, "out", prog, name);
}

Tensor mul(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
           const std::string& name) {
  checkSame(a, b, name);
  return elementwise(graph, "Mul", {{"a", a}, {"b", b}}, "out", prog, name);
}

Tensor scale(Graph& graph, const Tensor& a, float s, Sequence& prog, const std::string& name) {
  checkSame(a, a, name);
  return elementwise(graph, "Scale", {{"in", a}}, "out", prog, name,
                     [&](VertexRef v) { graph.setFieldValue(v, "scale", s); });
}

Tensor relu(Graph& graph, const Tensor& a, Sequence& prog, const std::string& name) {
  checkSame(a, a, name);
  return elementwise(graph, "Relu", {{"in", a}}, "out", prog, name);
}

Tensor reluGrad(Graph& graph, const Tensor& grad, const Tensor& act, Sequence& prog,
                const std::string& name) {
  checkSame(grad, act, name);
  return elementwise(graph, "ReluGrad", {{"grad", grad}, {"act", act}}, "out", prog, name);
}

Tensor clip(Graph& graph, const Tensor& a, float lo, float hi, Sequence& prog,
            const std::string& name) {
  checkSame(a, a, name);
  return elementwise(graph, "Clip", {{"in", a}}, "out", prog, name, [&](VertexRef v) {
    graph.setFieldValue(v, "lo", lo);
    graph.setFieldValue(v, "hi", hi);
  });
}

Tensor clipGrad(Graph& graph, const Tensor& grad, const Tensor& in, float lo, float hi,
                Sequence& prog, const std::string& name) {
  checkSame(grad, in, name);
  return elementwise(graph, "ClipGrad", {{"grad", grad}, {"in", in}}, "out", prog, name,
                     [&](VertexRef v) {
                       graph.setFieldValue(v, "lo", lo);
                       graph.setFieldValue(v, "hi", hi);
                     });
}

namespace {

// addBias, or with withRelu max(x + bias, 0) in one pass where every tile of x runs
// AddBiasReluFrom (an invalid tensor where it would not: the caller adds the relu).
Tensor addBiasImpl(Graph& graph, const Tensor& x, const Tensor& bias, Sequence& prog,
                   const std::string& name, bool withRelu) {
  if (x.rank() != 2 || bias.rank() != 1 || bias.dim(0) != x.dim(1)) {
    throw Error(fmt::format("{}: addBias needs x [rows, n] and bias [n], got {} and {}", name,
                            x.shapeString(), bias.shapeString()));
  }
  checkSame(x, x, name);
  checkSame(bias, bias, name);
  const size_t n = x.dim(1);
  const Tensor flatX = x.flatten();
  // A tile that holds x in column blocks (a product's result: runs of l < n elements over the
  // same columns [c0, c0 + l) of its rows) runs AddBiasFrom on spanChunks' chunks, which span
  // its runs: one chunk per context instead of one vertex per run.
  std::map<unsigned, std::pair<size_t, size_t>> blocks;  // tile -> (c0, l)
  {
    std::map<unsigned, std::vector<std::pair<size_t, size_t>>> runs;
    for (const Chunk& c : tileChunks(graph, x, 1)) runs[c.tile].emplace_back(c.begin, c.end);
    for (const auto& [tile, list] : runs) {
      const size_t c0 = list[0].first % n, l = list[0].second - list[0].first;
      bool same = l < n && c0 + l <= n;
      for (const auto& [b, e] : list) same = same && b % n == c0 && e - b == l;
      if (same) blocks[tile] = {c0, l};
    }
  }
  // The result is cloned from x, so it spans where x does.
  const std::vector<SpanChunk> chunks = spanChunks(graph, {flatX});
  if (withRelu) {
    std::set<unsigned> all, spans;
    for (const SpanChunk& c : chunks) {
      all.insert(c.tile);
      if (c.spans && blocks.count(c.tile)) spans.insert(c.tile);
    }
    if (all != spans) return {};
  }
  const Tensor out = cloneMapped(graph, x, ElemType::Float32, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor flatOut = out.flatten();
  std::set<unsigned> spanned;
  for (const SpanChunk& c : chunks) {
    auto it = blocks.find(c.tile);
    if (!c.spans || it == blocks.end()) continue;
    spanned.insert(c.tile);
    const auto [c0, l] = it->second;
    VertexRef v = graph.addVertex(
        cs, withRelu ? "AddBiasReluFrom" : "AddBiasFrom",
        {{"in", spanOf(flatX, c)}, {"bias", bias.slice(c0, c0 + l)}, {"out", spanOf(flatOut, c)}});
    graph.setFieldValue(v, "start", static_cast<uint32_t>(c.ranges[0].first % n - c0));
    graph.setFlops(v, (withRelu ? 2 : 1) * spanSize(c));
    graph.setTileMapping(v, c.tile);
  }
  Tensor rows;  // the bias element of every element of x, built once if a chunk needs it
  for (const Chunk& c : tileChunks(graph, out, kPerContext, n)) {
    if (spanned.count(c.tile)) continue;
    VertexRef v;
    if (c.begin % n == 0 && c.end % n == 0) {
      v = graph.addVertex(cs, "AddBias",
                          {{"in", flatX.slice(c.begin, c.end)},
                           {"bias", bias},
                           {"out", flatOut.slice(c.begin, c.end)}});
    } else {
      // A chunk that is not whole rows: the bias elements it needs, one per element.
      if (!rows.valid()) rows = bias.expand(0).broadcast(x.dim(0), 0).flatten();
      v = graph.addVertex(cs, "Add",
                          {{"a", flatX.slice(c.begin, c.end)},
                           {"b", rows.slice(c.begin, c.end)},
                           {"out", flatOut.slice(c.begin, c.end)}});
    }
    graph.setFlops(v, c.end - c.begin);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

}  // namespace

Tensor addBias(Graph& graph, const Tensor& x, const Tensor& bias, Sequence& prog,
               const std::string& name) {
  return addBiasImpl(graph, x, bias, prog, name, false);
}

Tensor addBiasRelu(Graph& graph, const Tensor& x, const Tensor& bias, Sequence& prog,
                   const std::string& name) {
  const Tensor out = addBiasImpl(graph, x, bias, prog, name, true);
  if (out.valid()) return out;
  return relu(graph, addBias(graph, x, bias, prog, name + "/bias"), prog, name);
}

namespace {

// One vertex of codelet per chunk of t's tiles, its field `field` the chunk and its float
// parameter `param` value: an op over t in place (fill, scaleInPlace); countFlops: the op's FLOPs
// go into the report.
void inPlaceChunks(Graph& graph, const Tensor& t, const char* codelet, const char* field,
                   const char* param, float value, bool countFlops, Sequence& prog,
                   const std::string& name) {
  checkSame(t, t, name);
  ComputeSet cs = graph.addComputeSet(name);
  // In storage order: a weight stored in the matrix unit's layout (or a gradient buffer like it)
  // is filled or scaled where it lies, not through a staging buffer and a local copy.
  const std::vector<Tensor> flats = inStorageOrder(graph, {t});
  for (const SpanChunk& c : spanChunks(graph, flats)) {
    VertexRef v = graph.addVertex(cs, codelet, {{field, spanOf(flats[0], c)}});
    graph.setFieldValue(v, param, value);
    if (countFlops) setElementwiseFlops(graph, v, codelet, spanSize(c));
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
}

}  // namespace

void fill(Graph& graph, const Tensor& t, float value, Sequence& prog, const std::string& name) {
  inPlaceChunks(graph, t, "Fill", "out", "value", value, false, prog, name);
}

void scaleInPlace(Graph& graph, const Tensor& t, float s, Sequence& prog, const std::string& name) {
  inPlaceChunks(graph, t, "ScaleInPlace", "data", "scale", s, true, prog, name);
}

void scaledAddTo(Graph& graph, const Tensor& data, const Tensor& delta, float s, Sequence& prog,
                 const std::string& name) {
  checkSame(data, delta, name);
  ComputeSet cs = graph.addComputeSet(name);
  const std::vector<Tensor> flats = inStorageOrder(graph, {data, delta});
  for (const SpanChunk& c : spanChunks(graph, flats)) {
    VertexRef v = graph.addVertex(cs, "ScaledAddTo",
                                  {{"data", spanOf(flats[0], c)}, {"delta", spanOf(flats[1], c)}});
    graph.setFieldValue(v, "scale", s);
    setElementwiseFlops(graph, v, "ScaledAddTo", spanSize(c));
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
}

}  // namespace tessera::ops
