// Pad in its three ONNX modes (tessera/pad.hpp; docs/library.md, "Pad"). Every
// result element is an input element or the constant, so the forward is copies on the tiles (the
// compiler's exchange and on-tile copies), no arithmetic: bit-exact by construction. The gradient
// of reflect and edge adds each border's gradient into the elements it was copied from, in the
// order nnref::padGrad fixes.
#include "tessera/pad.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::ops {

namespace {

void checkPads(const Tensor& x, const std::vector<size_t>& begin, const std::vector<size_t>& end,
               PadMode mode, const std::string& name) {
  if (begin.size() != x.rank() || end.size() != x.rank())
    throw Error(fmt::format("{}: pads [{}], [{}] for \"{}\" {}: one per dimension each side", name,
                            fmt::join(begin, ","), fmt::join(end, ","), x.debugName(),
                            x.shapeString()));
  for (size_t d = 0; d < x.rank(); ++d) {
    const size_t n = x.shape()[d];
    if (mode == PadMode::Reflect && (begin[d] >= n || end[d] >= n) && (begin[d] || end[d]))
      throw Error(fmt::format(
          "{}: reflect pads {} and {} of dimension {} of \"{}\" {} must be smaller than it", name,
          begin[d], end[d], d, x.debugName(), x.shapeString()));
    if (mode == PadMode::Edge && n == 0 && (begin[d] || end[d]))
      throw Error(fmt::format("{}: edge padding of the empty dimension {} of \"{}\"", name, d,
                              x.debugName()));
  }
}

// The element along dimension d of the padded extent that border position p copies (p outside
// [b, b + n)): reflect mirrors about the first or last element, edge repeats it.
size_t sourceOf(size_t p, size_t b, size_t n, PadMode mode) {
  if (p < b) return mode == PadMode::Reflect ? b + (b - p) : b;
  const size_t last = b + n - 1;
  return mode == PadMode::Reflect ? last - (p - last) : last;
}

// t restricted to [lo[d], hi[d]) along every dimension but axis, and to [at, at + 1) along axis.
Tensor plane(const Tensor& t, const std::vector<size_t>& lo, const std::vector<size_t>& hi,
             size_t axis, size_t at) {
  Tensor v = t;
  for (size_t d = 0; d < t.rank(); ++d)
    v = d == axis ? v.slice(at, at + 1, d) : v.slice(lo[d], hi[d], d);
  return v;
}

}  // namespace

Tensor pad(Graph& graph, const Tensor& x, const std::vector<size_t>& begin,
           const std::vector<size_t>& end, PadMode mode, float value, Sequence& prog,
           const std::string& name) {
  checkPads(x, begin, end, mode, name);
  std::vector<size_t> shape = x.shape();
  bool none = true;
  for (size_t d = 0; d < shape.size(); ++d) {
    shape[d] += begin[d] + end[d];
    none = none && begin[d] == 0 && end[d] == 0;
  }
  if (none) return x;
  const Tensor out = createLinear(graph, ElemType::Float32, shape, name);
  if (mode == PadMode::Constant) fill(graph, out, value, prog, name + "/fill");
  std::vector<size_t> lo = begin, hi = begin;
  for (size_t d = 0; d < shape.size(); ++d) hi[d] += x.shape()[d];
  Tensor inside = out;
  for (size_t d = 0; d < shape.size(); ++d) inside = inside.slice(lo[d], hi[d], d);
  prog.add(Copy(x, inside, name + "/copy"));
  if (mode == PadMode::Constant) return out;
  // Axis by axis: before axis d is padded, the result is complete over [0, shape) along the axes
  // before d and over the input's extent along d and the axes after it; each border plane of d
  // is a copy of the plane it mirrors (reflect) or repeats (edge) within that region.
  for (size_t d = 0; d < shape.size(); ++d) {
    const size_t n = x.shape()[d];
    for (size_t p = 0; p < shape[d]; ++p) {
      if (p >= begin[d] && p < begin[d] + n) continue;
      prog.add(Copy(plane(out, lo, hi, d, sourceOf(p, begin[d], n, mode)), plane(out, lo, hi, d, p),
                    fmt::format("{}/border{}_{}", name, d, p)));
    }
    lo[d] = 0;
    hi[d] = shape[d];
  }
  return out;
}

Tensor padGrad(Graph& graph, const Tensor& grad, const std::vector<size_t>& begin,
               const std::vector<size_t>& end, PadMode mode, Sequence& prog,
               const std::string& name) {
  std::vector<size_t> inShape = grad.shape();
  if (begin.size() != grad.rank() || end.size() != grad.rank())
    throw Error(fmt::format("{}: pads for \"{}\" {}: one per dimension each side", name,
                            grad.debugName(), grad.shapeString()));
  for (size_t d = 0; d < inShape.size(); ++d) {
    if (begin[d] + end[d] > inShape[d])
      throw Error(fmt::format("{}: pads {} and {} exceed dimension {} of \"{}\" {}", name, begin[d],
                              end[d], d, grad.debugName(), grad.shapeString()));
    inShape[d] -= begin[d] + end[d];
  }
  auto interior = [&](const Tensor& t) {
    Tensor v = t;
    for (size_t d = 0; d < inShape.size(); ++d) v = v.slice(begin[d], begin[d] + inShape[d], d);
    return v;
  };
  bool borders = false;
  for (size_t d = 0; d < inShape.size(); ++d) borders = borders || begin[d] || end[d];
  if (mode == PadMode::Constant || !borders) return interior(grad);
  // The reverse of pad's order: from the last axis to the first, each border plane's gradient is
  // added into the plane it was copied from (the begin side from the input outwards, then the end
  // side), over the region the forward copied it within; then that axis is cut to the input's
  // extent. The sums are new tensors, copied back into an accumulator (mapped linearly).
  const Tensor acc = createLinear(graph, ElemType::Float32, grad.shape(), name + "/acc");
  prog.add(Copy(grad, acc, name + "/copy"));
  std::vector<size_t> lo(inShape.size(), 0), hi = grad.shape();
  for (size_t d = inShape.size(); d-- > 0;) {
    const size_t n = inShape[d];
    if (begin[d] || end[d]) {
      auto fold = [&](size_t p) {
        const std::string step = fmt::format("{}/border{}_{}", name, d, p);
        const Tensor src = plane(acc, lo, hi, d, sourceOf(p, begin[d], n, mode));
        const Tensor sum = add(graph, src, plane(acc, lo, hi, d, p), prog, step);
        prog.add(Copy(sum, src, step + "/back"));
      };
      // The border planes along d over the region the forward copied them within: [0, shape)
      // along the axes before d, the input's extent along those after d (folded already).
      for (size_t p = begin[d]; p-- > 0;) fold(p);
      for (size_t p = begin[d] + n; p < begin[d] + n + end[d]; ++p) fold(p);
    }
    lo[d] = begin[d];
    hi[d] = begin[d] + n;
  }
  return interior(acc);
}

}  // namespace tessera::ops
