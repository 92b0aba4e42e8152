#include <fmt/format.h>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

Tensor reduce(Graph& graph, const Tensor& x, size_t axis, const char* codelet, Sequence& prog, const std::string& name) {
  if (x.rank() != 2 || axis > 1 || x.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: reduction of a 2-D float32 tensor along axis 0 or 1, got {} axis {}", name,
                            x.shapeString(), axis));
  }
  const size_t len = x.dim(1 - axis);
  Tensor out = createLinear(graph, ElemType::Float32, {len}, name);
  ComputeSet cs = graph.addComputeSet(name);
  for (const Chunk& c : tileChunks(graph, out)) {
    const Tensor in = axis == 0 ? x.slice(c.begin, c.end, 1) : x.slice(c.begin, c.end, 0);
    VertexRef v = graph.addVertex(cs, codelet, {{"in", in.flatten()}, {"out", out.slice(c.begin, c.end)}});
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

}  // namespace

Tensor reduceSum(Graph& graph, const Tensor& x, size_t axis, Sequence& prog, const std::string& name) {
  return reduce(graph, x, axis, axis == 0 ? "ReduceSum" : "ReduceSumRows", prog, name);
}

Tensor reduceMax(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return reduce(graph, x, 0, "ReduceMax", prog, name);
}

}  // namespace tessera::ops
