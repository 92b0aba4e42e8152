// Embedding lookup and its scatter-add gradient (docs/library.md, "embedding"): the table is split
// by columns over the tiles, so that each tile answers every index for its own columns (the
// indices are data on the device; a split by rows would need to know them at compile time).
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "rows.hpp"
#include "tessera/error.hpp"
#include "tessera/nn.hpp"

namespace tessera::ops {

namespace {

// Columns [begin, end) of part p of dim split into parts.
std::pair<size_t, size_t> columnPart(size_t dim, size_t parts, size_t p) {
  return {dim * p / parts, dim * (p + 1) / parts};
}

size_t columnParts(const Graph& graph, size_t dim) {
  return std::max<size_t>(1, std::min<size_t>(graph.target().tiles, dim));
}

void mapByColumns(Graph& graph, const Tensor& t) {
  const size_t dim = t.dim(1), parts = columnParts(graph, dim);
  for (size_t p = 0; p < parts; ++p) {
    const auto [d0, d1] = columnPart(dim, parts, p);
    if (d0 < d1 && t.dim(0) > 0) graph.setTileMapping(t.slice(d0, d1, 1), static_cast<unsigned>(p));
  }
}

void checkIndices(const Tensor& indices, const std::string& name) {
  if (!indices.valid() || indices.elementType() != ElemType::Int32 || indices.numElements() == 0) {
    throw Error(fmt::format("{}: indices must be a non-empty int32 tensor, got \"{}\" {} {}", name,
                            indices.valid() ? indices.debugName() : "",
                            indices.valid() ? elemTypeName(indices.elementType()) : "(none)",
                            indices.valid() ? indices.shapeString() : ""));
  }
}

// One compute set of `codelet` vertices over column blocks: per tile, up to one vertex per context
// sharing the tile's blocks of `in` and `out`, each on its own columns.
void columnVertices(Graph& graph, const char* codelet, const Tensor& in, const char* inField,
                    const Tensor& indices, const Tensor& out, size_t vocab, Sequence& prog,
                    const std::string& name) {
  const size_t dim = out.dim(1), parts = columnParts(graph, dim);
  ComputeSet cs = graph.addComputeSet(name);
  for (size_t p = 0; p < parts; ++p) {
    const auto [d0, d1] = columnPart(dim, parts, p);
    const size_t width = d1 - d0;
    if (width == 0) continue;
    const Tensor inBlock = in.slice(d0, d1, 1).flatten(), outBlock = out.slice(d0, d1, 1).flatten();
    const size_t workers = std::min<size_t>(width, graph.target().contexts);
    for (size_t w = 0; w < workers; ++w) {
      const auto [c0, c1] = columnPart(width, workers, w);
      VertexRef v = graph.addVertex(
          cs, codelet, {{inField, inBlock}, {"indices", indices.flatten()}, {"out", outBlock}});
      graph.setFieldValue(v, "width", static_cast<uint32_t>(width));
      graph.setFieldValue(v, "col", static_cast<uint32_t>(c0));
      graph.setFieldValue(v, "cols", static_cast<uint32_t>(c1 - c0));
      graph.setFieldValue(v, "vocab", static_cast<uint32_t>(vocab));
      // A lookup moves rows; the gradient adds each index's row into the table.
      if (std::string_view(codelet) == "EmbeddingGrad")
        graph.setFlops(v, uint64_t{c1 - c0} * indices.numElements());
      graph.setTileMapping(v, static_cast<unsigned>(p));
    }
  }
  prog.add(Execute(cs, name));
}

}  // namespace

Tensor createEmbeddingTable(Graph& graph, size_t vocab, size_t dim, const std::string& name) {
  Tensor t = graph.addVariable(ElemType::Float32, {vocab, dim}, name);
  mapByColumns(graph, t);
  return t;
}

Tensor embedding(Graph& graph, const Tensor& table, const Tensor& indices, Sequence& prog,
                 const std::string& name) {
  requireFloat(table, "table", name);
  if (table.rank() != 2) {
    throw Error(fmt::format("{}: the table \"{}\" must be [vocab, dim], is {}", name,
                            table.debugName(), table.shapeString()));
  }
  checkIndices(indices, name);
  const size_t rows = indices.numElements(), dim = table.dim(1);
  Tensor out = graph.addVariable(ElemType::Float32, {rows, dim}, name);
  mapByColumns(graph, out);
  columnVertices(graph, "EmbeddingLookup", table, "table", indices, out, table.dim(0), prog, name);
  std::vector<size_t> shape = indices.shape();
  shape.push_back(dim);
  return out.reshape(shape);
}

Tensor embeddingBackward(Graph& graph, const Tensor& grad, const Tensor& indices, size_t vocab,
                         Sequence& prog, const std::string& name) {
  requireFloat(grad, "gradient", name);
  checkIndices(indices, name);
  const size_t rows = indices.numElements();
  bool ok = grad.rank() == indices.rank() + 1;
  for (size_t d = 0; ok && d < indices.rank(); ++d) ok = grad.dim(d) == indices.dim(d);
  if (!ok) {
    throw Error(fmt::format("{}: the gradient \"{}\" {} must be the indices' shape {} plus [dim]",
                            name, grad.debugName(), grad.shapeString(), indices.shapeString()));
  }
  const size_t dim = grad.dim(grad.rank() - 1);
  Tensor table = createEmbeddingTable(graph, vocab, dim, name);
  columnVertices(graph, "EmbeddingGrad", grad.reshape({rows, dim}), "grad", indices, table, vocab,
                 prog, name);
  return table;
}

}  // namespace tessera::ops
