// The built-in differentiable ops: for each, its forward and its backward side by side, and one
// registration in OpRegistry::builtin() (docs/autodiff.md, "Adding an op"). A backward's operation
// order is part of the op's contract: the gradient-check tests reproduce it bit for bit on the
// host.
#include "tessera/ops.hpp"

#include <fmt/format.h>

#include <limits>
#include <numeric>
#include <optional>

#include "autodiff_util.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"
#include "tessera/optimizers.hpp"
#include "tessera/pad.hpp"

namespace tessera::autodiff {

namespace {

// ---- MatMul: c = op(a) op(b), attributes transA, transB (0 or 1). 3-D operands are a batched
// product, ops_nn.cpp (batchMatMulForward).
//
// Backward, for c = op(a) op(b) with g = dc: each input's gradient is one product of g with the
// other input, in the stored layout of that input:
//   da = g op(b)^T  (a stored [m, k])    da = op(b) g^T  (a stored [k, m])
//   db = op(a)^T g  (b stored [k, n])    db = g^T op(a)  (b stored [n, k])
// The gradient of a leaf (parameter or input) that is laid out in one block per tile is computed
// into a buffer mapped like it (ops::matmulInto: each tile its own block from +0, no k split, sums
// in k order); with a sink, g is scaled by -lr first and accumulated straight into the parameter
// (the SGD step that never stores the weight gradient). Other gradients use ops::matmul's plan.

// numpy.matmul's shapes (ONNX MatMul) beyond the 2-D and equal-batch 3-D products: a 1-D
// operand is a row (a) or a column (b) dropped from the result; an N-D a with a 2-D b is one 2-D
// product of a viewed as [rows, K] (PyTorch's Linear on [B, S, D]); otherwise the batch
// dimensions broadcast and each batch is one product (ops::batchMatMul).
struct MatMulShapes {
  std::vector<size_t> a, b;    // the operands as matrices or batches of them (views' shapes)
  std::vector<size_t> batch;   // the broadcast batch dimensions (none for a 2-D product)
  std::vector<size_t> result;  // numpy.matmul's result shape
  size_t m = 0, k = 0, n = 0;
  bool flat = false;  // a 2-D product of a viewed as [rows, K]
};

MatMulShapes matmulShapes(const OpNode& n, const Tensor& a, const Tensor& b) {
  MatMulShapes s;
  auto fail = [&](const std::string& why) {
    return Error(fmt::format("{} ({}): {}: \"{}\" {} and \"{}\" {}", n.name, n.type, why,
                             a.debugName(), a.shapeString(), b.debugName(), b.shapeString()));
  };
  if (a.rank() == 0 || b.rank() == 0) throw fail("scalar operands");
  s.a = a.shape(), s.b = b.shape();
  if (a.rank() == 1) s.a.insert(s.a.begin(), 1);
  if (b.rank() == 1) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2], s.k = s.a.back(), s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k) throw fail("inner dimensions differ");
  const std::vector<size_t> ba(s.a.begin(), s.a.end() - 2), bb(s.b.begin(), s.b.end() - 2);
  s.batch = ops::broadcastShape(ba, bb, fmt::format("{} ({}): batch dimensions", n.name, n.type));
  if (bb.empty()) {
    s.flat = true;
    for (size_t d : ba) s.m *= d;
    s.a = {s.m, s.k};
  }
  s.result = s.flat ? ba : s.batch;
  if (a.rank() > 1) s.result.push_back(a.dim(a.rank() - 2));
  if (b.rank() > 1) s.result.push_back(s.n);
  return s;
}

// The operand t as [B, rows, cols] for the batch: its own batch dimensions broadcast (a view).
Tensor asBatches(const Tensor& t, const std::vector<size_t>& matrixShape,
                 const std::vector<size_t>& batch) {
  const size_t rows = matrixShape[matrixShape.size() - 2], cols = matrixShape.back();
  std::vector<size_t> full = batch;
  full.push_back(rows), full.push_back(cols);
  size_t count = 1;
  for (size_t d : batch) count *= d;
  return ops::broadcastTo(t.reshape(matrixShape), full).reshape({count, rows, cols});
}

