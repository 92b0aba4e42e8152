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
  const size_t m = t.dim(0), n = t.dim(1);
  if (m % 2 != 0 || n % 2 != 0) {
    throw Error(
        fmt::format("{}: transposeHalf needs both dimensions even (float16 moves in pairs of "
                    "elements), \"{}\" is {}",
                    name, t.debugName(), t.shapeString()));
  }
  requireUnit(graph, name);
  // The result [n, m] in pairs of whole rows per tile; each tile gathers its columns of t (pairs
  // of whole words from each of t's rows) and transposes them with TransposeHalf vertices, its
  // rows shared among the contexts.
  const Tensor out = createLinear(graph, ElemType::Float16, {n, m}, name, 2 * m);
  const std::vector<int32_t> map = graph.tileMapping(out.slice(0, 1, 1).flatten());
  ComputeSet cs = graph.addComputeSet(name);
  const size_t contexts = graph.target().contexts;
  for (size_t r0 = 0; r0 < n;) {
    size_t r1 = r0 + 1;
    while (r1 < n && map[r1] == map[r0]) ++r1;
    const size_t w = r1 - r0, parts = std::min(w, contexts);
    const Tensor in = t.slice(r0, r1, 1).flatten();
    for (size_t p = 0; p < parts; ++p) {
      const size_t q0 = w * p / parts, q1 = w * (p + 1) / parts;
      if (q0 == q1) continue;
      VertexRef vx = graph.addVertex(
          cs, "TransposeHalf", {{"in", in}, {"out", out.slice(r0 + q0, r0 + q1, 0).flatten()}});
      graph.setFieldValue(vx, "rows", static_cast<uint32_t>(w));
      graph.setFieldValue(vx, "cols", static_cast<uint32_t>(m));
      graph.setFieldValue(vx, "row", static_cast<uint32_t>(q0));
      graph.setTileMapping(vx, static_cast<unsigned>(map[r0]));
    }
    r0 = r1;
  }
  prog.add(Execute(cs, name));
  return out;
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
