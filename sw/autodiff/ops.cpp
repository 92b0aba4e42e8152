// The built-in differentiable ops: for each, its forward and its backward side by side, and one
// registration in OpRegistry::builtin() (docs/autodiff.md, "Adding an op"). A backward's operation
// order is part of the op's contract: the gradient-check tests reproduce it bit for bit on the
// host.
#include "tessera/ops.hpp"

#include <fmt/format.h>

#include <numeric>

#include "autodiff_util.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"
#include "tessera/optimizers.hpp"

namespace tessera::autodiff {

namespace {

// ---- MatMul: c = op(a) op(b), attributes transA, transB (0 or 1). 3-D operands are a batched
// product, ops_nn.cpp (batchMatMulForward).
//
// Backward, for c = op(a) op(b) with g = dc: each input's gradient is one product of g with the
// other input, in the stored layout of that input:
//   da = g op(b)^T  (a stored [m, k])    da = op(b) g^T  (a stored [k, m])
//   db = op(a)^T g  (b stored [k, n])    db = g^T op(a)  (b stored [n, k])
// The gradient of a leaf (parameter or input) that is laid out in one block per tile is
// accumulated from zero into a buffer mapped like it (ops::matmulAccumulate: no k split, sums in k
// order); with a sink, g is scaled by -lr first and accumulated straight into the parameter (the
// SGD step that never stores the weight gradient). Other gradients use ops::matmul's plan.

std::vector<Tensor> matmulForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 2);
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const bool ta = n.intAttr("transA", 0) != 0, tb = n.intAttr("transB", 0) != 0;
  expectFloat(n, a, 0);
  expectFloat(n, b, 1);
  if (a.rank() == 3 || b.rank() == 3) return batchMatMulForward(ctx);
  if (a.rank() != 2 || b.rank() != 2) {
    throw Error(fmt::format("{} ({}): 2-D operands expected, got \"{}\" {} and \"{}\" {}", n.name,
                            n.type, a.debugName(), a.shapeString(), b.debugName(),
                            b.shapeString()));
  }
  const size_t ka = ta ? a.dim(0) : a.dim(1), kb = tb ? b.dim(1) : b.dim(0);
  if (ka != kb) {
    throw Error(fmt::format(
        "{} ({}): inner dimensions differ: op(\"{}\") is [{},{}], op(\"{}\") is [{},{}]", n.name,
        n.type, a.debugName(), ta ? a.dim(1) : a.dim(0), ka, b.debugName(), kb,
        tb ? b.dim(0) : b.dim(1)));
  }
  return {ops::matmul(ctx.graph, a, b, ctx.prog, n.name, {ta, tb})};
}

// The product x y (with options) that is input i's gradient; see the comment above.
void matmulGradOf(BackwardContext& ctx, size_t i, const Tensor& x, const Tensor& y,
                  ops::MatMulOptions o, bool gIsX) {
  const Tensor& in = ctx.inputs[i];
  const std::string what = i == 0 ? "a" : "b";
  if (const GradientSink* s = ctx.sink(i); s && blockMapped(ctx.graph, s->target)) {
    const Tensor& g = gIsX ? x : y;
    const Tensor scaled =
        ops::scaleByScalar(ctx.graph, g, s->scalar, -1.0f, ctx.prog, ctx.stepName(what + "/scale"));
    ops::matmulAccumulate(ctx.graph, s->target, gIsX ? scaled : x, gIsX ? y : scaled, ctx.prog,
                          ctx.stepName(what + "/update"), o);
    ctx.sinkUsed(i);
  } else if (ctx.isLeaf(i) && blockMapped(ctx.graph, in)) {
    const Tensor buf = likeMapped(ctx.graph, in, ctx.stepName(what));
    ops::fill(ctx.graph, buf, 0.0f, ctx.prog, ctx.stepName(what + "/zero"));
    ops::matmulAccumulate(ctx.graph, buf, x, y, ctx.prog, ctx.stepName(what), o);
    ctx.setGrad(i, Gradient::of(buf));
  } else {
    ctx.setGrad(i, Gradient::of(ops::matmul(ctx.graph, x, y, ctx.prog, ctx.stepName(what), o)));
  }
}

