// The element-by-element ONNX ops of the autodiff layer (docs/autodiff.md, "ONNX ops"): Add, Sub,
// Mul, Div and Pow with NumPy (multidirectional) broadcasting, and Sqrt, Exp, Log, Reciprocal,
// Erf, Neg and Identity; each forward beside its backward. A broadcast operand's gradient is the
// gradient at the result's shape summed over the dimensions it was repeated along
// (ops::reduceToShape: in row-major order of the repeated indices, from the first).
#include <fmt/format.h>

#include "autodiff_util.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::autodiff {

namespace {

ops::BinaryOp binaryOp(const std::string& type) {
  if (type == "Add") return ops::BinaryOp::Add;
  if (type == "Sub") return ops::BinaryOp::Sub;
  if (type == "Mul") return ops::BinaryOp::Mul;
  if (type == "Div") return ops::BinaryOp::Div;
  return ops::BinaryOp::Pow;
}

std::vector<size_t> resultShape(const OpNode& n, const Tensor& a, const Tensor& b) {
  return ops::broadcastShape(
      a.shape(), b.shape(),
      fmt::format("{} ({}) of \"{}\" and \"{}\"", n.name, n.type, a.debugName(), b.debugName()));
}

std::vector<Tensor> binaryForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 2);
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  expectFloat(n, a, 0);
  expectFloat(n, b, 1);
  resultShape(n, a, b);
  return {ops::binary(ctx.graph, binaryOp(n.type), a, b, ctx.prog, n.name)};
}

// The sum of `count` copies of c, added one by one from the first (what reduceToShape computes
// from a constant gradient, without the device).
float repeatedSum(float c, size_t count) {
  float s = c;
  for (size_t i = 1; i < count; ++i) s += c;
  return s;
}

// Input i's gradient from t, a gradient at the result's shape: summed over input i's broadcast
// dimensions.
void setReduced(BackwardContext& ctx, size_t i, const Tensor& t, const std::string& what) {
  ctx.setGrad(i, Gradient::of(ops::reduceToShape(ctx.graph, t, ctx.inputs[i].shape(), ctx.prog,
                                                 ctx.stepName(what + "/sum"))));
}

// Add and Sub: da = g, db = g (Sub: -g, a scale by -1), each summed to its input's shape. A
// constant gradient stays a constant.
void addSubBackward(BackwardContext& ctx) {
  const Gradient& g = ctx.gradOutput(0);
  const bool sub = ctx.node.type == "Sub";
  for (size_t i = 0; i < 2; ++i) {
    if (!ctx.needsGrad(i)) continue;
    const bool negate = sub && i == 1;
    const std::vector<size_t>& shape = ctx.inputs[i].shape();
    const std::string what = i == 0 ? "a" : "b";
    if (g.isConstant()) {
      size_t count = 1, in = 1;
      for (size_t d : g.shape) count *= d;
      for (size_t d : shape) in *= d;
      const float s = repeatedSum(g.constant, count / in);
      ctx.setGrad(i, Gradient::uniform(negate ? -s : s, shape));
      continue;
    }
    Tensor t = ops::reduceToShape(ctx.graph, g.tensor, shape, ctx.prog, ctx.stepName(what));
    if (negate) t = ops::scale(ctx.graph, t, -1.0f, ctx.prog, ctx.stepName(what + "/neg"));
    ctx.setGrad(i, Gradient::of(t));
  }
}

// Mul: da = g * b, db = g * a (one rounding each, then summed over the broadcast dimensions). With
// operands of one shape a constant g is a scale of the other operand.
void mulBackward(BackwardContext& ctx) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const Gradient& g0 = ctx.gradOutput(0);
  if (a.shape() == b.shape()) {
    for (size_t i = 0; i < 2; ++i) {
      if (!ctx.needsGrad(i)) continue;
      const Tensor& other = ctx.inputs[1 - i];
      const std::string step = ctx.stepName(i == 0 ? "a" : "b");
      ctx.setGrad(i, Gradient::of(g0.isConstant()
                                      ? ops::scale(ctx.graph, other, g0.constant, ctx.prog, step)
                                      : ops::mul(ctx.graph, g0.tensor, other, ctx.prog, step)));
    }
    return;
  }
  const Tensor g = ctx.gradOutputTensor(0);
  for (size_t i = 0; i < 2; ++i) {
    if (!ctx.needsGrad(i)) continue;
    const std::string what = i == 0 ? "a" : "b";
    setReduced(ctx, i,
               ops::binary(ctx.graph, ops::BinaryOp::Mul, g, ctx.inputs[1 - i], ctx.prog,
                           ctx.stepName(what)),
               what);
  }
}

