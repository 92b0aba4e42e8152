// The convolution and pooling ops of the autodiff layer (docs/autodiff.md, "Built-in ops"): Conv,
// MaxPool, AveragePool and Flatten, each forward beside its backward, over tessera/conv.hpp. The
// attributes are ONNX's (strides, pads, dilations, group, kernel_shape, count_include_pad), so an
// importer maps an ONNX node onto them by name; what the library cannot do (asymmetric padding,
// ceil mode, dilated average pooling, average pooling that excludes the padding) is an error naming
// the op, never a silent approximation. Every backward is one library call, whose operation order
// tessera/conv_reference.hpp reproduces on the host.
#include <fmt/format.h>

#include <array>
#include <numeric>

#include "autodiff_util.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/conv.hpp"
#include "tessera/error.hpp"

namespace tessera::autodiff {

namespace {

// A two-element ONNX list attribute (height, width): `fallback` when absent, each entry >= `least`.
std::array<size_t, 2> pairAttr(const OpNode& n, const std::string& key,
                               std::array<size_t, 2> fallback, size_t least) {
  const std::vector<int64_t> v = n.intsAttr(key);
  if (v.empty()) return fallback;
  if (v.size() != 2 || v[0] < static_cast<int64_t>(least) || v[1] < static_cast<int64_t>(least)) {
    throw Error(fmt::format("{} ({}): {} [{}] must be two entries of at least {} (height, width)",
                            n.name, n.type, key, fmt::join(v, ","), least));
  }
  return {static_cast<size_t>(v[0]), static_cast<size_t>(v[1])};
}

// ONNX pads: [top, left, bottom, right], or [height, width] for both sides. The library pads both
// sides alike, so the two sides must be equal.
std::array<size_t, 2> padsAttr(const OpNode& n) {
  const std::vector<int64_t> v = n.intsAttr("pads");
  if (v.empty()) return {0, 0};
  const bool neg = std::any_of(v.begin(), v.end(), [](int64_t p) { return p < 0; });
  if (neg || (v.size() != 2 && v.size() != 4)) {
    throw Error(fmt::format(
        "{} ({}): pads [{}] must be [top, left, bottom, right] or [height, width], none negative",
        n.name, n.type, fmt::join(v, ",")));
  }
  if (v.size() == 4 && (v[0] != v[2] || v[1] != v[3])) {
    throw Error(fmt::format(
        "{} ({}): pads [{}] are asymmetric; tessera/conv.hpp pads both sides alike (top = bottom, "
        "left = right)",
        n.name, n.type, fmt::join(v, ",")));
  }
  return {static_cast<size_t>(v[0]), static_cast<size_t>(v[1])};
}

// ONNX's auto_pad: only the default (explicit pads) is supported.
void expectExplicitPads(const OpNode& n) {
  auto it = n.attributes.find("auto_pad");
  if (it == n.attributes.end()) return;
  const std::string* s = std::get_if<std::string>(&it->second);
  if (!s || *s != "NOTSET") {
    throw Error(fmt::format("{} ({}): auto_pad other than NOTSET is not supported; give pads",
                            n.name, n.type));
  }
}

void expect4d(const OpNode& n, const Tensor& t, size_t i, const char* what) {
  expectFloat(n, t, i);
  if (t.rank() != 4) {
    throw Error(fmt::format("{} ({}): {} \"{}\" must be 4-D ({}), got {}", n.name, n.type,
                            i == 0 ? "input" : "weights", t.debugName(), what, t.shapeString()));
  }
}

// ---- Conv: y = conv2d(x [N, C, H, W], w [OC, C / group, KH, KW]) (+ b [OC]).
// Attributes: strides, pads, dilations (pairs), group, kernel_shape (checked against w).
//
// Backward (tessera/conv.hpp, each result's order documented there and reproduced by
// tessera/conv_reference.hpp): dx = conv2dBackwardInput(g, w) (per element an fmaf chain from +0
// over (o, kh, kw)); dw = conv2dBackwardWeights(x, g) (per sample an fmaf chain over (y, x), the
// samples added in order); db = conv2dBackwardBias(g) (per sample its plane left to right, the
// samples added in order). dx first, then dw, then db.

ops::Conv2dParams convParams(const OpNode& n) {
  expectExplicitPads(n);
  ops::Conv2dParams p;
  p.stride = pairAttr(n, "strides", {1, 1}, 1);
  p.padding = padsAttr(n);
  p.dilation = pairAttr(n, "dilations", {1, 1}, 1);
  const int64_t group = n.intAttr("group", 1);
  if (group < 1)
    throw Error(fmt::format("{} ({}): group {} must be at least 1", n.name, n.type, group));
  p.groups = static_cast<size_t>(group);
  return p;
}

std::vector<Tensor> convForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  if (ctx.inputs.size() != 2 && ctx.inputs.size() != 3) {
    throw Error(fmt::format("{} ({}): {} inputs, 2 or 3 expected (x, w and an optional bias)",
                            n.name, n.type, ctx.inputs.size()));
  }
  const Tensor &x = ctx.inputs[0], &w = ctx.inputs[1];
  expect4d(n, x, 0, "N, C, H, W");
  expect4d(n, w, 1, "OC, C / group, KH, KW");
  const ops::Conv2dParams p = convParams(n);
  const std::array<size_t, 2> k = pairAttr(n, "kernel_shape", {w.dim(2), w.dim(3)}, 1);
  if (k[0] != w.dim(2) || k[1] != w.dim(3)) {
    throw Error(fmt::format("{} ({}): kernel_shape [{},{}] differs from weights \"{}\" {}", n.name,
                            n.type, k[0], k[1], w.debugName(), w.shapeString()));
  }
  // The library's message has both shapes and the parameters; the prefix names the op and tensors.
  ops::conv2dOutputShape(
      x.shape(), w.shape(), p,
      fmt::format("{} ({}) of \"{}\" and \"{}\"", n.name, n.type, x.debugName(), w.debugName()));
  Tensor b;
  if (ctx.inputs.size() == 3) {
    b = ctx.inputs[2];
    expectFloat(n, b, 2);
    if (b.rank() != 1 || b.dim(0) != w.dim(0)) {
      throw Error(fmt::format(
          "{} ({}): bias \"{}\" {} must be [{}] (the output channels of \"{}\" {})", n.name, n.type,
          b.debugName(), b.shapeString(), w.dim(0), w.debugName(), w.shapeString()));
    }
  }
  return {ops::conv2d(ctx.graph, x, w, b, ctx.prog, n.name, p)};
}

void convBackward(BackwardContext& ctx) {
  const ops::Conv2dParams p = convParams(ctx.node);
  const Tensor g = ctx.gradOutputTensor(0);
  const Tensor &x = ctx.inputs[0], &w = ctx.inputs[1];
  if (ctx.needsGrad(0)) {
    ctx.setGrad(0, Gradient::of(ops::conv2dBackwardInput(ctx.graph, g, w, x.shape(), ctx.prog,
                                                         ctx.stepName("x"), p)));
  }
  if (ctx.needsGrad(1)) {
    ctx.setGrad(1, Gradient::of(ops::conv2dBackwardWeights(ctx.graph, x, g, w.shape(), ctx.prog,
                                                           ctx.stepName("w"), p)));
  }
  if (ctx.inputs.size() == 3 && ctx.needsGrad(2)) {
    ctx.setGrad(2,
                Gradient::of(ops::conv2dBackwardBias(ctx.graph, g, ctx.prog, ctx.stepName("b"))));
  }
}

// ---- MaxPool and AveragePool over x [N, C, H, W]. Attributes: kernel_shape (required), strides
// (ONNX's default: 1), pads, ceil_mode, count_include_pad (AveragePool; ONNX's default 0, which
// PyTorch's exporter always overrides with its own); dilations (MaxPool only: AveragePool has
// none before opset 19, PyTorch's none at all). AveragePool divides each window
// as PyTorch does: by KH * KW, by the part inside the padded input for ceil mode's last window,
// by the elements inside the input with count_include_pad 0.
//
// Backward: MaxPool gives each window's gradient to its first maximum in scan order, each input
// element summing what it receives from +0 in output order (ops::maxPool2dBackward, from the
// forward's input); AveragePool adds g / (the window's divisor) into every element of the window,
// from +0 in output order (ops::avgPool2dBackward).

// Asymmetric pads [top, left, bottom, right] that pad the end by more than the beginning, as
// ceil mode written without ceil_mode (opsets before 10 have none: PyTorch exports ceil_mode=True
// so). Where no divisor counts padding (MaxPool, or AveragePool with count_include_pad 0) and
// floor mode over those pads gives as many windows per axis as ceil mode over the begin pads, the
// windows are the same and hold the same input elements: it is ceil mode, which p becomes.
bool endPadsAreCeilMode(const OpNode& n, const std::vector<size_t>& in, ops::Pool2dParams& p) {
  const std::vector<int64_t> v = n.intsAttr("pads");
  if (v.size() != 4 || in.size() != 4 || p.ceilMode || (p.countIncludePad && n.type != "MaxPool"))
    return false;
  if (v[0] < 0 || v[1] < 0 || v[2] < v[0] || v[3] < v[1] || (v[0] == v[2] && v[1] == v[3]))
    return false;
  ops::Pool2dParams ceil = p;
  ceil.padding = {static_cast<size_t>(v[0]), static_cast<size_t>(v[1])};
  ceil.ceilMode = true;
  if (ceil.padding[0] * 2 > ceil.kernel[0] || ceil.padding[1] * 2 > ceil.kernel[1]) return false;
  const std::vector<size_t> out = ops::pool2dOutputShape(in, ceil, n.name);
  for (size_t a = 0; a < 2; ++a) {
    const int64_t span = static_cast<int64_t>(in[2 + a]) + v[a] + v[a + 2];
    const int64_t k = static_cast<int64_t>((p.kernel[a] - 1) * p.dilation[a] + 1),
                  s = static_cast<int64_t>(p.stride[a]);
    if (span < k || (span - k) / s + 1 != static_cast<int64_t>(out[2 + a])) return false;
  }
  p = ceil;
  return true;
}

ops::Pool2dParams poolParams(const OpNode& n, const std::vector<size_t>& in) {
  expectExplicitPads(n);
  const std::vector<int64_t> k = n.intsAttr("kernel_shape");
  if (k.size() != 2)
    throw Error(fmt::format("{} ({}): kernel_shape (height, width) is required", n.name, n.type));
  ops::Pool2dParams p;
  p.kernel = pairAttr(n, "kernel_shape", {0, 0}, 1);
  p.stride = pairAttr(n, "strides", {1, 1}, 1);
  p.ceilMode = n.intAttr("ceil_mode", 0) != 0;
  // ONNX's default count_include_pad is 0, PyTorch's 1; the exporter always writes it.
  p.countIncludePad = n.type == "MaxPool" || n.intAttr("count_include_pad", 0) != 0;
  p.dilation = pairAttr(n, "dilations", {1, 1}, 1);
  if (p.dilation != std::array<size_t, 2>{1, 1} && n.type != "MaxPool") {
    throw Error(fmt::format(
        "{} ({}): dilations [{}]: dilated average pooling is not supported (ONNX's AveragePool "
        "has dilations from opset 19, PyTorch's none)",
        n.name, n.type, fmt::join(n.intsAttr("dilations"), ",")));
  }
  if (!endPadsAreCeilMode(n, in, p)) p.padding = padsAttr(n);
  return p;
}

std::vector<Tensor> poolForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  expect4d(n, x, 0, "N, C, H, W");
  const ops::Pool2dParams p = poolParams(n, x.shape());
  ops::pool2dOutputShape(x.shape(), p,
                         fmt::format("{} ({}) of \"{}\"", n.name, n.type, x.debugName()));
  return {n.type == "MaxPool" ? ops::maxPool2d(ctx.graph, x, ctx.prog, n.name, p)
                              : ops::avgPool2d(ctx.graph, x, ctx.prog, n.name, p)};
}

void maxPoolBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(0, Gradient::of(ops::maxPool2dBackward(ctx.graph, ctx.inputs[0], g, ctx.prog,
                                                     ctx.stepName("x"),
                                                     poolParams(ctx.node, ctx.inputs[0].shape()))));
}

void avgPoolBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(0, Gradient::of(ops::avgPool2dBackward(ctx.graph, g, ctx.inputs[0].shape(), ctx.prog,
                                                     ctx.stepName("x"),
                                                     poolParams(ctx.node, ctx.inputs[0].shape()))));
}

// ---- Flatten (ONNX): x to [product of dimensions before axis, product of the rest]; a view, as
// Reshape is; the gradient is g viewed in x's shape. Attribute axis (default 1, -rank to rank).

std::vector<Tensor> flattenForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  int64_t axis = n.intAttr("axis", 1);
  if (axis < 0) axis += rank;  // ONNX: negative counts from the end
  if (axis < 0 || axis > rank) {
    throw Error(fmt::format("{} ({}): axis {} is out of range for \"{}\" {}", n.name, n.type, axis,
                            x.debugName(), x.shapeString()));
  }
  const std::vector<size_t>& s = x.shape();
  const size_t a = std::accumulate(s.begin(), s.begin() + axis, size_t{1}, std::multiplies<>());
  const size_t b = std::accumulate(s.begin() + axis, s.end(), size_t{1}, std::multiplies<>());
  return {x.reshape({a, b})};
}

