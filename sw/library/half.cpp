// float16 casts (docs/library.md, "fp16 tensors, casts and matmul"); the float16 product is in
// matmul.cpp beside the float32 one, whose plan and vertices it shares.
#include "tessera/half.hpp"

#include <fmt/format.h>

#include "tessera/error.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

namespace {

void requireUnit(const Graph& graph, const std::string& name) {
  if (!graph.target().hasMatrixUnit) {
    throw Error(
        fmt::format("{}: float16 casts need the matrix unit's conversions (the target has "
                    "none)",
                    name));
  }
}

// One vertex of codelet per chunk of t's tiles (pairs of elements: float16 moves in words), out
// mapped like t; seed != 0: the stochastic cast, each vertex with its own seed.
Tensor castChunks(Graph& graph, const Tensor& t, ElemType type, const char* codelet,
                  const char* inField, const char* outField, std::optional<uint32_t> seed,
                  Sequence& prog, const std::string& name) {
  if (t.numElements() % 2 != 0) {
    throw Error(
        fmt::format("{}: a cast to or from float16 takes an even number of elements "
                    "(float16 moves in pairs), \"{}\" has {}",
                    name, t.debugName(), t.numElements()));
  }
  const Tensor out = cloneMapped(graph, t, type, name);
  ComputeSet cs = graph.addComputeSet(name);
  const std::vector<Tensor> flats = inStorageOrder(graph, {out, t});
  uint32_t v = 0;
  for (const Chunk& c : tileChunks(graph, flats[0], kPerContext, 2)) {
    VertexRef vx = graph.addVertex(
        cs, codelet,
        {{inField, flats[1].slice(c.begin, c.end)}, {outField, flats[0].slice(c.begin, c.end)}});
    graph.setTileMapping(vx, c.tile);
    if (seed) graph.setFieldValue(vx, "seed", castStochasticSeed(*seed, v));
    ++v;
  }
  prog.add(Execute(cs, name));
  return out;
}

}  // namespace

uint32_t castStochasticSeed(uint32_t seed, uint32_t v) {
  // A 32-bit mix (the finaliser of MurmurHash3) of the seed and the vertex number, so that
  // neighbouring vertices do not share generator states; never 0.
  uint32_t h = seed ^ (v * 0x9e3779b9u);
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h ? h : 1u;
}

Tensor cast(Graph& graph, const Tensor& t, ElemType type, Sequence& prog, const std::string& name) {
  if (t.elementType() == type) return t;
  if (t.elementType() == ElemType::Float32 && type == ElemType::Float16) {
    requireUnit(graph, name);
    return castChunks(graph, t, type, "CastToHalf", "in", "out", std::nullopt, prog, name);
  }
  if (t.elementType() == ElemType::Float16 && type == ElemType::Float32) {
    requireUnit(graph, name);
    return castChunks(graph, t, type, "CastToFloat", "in", "out", std::nullopt, prog, name);
  }
  throw Error(fmt::format("{}: no cast from {} to {} (\"{}\")", name, elemTypeName(t.elementType()),
                          elemTypeName(type), t.debugName()));
}

Tensor transposeHalf(Graph& graph, const Tensor& t, Sequence& prog, const std::string& name) {
  if (t.rank() != 2 || t.elementType() != ElemType::Float16) {
    throw Error(fmt::format("{}: transposeHalf takes a 2-D float16 tensor, \"{}\" is {} {}", name,
                            t.debugName(), elemTypeName(t.elementType()), t.shapeString()));
  }
  const Tensor wide = cast(graph, t, ElemType::Float32, prog, name + "/widen");
  const Tensor moved = createLinear(graph, ElemType::Float32, {t.dim(1), t.dim(0)}, name, 2);
  prog.add(Copy(wide.transpose(), moved, name + "/move"));
  return cast(graph, moved, ElemType::Float16, prog, name + "/narrow");
}

Tensor castStochastic(Graph& graph, const Tensor& t, uint32_t seed, Sequence& prog,
                      const std::string& name) {
  if (t.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: a stochastic cast takes float32, \"{}\" is {}", name,
                            t.debugName(), elemTypeName(t.elementType())));
  }
  requireUnit(graph, name);
  return castChunks(graph, t, ElemType::Float16, "CastToHalfSR", "in", "out", seed, prog, name);
}

}  // namespace tessera::ops
