// Dropout from a counter-based generator (docs/library.md, "dropout"): the mask of element i
// depends only on the seed tensor's (key, step), the op's stream and i.
#include <fmt/format.h>

#include <cmath>

#include "flops.hpp"
#include "rows.hpp"
#include "tessera/error.hpp"
#include "tessera/nn.hpp"

namespace tessera::ops {

Tensor createDropoutSeed(Graph& graph, uint32_t seed, const std::string& name) {
  Tensor t = graph.addVariable(ElemType::Int32, {2}, name);
  graph.setTileMapping(t, 0);
  const int32_t init[2] = {static_cast<int32_t>(seed), 0};
  graph.setInitialValue(t, std::span<const int32_t>(init, 2));
  return t;
}

void advanceDropoutSeed(Graph& graph, const Tensor& seed, Sequence& prog, const std::string& name) {
  if (!seed.valid() || seed.elementType() != ElemType::Int32 || seed.numElements() != 2)
    throw Error(
        fmt::format("{}: the seed must be an int32 tensor of 2 elements (key, step)", name));
  ComputeSet cs = graph.addComputeSet(name);
  const VertexRef v = graph.addVertex(cs, "AddInt", {{"x", seed.flatten().slice(1, 2)}});
  graph.setFieldValue(v, "delta", uint32_t{1});
  graph.setTileMapping(v, graph.tileMapping(seed.flatten().slice(1, 2))[0]);
  prog.add(Execute(cs, name));
}

Tensor dropout(Graph& graph, const Tensor& x, const Tensor& seed, float p, uint32_t stream,
               Sequence& prog, const std::string& name) {
  requireFloat(x, "input", name);
  if (!seed.valid() || seed.elementType() != ElemType::Int32 || seed.numElements() != 2) {
    throw Error(fmt::format(
        "{}: the seed must be an int32 tensor of 2 elements (key, step), got \"{}\" {}", name,
        seed.valid() ? seed.debugName() : "", seed.valid() ? seed.shapeString() : "(none)"));
  }
  if (!(p >= 0.0f && p <= 1.0f))
    throw Error(fmt::format("{}: dropout probability {} is not in [0, 1]", name, p));
  if (x.numElements() > 0xFFFFFFFFull)
    throw Error(fmt::format("{}: \"{}\" has more than 2^32 elements", name, x.debugName()));
  // Kept when the element's word >= p 2^32; p = 1 drops all (scale 0 zeroes the one word in 2^32
  // that would pass).
  const uint32_t threshold =
      p >= 1.0f ? 0xFFFFFFFFu
                : static_cast<uint32_t>(std::floor(static_cast<double>(p) * 4294967296.0));
  const float scale = p >= 1.0f ? 0.0f : 1.0f / (1.0f - p);
  const Tensor out = cloneMapped(graph, x, ElemType::Float32, name);
  ComputeSet cs = graph.addComputeSet(name);
  const Tensor fx = x.flatten(), fo = out.flatten(), fs = seed.flatten();
  for (const Chunk& c : tileChunks(graph, out)) {
    VertexRef v = graph.addVertex(
        cs, "Dropout",
        {{"in", fx.slice(c.begin, c.end)}, {"seed", fs}, {"out", fo.slice(c.begin, c.end)}});
    graph.setFieldValue(v, "offset", static_cast<uint32_t>(c.begin));
    graph.setFieldValue(v, "stream", stream);
    graph.setFieldValue(v, "threshold", threshold);
    graph.setFieldValue(v, "scale", scale);
    setElementwiseFlops(graph, v, "Dropout", c.end - c.begin);
    graph.setTileMapping(v, c.tile);
  }
  prog.add(Execute(cs, name));
  return out;
}

Tensor dropoutBackward(Graph& graph, const Tensor& grad, const Tensor& seed, float p,
                       uint32_t stream, Sequence& prog, const std::string& name) {
  // The mask is a function of the element index, so the gradient is the same op on grad.
  return dropout(graph, grad, seed, p, stream, prog, name);
}

}  // namespace tessera::ops