bool plainMatMul(const Tensor& a, const Tensor& b) {
  return (a.rank() == 2 && b.rank() == 2) ||
         (a.rank() == 3 && b.rank() == 3 && a.dim(0) == b.dim(0));
}

std::vector<Tensor> matmulForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 2);
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const bool ta = n.intAttr("transA", 0) != 0, tb = n.intAttr("transB", 0) != 0;
  if (halfProduct(a, b)) return halfMatMulForward(ctx);
  expectFloat(n, a, 0);
  expectFloat(n, b, 1);
  if (a.rank() == 3 && b.rank() == 3 && a.dim(0) == b.dim(0)) return batchMatMulForward(ctx);
  if (!plainMatMul(a, b)) {
    if (ta || tb) {
      throw Error(fmt::format(
          "{} ({}): transA and transB apply to 2-D and equal-batch 3-D operands only, got \"{}\" "
          "{} and \"{}\" {}",
          n.name, n.type, a.debugName(), a.shapeString(), b.debugName(), b.shapeString()));
    }
    const MatMulShapes s = matmulShapes(n, a, b);
    if (s.flat) {
      return {ops::matmul(ctx.graph, a.reshape(s.a), b.reshape(s.b), ctx.prog, n.name)
                  .reshape(s.result)};
    }
    return {ops::batchMatMul(ctx.graph, asBatches(a, s.a, s.batch), asBatches(b, s.b, s.batch),
                             ctx.prog, n.name)
                .reshape(s.result)};
  }
  const size_t ka = ta ? a.dim(0) : a.dim(1), kb = tb ? b.dim(1) : b.dim(0);
  if (ka != kb) {
    throw Error(fmt::format(
        "{} ({}): inner dimensions differ: op(\"{}\") is [{},{}], op(\"{}\") is [{},{}]", n.name,
        n.type, a.debugName(), ta ? a.dim(1) : a.dim(0), ka, b.debugName(), kb,
        tb ? b.dim(0) : b.dim(1)));
  }
  // a's blocks gathered for the unit stay on their tiles for the weight's gradient (x^T dy reads
  // them again: matmul2dBackward).
  return {ops::matmul(ctx.graph, a, b, ctx.prog, n.name, {ta, tb, true})};
}

// The product x y (with options) that is the gradient of input i, stored as `in` (input i or a
// 2-D view of it); see the comment above. Returns nothing when it went into the sink.
std::optional<Tensor> matmulGradOf(BackwardContext& ctx, size_t i, const Tensor& in,
                                   const Tensor& x, const Tensor& y, ops::MatMulOptions o,
                                   bool gIsX) {
  const std::string what = i == 0 ? "a" : "b";
  const bool whole = in.shape() == ctx.inputs[i].shape();
  if (const GradientSink* s = ctx.sink(i); whole && s && blockMapped(ctx.graph, s->target)) {
    const Tensor& g = gIsX ? x : y;
    const Tensor scaled =
        ops::scaleByScalar(ctx.graph, g, s->scalar, -1.0f, ctx.prog, ctx.stepName(what + "/scale"));
    ops::matmulAccumulate(ctx.graph, s->target, gIsX ? scaled : x, gIsX ? y : scaled, ctx.prog,
                          ctx.stepName(what + "/update"), o);
    ctx.sinkUsed(i);
    return {};
  }
  if (whole && ctx.isLeaf(i) && blockMapped(ctx.graph, in)) {
    const Tensor buf = likeMapped(ctx.graph, in, ctx.stepName(what));
    ops::matmulInto(ctx.graph, buf, x, y, ctx.prog, ctx.stepName(what), o);
    return buf;
  }
  return ops::matmul(ctx.graph, x, y, ctx.prog, ctx.stepName(what), o);
}

