// Row views shared by the layer builders (tessera/nn.hpp): an op along one axis of a tensor runs
// on rows of that axis, contiguous in a result variable of its own; the caller sees the result
// through the inverse view, in its own shape. Inputs are read through the same view and gathered
// by the compiler where they are not contiguous on the vertex's tile.
#pragma once

#include <string>
#include <vector>

#include "tessera/graph.hpp"
#include "tile_chunks.hpp"

namespace tessera::ops {

/// x as [numElements / dim(axis), dim(axis)]: the other dimensions in order, then axis.
Tensor axisRows(const Tensor& x, size_t axis);
/// The inverse of axisRows: rows [*, shape[axis]] viewed in shape.
Tensor fromAxisRows(const Tensor& rows, const std::vector<size_t>& shape, size_t axis);
/// A new float32 [rows, length] variable, whole rows on each tile (mapLinearly, grain length).
Tensor createRows(Graph& graph, size_t rows, size_t length, const std::string& name);
/// Chunks of whole rows of a createRows variable, up to one per context per tile: (tile, row begin,
/// row end).
struct RowChunk {
  unsigned tile = 0;
  size_t begin = 0;
  size_t end = 0;
};
std::vector<RowChunk> rowChunks(const Graph& graph, const Tensor& rows);
/// Throws, naming the op, unless t is float32.
void requireFloat(const Tensor& t, const std::string& what, const std::string& name);
/// Throws, naming the op and both tensors, unless a and b have one shape.
void requireSameShape(const Tensor& a, const Tensor& b, const std::string& name);

}  // namespace tessera::ops
