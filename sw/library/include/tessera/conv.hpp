// Convolution and pooling over NCHW float32 tensors (docs/library.md, "conv2d and pooling"), in the
// poplibs shape: the graph first, then the program to append to, then a debug name. Every op has
// its forward and its backward here; each result is a new variable spread over the tiles by
// batch, channel and row block, and the compiler gathers the input rows (with their halo) and the
// weights that each tile reads. The order of operations of every result is fixed and documented,
// and tessera/conv_reference.hpp performs the same operations on the host.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/graph.hpp"
#include "tessera/program.hpp"

namespace tessera::ops {

/// Arguments of a 2-D convolution as PyTorch's Conv2d takes them; [0] is height, [1] width.
struct Conv2dParams {
  std::array<size_t, 2> stride{1, 1};
  std::array<size_t, 2> padding{0, 0};  ///< zeros on both sides
  std::array<size_t, 2> dilation{1, 1};
  size_t groups = 1;
  /// Where the target has the matrix unit: Auto lets the library pick the unit or the scalar
  /// codelets by their estimated cycles (docs/library.md, "conv2d on the matrix unit"); Always
  /// takes the unit wherever the shape allows (groups 1), Never the scalar codelets. The results
  /// are the same bits whichever runs.
  enum class Unit { Auto, Always, Never } unit = Unit::Auto;
};

/// Arguments of a pooling layer (no dilation); stride {0, 0} means the kernel size.
struct Pool2dParams {
  std::array<size_t, 2> kernel{2, 2};
  std::array<size_t, 2> stride{0, 0};
  std::array<size_t, 2> padding{0, 0};  ///< at most half the kernel, as PyTorch requires
  /// PyTorch's and ONNX's ceil_mode: one more window per axis where the last would start inside
  /// the input or its leading padding; windows are clipped to the input (max pooling's rule).
  bool ceilMode = false;
  /// Average pooling's divisor (PyTorch's count_include_pad): true, the window inside the padded
  /// input (KH * KW but for ceil mode's last window); false, the elements inside the input.
  bool countIncludePad = true;
  /// Max pooling's dilation (ONNX's dilations, PyTorch's MaxPool2d dilation): a window's taps
  /// this far apart, its extent (K - 1) * dilation + 1; average pooling takes 1 only.
  std::array<size_t, 2> dilation{1, 1};
};

/// The output shape [N, OC, OH, OW] of conv2d(in [N, C, H, W], weights [OC, C / groups, KH, KW]);
/// throws naming `name` and the shapes when they do not fit together.
std::vector<size_t> conv2dOutputShape(const std::vector<size_t>& in,
                                      const std::vector<size_t>& weights,
                                      const Conv2dParams& params, const std::string& name);

/// The output shape [N, C, OH, OW] of pooling in [N, C, H, W]; throws naming `name`.
std::vector<size_t> pool2dOutputShape(const std::vector<size_t>& in, const Pool2dParams& params,
                                      const std::string& name);

/// A new [N, C, H, W] variable mapped as conv2d, the pooling ops and their gradients map their
/// results (whole samples per tile where the batch allows; docs/library.md): an input or a
/// gradient made so is read in place by the next op, halos and weights excepted.
Tensor createConv2dInput(Graph& graph, const std::vector<size_t>& shape, const std::string& name);

/// out[n, o, y, x] = bias[o] (or +0 without bias) followed by fused multiply-adds of
/// in[n, c, y*sh - ph + kh*dh, x*sw - pw + kw*dw] * weights[o, c', kh, kw] over the taps
/// (c', kh, kw) in increasing order, taps in the padding skipped; bias is [OC] or an invalid
/// Tensor() for none.
Tensor conv2d(Graph& graph, const Tensor& in, const Tensor& weights, const Tensor& bias,
              Sequence& prog, const std::string& name, const Conv2dParams& params = {});

/// d(loss)/d(in) [N, C, H, W] of conv2d from gradOut [N, OC, OH, OW]: each element a fused
/// multiply-add chain from +0 over (o, kh, kw) in increasing order of the outputs it reached.
Tensor conv2dBackwardInput(Graph& graph, const Tensor& gradOut, const Tensor& weights,
                           const std::vector<size_t>& inShape, Sequence& prog,
                           const std::string& name, const Conv2dParams& params = {});

/// d(loss)/d(weights) [OC, C / groups, KH, KW] of conv2d: per sample a fused multiply-add chain
/// from +0 over (y, x) in increasing order, then the samples added in order (whatever the tiles).
Tensor conv2dBackwardWeights(Graph& graph, const Tensor& in, const Tensor& gradOut,
                             const std::vector<size_t>& weightsShape, Sequence& prog,
                             const std::string& name, const Conv2dParams& params = {});

/// d(loss)/d(bias) [OC] of conv2d: for each sample the sum of its plane left to right, then the
/// samples added in order.
Tensor conv2dBackwardBias(Graph& graph, const Tensor& gradOut, Sequence& prog,
                          const std::string& name);

/// Max pooling: the largest element of each window, padding ignored (a NaN wins, as in PyTorch).
Tensor maxPool2d(Graph& graph, const Tensor& in, Sequence& prog, const std::string& name,
                 const Pool2dParams& params = {});

/// d(loss)/d(in) of maxPool2d: each window's gradient goes to its first maximum in scan order
/// (PyTorch's choice); an input element sums the gradients it receives from +0 in output order.
Tensor maxPool2dBackward(Graph& graph, const Tensor& in, const Tensor& gradOut, Sequence& prog,
                         const std::string& name, const Pool2dParams& params = {});

/// Average pooling with count_include_pad (PyTorch's default): the window's non-padding elements
/// summed from +0 in scan order, divided by KH * KW.
Tensor avgPool2d(Graph& graph, const Tensor& in, Sequence& prog, const std::string& name,
                 const Pool2dParams& params = {});

/// d(loss)/d(in) [inShape] of avgPool2d: each input element sums gradOut / (KH * KW) from +0 over
/// the windows that contain it, in output order.
Tensor avgPool2dBackward(Graph& graph, const Tensor& gradOut, const std::vector<size_t>& inShape,
                         Sequence& prog, const std::string& name, const Pool2dParams& params = {});

}  // namespace tessera::ops