void flattenBackward(BackwardContext& ctx) {
  const Gradient& g = ctx.gradOutput(0);
  const std::vector<size_t>& shape = ctx.inputs[0].shape();
  ctx.setGrad(0, g.isConstant() ? Gradient::uniform(g.constant, shape)
                                : Gradient::of(g.tensor.reshape(shape)));
}

std::vector<int64_t> pairOf(const std::array<size_t, 2>& v) {
  return {static_cast<int64_t>(v[0]), static_cast<int64_t>(v[1])};
}

std::vector<int64_t> padsOf(const std::array<size_t, 2>& v) {
  return {static_cast<int64_t>(v[0]), static_cast<int64_t>(v[1]), static_cast<int64_t>(v[0]),
          static_cast<int64_t>(v[1])};
}

Attributes poolAttributes(const ops::Pool2dParams& p) {
  // The library's stride 0 means "the kernel" (PyTorch); ONNX's absent strides mean 1, so the
  // builder always writes them.
  const std::array<size_t, 2> s{p.stride[0] ? p.stride[0] : p.kernel[0],
                                p.stride[1] ? p.stride[1] : p.kernel[1]};
  Attributes a{{"kernel_shape", pairOf(p.kernel)},
               {"strides", pairOf(s)},
               {"pads", padsOf(p.padding)},
               {"count_include_pad", int64_t{p.countIncludePad}}};
  if (p.ceilMode) a["ceil_mode"] = int64_t{1};
  if (p.dilation != std::array<size_t, 2>{1, 1}) a["dilations"] = pairOf(p.dilation);
  return a;
}

}  // namespace

