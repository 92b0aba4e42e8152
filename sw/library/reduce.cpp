#include <fmt/format.h>

#include <string_view>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

Tensor reduce(Graph& graph, const Tensor& x, size_t axis, const char* codelet, Sequence& prog,
              const std::string& name) {
  if (x.rank() != 2 || axis > 1 || x.elementType() != ElemType::Float32) {
    throw Error(
        fmt::format("{}: reduction of a 2-D float32 tensor along axis 0 or 1, got {} axis {}", name,
                    x.shapeString(), axis));
  }
  const size_t len = x.dim(1 - axis);
  Tensor out = createLinear(graph, ElemType::Float32, {len}, name);
  ComputeSet cs = graph.addComputeSet(name);
  if (axis == 0 && std::string(codelet) == "ReduceSum") {
    // One gathered [rows, width] input per tile, its columns split over the workers.
    for (const Chunk& c : tileChunks(graph, out, 1)) {
      const Tensor in = x.slice(c.begin, c.end, 1).flatten();
      const size_t width = c.end - c.begin;
      for (const Chunk& w : tileChunks(graph, out.slice(c.begin, c.end))) {
        VertexRef v =
            graph.addVertex(cs, "ReduceSumStrided",
                            {{"in", in}, {"out", out.slice(c.begin + w.begin, c.begin + w.end)}});
        graph.setFieldValue(v, "width", static_cast<uint32_t>(width));
        graph.setFieldValue(v, "offset", static_cast<uint32_t>(w.begin));
        graph.setFlops(v, uint64_t{w.end - w.begin} * (in.numElements() / width - 1));
        graph.setTileMapping(v, c.tile);
      }
    }
    prog.add(Execute(cs, name));
    return out;
  }
  for (const Chunk& c : tileChunks(graph, out)) {
    const Tensor in = axis == 0 ? x.slice(c.begin, c.end, 1) : x.slice(c.begin, c.end, 0);
    VertexRef v =
        graph.addVertex(cs, codelet, {{"in", in.flatten()}, {"out", out.slice(c.begin, c.end)}});
    // A sum adds n - 1 values per output (a maximum compares: no FLOPs).
    if (std::string_view(codelet) != "ReduceMax")
      graph.setFlops(v, in.numElements() - (c.end - c.begin));
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

}  // namespace

Tensor reduceSum(Graph& graph, const Tensor& x, size_t axis, Sequence& prog,
                 const std::string& name) {
  return reduce(graph, x, axis, axis == 0 ? "ReduceSum" : "ReduceSumRows", prog, name);
}

Tensor reduceMax(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name) {
  return reduce(graph, x, 0, "ReduceMax", prog, name);
}

}  // namespace tessera::ops