// Div, y = a / b: da = g / b; db = -(g * (y / b)) (ops::divBackwardB); each summed over its
// broadcast dimensions.
void divBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1], &y = ctx.outputs[0];
  (void)a;
  if (ctx.needsGrad(0)) {
    setReduced(ctx, 0,
               ops::binary(ctx.graph, ops::BinaryOp::Div, g, b, ctx.prog, ctx.stepName("a")), "a");
  }
  if (ctx.needsGrad(1)) {
    setReduced(ctx, 1,
               ops::divBackwardB(ctx.graph, g, y, ops::broadcastTo(b, y.shape()), ctx.prog,
                                 ctx.stepName("b")),
               "b");
  }
}

// Pow, y = a^b: da = g * (b * a^(b - 1)) (0 where b = 0); db = g * (y * ln a) (0 where a = 0 and
// b >= 0); each summed over its broadcast dimensions.
void powBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  const Tensor& y = ctx.outputs[0];
  const Tensor a = ops::broadcastTo(ctx.inputs[0], y.shape());
  const Tensor b = ops::broadcastTo(ctx.inputs[1], y.shape());
  // A one-element exponent (Pow(x, 2)) is read whole by every vertex rather than gathered.
  const Tensor e = ctx.inputs[1].numElements() == 1 ? ctx.inputs[1] : b;
  if (ctx.needsGrad(0))
    setReduced(ctx, 0, ops::powBackwardA(ctx.graph, g, a, e, ctx.prog, ctx.stepName("a")), "a");
  if (ctx.needsGrad(1))
    setReduced(ctx, 1, ops::powBackwardB(ctx.graph, g, a, b, y, ctx.prog, ctx.stepName("b")), "b");
}

// ---- Unary: Sqrt (dx = g / (2 y)), Exp (dx = g * y), Log (dx = g / x), Reciprocal
// (dx = -(g * (y * y))), Erf (dx = (2/sqrt(pi) * e^-(x x)) * g), Neg (y = x * -1, dx = g * -1,
// exact), Identity (the input itself; dx = g).

std::vector<Tensor> unaryForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  if (n.type == "Identity") return {x};
  expectFloat(n, x, 0);
  if (n.type == "Sqrt") return {ops::sqrt(ctx.graph, x, ctx.prog, n.name)};
  if (n.type == "Exp") return {ops::exp(ctx.graph, x, ctx.prog, n.name)};
  if (n.type == "Log") return {ops::log(ctx.graph, x, ctx.prog, n.name)};
  if (n.type == "Reciprocal") return {ops::reciprocal(ctx.graph, x, ctx.prog, n.name)};
  if (n.type == "Erf") return {ops::erf(ctx.graph, x, ctx.prog, n.name)};
  return {ops::scale(ctx.graph, x, -1.0f, ctx.prog, n.name)};  // Neg
}

void unaryBackward(BackwardContext& ctx) {
  const std::string& type = ctx.node.type;
  const Gradient& g0 = ctx.gradOutput(0);
  if (type == "Identity") {
    ctx.setGrad(0, g0);
    return;
  }
  if (type == "Neg") {
    ctx.setGrad(0, g0.isConstant() ? Gradient::uniform(-g0.constant, g0.shape)
                                   : Gradient::of(ops::scale(ctx.graph, g0.tensor, -1.0f, ctx.prog,
                                                             ctx.stepName("x"))));
    return;
  }
  const Tensor g = ctx.gradOutputTensor(0);
  const Tensor &x = ctx.inputs[0], &y = ctx.outputs[0];
  const std::string step = ctx.stepName("x");
  Tensor dx;
  if (type == "Sqrt") dx = ops::sqrtBackward(ctx.graph, g, y, ctx.prog, step);
  if (type == "Exp") dx = ops::mul(ctx.graph, g, y, ctx.prog, step);
  if (type == "Log") dx = ops::div(ctx.graph, g, x, ctx.prog, step);
  if (type == "Reciprocal") dx = ops::reciprocalBackward(ctx.graph, g, y, ctx.prog, step);
  if (type == "Erf") dx = ops::erfBackward(ctx.graph, g, x, ctx.prog, step);
  ctx.setGrad(0, Gradient::of(dx));
}

// ---- ReduceSum, ReduceMean (ONNX, opsets 13-17) and GlobalAveragePool. Attributes axes (ints,
// negative counts from the end; the importer folds ReduceSum's axes input into it), keepdims
// (default 1), noop_with_empty_axes (default 0: no axes reduce every dimension; 1: the identity).
// GlobalAveragePool is ReduceMean over the dimensions after [N, C] with keepdims 1. Order: each
// result element sums its inputs in row-major order of the reduced indices, from the first
// (ops::reduceSumAxes); the mean divides that sum by the count (one division). Backward: g
// (divided by the count for the mean) repeated along the reduced dimensions, copied into a tensor
// mapped like the input. ReduceSum with the attribute `axis` and no `axes` is the typed builder's
// 2-D form (ops.cpp).

