// The layer ops of tessera/nn.hpp in the autodiff layer (docs/autodiff.md, "Built-in ops"): Tanh,
// Sigmoid, Gelu, Softmax, LogSoftmax, LayerNormalization, BatchNormalization, Dropout, Gather and
// batched MatMul, each forward beside its backward. Names and attributes follow ONNX where ONNX has
// the op; where the library differs (dropout's device seed, batch normalisation's running
// statistics updated in place) the comment of the op says how. Every backward is the library's
// backward builder, whose operation order docs/library.md documents.
#include <fmt/format.h>

#include "autodiff_util.hpp"
#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"
#include "tessera/nn.hpp"

namespace tessera::autodiff {

namespace {

// An ONNX axis attribute (negative counts from the end) as a dimension of a rank-`rank` tensor.
size_t axisAttr(const OpNode& n, const Tensor& x, int64_t fallback) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  const int64_t a = n.intAttr("axis", fallback);
  if (a < -rank || a >= rank) {
    throw Error(fmt::format("{} ({}): axis {} is out of range for \"{}\" {}", n.name, n.type, a,
                            x.debugName(), x.shapeString()));
  }
  return static_cast<size_t>(a < 0 ? a + rank : a);
}

// ---- Tanh, Sigmoid, Gelu: elementwise. Backward (tessera/nn.hpp): tanh g * (1 - y * y) and
// sigmoid g * (1 - y) * y from the output y; GELU g * (cdf(x) + x * pdf(x)) from the input x.
// Gelu's attribute approximate must be "none" (the erf form, PyTorch's default) when given.

std::vector<Tensor> unaryForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  expectFloat(n, ctx.inputs[0], 0);
  const Tensor& x = ctx.inputs[0];
  if (n.type == "Tanh") return {ops::tanh(ctx.graph, x, ctx.prog, n.name)};
  if (n.type == "Sigmoid") return {ops::sigmoid(ctx.graph, x, ctx.prog, n.name)};
  auto it = n.attributes.find("approximate");
  if (it != n.attributes.end()) {
    const std::string* s = std::get_if<std::string>(&it->second);
    if (!s || *s != "none") {
      throw Error(
          fmt::format("{} ({}): approximate must be \"none\" (the erf form)", n.name, n.type));
    }
  }
  return {ops::gelu(ctx.graph, x, ctx.prog, n.name)};
}

void tanhBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(0, Gradient::of(
                     ops::tanhBackward(ctx.graph, g, ctx.outputs[0], ctx.prog, ctx.stepName("x"))));
}

void sigmoidBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(0, Gradient::of(ops::sigmoidBackward(ctx.graph, g, ctx.outputs[0], ctx.prog,
                                                   ctx.stepName("x"))));
}

void geluBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(
      0, Gradient::of(ops::geluBackward(ctx.graph, g, ctx.inputs[0], ctx.prog, ctx.stepName("x"))));
}

// ---- Softmax and LogSoftmax along attribute axis (ONNX's default -1, the last). Backward from
// the output y: softmax y * (g - sum(g * y)), log-softmax g - e^y * sum(g), sums along the axis.

std::vector<Tensor> softmaxForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 1);
  expectFloat(n, ctx.inputs[0], 0);
  const Tensor& x = ctx.inputs[0];
  if (x.rank() == 0)
    throw Error(fmt::format("{} ({}): \"{}\" is a scalar", n.name, n.type, x.debugName()));
  const size_t axis = axisAttr(n, x, -1);
  return {n.type == "Softmax" ? ops::softmax(ctx.graph, x, axis, ctx.prog, n.name)
                              : ops::logSoftmax(ctx.graph, x, axis, ctx.prog, n.name)};
}