// The gradients of c = op(a) op(b) for 2-D a and b (views of the inputs, of the shapes given)
// from g = dc [m, n]; each set in its input's shape.
void matmul2dBackward(BackwardContext& ctx, const Tensor& g, const Tensor& a, const Tensor& b,
                      bool ta, bool tb) {
  // Input a first, b second; a sink target is read by the other input's gradient, so the sunk
  // input goes last.
  std::vector<size_t> order = {0, 1};
  if (ctx.sink(0)) order = {1, 0};
  for (size_t i : order) {
    if (!ctx.needsGrad(i)) continue;
    std::optional<Tensor> d;
    if (i == 0) {
      d = !ta ? matmulGradOf(ctx, 0, a, g, b, {false, !tb}, true)
              : matmulGradOf(ctx, 0, a, b, g, {tb, true}, false);
    } else {
      // The forward's a, unchanged since (a tape value), from the copies it kept on the tiles.
      d = !tb ? matmulGradOf(ctx, 1, b, a, g, {!ta, false, false, !ta}, false)
              : matmulGradOf(ctx, 1, b, g, a, {true, ta}, true);
    }
    if (d) ctx.setGrad(i, Gradient::of(d->reshape(ctx.inputs[i].shape())));
  }
}

void matmulBackward(BackwardContext& ctx) {
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  if (halfProduct(a, b)) {
    halfMatMulBackward(ctx);
    return;
  }
  if (a.rank() == 3 && b.rank() == 3 && a.dim(0) == b.dim(0)) {
    batchMatMulBackward(ctx);
    return;
  }
  const Tensor g = ctx.gradOutputTensor(0);
  if (plainMatMul(a, b)) {
    matmul2dBackward(ctx, g, a, b, ctx.node.intAttr("transA", 0) != 0,
                     ctx.node.intAttr("transB", 0) != 0);
    return;
  }
  const MatMulShapes s = matmulShapes(ctx.node, a, b);
  if (s.flat) {
    matmul2dBackward(ctx, g.reshape({s.m, s.n}), a.reshape(s.a), b.reshape(s.b), false, false);
    return;
  }
  // Batches: each operand's gradient per batch (batchMatMulBackwardA/B), then summed over the
  // batch dimensions it was broadcast along (ops::reduceToShape).
  size_t count = 1;
  for (size_t d : s.batch) count *= d;
  const Tensor g3 = g.reshape({count, s.m, s.n});
  const Tensor a3 = asBatches(a, s.a, s.batch), b3 = asBatches(b, s.b, s.batch);
  for (size_t i = 0; i < 2; ++i) {
    if (!ctx.needsGrad(i)) continue;
    const std::string what = i == 0 ? "a" : "b";
    const Tensor d =
        i == 0 ? ops::batchMatMulBackwardA(ctx.graph, g3, b3, ctx.prog, ctx.stepName(what), {})
               : ops::batchMatMulBackwardB(ctx.graph, g3, a3, ctx.prog, ctx.stepName(what), {});
    const std::vector<size_t>& m = i == 0 ? s.a : s.b;
    std::vector<size_t> full = s.batch;
    full.push_back(m[m.size() - 2]), full.push_back(m.back());
    ctx.setGrad(i, Gradient::of(ops::reduceToShape(ctx.graph, d.reshape(full), m, ctx.prog,
                                                   ctx.stepName(what + "/sum"))
                                    .reshape(ctx.inputs[i].shape())));
  }
}

// ---- Gemm (ONNX): y = alpha op(A) op(B) + beta C, A and B 2-D, C optional and broadcast to
// [M, N]; attributes alpha, beta (default 1), transA, transB (0/1). Forward order: the product
// (ops::matmul), times alpha when alpha != 1, plus (C times beta when beta != 1); a C of [N] with
// beta 1 is ops::addBias (the same bits as a broadcast add). Backward: g times alpha (when
// != 1) through MatMul's backward (sinks and accumulation included); dC = g summed to C's shape
// (rows in order), times beta when != 1.

