// Pad in ONNX's three modes (docs/library.md, "Pad"): the forward is copies on the tiles, the
// gradient adds each border's gradient into the elements it copies, in the order of the host
// reference nnref::pad / nnref::padGrad (tessera/nn_reference.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera::ops {

/// How pad fills the border (ONNX Pad's modes; PyTorch's constant, reflect and replicate padding).
enum class PadMode {
  Constant,  ///< the value
  Reflect,   ///< mirrored about the first and last element, which are not repeated
  Edge,      ///< the first and last element repeated
};

/// x with begin[d] elements before and end[d] after it along every dimension d, filled by mode
/// (value: Constant's); a new variable mapped linearly, made by copies (no arithmetic). Reflect
/// needs each pad smaller than its dimension. No padding at all returns x.
Tensor pad(Graph& graph, const Tensor& x, const std::vector<size_t>& begin,
           const std::vector<size_t>& end, PadMode mode, float value, Sequence& prog,
           const std::string& name);

/// The gradient of pad at its input from grad (of the padded shape): grad's interior plus, for
/// Reflect and Edge, each border element's gradient added into the element it copies, axis by axis
/// from the last, the begin side from the input outwards and then the end side
/// (nnref::padGrad's order). Constant: a view of grad's interior.
Tensor padGrad(Graph& graph, const Tensor& grad, const std::vector<size_t>& begin,
               const std::vector<size_t>& end, PadMode mode, Sequence& prog,
               const std::string& name);

}  // namespace tessera::ops