void softmaxBackward(BackwardContext& ctx) {
  const size_t axis = axisAttr(ctx.node, ctx.inputs[0], -1);
  const Tensor g = ctx.gradOutputTensor(0);
  const Tensor& y = ctx.outputs[0];
  ctx.setGrad(
      0, Gradient::of(
             ctx.node.type == "Softmax"
                 ? ops::softmaxBackward(ctx.graph, g, y, axis, ctx.prog, ctx.stepName("x"))
                 : ops::logSoftmaxBackward(ctx.graph, g, y, axis, ctx.prog, ctx.stepName("x"))));
}

// ---- LayerNormalization (ONNX): x, scale, optional bias (absent: zero); normalised over the
// dimensions from axis (default -1) to the end, which are scale's and bias's shape; epsilon
// (default 1e-5); stash_type 1 only; only the first output (Y; Mean and InvStdDev are not outputs).
// The forward keeps each row's mean and 1 / sqrt(var + eps); the backward is ops::layerNormBackward
// (all three gradients from one pass; the input's, the scale's and the bias's are set as needed).

std::vector<Tensor> layerNormForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  if (ctx.inputs.size() != 2 && ctx.inputs.size() != 3) {
    throw Error(fmt::format("{} ({}): {} inputs, 2 or 3 expected (x, scale and an optional bias)",
                            n.name, n.type, ctx.inputs.size()));
  }
  for (size_t i = 0; i < ctx.inputs.size(); ++i) expectFloat(n, ctx.inputs[i], i);
  if (n.intAttr("stash_type", 1) != 1) {
    throw Error(fmt::format("{} ({}): stash_type {} is not supported (1: float32 statistics)",
                            n.name, n.type, n.intAttr("stash_type", 1)));
  }
  const Tensor &x = ctx.inputs[0], &w = ctx.inputs[1];
  // ONNX's absent bias is zero: a zero tensor mapped like the scale (the affine map then adds +0).
  Tensor b = ctx.inputs.size() == 3 ? ctx.inputs[2] : Tensor();
  if (!b.valid() && w.numElements() > 0) {
    b = likeMapped(ctx.graph, w, n.name + "/bias");
    ops::fill(ctx.graph, b, 0.0f, ctx.prog, n.name + "/bias");
  }
  if (x.rank() == 0)
    throw Error(fmt::format("{} ({}): \"{}\" is a scalar", n.name, n.type, x.debugName()));
  const size_t axis = axisAttr(n, x, -1);
  const std::vector<size_t> tail(x.shape().begin() + static_cast<long>(axis), x.shape().end());
  if (w.shape() != tail || b.shape() != tail) {
    throw Error(fmt::format(
        "{} ({}): scale \"{}\" {} and bias \"{}\" {} must both be [{}], the dimensions of \"{}\" "
        "{} from axis {}",
        n.name, n.type, w.debugName(), w.shapeString(), b.debugName(), b.shapeString(),
        fmt::join(tail, ","), x.debugName(), x.shapeString(), axis));
  }
  const float eps = static_cast<float>(n.floatAttr("epsilon", 1e-5));
  const ops::NormResult r = ops::layerNorm(ctx.graph, x, w, b, eps, ctx.prog, n.name);
  ctx.save(r.mean);
  ctx.save(r.invStd);
  return {r.out};
}

void normGradients(BackwardContext& ctx, const ops::NormGradients& g) {
  if (ctx.needsGrad(0)) ctx.setGrad(0, Gradient::of(g.input));
  if (ctx.needsGrad(1)) ctx.setGrad(1, Gradient::of(g.weight));
  if (ctx.inputs.size() > 2 && ctx.needsGrad(2)) ctx.setGrad(2, Gradient::of(g.bias));
}

void layerNormBackward(BackwardContext& ctx) {
  const Tensor g = ctx.gradOutputTensor(0);
  normGradients(
      ctx, ops::layerNormBackward(ctx.graph, g, ctx.inputs[0], ctx.inputs[1], ctx.node.saved[0],
                                  ctx.node.saved[1], ctx.prog, ctx.stepName("norm")));
}