std::vector<Tensor> gemmForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  if (ctx.inputs.size() != 2 && ctx.inputs.size() != 3) {
    throw Error(fmt::format("{} ({}): {} inputs, 2 or 3 expected (A, B and an optional C)", n.name,
                            n.type, ctx.inputs.size()));
  }
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  for (size_t i = 0; i < ctx.inputs.size(); ++i) expectFloat(n, ctx.inputs[i], i);
  const bool ta = n.intAttr("transA", 0) != 0, tb = n.intAttr("transB", 0) != 0;
  if (a.rank() != 2 || b.rank() != 2 || (ta ? a.dim(0) : a.dim(1)) != (tb ? b.dim(1) : b.dim(0))) {
    throw Error(fmt::format(
        "{} ({}): A and B must be matrices with op(A) [M, K] and op(B) [K, N] (transA {}, transB "
        "{}), got \"{}\" {} and \"{}\" {}",
        n.name, n.type, int{ta}, int{tb}, a.debugName(), a.shapeString(), b.debugName(),
        b.shapeString()));
  }
  const float alpha = static_cast<float>(n.floatAttr("alpha", 1.0));
  const float beta = static_cast<float>(n.floatAttr("beta", 1.0));
  Tensor y = ops::matmul(ctx.graph, a, b, ctx.prog, n.name + "/mm", {ta, tb});
  if (alpha != 1.0f) y = ops::scale(ctx.graph, y, alpha, ctx.prog, n.name + "/alpha");
  if (ctx.inputs.size() == 3) {
    Tensor c = ctx.inputs[2];
    const std::vector<size_t> out = y.shape();
    if (ops::broadcastShape(c.shape(), out,
                            fmt::format("{} ({}): C \"{}\"", n.name, n.type, c.debugName())) !=
        out) {
      throw Error(fmt::format("{} ({}): C \"{}\" {} does not broadcast to the product's [{}]",
                              n.name, n.type, c.debugName(), c.shapeString(), fmt::join(out, ",")));
    }
    if (beta != 1.0f) c = ops::scale(ctx.graph, c, beta, ctx.prog, n.name + "/beta");
    if (c.rank() == 1 && c.dim(0) == out[1]) {
      y = ops::addBias(ctx.graph, y, c, ctx.prog, n.name);
    } else {
      y = ops::binary(ctx.graph, ops::BinaryOp::Add, y, c, ctx.prog, n.name);
    }
  }
  return {y};
}

void gemmBackward(BackwardContext& ctx) {
  const OpNode& n = ctx.node;
  const float alpha = static_cast<float>(n.floatAttr("alpha", 1.0));
  const float beta = static_cast<float>(n.floatAttr("beta", 1.0));
  if (ctx.inputs.size() == 3 && ctx.needsGrad(2)) {
    const Gradient& g = ctx.gradOutput(0);
    const std::vector<size_t>& shape = ctx.inputs[2].shape();
    if (g.isConstant()) {
      size_t count = g.shape[0] * g.shape[1], in = ctx.inputs[2].numElements();
      float s = g.constant;
      for (size_t r = 1; r < count / in; ++r) s += g.constant;
      ctx.setGrad(2, Gradient::uniform(beta != 1.0f ? s * beta : s, shape));
    } else {
      Tensor d = ops::reduceToShape(ctx.graph, g.tensor, shape, ctx.prog, ctx.stepName("c"));
      if (beta != 1.0f) d = ops::scale(ctx.graph, d, beta, ctx.prog, ctx.stepName("c/beta"));
      ctx.setGrad(2, Gradient::of(d));
    }
  }
  if (!ctx.needsGrad(0) && !ctx.needsGrad(1)) return;
  Tensor g = ctx.gradOutputTensor(0);
  if (alpha != 1.0f) g = ops::scale(ctx.graph, g, alpha, ctx.prog, ctx.stepName("alpha"));
  matmul2dBackward(ctx, g, ctx.inputs[0], ctx.inputs[1], n.intAttr("transA", 0) != 0,
                   n.intAttr("transB", 0) != 0);
}

// ---- Scale: a * scale (attribute). (Add, Sub, Mul: ops_math.cpp, with broadcasting.)

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

