// The float16 cast on the tape (docs/autodiff.md, "Mixed precision"): fp32 master weights and
// float16 copies for the products. The gradient of a cast is the cast back: a float16 output's
// gradient (float16) widens exactly to the float32 input's; a float32 output's gradient narrows
// (nearest-even) to the float16 input's.
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

}  // namespace

void addHalfOps(OpRegistry& r) {
  r.add({"CastPrecision", castForward, castBackward});
}

Value cast(Tape& tape, const Value& x, ElemType type, const std::string& name) {
  return tape.apply1("CastPrecision", {x}, {{"to", int64_t{type == ElemType::Float16 ? 16 : 32}}},
                     name);
}

}  // namespace tessera::autodiff