void addConvOps(OpRegistry& r) {
  r.add({"Conv", convForward, convBackward});
  r.add({"MaxPool", poolForward, maxPoolBackward});
  r.add({"AveragePool", poolForward, avgPoolBackward});
  r.add({"Flatten", flattenForward, flattenBackward});
}

Value conv2d(Tape& tape, const Value& x, const Value& weights, const Value& bias,
             const std::string& name, const ops::Conv2dParams& params) {
  std::vector<Value> inputs = {x, weights};
  if (bias.valid()) inputs.push_back(bias);
  return tape.apply1("Conv", inputs,
                     {{"strides", pairOf(params.stride)},
                      {"pads", padsOf(params.padding)},
                      {"dilations", pairOf(params.dilation)},
                      {"group", static_cast<int64_t>(params.groups)}},
                     name);
}

Value maxPool2d(Tape& tape, const Value& x, const std::string& name,
                const ops::Pool2dParams& params) {
  Attributes a = poolAttributes(params);
  a.erase("count_include_pad");
  return tape.apply1("MaxPool", {x}, a, name);
}

Value avgPool2d(Tape& tape, const Value& x, const std::string& name,
                const ops::Pool2dParams& params) {
  return tape.apply1("AveragePool", {x}, poolAttributes(params), name);
}

Value flatten(Tape& tape, const Value& x, size_t axis, const std::string& name) {
  return tape.apply1("Flatten", {x}, {{"axis", static_cast<int64_t>(axis)}}, name);
}

}  // namespace tessera::autodiff