// ---- Clip (ONNX; PyTorch's clamp, hardtanh and relu6): x clamped to [min, max], attributes
// (the ONNX inputs, constant), an absent bound none; dx = g where min < x < max (hardtanh's
// backward: a bound itself passes nothing).

std::pair<float, float> clipBounds(const OpNode& n) {
  const float inf = std::numeric_limits<float>::infinity();
  const float lo = n.attributes.count("min") ? static_cast<float>(n.floatAttr("min", 0)) : -inf;
  const float hi = n.attributes.count("max") ? static_cast<float>(n.floatAttr("max", 0)) : inf;
  if (!(lo <= hi))
    throw Error(fmt::format("{} ({}): min {} must not exceed max {}", n.name, n.type, lo, hi));
  return {lo, hi};
}

std::vector<Tensor> clipForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 1);
  expectFloat(ctx.node, ctx.inputs[0], 0);
  const auto [lo, hi] = clipBounds(ctx.node);
  return {ops::clip(ctx.graph, ctx.inputs[0], lo, hi, ctx.prog, ctx.node.name)};
}

void clipBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  const auto [lo, hi] = clipBounds(ctx.node);
  ctx.setGrad(0, Gradient::of(ops::clipGrad(ctx.graph, g, ctx.inputs[0], lo, hi, ctx.prog,
                                            ctx.stepName("in"))));
}

// ---- AddBias: x [rows, n] + bias [n]; dx = g, dbias = reduceSum(g, 0) (rows in order).

// AddBias's and AddBiasRelu's operands, x [rows, n] and bias [n], checked.
void expectBiasOperands(const ForwardContext& ctx) {
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
}

std::vector<Tensor> addBiasForward(ForwardContext& ctx) {
  expectBiasOperands(ctx);
  return {ops::addBias(ctx.graph, ctx.inputs[0], ctx.inputs[1], ctx.prog, ctx.node.name)};
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

// ---- AddBiasRelu: max(x + bias, 0), AddBias then Relu in one op (ops::addBiasRelu: the same
// bits); backward is Relu's (g where out > 0), then AddBias's with that gradient.

std::vector<Tensor> addBiasReluForward(ForwardContext& ctx) {
  expectBiasOperands(ctx);
  return {ops::addBiasRelu(ctx.graph, ctx.inputs[0], ctx.inputs[1], ctx.prog, ctx.node.name)};
}

void addBiasReluBackward(BackwardContext& ctx) {
  const Tensor g = ops::reluGrad(ctx.graph, ctx.gradOutputTensor(0), ctx.outputs[0], ctx.prog,
                                 ctx.stepName("in"));
  if (ctx.needsGrad(0)) ctx.setGrad(0, Gradient::of(g));
  if (ctx.needsGrad(1))
    ctx.setGrad(1, Gradient::of(ops::reduceSum(ctx.graph, g, 0, ctx.prog, ctx.stepName("bias"))));
}

// ---- ReduceSum of a 2-D tensor along attribute axis; dx is g broadcast back (copied into a
// tensor mapped like x so that the ops after it spread over x's tiles).

std::vector<Tensor> reduceSumForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  if (onnxReduceSum(n)) return reduceSumOnnxForward(ctx);
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
  if (onnxReduceSum(ctx.node)) {
    reduceSumOnnxBackward(ctx);
    return;
  }
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

// Reshape's shape attribute with ONNX's meaning: 0 copies the input's dimension at that position
// (unless allowzero = 1, when 0 is a size), one -1 is inferred from the element count; [] is a
// scalar.
std::vector<size_t> reshapeTarget(const OpNode& n, const Tensor& x) {
  if (n.attributes.count("shape") == 0)
    throw Error(fmt::format("{} ({}): the shape attribute is required", n.name, n.type));
  const std::vector<int64_t> want = n.intsAttr("shape");
  const bool allowZero = n.intAttr("allowzero", 0) != 0;
  std::vector<size_t> shape;
  size_t known = 1;
  std::optional<size_t> inferred;
  auto fail = [&](const std::string& why) {
    return Error(fmt::format("{} ({}): \"{}\" {} cannot take shape [{}]: {}", n.name, n.type,
                             x.debugName(), x.shapeString(), fmt::join(want, ","), why));
  };
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t v = want[i];
    if (v == -1) {
      if (inferred) throw fail("more than one -1");
      inferred = i;
      shape.push_back(1);
    } else if (v == 0 && !allowZero) {
      if (i >= x.rank()) throw fail(fmt::format("0 at {} copies no dimension", i));
      shape.push_back(x.dim(i));
      known *= x.dim(i);
    } else if (v < 0) {
      throw fail(fmt::format("entry {} is negative", v));
    } else {
      shape.push_back(static_cast<size_t>(v));
      known *= static_cast<size_t>(v);
    }
  }
  if (inferred) {
    if (known == 0 || x.numElements() % known != 0) throw fail("-1 cannot be inferred");
    shape[*inferred] = x.numElements() / known;
  } else if (known != x.numElements()) {
    throw fail("the element counts differ");
  }
  return shape;
}