struct Reduction {
  std::vector<size_t> axes;  // sorted
  std::vector<size_t> kept;  // the result's shape with keepdims 1
  size_t count = 1;          // elements summed into each result element
  bool noop = false;
};

Reduction reduction(const OpNode& n, const Tensor& x) {
  Reduction r;
  std::vector<int64_t> axes;
  if (n.type == "GlobalAveragePool") {
    if (x.rank() < 3) {
      throw Error(fmt::format("{} ({}): \"{}\" {} must be [N, C, spatial...]", n.name, n.type,
                              x.debugName(), x.shapeString()));
    }
    for (size_t d = 2; d < x.rank(); ++d) axes.push_back(static_cast<int64_t>(d));
  } else {
    axes = n.intsAttr("axes");
    if (axes.empty()) {
      if (n.intAttr("noop_with_empty_axes", 0) != 0) {
        r.noop = true;
        r.kept = x.shape();
        return r;
      }
      for (size_t d = 0; d < x.rank(); ++d) axes.push_back(static_cast<int64_t>(d));
    }
  }
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<bool> seen(x.rank(), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank || seen[static_cast<size_t>(a < 0 ? a + rank : a)]) {
      throw Error(fmt::format("{} ({}): axes [{}] are out of range or repeated for \"{}\" {}",
                              n.name, n.type, fmt::join(axes, ","), x.debugName(),
                              x.shapeString()));
    }
    seen[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  for (size_t d = 0; d < x.rank(); ++d) {
    if (seen[d]) {
      r.axes.push_back(d);
      r.count *= x.dim(d);
    }
    r.kept.push_back(seen[d] ? 1 : x.dim(d));
  }
  return r;
}

bool keepDims(const OpNode& n) {
  return n.type == "GlobalAveragePool" || n.intAttr("keepdims", 1) != 0;
}

std::vector<Tensor> reduceForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  expectFloat(n, x, 0);
  const Reduction r = reduction(n, x);
  if (r.noop) return {x};
  Tensor y = ops::reduceSumAxes(ctx.graph, x, r.axes, ctx.prog, n.name);
  if (n.type != "ReduceSum" && r.count != 1)
    y = ops::divScalar(ctx.graph, y, static_cast<float>(r.count), ctx.prog, n.name + "/mean");
  return {keepDims(n) ? y.reshape(r.kept) : y};
}

void reduceBackward(BackwardContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const Reduction r = reduction(ctx.node, x);
  const Gradient& g = ctx.gradOutput(0);
  const bool mean = ctx.node.type != "ReduceSum" && r.count != 1;
  if (r.noop) {
    ctx.setGrad(0, g);
    return;
  }
  if (g.isConstant()) {
    ctx.setGrad(0, Gradient::uniform(mean ? g.constant / static_cast<float>(r.count) : g.constant,
                                     x.shape()));
    return;
  }
  Tensor t = g.tensor;
  if (mean) {
    t = ops::divScalar(ctx.graph, t, static_cast<float>(r.count), ctx.prog, ctx.stepName("mean"));
  }
  const Tensor out = likeMapped(ctx.graph, x, ctx.stepName("x"));
  ctx.prog.add(Copy(ops::broadcastTo(t.reshape(r.kept), x.shape()), out, ctx.stepName("x")));
  ctx.setGrad(0, Gradient::of(out));
}

}  // namespace

void addMathOps(OpRegistry& r) {
  r.add({"Add", binaryForward, addSubBackward});
  r.add({"Sub", binaryForward, addSubBackward});
  r.add({"Mul", binaryForward, mulBackward});
  r.add({"Div", binaryForward, divBackward});
  r.add({"Pow", binaryForward, powBackward});
  for (const char* type : {"Sqrt", "Exp", "Log", "Reciprocal", "Erf", "Neg", "Identity"})
    r.add({type, unaryForward, unaryBackward});
  for (const char* type : {"ReduceMean", "GlobalAveragePool"})
    r.add({type, reduceForward, reduceBackward});
}

bool onnxReduceSum(const OpNode& n) {
  return n.attributes.count("axis") == 0 || n.attributes.count("axes") != 0;
}

std::vector<Tensor> reduceSumOnnxForward(ForwardContext& ctx) {
  return reduceForward(ctx);
}

void reduceSumOnnxBackward(BackwardContext& ctx) {
  reduceBackward(ctx);
}

}  // namespace tessera::autodiff