// ---- BatchNormalization (ONNX): x [N, C, ...], scale [C], bias [C], and the running mean and
// variance [C] (Tape::input values: variables the op updates in place, as PyTorch's buffers).
// Attributes epsilon (1e-5), momentum (ONNX's: running = running * momentum + batch * (1 -
// momentum), default 0.9; PyTorch's momentum is 1 minus it), training_mode (0 or 1, default 0).
// Training normalises with the batch statistics (biased variance) and updates the running ones
// (unbiased variance) when given; evaluation normalises with the running statistics. Without the
// running statistics (three inputs) only training is possible. Backward: ops::batchNormBackward
// (training: through the batch statistics; evaluation: a per-channel affine map).

std::vector<Tensor> batchNormForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  if (ctx.inputs.size() != 3 && ctx.inputs.size() != 5) {
    throw Error(fmt::format(
        "{} ({}): {} inputs, 3 (x, scale, bias) or 5 (and running mean, running variance) "
        "expected",
        n.name, n.type, ctx.inputs.size()));
  }
  for (size_t i = 0; i < ctx.inputs.size(); ++i) expectFloat(n, ctx.inputs[i], i);
  const Tensor& x = ctx.inputs[0];
  if (x.rank() < 2) {
    throw Error(fmt::format("{} ({}): \"{}\" {} must be [N, C, ...]", n.name, n.type, x.debugName(),
                            x.shapeString()));
  }
  const std::vector<size_t> c = {x.dim(1)};
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    if (ctx.inputs[i].shape() != c) {
      throw Error(fmt::format("{} ({}): input {} \"{}\" {} must be [{}], the channels of \"{}\" {}",
                              n.name, n.type, i, ctx.inputs[i].debugName(),
                              ctx.inputs[i].shapeString(), c[0], x.debugName(), x.shapeString()));
    }
  }
  const bool training = n.intAttr("training_mode", 0) != 0;
  const float eps = static_cast<float>(n.floatAttr("epsilon", 1e-5));
  // 1 - ONNX's momentum in double is exact for a float PyTorch momentum given as 1 - m (the
  // builder's way), so the library gets PyTorch's float bit for bit.
  const float momentum = static_cast<float>(1.0 - n.floatAttr("momentum", 0.9));
  const bool running = ctx.inputs.size() == 5;
  ops::NormResult r;
  if (training) {
    r = ops::batchNormTraining(ctx.graph, x, ctx.inputs[1], ctx.inputs[2],
                               running ? ctx.inputs[3] : Tensor(),
                               running ? ctx.inputs[4] : Tensor(), eps, momentum, ctx.prog, n.name);
  } else {
    if (!running) {
      throw Error(
          fmt::format("{} ({}): evaluation (training_mode 0) needs the running mean and variance",
                      n.name, n.type));
    }
    r = ops::batchNormInference(ctx.graph, x, ctx.inputs[1], ctx.inputs[2], ctx.inputs[3],
                                ctx.inputs[4], eps, ctx.prog, n.name);
    // r.mean is the running mean itself, which a training step (or another op) may update before
    // this op's backward runs: the backward gets the value the forward used.
    const Tensor mean = likeMapped(ctx.graph, r.mean, n.name + "/mean");
    ctx.prog.add(Copy(r.mean, mean, n.name + "/mean"));
    r.mean = mean;
  }
  ctx.save(r.mean);
  ctx.save(r.invStd);
  return {r.out};
}

void batchNormBackward(BackwardContext& ctx) {
  for (size_t i = 3; i < ctx.inputs.size(); ++i) {
    if (ctx.needsGrad(i)) {
      throw Error(fmt::format("{} ({}): the running statistic \"{}\" {} has no gradient",
                              ctx.node.name, ctx.node.type, ctx.inputs[i].debugName(),
                              ctx.inputs[i].shapeString()));
    }
  }
  const bool training = ctx.node.intAttr("training_mode", 0) != 0;
  const Tensor g = ctx.gradOutputTensor(0);
  normGradients(
      ctx, ops::batchNormBackward(ctx.graph, g, ctx.inputs[0], ctx.inputs[1], ctx.node.saved[0],
                                  ctx.node.saved[1], training, ctx.prog, ctx.stepName("norm")));
}