void matmulBackward(BackwardContext& ctx) {
  if (ctx.inputs[0].rank() == 3) {
    batchMatMulBackward(ctx);
    return;
  }
  const bool ta = ctx.node.intAttr("transA", 0) != 0, tb = ctx.node.intAttr("transB", 0) != 0;
  const Tensor g = ctx.gradOutputTensor(0);
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  // Input a first, b second; a sink target is read by the other input's gradient, so the sunk
  // input goes last.
  std::vector<size_t> order = {0, 1};
  if (ctx.sink(0)) order = {1, 0};
  for (size_t i : order) {
    if (!ctx.needsGrad(i)) continue;
    if (i == 0) {
      if (!ta) {
        matmulGradOf(ctx, 0, g, b, {false, !tb}, true);
      } else {
        matmulGradOf(ctx, 0, b, g, {tb, true}, false);
      }
    } else {
      if (!tb) {
        matmulGradOf(ctx, 1, a, g, {!ta, false}, false);
      } else {
        matmulGradOf(ctx, 1, g, a, {true, ta}, true);
      }
    }
  }
}

// ---- Add, Sub, Mul, Scale: element by element.

std::vector<Tensor> addForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 2);
  expectSameShape(ctx.node, ctx.inputs);
  return {ops::add(ctx.graph, ctx.inputs[0], ctx.inputs[1], ctx.prog, ctx.node.name)};
}

void addBackward(BackwardContext& ctx) {
  for (size_t i = 0; i < 2; ++i) {
    if (ctx.needsGrad(i)) ctx.setGrad(i, ctx.gradOutput(0));
  }
}

std::vector<Tensor> subForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 2);
  expectSameShape(ctx.node, ctx.inputs);
  return {ops::sub(ctx.graph, ctx.inputs[0], ctx.inputs[1], ctx.prog, ctx.node.name)};
}

// db = -g: a scale by -1, exact.
void subBackward(BackwardContext& ctx) {
  if (ctx.needsGrad(0)) ctx.setGrad(0, ctx.gradOutput(0));
  if (ctx.needsGrad(1)) {
    const Gradient& g = ctx.gradOutput(0);
    ctx.setGrad(1, g.isConstant() ? Gradient::uniform(-g.constant, g.shape)
                                  : Gradient::of(ops::scale(ctx.graph, g.tensor, -1.0f, ctx.prog,
                                                            ctx.stepName("b"))));
  }
}

std::vector<Tensor> mulForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 2);
  expectSameShape(ctx.node, ctx.inputs);
  return {ops::mul(ctx.graph, ctx.inputs[0], ctx.inputs[1], ctx.prog, ctx.node.name)};
}

// da = g * b, db = g * a (one rounding each; a constant g is a scale of the other input).
void mulBackward(BackwardContext& ctx) {
  const Gradient& g = ctx.gradOutput(0);
  for (size_t i = 0; i < 2; ++i) {
    if (!ctx.needsGrad(i)) continue;
    const Tensor& other = ctx.inputs[1 - i];
    const std::string step = ctx.stepName(i == 0 ? "a" : "b");
    ctx.setGrad(
        i, Gradient::of(g.isConstant() ? ops::scale(ctx.graph, other, g.constant, ctx.prog, step)
                                       : ops::mul(ctx.graph, g.tensor, other, ctx.prog, step)));
  }
}

std::vector<Tensor> scaleForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 1);
  expectFloat(ctx.node, ctx.inputs[0], 0);
  const float s = static_cast<float>(ctx.node.floatAttr("scale", 1.0));
  return {ops::scale(ctx.graph, ctx.inputs[0], s, ctx.prog, ctx.node.name)};
}

