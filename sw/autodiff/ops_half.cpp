// Mixed precision on the tape (docs/autodiff.md, "Mixed precision"): fp32 master weights and
// float16 copies for the products.
// - The float16 cast. Its gradient is the cast back: a float16 output's gradient widens exactly to
//   the float32 input's; a float32 output's gradient narrows (nearest-even) to the float16 input's.
// - MatMul of float16 operands: c = a b in float32 (ops::matmulHalf). Its backward narrows the
//   output's gradient to float16 once (where a loss scale keeps small gradients from flushing to
//   zero) and computes da = g16 b^T and db = a^T g16 as float16 products with float32 results,
//   the transposes made by ops::transposeHalf. The gradients are float32, which the cast back
//   to a float32 master leaves as they are.
// - ScaleGradient: the identity forward, the gradient times a device scalar backward (a dynamic
//   loss scale, ops::LossScaler).
#include <fmt/format.h>

#include "autodiff_util.hpp"
#include "tessera/error.hpp"
#include "tessera/half.hpp"

namespace tessera::autodiff {

namespace {

// The attribute "to": 16 (float16) or 32 (float32).
ElemType castTarget(const OpNode& n) {
  const int64_t to = n.intAttr("to", 0);
  if (to == 16) return ElemType::Float16;
  if (to == 32) return ElemType::Float32;
  throw Error(fmt::format("{} ({}): attribute \"to\" is {}; 16 (float16) or 32 (float32)", n.name,
                          n.type, to));
}

std::vector<Tensor> castForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 1);
  return {ops::cast(ctx.graph, ctx.inputs[0], castTarget(ctx.node), ctx.prog, ctx.node.name)};
}

void castBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(0, Gradient::of(ops::cast(ctx.graph, g, ctx.inputs[0].elementType(), ctx.prog,
                                        ctx.stepName("in"))));
}

// ScaleGradient: y = x; dx = g * s[0] (s a device scalar, no gradient of its own).
std::vector<Tensor> scaleGradientForward(ForwardContext& ctx) {
  expectInputs(ctx.node, ctx.inputs, 2);
  expectFloat(ctx.node, ctx.inputs[0], 0);
  return {ctx.inputs[0]};
}

void scaleGradientBackward(BackwardContext& ctx) {
  if (!ctx.needsGrad(0)) return;
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(0, Gradient::of(ops::scaleByScalar(ctx.graph, g, ctx.inputs[1], 1.0f, ctx.prog,
                                                 ctx.stepName("in"))));
}

}  // namespace

bool halfProduct(const Tensor& a, const Tensor& b) {
  return a.elementType() == ElemType::Float16 || b.elementType() == ElemType::Float16;
}

std::vector<Tensor> halfMatMulForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  if (a.elementType() != ElemType::Float16 || b.elementType() != ElemType::Float16 ||
      a.rank() != 2 || b.rank() != 2 || n.intAttr("transA", 0) != 0 ||
      n.intAttr("transB", 0) != 0) {
    throw Error(fmt::format(
        "{} ({}): a float16 product takes two 2-D float16 operands without transA or transB, got "
        "\"{}\" {} {} and \"{}\" {} {}",
        n.name, n.type, a.debugName(), elemTypeName(a.elementType()), a.shapeString(),
        b.debugName(), elemTypeName(b.elementType()), b.shapeString()));
  }
  return {ops::matmulHalf(ctx.graph, a, b, ctx.prog, n.name)};
}

void halfMatMulBackward(BackwardContext& ctx) {
  if (!ctx.needsGrad(0) && !ctx.needsGrad(1)) return;
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const Tensor g16 = ops::cast(ctx.graph, ctx.gradOutputTensor(0), ElemType::Float16, ctx.prog,
                               ctx.stepName("g16"));
  if (ctx.needsGrad(0)) {
    const Tensor bt = ops::transposeHalf(ctx.graph, b, ctx.prog, ctx.stepName("bT"));
    ctx.setGrad(0, Gradient::of(ops::matmulHalf(ctx.graph, g16, bt, ctx.prog, ctx.stepName("a"))));
  }
  if (ctx.needsGrad(1)) {
    const Tensor at = ops::transposeHalf(ctx.graph, a, ctx.prog, ctx.stepName("aT"));
    ctx.setGrad(1, Gradient::of(ops::matmulHalf(ctx.graph, at, g16, ctx.prog, ctx.stepName("b"))));
  }
}

void addHalfOps(OpRegistry& r) {
  r.add({"CastPrecision", castForward, castBackward});
  r.add({"ScaleGradient", scaleGradientForward, scaleGradientBackward});
}

Value cast(Tape& tape, const Value& x, ElemType type, const std::string& name) {
  return tape.apply1("CastPrecision", {x}, {{"to", int64_t{type == ElemType::Float16 ? 16 : 32}}},
                     name);
}

Value scaleGradient(Tape& tape, const Value& x, const Value& scale, const std::string& name) {
  return tape.apply1("ScaleGradient", {x, scale}, {}, name);
}

}  // namespace tessera::autodiff