// ---- Dropout: x and the seed (int32 [2], ops::createDropoutSeed, a Tape::input). Attributes
// ratio (the probability of dropping, default 0.5), stream (default 0: give each dropout of a
// network its own) and training_mode (default 1 with a seed; 0 is the identity). ONNX's form, x
// alone (the importer folds ratio and training_mode into attributes), is the identity, which is
// training_mode's ONNX default; training_mode 1 there is an error asking for the seed. The mask is
// Philox under the seed at (element, stream), the same on every backend and mapping
// (tessera/nn.hpp); the backward applies the same mask and scale 1 / (1 - ratio) to g. Unlike
// ONNX's, the seed is a device tensor, so that a host write of its step gives a new mask per
// training step without recompiling.

float dropoutRatio(const OpNode& n) {
  const double p = n.floatAttr("ratio", 0.5);
  if (!(p >= 0.0 && p < 1.0))
    throw Error(fmt::format("{} ({}): ratio {} must be in [0, 1)", n.name, n.type, p));
  return static_cast<float>(p);
}

uint32_t dropoutStream(const OpNode& n) {
  const int64_t s = n.intAttr("stream", 0);
  if (s < 0 || s > int64_t{UINT32_MAX})
    throw Error(
        fmt::format("{} ({}): stream {} is not a 32-bit unsigned number", n.name, n.type, s));
  return static_cast<uint32_t>(s);
}

std::vector<Tensor> dropoutForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  if (ctx.inputs.size() != 1 && ctx.inputs.size() != 2) {
    throw Error(fmt::format("{} ({}): {} inputs, 1 (data) or 2 (data, seed) expected", n.name,
                            n.type, ctx.inputs.size()));
  }
  expectFloat(n, ctx.inputs[0], 0);
  if (ctx.inputs.size() == 1) {
    // ONNX's form: training_mode defaults to 0, the identity.
    dropoutRatio(n);
    if (n.intAttr("training_mode", 0) != 0) {
      throw Error(fmt::format(
          "{} ({}): training_mode 1 needs a seed input (int32 [2], ops::createDropoutSeed)", n.name,
          n.type));
    }
    return {ctx.inputs[0]};
  }
  const Tensor& seed = ctx.inputs[1];
  if (seed.elementType() != ElemType::Int32 || seed.shape() != std::vector<size_t>{2}) {
    throw Error(fmt::format("{} ({}): the seed \"{}\" {} {} must be int32 [2] (createDropoutSeed)",
                            n.name, n.type, seed.debugName(), elemTypeName(seed.elementType()),
                            seed.shapeString()));
  }
  const float p = dropoutRatio(n);
  const uint32_t stream = dropoutStream(n);
  if (n.intAttr("training_mode", 1) == 0) return {ctx.inputs[0]};
  return {ops::dropout(ctx.graph, ctx.inputs[0], seed, p, stream, ctx.prog, n.name)};
}

void dropoutBackward(BackwardContext& ctx) {
  if (ctx.inputs.size() == 1) {
    ctx.setGrad(0, ctx.gradOutput(0));
    return;
  }
  if (ctx.needsGrad(1)) {
    throw Error(fmt::format("{} ({}): the seed \"{}\" has no gradient", ctx.node.name,
                            ctx.node.type, ctx.inputs[1].debugName()));
  }
  if (ctx.node.intAttr("training_mode", 1) == 0) {
    ctx.setGrad(0, ctx.gradOutput(0));
    return;
  }
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(
      0, Gradient::of(ops::dropoutBackward(ctx.graph, g, ctx.inputs[1], dropoutRatio(ctx.node),
                                           dropoutStream(ctx.node), ctx.prog, ctx.stepName("x"))));
}