void scaleBackward(BackwardContext& ctx) {
  const float s = static_cast<float>(ctx.node.floatAttr("scale", 1.0));
  const Gradient& g = ctx.gradOutput(0);
  ctx.setGrad(0, g.isConstant() ? Gradient::uniform(g.constant * s, g.shape)
                                : Gradient::of(ops::scale(ctx.graph, g.tensor, s, ctx.prog,
                                                          ctx.stepName("in"))));
}

// ---- Relu: backward is ops::reluGrad at the output (g where out > 0).

std::vector<Tensor> reluForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 1);
  expectFloat(ctx.node, ctx.inputs[0], 0);
  return {ops::relu(ctx.graph, ctx.inputs[0], ctx.prog, ctx.node.name)};
}

void reluBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(
      0, Gradient::of(ops::reluGrad(ctx.graph, g, ctx.outputs[0], ctx.prog, ctx.stepName("in"))));
}

// ---- AddBias: x [rows, n] + bias [n]; dx = g, dbias = reduceSum(g, 0) (rows in order).

std::vector<Tensor> addBiasForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 2);
  const Tensor &x = ctx.inputs[0], &b = ctx.inputs[1];
  expectFloat(n, x, 0);
  expectFloat(n, b, 1);
  if (x.rank() != 2 || b.rank() != 1 || b.dim(0) != x.dim(1)) {
    throw Error(fmt::format(
        "{} ({}): x [rows, n] and bias [n] expected, got \"{}\" {} and \"{}\" {}", n.name, n.type,
        x.debugName(), x.shapeString(), b.debugName(), b.shapeString()));
  }
  return {ops::addBias(ctx.graph, x, b, ctx.prog, n.name)};
}

void addBiasBackward(BackwardContext& ctx) {
  const Gradient& g = ctx.gradOutput(0);
  if (ctx.needsGrad(0)) ctx.setGrad(0, g);
  if (ctx.needsGrad(1)) {
    if (g.isConstant()) {
      float s = 0.0f;
      for (size_t r = 0; r < g.shape[0]; ++r) s += g.constant;
      ctx.setGrad(1, Gradient::uniform(s, {g.shape[1]}));
    } else {
      ctx.setGrad(
          1, Gradient::of(ops::reduceSum(ctx.graph, g.tensor, 0, ctx.prog, ctx.stepName("bias"))));
    }
  }
}

// ---- ReduceSum of a 2-D tensor along attribute axis; dx is g broadcast back (copied into a
// tensor mapped like x so that the ops after it spread over x's tiles).

std::vector<Tensor> reduceSumForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  expectFloat(n, ctx.inputs[0], 0);
  if (ctx.inputs[0].rank() != 2) {
    throw Error(fmt::format("{} ({}): a 2-D input expected, got \"{}\" {}", n.name, n.type,
                            ctx.inputs[0].debugName(), ctx.inputs[0].shapeString()));
  }
  const size_t axis = dimAttr(n, "axis", 2);
  return {ops::reduceSum(ctx.graph, ctx.inputs[0], axis, ctx.prog, n.name)};
}

void reduceSumBackward(BackwardContext& ctx) {
  const size_t axis = static_cast<size_t>(ctx.node.intAttr("axis", 0));
  const Tensor& x = ctx.inputs[0];
  const Gradient& g = ctx.gradOutput(0);
  if (g.isConstant()) {
    ctx.setGrad(0, Gradient::uniform(g.constant, x.shape()));
    return;
  }
  const Tensor view = g.tensor.expand(axis).broadcast(x.dim(axis), axis);
  const Tensor out = likeMapped(ctx.graph, x, ctx.stepName("in"));
  ctx.prog.add(Copy(view, out, ctx.stepName("in")));
  ctx.setGrad(0, Gradient::of(out));
}

// ---- SoftmaxCrossEntropy: logits [rows, classes], int32 labels [rows] -> each row's loss.
// Attribute gradScale: the forward computes (softmax - onehot) * gradScale fused with the loss
// (ops::softmaxCrossEntropy). The backward uses it when the loss's gradient is that constant; any
// other constant c recomputes with c, and a tensor gradient g recomputes with 1 and multiplies
// each row by g[r] (the same roundings as the fused scale).