std::vector<Tensor> reshapeForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  return {ctx.inputs[0].reshape(reshapeTarget(n, ctx.inputs[0]))};
}

// ---- Squeeze (axes: dimensions of size 1 to drop, negative from the end; absent: every
// dimension of size 1) and Unsqueeze (axes: positions of new dimensions of size 1 in the result,
// negative from the result's end): views, whose gradient is g viewed in the input's shape
// (reshapeBackward).

std::vector<Tensor> squeezeForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  const bool squeeze = n.type == "Squeeze";
  const std::vector<int64_t> axes = n.intsAttr("axes");
  const int64_t rank = static_cast<int64_t>(squeeze ? x.rank() : x.rank() + axes.size());
  std::vector<bool> marked(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    const int64_t d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank || marked[static_cast<size_t>(d)] ||
        (squeeze && x.dim(static_cast<size_t>(d)) != 1)) {
      throw Error(fmt::format(
          "{} ({}): axes [{}] are out of range, repeated or (Squeeze) not of size 1 for \"{}\" {}",
          n.name, n.type, fmt::join(axes, ","), x.debugName(), x.shapeString()));
    }
    marked[static_cast<size_t>(d)] = true;
  }
  if (!squeeze && axes.empty())
    throw Error(fmt::format("{} ({}): the axes attribute is required", n.name, n.type));
  std::vector<size_t> shape;
  if (squeeze) {
    for (size_t d = 0; d < x.rank(); ++d) {
      const bool drop = axes.empty() ? x.dim(d) == 1 : marked[d];
      if (!drop) shape.push_back(x.dim(d));
    }
  } else {
    size_t next = 0;
    for (size_t d = 0; d < marked.size(); ++d) shape.push_back(marked[d] ? 1 : x.dim(next++));
  }
  return {x.reshape(shape)};
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
  const size_t axis = signedAxis(n, ctx.inputs[0], 0);
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
  const size_t axis = signedAxis(ctx.node, ctx.inputs[0], 0);
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

// ---- Pad (ONNX): pads [begin of every dimension..., end of every dimension...] (the importer
// folds the pads input into this attribute), mode ("constant", "reflect" or "edge"),
// constant_value (default 0), optional axes (the dimensions pads refer to; default all). Forward:
// ops::pad (tessera/pad.hpp): a new tensor mapped linearly, x copied into its interior and the
// border filled with the value or copied from x. Backward: ops::padGrad, the interior of g (a
// view) for constant, the border's gradient added into the elements it copies for the others.
// Negative pads (cropping) and the mode wrap are refused naming the attribute.

struct Padding {
  std::vector<size_t> begin, end;
  ops::PadMode mode = ops::PadMode::Constant;
};