// ---- Gather (ONNX) along axis 0 of a 2-D table [V, D] with int32 indices of any shape: an
// embedding lookup (ops::embedding; the result is indices' shape + [D]). Backward: the table's
// gradient is ops::embeddingBackward, each row the sum of the rows of g whose index picks it,
// from +0 in increasing order of position; a new [V, D] tensor mapped as createEmbeddingTable.

// ---- Gather along any axis with constant int32 indices (Graph::addConstant, as an importer
// makes them; negative ones count from the end of the axis): a view, the slices of data picked by
// the indices joined along the axis, of shape data[:axis] + indices + data[axis+1:]. Backward: a
// zero tensor mapped like data, into whose slice v the gradient slices of the positions that pick
// v go, the first copied, the others added in order of position.

struct ConstantGather {
  size_t axis = 0;
  std::vector<size_t> picks;        // the slice of data each position of indices picks
  std::vector<size_t> joinedShape;  // data's shape with picks.size() at axis
  std::vector<size_t> shape;        // the result's shape
};

ConstantGather constantGather(const Graph& graph, const OpNode& n, const Tensor& data,
                              const Tensor& indices) {
  ConstantGather c;
  c.axis = signedAxis(n, data, 0);
  const std::vector<std::pair<uint32_t, uint32_t>> elems = indices.elements();
  for (const auto& [var, index] : elems) {
    const GraphVariable& v = graph.variables()[var];
    if (!v.constant) {
      throw Error(fmt::format(
          "{} ({}): indices \"{}\" {} must be a constant (Graph::addConstant) to gather along axis "
          "{} of \"{}\" {} (computed indices: a 2-D table along axis 0 only)",
          n.name, n.type, indices.debugName(), indices.shapeString(), c.axis, data.debugName(),
          data.shapeString()));
    }
    const int64_t size = static_cast<int64_t>(data.dim(c.axis));
    int64_t k = static_cast<int32_t>(v.initial.empty() ? 0u : v.initial[index]);
    if (k < -size || k >= size) {
      throw Error(fmt::format("{} ({}): index {} is out of range for axis {} of \"{}\" {}", n.name,
                              n.type, k, c.axis, data.debugName(), data.shapeString()));
    }
    c.picks.push_back(static_cast<size_t>(k < 0 ? k + size : k));
  }
  c.joinedShape = data.shape();
  c.joinedShape[c.axis] = c.picks.size();
  c.shape.assign(data.shape().begin(), data.shape().begin() + static_cast<long>(c.axis));
  c.shape.insert(c.shape.end(), indices.shape().begin(), indices.shape().end());
  c.shape.insert(c.shape.end(), data.shape().begin() + static_cast<long>(c.axis) + 1,
                 data.shape().end());
  return c;
}

std::vector<Tensor> gatherConstantForward(ForwardContext& ctx) {
  const Tensor &data = ctx.inputs[0], &indices = ctx.inputs[1];
  const ConstantGather c = constantGather(ctx.graph, ctx.node, data, indices);
  std::vector<Tensor> parts;
  for (size_t k : c.picks) parts.push_back(data.slice(k, k + 1, c.axis));
  return {tessera::concat(parts, c.axis).reshape(c.shape)};
}