std::vector<Tensor> sceForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 2);
  const Tensor &logits = ctx.inputs[0], &labels = ctx.inputs[1];
  expectFloat(n, logits, 0);
  if (logits.rank() != 2 || labels.rank() != 1 || labels.dim(0) != logits.dim(0) ||
      labels.elementType() != ElemType::Int32) {
    throw Error(fmt::format(
        "{} ({}): logits [rows, classes] float32 and labels [rows] int32 expected, got \"{}\" {} "
        "and \"{}\" {} {}",
        n.name, n.type, logits.debugName(), logits.shapeString(), labels.debugName(),
        elemTypeName(labels.elementType()), labels.shapeString()));
  }
  const float gradScale = static_cast<float>(n.floatAttr("gradScale", 1.0));
  ops::SoftmaxCrossEntropyResult r =
      ops::softmaxCrossEntropy(ctx.graph, logits, labels, gradScale, ctx.prog, n.name);
  ctx.save(r.grad);
  return {r.loss};
}

void sceBackward(BackwardContext& ctx) {
  if (!ctx.needsGrad(0)) return;
  const float gradScale = static_cast<float>(ctx.node.floatAttr("gradScale", 1.0));
  const Gradient& g = ctx.gradOutput(0);
  const Tensor &logits = ctx.inputs[0], &labels = ctx.inputs[1];
  if (g.isConstant() && g.constant == gradScale) {
    ctx.setGrad(0, Gradient::of(ctx.node.saved[0]));
  } else if (g.isConstant()) {
    ctx.setGrad(0, Gradient::of(ops::softmaxCrossEntropy(ctx.graph, logits, labels, g.constant,
                                                         ctx.prog, ctx.stepName("logits"))
                                    .grad));
  } else {
    const Tensor unit =
        ops::softmaxCrossEntropy(ctx.graph, logits, labels, 1.0f, ctx.prog, ctx.stepName("logits"))
            .grad;
    const Tensor rows = g.tensor.expand(1).broadcast(logits.dim(1), 1);
    ctx.setGrad(0, Gradient::of(ops::mul(ctx.graph, unit, rows, ctx.prog, ctx.stepName("rows"))));
  }
}

// ---- Views: Reshape (attribute shape), Transpose (attribute perm), Slice (begin, end, axis),
// Concat (axis). They copy nothing forward; the backward of a view is the inverse view, except
// Slice, whose gradient is zero outside the slice.

std::vector<Tensor> reshapeForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const std::vector<size_t> shape = sizesOf(n, "shape");
  const size_t count = std::accumulate(shape.begin(), shape.end(), size_t{1}, std::multiplies<>());
  if (count != ctx.inputs[0].numElements()) {
    throw Error(fmt::format("{} ({}): \"{}\" {} cannot take shape [{}]", n.name, n.type,
                            ctx.inputs[0].debugName(), ctx.inputs[0].shapeString(),
                            fmt::join(shape, ",")));
  }
  return {ctx.inputs[0].reshape(shape)};
}

void reshapeBackward(BackwardContext& ctx) {
  const Gradient& g = ctx.gradOutput(0);
  const std::vector<size_t>& shape = ctx.inputs[0].shape();
  ctx.setGrad(0, g.isConstant() ? Gradient::uniform(g.constant, shape)
                                : Gradient::of(g.tensor.reshape(shape)));
}

std::vector<Tensor> transposeForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  std::vector<size_t> perm = sizesOf(n, "perm");
  if (perm.empty()) {
    for (size_t d = x.rank(); d-- > 0;) perm.push_back(d);
  }
  std::vector<size_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < sorted.size(); ++d) {
    if (sorted.size() != x.rank() || sorted[d] != d) {
      throw Error(
          fmt::format("{} ({}): perm [{}] is not a permutation of the dimensions of \"{}\" {}",
                      n.name, n.type, fmt::join(perm, ","), x.debugName(), x.shapeString()));
    }
  }
  return {x.dimShuffle(perm)};
}

