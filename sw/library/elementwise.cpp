#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "flops.hpp"
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

Tensor cloneMapped(Graph& graph, const Tensor& t, ElemType type, const std::string& name) {
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
  const Tensor flat = out.flatten();
  for (const Chunk& c : tileChunks(graph, out)) {
    std::vector<std::pair<std::string, Tensor>> conn;
    for (const auto& [field, t] : inputs)
      conn.emplace_back(field, t.flatten().slice(c.begin, c.end));
    conn.emplace_back(outField, flat.slice(c.begin, c.end));
    VertexRef v = graph.addVertex(cs, codelet, conn);
    graph.setTileMapping(v, c.tile);
    setElementwiseFlops(graph, v, codelet, c.end - c.begin);
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

Tensor addBias(Graph& graph, const Tensor& x, const Tensor& bias, Sequence& prog,
               const std::string& name) {
  if (x.rank() != 2 || bias.rank() != 1 || bias.dim(0) != x.dim(1)) {
    throw Error(fmt::format("{}: addBias needs x [rows, n] and bias [n], got {} and {}", name,
                            x.shapeString(), bias.shapeString()));
  }
  checkSame(x, x, name);
  checkSame(bias, bias, name);
  const size_t n = x.dim(1);
  const Tensor out = cloneMapped(graph, x, ElemType::Float32, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor flatOut = out.flatten(), flatX = x.flatten();
  Tensor rows;  // the bias element of every element of x, built once if a chunk needs it
  for (const Chunk& c : tileChunks(graph, out, kPerContext, n)) {
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

void fill(Graph& graph, const Tensor& t, float value, Sequence& prog, const std::string& name) {
  checkSame(t, t, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor flat = t.flatten();
  for (const Chunk& c : tileChunks(graph, t)) {
    VertexRef v = graph.addVertex(cs, "Fill", {{"out", flat.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "value", value);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
}

void scaledAddTo(Graph& graph, const Tensor& data, const Tensor& delta, float s, Sequence& prog,
                 const std::string& name) {
  checkSame(data, delta, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor fd = data.flatten(), fdelta = delta.flatten();
  for (const Chunk& c : tileChunks(graph, data)) {
    VertexRef v = graph.addVertex(
        cs, "ScaledAddTo",
        {{"data", fd.slice(c.begin, c.end)}, {"delta", fdelta.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "scale", s);
    setElementwiseFlops(graph, v, "ScaledAddTo", c.end - c.begin);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
}

}  // namespace tessera::ops