void gatherConstantBackward(BackwardContext& ctx) {
  const Tensor& data = ctx.inputs[0];
  const ConstantGather c = constantGather(ctx.graph, ctx.node, data, ctx.inputs[1]);
  const Tensor g = ctx.gradOutputTensor(0).reshape(c.joinedShape);
  const Tensor out = likeMapped(ctx.graph, data, ctx.stepName("data"));
  ops::fill(ctx.graph, out, 0.0f, ctx.prog, ctx.stepName("zero"));
  std::vector<bool> seen(data.dim(c.axis), false);
  for (size_t p = 0; p < c.picks.size(); ++p) {
    const size_t k = c.picks[p];
    const Tensor dst = out.slice(k, k + 1, c.axis), src = g.slice(p, p + 1, c.axis);
    const std::string step = ctx.stepName(fmt::format("data/{}", p));
    if (!seen[k]) {
      ctx.prog.add(Copy(src, dst, step));
    } else {
      ctx.prog.add(Copy(ops::add(ctx.graph, dst, src, ctx.prog, step), dst, step + "/copy"));
    }
    seen[k] = true;
  }
  ctx.setGrad(0, Gradient::of(out));
}

bool embeddingGather(const OpNode& n, const Tensor& table) {
  return table.rank() == 2 && signedAxis(n, table, 0) == 0;
}

std::vector<Tensor> gatherForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  expectInputs(n, ctx.inputs, 2);
  const Tensor &table = ctx.inputs[0], &indices = ctx.inputs[1];
  expectFloat(n, table, 0);
  if (indices.elementType() == ElemType::Int32 && table.rank() > 0 && !embeddingGather(n, table))
    return gatherConstantForward(ctx);
  if (table.rank() != 2 || indices.elementType() != ElemType::Int32) {
    throw Error(fmt::format(
        "{} ({}): a table [vocab, dim] and int32 indices expected, got \"{}\" {} and \"{}\" {} {}",
        n.name, n.type, table.debugName(), table.shapeString(), indices.debugName(),
        elemTypeName(indices.elementType()), indices.shapeString()));
  }
  return {ops::embedding(ctx.graph, table, indices, ctx.prog, n.name)};
}

void gatherBackward(BackwardContext& ctx) {
  if (ctx.needsGrad(1)) {
    throw Error(fmt::format("{} ({}): the indices \"{}\" have no gradient", ctx.node.name,
                            ctx.node.type, ctx.inputs[1].debugName()));
  }
  if (!embeddingGather(ctx.node, ctx.inputs[0])) {
    gatherConstantBackward(ctx);
    return;
  }
  const Tensor g = ctx.gradOutputTensor(0);
  ctx.setGrad(0,
              Gradient::of(ops::embeddingBackward(ctx.graph, g, ctx.inputs[1], ctx.inputs[0].dim(0),
                                                  ctx.prog, ctx.stepName("table"))));
}

ops::MatMulOptions matmulOptions(const OpNode& n) {
  return {n.intAttr("transA", 0) != 0, n.intAttr("transB", 0) != 0};
}

}  // namespace

// ---- MatMul of 3-D operands (ops.cpp sends them here): a [B, M, K] and b [B, K, N] (with transA
// or transB, [B, K, M] and [B, N, K] stored) give [B, M, N], each batch one matmul of the same
// plan. Backward: ops::batchMatMulBackwardA (g op(b)^T, or op(b) g^T for a stored transposed)
// and ops::batchMatMulBackwardB (op(a)^T g, or g^T op(a)), each in its input's stored layout; a
// first, then b.

std::vector<Tensor> batchMatMulForward(ForwardContext& ctx) {
  const OpNode& n = ctx.node;
  const Tensor &a = ctx.inputs[0], &b = ctx.inputs[1];
  const ops::MatMulOptions o = matmulOptions(n);
  if (a.rank() != 3 || b.rank() != 3 || a.dim(0) != b.dim(0) ||
      (o.transposeA ? a.dim(1) : a.dim(2)) != (o.transposeB ? b.dim(2) : b.dim(1))) {
    throw Error(fmt::format(
        "{} ({}): batched operands [B, M, K] and [B, K, N] expected (after transA {}, transB {}), "
        "got \"{}\" {} and \"{}\" {}",
        n.name, n.type, int{o.transposeA}, int{o.transposeB}, a.debugName(), a.shapeString(),
        b.debugName(), b.shapeString()));
  }
  return {ops::batchMatMul(ctx.graph, a, b, ctx.prog, n.name, o)};
}