void transposeBackward(BackwardContext& ctx) {
  const Gradient& g = ctx.gradOutput(0);
  if (g.isConstant()) {
    ctx.setGrad(0, Gradient::uniform(g.constant, ctx.inputs[0].shape()));
    return;
  }
  std::vector<size_t> perm = sizesOf(ctx.node, "perm");
  if (perm.empty()) {
    for (size_t d = ctx.inputs[0].rank(); d-- > 0;) perm.push_back(d);
  }
  std::vector<size_t> inverse(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) inverse[perm[d]] = d;
  ctx.setGrad(0, Gradient::of(g.tensor.dimShuffle(inverse)));
}

std::vector<Tensor> sliceForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  if (x.rank() == 0)
    throw Error(fmt::format("{} ({}): \"{}\" is a scalar", n.name, n.type, x.debugName()));
  const size_t axis = dimAttr(n, "axis", x.rank());
  const int64_t b = n.intAttr("begin", 0), e = n.intAttr("end", static_cast<int64_t>(x.dim(axis)));
  if (b < 0 || e <= b || static_cast<size_t>(e) > x.dim(axis)) {
    throw Error(fmt::format("{} ({}): [{}, {}) of dimension {} of \"{}\" {}", n.name, n.type, b, e,
                            axis, x.debugName(), x.shapeString()));
  }
  return {x.slice(static_cast<size_t>(b), static_cast<size_t>(e), axis)};
}

void sliceBackward(BackwardContext& ctx) {
  const OpNode& n = ctx.node;
  const Tensor& x = ctx.inputs[0];
  const size_t axis = static_cast<size_t>(n.intAttr("axis", 0));
  const size_t b = static_cast<size_t>(n.intAttr("begin", 0));
  const size_t e = static_cast<size_t>(n.intAttr("end", static_cast<int64_t>(x.dim(axis))));
  const Tensor out = likeMapped(ctx.graph, x, ctx.stepName("in"));
  ops::fill(ctx.graph, out, 0.0f, ctx.prog, ctx.stepName("zero"));
  const Gradient& g = ctx.gradOutput(0);
  if (g.isConstant()) {
    ops::fill(ctx.graph, out.slice(b, e, axis), g.constant, ctx.prog, ctx.stepName("fill"));
  } else {
    ctx.prog.add(Copy(g.tensor, out.slice(b, e, axis), ctx.stepName("copy")));
  }
  ctx.setGrad(0, Gradient::of(out));
}

std::vector<Tensor> concatForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  if (ctx.inputs.empty()) throw Error(fmt::format("{} ({}): no inputs", n.name, n.type));
  const size_t axis = dimAttr(n, "axis", ctx.inputs[0].rank());
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    const Tensor& t = ctx.inputs[i];
    bool ok = t.rank() == ctx.inputs[0].rank() && t.elementType() == ctx.inputs[0].elementType();
    for (size_t d = 0; ok && d < t.rank(); ++d) ok = d == axis || t.dim(d) == ctx.inputs[0].dim(d);
    if (!ok) {
      throw Error(fmt::format("{} ({}): \"{}\" {} and \"{}\" {} do not join along dimension {}",
                              n.name, n.type, ctx.inputs[0].debugName(),
                              ctx.inputs[0].shapeString(), t.debugName(), t.shapeString(), axis));
    }
  }
  return {tessera::concat(ctx.inputs, axis)};
}

void concatBackward(BackwardContext& ctx) {
  const size_t axis = static_cast<size_t>(ctx.node.intAttr("axis", 0));
  const Gradient& g = ctx.gradOutput(0);
  size_t offset = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const size_t len = ctx.inputs[i].dim(axis);
    if (ctx.needsGrad(i)) {
      ctx.setGrad(i, g.isConstant() ? Gradient::uniform(g.constant, ctx.inputs[i].shape())
                                    : Gradient::of(g.tensor.slice(offset, offset + len, axis)));
    }
    offset += len;
  }
}

}  // namespace