Padding padding(const OpNode& n, const Tensor& x) {
  Padding p;
  auto it = n.attributes.find("mode");
  if (it != n.attributes.end()) {
    const std::string* mode = std::get_if<std::string>(&it->second);
    if (mode && *mode == "reflect") {
      p.mode = ops::PadMode::Reflect;
    } else if (mode && *mode == "edge") {
      p.mode = ops::PadMode::Edge;
    } else if (!mode || *mode != "constant") {
      throw Error(fmt::format(
          "{} ({}): mode \"{}\" is not supported (only \"constant\", \"reflect\" and \"edge\")",
          n.name, n.type, mode ? *mode : "?"));
    }
  }
  const std::vector<int64_t> pads = n.intsAttr("pads");
  std::vector<int64_t> axes = n.intsAttr("axes");
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    throw Error(fmt::format(
        "{} ({}): pads [{}] must have two entries per padded axis ({}) of "
        "\"{}\" {}",
        n.name, n.type, fmt::join(pads, ","), axes.size(), x.debugName(), x.shapeString()));
  }
  p.begin.assign(x.rank(), 0);
  p.end.assign(x.rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t d = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (d < 0 || d >= rank) {
      throw Error(fmt::format("{} ({}): axes [{}] are out of range for \"{}\" {}", n.name, n.type,
                              fmt::join(axes, ","), x.debugName(), x.shapeString()));
    }
    const int64_t b = pads[i], e = pads[i + axes.size()];
    if (b < 0 || e < 0) {
      throw Error(fmt::format("{} ({}): negative pads [{}] (cropping) are not supported", n.name,
                              n.type, fmt::join(pads, ",")));
    }
    p.begin[static_cast<size_t>(d)] = static_cast<size_t>(b);
    p.end[static_cast<size_t>(d)] = static_cast<size_t>(e);
  }
  return p;
}

std::vector<Tensor> padForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  const Tensor& x = ctx.inputs[0];
  expectFloat(n, x, 0);
  const Padding p = padding(n, x);
  return {ops::pad(ctx.graph, x, p.begin, p.end, p.mode,
                   static_cast<float>(n.floatAttr("constant_value", 0.0)), ctx.prog, n.name)};
}

void padBackward(BackwardContext& ctx) {
  const Gradient& g = ctx.gradOutput(0);
  const std::vector<size_t>& shape = ctx.inputs[0].shape();
  const Padding p = padding(ctx.node, ctx.inputs[0]);
  if (g.isConstant() && p.mode == ops::PadMode::Constant) {
    ctx.setGrad(0, Gradient::uniform(g.constant, shape));
    return;
  }
  ctx.setGrad(0, Gradient::of(ops::padGrad(ctx.graph, ctx.gradOutputTensor(0), p.begin, p.end,
                                           p.mode, ctx.prog, ctx.stepName("x"))));
}

}  // namespace

OpRegistry OpRegistry::builtin() {
  OpRegistry r;
  r.add({"MatMul", matmulForward, matmulBackward});
  r.add({"Gemm", gemmForward, gemmBackward});
  r.add({"Scale", scaleForward, scaleBackward});
  r.add({"Relu", reluForward, reluBackward});
  r.add({"Clip", clipForward, clipBackward});
  r.add({"AddBias", addBiasForward, addBiasBackward});
  r.add({"AddBiasRelu", addBiasReluForward, addBiasReluBackward});
  r.add({"ReduceSum", reduceSumForward, reduceSumBackward});
  r.add({"SoftmaxCrossEntropy", sceForward, sceBackward});
  r.add({"Reshape", reshapeForward, reshapeBackward});
  r.add({"Transpose", transposeForward, transposeBackward});
  r.add({"Slice", sliceForward, sliceBackward});
  r.add({"Concat", concatForward, concatBackward});
  r.add({"Squeeze", squeezeForward, reshapeBackward});
  r.add({"Pad", padForward, padBackward});
  r.add({"Unsqueeze", squeezeForward, reshapeBackward});
  addConvOps(r);
  addNnOps(r);
  addMathOps(r);
  addHalfOps(r);
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
Value addBiasRelu(Tape& tape, const Value& x, const Value& bias, const std::string& name) {
  return tape.apply1("AddBiasRelu", {x, bias}, {}, name);
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