void batchMatMulBackward(BackwardContext& ctx) {
  const ops::MatMulOptions o = matmulOptions(ctx.node);
  const Tensor g = ctx.gradOutputTensor(0);
  if (ctx.needsGrad(0)) {
    ctx.setGrad(0, Gradient::of(ops::batchMatMulBackwardA(ctx.graph, g, ctx.inputs[1], ctx.prog,
                                                          ctx.stepName("a"), o)));
  }
  if (ctx.needsGrad(1)) {
    ctx.setGrad(1, Gradient::of(ops::batchMatMulBackwardB(ctx.graph, g, ctx.inputs[0], ctx.prog,
                                                          ctx.stepName("b"), o)));
  }
}

void addNnOps(OpRegistry& r) {
  r.add({"Tanh", unaryForward, tanhBackward});
  r.add({"Sigmoid", unaryForward, sigmoidBackward});
  r.add({"Gelu", unaryForward, geluBackward});
  r.add({"Softmax", softmaxForward, softmaxBackward});
  r.add({"LogSoftmax", softmaxForward, softmaxBackward});
  r.add({"LayerNormalization", layerNormForward, layerNormBackward});
  r.add({"BatchNormalization", batchNormForward, batchNormBackward});
  r.add({"Dropout", dropoutForward, dropoutBackward});
  r.add({"Gather", gatherForward, gatherBackward});
}

Value tanh(Tape& tape, const Value& x, const std::string& name) {
  return tape.apply1("Tanh", {x}, {}, name);
}
Value sigmoid(Tape& tape, const Value& x, const std::string& name) {
  return tape.apply1("Sigmoid", {x}, {}, name);
}
Value gelu(Tape& tape, const Value& x, const std::string& name) {
  return tape.apply1("Gelu", {x}, {}, name);
}
Value softmax(Tape& tape, const Value& x, size_t axis, const std::string& name) {
  return tape.apply1("Softmax", {x}, {{"axis", static_cast<int64_t>(axis)}}, name);
}
Value logSoftmax(Tape& tape, const Value& x, size_t axis, const std::string& name) {
  return tape.apply1("LogSoftmax", {x}, {{"axis", static_cast<int64_t>(axis)}}, name);
}
Value layerNorm(Tape& tape, const Value& x, const Value& weight, const Value& bias, float eps,
                const std::string& name) {
  const int64_t axis =
      static_cast<int64_t>(x.tensor().rank()) - static_cast<int64_t>(weight.tensor().rank());
  return tape.apply1("LayerNormalization", {x, weight, bias},
                     {{"axis", axis}, {"epsilon", double{eps}}}, name);
}
Value batchNorm(Tape& tape, const Value& x, const Value& weight, const Value& bias,
                const Value& runningMean, const Value& runningVar, bool training, float eps,
                float momentum, const std::string& name) {
  std::vector<Value> inputs = {x, weight, bias};
  if (runningMean.valid() || runningVar.valid())
    inputs.insert(inputs.end(), {runningMean, runningVar});
  return tape.apply1("BatchNormalization", inputs,
                     {{"training_mode", int64_t{training}},
                      {"epsilon", double{eps}},
                      {"momentum", 1.0 - double{momentum}}},
                     name);
}
Value dropout(Tape& tape, const Value& x, const Value& seed, float p, uint32_t stream,
              const std::string& name) {
  return tape.apply1("Dropout", {x, seed},
                     {{"ratio", double{p}}, {"stream", static_cast<int64_t>(stream)}}, name);
}
Value embedding(Tape& tape, const Value& table, const Value& indices, const std::string& name) {
  return tape.apply1("Gather", {table, indices}, {}, name);
}

}  // namespace tessera::autodiff