OpRegistry OpRegistry::builtin() {
  OpRegistry r;
  r.add({"MatMul", matmulForward, matmulBackward});
  r.add({"Add", addForward, addBackward});
  r.add({"Sub", subForward, subBackward});
  r.add({"Mul", mulForward, mulBackward});
  r.add({"Scale", scaleForward, scaleBackward});
  r.add({"Relu", reluForward, reluBackward});
  r.add({"AddBias", addBiasForward, addBiasBackward});
  r.add({"ReduceSum", reduceSumForward, reduceSumBackward});
  r.add({"SoftmaxCrossEntropy", sceForward, sceBackward});
  r.add({"Reshape", reshapeForward, reshapeBackward});
  r.add({"Transpose", transposeForward, transposeBackward});
  r.add({"Slice", sliceForward, sliceBackward});
  r.add({"Concat", concatForward, concatBackward});
  addConvOps(r);
  addNnOps(r);
  return r;
}

namespace {

std::vector<int64_t> toInts(const std::vector<size_t>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

Value matmul(Tape& tape, const Value& a, const Value& b, const std::string& name,
             const ops::MatMulOptions& o) {
  return tape.apply1("MatMul", {a, b},
                     {{"transA", int64_t{o.transposeA}}, {"transB", int64_t{o.transposeB}}}, name);
}
Value add(Tape& tape, const Value& a, const Value& b, const std::string& name) {
  return tape.apply1("Add", {a, b}, {}, name);
}
Value sub(Tape& tape, const Value& a, const Value& b, const std::string& name) {
  return tape.apply1("Sub", {a, b}, {}, name);
}
Value mul(Tape& tape, const Value& a, const Value& b, const std::string& name) {
  return tape.apply1("Mul", {a, b}, {}, name);
}
Value scale(Tape& tape, const Value& a, float s, const std::string& name) {
  return tape.apply1("Scale", {a}, {{"scale", double{s}}}, name);
}
Value relu(Tape& tape, const Value& a, const std::string& name) {
  return tape.apply1("Relu", {a}, {}, name);
}
Value addBias(Tape& tape, const Value& x, const Value& bias, const std::string& name) {
  return tape.apply1("AddBias", {x, bias}, {}, name);
}
Value reduceSum(Tape& tape, const Value& x, size_t axis, const std::string& name) {
  return tape.apply1("ReduceSum", {x}, {{"axis", static_cast<int64_t>(axis)}}, name);
}
Value softmaxCrossEntropy(Tape& tape, const Value& logits, const Value& labels, float gradScale,
                          const std::string& name) {
  return tape.apply1("SoftmaxCrossEntropy", {logits, labels}, {{"gradScale", double{gradScale}}},
                     name);
}
Value reshape(Tape& tape, const Value& x, const std::vector<size_t>& shape,
              const std::string& name) {
  return tape.apply1("Reshape", {x}, {{"shape", toInts(shape)}}, name);
}
Value transpose(Tape& tape, const Value& x, const std::vector<size_t>& perm,
                const std::string& name) {
  return tape.apply1("Transpose", {x}, {{"perm", toInts(perm)}}, name);
}
Value slice(Tape& tape, const Value& x, size_t begin, size_t end, size_t axis,
            const std::string& name) {
  return tape.apply1("Slice", {x},
                     {{"begin", static_cast<int64_t>(begin)},
                      {"end", static_cast<int64_t>(end)},
                      {"axis", static_cast<int64_t>(axis)}},
                     name);
}
Value concat(Tape& tape, const std::vector<Value>& xs, size_t axis, const std::string& name) {
  return tape.apply1("Concat", xs, {{"axis", static_cast<int64_t>(axis)}}, name);
}

}  // namespace tessera::autodiff
