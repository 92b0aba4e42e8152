#include <fmt/format.h>

#include <algorithm>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::ops {

void mapLinearly(Graph& graph, const Tensor& t, size_t grain) {
  if (grain == 0) grain = 1;
  const size_t n = t.numElements();
  const size_t tiles = graph.target().tiles;
  const size_t grains = (n + grain - 1) / grain;
  const size_t perTile = (grains + tiles - 1) / tiles;
  const Tensor flat = t.flatten();
  for (size_t tile = 0, begin = 0; begin < n; ++tile) {
    const size_t end = std::min(n, begin + perTile * grain);
    graph.setTileMapping(flat.slice(begin, end), static_cast<unsigned>(tile));
    begin = end;
  }
}

Tensor createLinear(Graph& graph, ElemType type, std::vector<size_t> shape, const std::string& name,
                    size_t grain) {
  Tensor t = graph.addVariable(type, std::move(shape), name);
  mapLinearly(graph, t, grain);
  return t;
}

}  // namespace tessera::ops
