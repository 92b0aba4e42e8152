// FLOPs the library's vertices declare (docs/compiler.md, "FLOPs"), so that reports can give
// FLOPs and efficiency per compute set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tessera/graph.hpp"

namespace tessera::ops {

/// Floating-point operations per output element of an element-by-element codelet: the arithmetic
/// of its formula, a multiply-add 2 and a function (exp, tanh, erf ...) 1; moves, compares and
/// integer codelets 0, and so does a codelet the table does not know (a user's own codelet says
/// its FLOPs with Graph::setFlops).
uint64_t elementFlops(std::string_view codelet);

/// v runs an element-by-element codelet over `elements` output elements.
inline void setElementwiseFlops(Graph& graph, VertexRef v, std::string_view codelet,
                                size_t elements) {
  graph.setFlops(v, elementFlops(codelet) * elements);
}

}  // namespace tessera::ops
