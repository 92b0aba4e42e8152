#include "rows.hpp"

#include <fmt/format.h>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::ops {

namespace {

std::vector<size_t> axisLastPerm(size_t rank, size_t axis) {
  std::vector<size_t> perm;
  for (size_t d = 0; d < rank; ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  return perm;
}

}  // namespace

Tensor axisRows(const Tensor& x, size_t axis) {
  const size_t len = x.dim(axis);
  const Tensor moved = axis + 1 == x.rank() ? x : x.dimShuffle(axisLastPerm(x.rank(), axis));
  return moved.reshape({len == 0 ? 0 : x.numElements() / len, len});
}

Tensor fromAxisRows(const Tensor& rows, const std::vector<size_t>& shape, size_t axis) {
  if (axis + 1 == shape.size()) return rows.reshape(shape);
  const std::vector<size_t> perm = axisLastPerm(shape.size(), axis);
  std::vector<size_t> moved, inverse(shape.size());
  for (size_t i = 0; i < perm.size(); ++i) moved.push_back(shape[perm[i]]), inverse[perm[i]] = i;
  return rows.reshape(moved).dimShuffle(inverse);
}

Tensor createRows(Graph& graph, size_t rows, size_t length, const std::string& name) {
  return createLinear(graph, ElemType::Float32, {rows, length}, name, length);
}

std::vector<RowChunk> rowChunks(const Graph& graph, const Tensor& rows) {
  const size_t len = rows.dim(1);
  std::vector<RowChunk> out;
  for (const Chunk& c : tileChunks(graph, rows, kPerContext, len))
    out.push_back({c.tile, c.begin / len, c.end / len});
  return out;
}

void requireFloat(const Tensor& t, const std::string& what, const std::string& name) {
  if (!t.valid()) throw Error(fmt::format("{}: {} is not a tensor", name, what));
  if (t.elementType() != ElemType::Float32) {
    throw Error(fmt::format("{}: {} \"{}\" {} must be float32, is {}", name, what, t.debugName(),
                            t.shapeString(), elemTypeName(t.elementType())));
  }
}

void requireSameShape(const Tensor& a, const Tensor& b, const std::string& name) {
  if (a.shape() != b.shape()) {
    throw Error(fmt::format("{}: shapes {} (\"{}\") and {} (\"{}\") differ", name, a.shapeString(),
                            a.debugName(), b.shapeString(), b.debugName()));
  }
}

}  // namespace tessera::ops
