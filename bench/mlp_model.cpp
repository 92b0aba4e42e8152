#include "mlp_model.hpp"

#include <fmt/format.h>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::bench {

std::vector<size_t> layerSizes(const MlpConfig& c) {
  std::vector<size_t> sizes{c.inputs};
  sizes.insert(sizes.end(), c.hidden.begin(), c.hidden.end());
  sizes.push_back(c.classes);
  return sizes;
}

size_t gradientCount(const MlpConfig& c) {
  const std::vector<size_t> sizes = layerSizes(c);
  size_t n = 0;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) n += sizes[l] * sizes[l + 1] + sizes[l + 1];
  return n;
}

namespace {

// Forward pass from x; returns the logits and fills acts with each layer's input.
Tensor forward(Graph& g, const MlpGraph& m, const Tensor& x, Sequence& prog, const std::string& prefix,
               std::vector<Tensor>& acts) {
  const size_t layers = m.weights.size();
  acts = {x};
  Tensor logits;
  for (size_t l = 0; l < layers; ++l) {
    const Tensor z = ops::addBias(g, ops::matmul(g, acts[l], m.weights[l], prog, fmt::format("{}{}/mm", prefix, l)),
                                  m.biases[l], prog, fmt::format("{}{}/bias", prefix, l));
    if (l + 1 < layers) {
      acts.push_back(ops::relu(g, z, prog, fmt::format("{}{}/relu", prefix, l)));
    } else {
      logits = z;
    }
  }
  return logits;
}

}  // namespace

MlpGraph buildMlp(Graph& g, const MlpConfig& c) {
  if (c.batch == 0 || c.inputs == 0 || c.classes == 0) throw Error("mlp: batch, inputs and classes must be positive");
  if (c.replicas == 0) throw Error("mlp: replicas must be at least 1");
  if (c.replicas > 1 && !c.gradientSync) throw Error("mlp: replicas need the gradient sync (MlpConfig::gradientSync)");
  for (size_t h : c.hidden) {
    if (h == 0) throw Error("mlp: a hidden layer has no units");
  }
  const std::vector<size_t> sizes = layerSizes(c);
  const size_t layers = sizes.size() - 1;
  MlpGraph out;
  for (size_t l = 0; l < layers; ++l) {
    out.weights.push_back(ops::createMatMulRhs(g, c.batch, sizes[l], sizes[l + 1], fmt::format("w{}", l)));
    out.biases.push_back(ops::createLinear(g, ElemType::Float32, {sizes[l + 1]}, fmt::format("b{}", l)));
    g.exposeTensor(fmt::format("w{}", l), out.weights.back());
    g.exposeTensor(fmt::format("b{}", l), out.biases.back());
  }
  Tensor x = ops::createMatMulLhs(g, c.batch, c.inputs, sizes[1], "x");
  Tensor labels = ops::createLinear(g, ElemType::Int32, {c.batch}, "labels");

  // A step's minibatch in (images and labels streams named prefix + "images" / "labels"), then the
  // forward pass; acts gets each layer's input.
  auto stepWithForward = [&](const std::string& prefix, const std::string& fwdName, Sequence& step,
                             std::vector<Tensor>& acts) {
    step.add(Copy(g.addHostToDeviceFIFO(prefix + "images", ElemType::Float32, c.batch * c.inputs), x));
    step.add(Copy(g.addHostToDeviceFIFO(prefix + "labels", ElemType::Int32, c.batch), labels));
    return forward(g, out, x, step, fwdName, acts);
  };
  // A buffer laid out like the weights (each element on its weight's tile).
  auto likeWeights = [&](size_t l) {
    const Tensor gw = g.addVariable(ElemType::Float32, out.weights[l].shape(), fmt::format("gw{}", l));
    const std::vector<int32_t> map = g.tileMapping(out.weights[l]);
    const Tensor flat = gw.flatten();
    for (size_t i = 0; i < map.size();) {
      size_t j = i + 1;
      while (j < map.size() && map[j] == map[i]) ++j;
      g.setTileMapping(flat.slice(i, j), static_cast<unsigned>(map[i]));
      i = j;
    }
    return gw;
  };
  const float lossScale = 1.0f / static_cast<float>(c.batch * c.replicas);
  if (c.trainSteps > 0 && c.gradientSync) {
    // The replica step: every layer's gradients from the weights as they are, out to the host,
    // the sum over the replicas back in place, then every layer's update from that sum.
    Sequence step;
    std::vector<Tensor> acts;
    const Tensor logits = stepWithForward("", "fwd", step, acts);
    auto sce = ops::softmaxCrossEntropy(g, logits, labels, lossScale, step, "loss");
    const Tensor correct = ops::correctCount(g, logits, labels, step, "correct");
    step.add(Copy(sce.loss, g.addDeviceToHostFIFO("loss", ElemType::Float32, c.batch)));
    step.add(Copy(correct, g.addDeviceToHostFIFO("correct", ElemType::Float32, 1)));
    std::vector<Tensor> gws(layers), dbs(layers);
    Tensor dz = sce.grad;
    for (size_t l = layers; l-- > 0;) {
      Tensor dAct;
      if (l > 0) dAct = ops::matmul(g, dz, out.weights[l], step, fmt::format("bwd{}/dx", l), {false, true});
      dbs[l] = ops::reduceSum(g, dz, 0, step, fmt::format("bwd{}/db", l));
      gws[l] = likeWeights(l);
      ops::fill(g, gws[l], 0.0f, step, fmt::format("bwd{}/zero", l));
      ops::matmulAccumulate(g, gws[l], acts[l], dz, step, fmt::format("bwd{}/dw", l), {true, false});
      if (l > 0) dz = ops::reluGrad(g, dAct, acts[l], step, fmt::format("bwd{}/relu", l - 1));
    }
    std::vector<Tensor> parts;
    for (size_t l = 0; l < layers; ++l) {
      parts.push_back(gws[l].flatten());
      parts.push_back(dbs[l]);
    }
    const Tensor grads = concat(parts, 0);
    step.add(Copy(grads, g.addDeviceToHostFIFO("grads", ElemType::Float32, grads.numElements())));
    step.add(Copy(g.addHostToDeviceFIFO("grads_sum", ElemType::Float32, grads.numElements()), grads));
    for (size_t l = 0; l < layers; ++l) {
      if (c.momentum == 0.0f) {
        ops::scaledAddTo(g, out.weights[l], gws[l], -c.learningRate, step, fmt::format("upd{}/w", l));
        ops::scaledAddTo(g, out.biases[l], dbs[l], -c.learningRate, step, fmt::format("upd{}/b", l));
      } else {
        ops::sgdMomentum(g, out.weights[l], gws[l], c.learningRate, c.momentum, step, fmt::format("upd{}/sgd", l));
        ops::sgdMomentum(g, out.biases[l], dbs[l], c.learningRate, c.momentum, step, fmt::format("upd{}/sgdb", l));
      }
    }
    out.program.add(Repeat(c.trainSteps, step, "train"));
  } else if (c.trainSteps > 0) {
    Sequence step;
    std::vector<Tensor> acts;
    const Tensor logits = stepWithForward("", "fwd", step, acts);
    auto sce = ops::softmaxCrossEntropy(g, logits, labels, lossScale, step, "loss");
    const Tensor correct = ops::correctCount(g, logits, labels, step, "correct");
    // Backward and update, last layer first: the gradient to a layer's input uses its weights
    // before they change. Plain SGD never stores the weight gradient (matmulAccumulate adds
    // x^T (-lr dz) into the weights); with momentum the gradient is accumulated from zero into a
    // buffer laid out like the weights, then v = mu v + g and w -= lr v.
    Tensor dz = sce.grad;
    for (size_t l = layers; l-- > 0;) {
      Tensor dAct;
      if (l > 0) dAct = ops::matmul(g, dz, out.weights[l], step, fmt::format("bwd{}/dx", l), {false, true});
      const Tensor db = ops::reduceSum(g, dz, 0, step, fmt::format("bwd{}/db", l));
      if (c.momentum == 0.0f) {
        const Tensor scaled = ops::scale(g, dz, -c.learningRate, step, fmt::format("bwd{}/scale", l));
        ops::matmulAccumulate(g, out.weights[l], acts[l], scaled, step, fmt::format("bwd{}/dw", l), {true, false});
        ops::scaledAddTo(g, out.biases[l], db, -c.learningRate, step, fmt::format("bwd{}/bias", l));
      } else {
        const Tensor gw = likeWeights(l);
        ops::fill(g, gw, 0.0f, step, fmt::format("bwd{}/zero", l));
        ops::matmulAccumulate(g, gw, acts[l], dz, step, fmt::format("bwd{}/dw", l), {true, false});
        ops::sgdMomentum(g, out.weights[l], gw, c.learningRate, c.momentum, step, fmt::format("bwd{}/sgd", l));
        ops::sgdMomentum(g, out.biases[l], db, c.learningRate, c.momentum, step, fmt::format("bwd{}/sgdb", l));
      }
      if (l > 0) dz = ops::reluGrad(g, dAct, acts[l], step, fmt::format("bwd{}/relu", l - 1));
    }
    step.add(Copy(sce.loss, g.addDeviceToHostFIFO("loss", ElemType::Float32, c.batch)));
    step.add(Copy(correct, g.addDeviceToHostFIFO("correct", ElemType::Float32, 1)));
    out.program.add(Repeat(c.trainSteps, step, "train"));
  }
  if (c.evalSteps > 0) {
    Sequence step;
    std::vector<Tensor> acts;
    const Tensor logits = stepWithForward("eval_", "eval", step, acts);
    const Tensor correct = ops::correctCount(g, logits, labels, step, "eval_correct");
    step.add(Copy(correct, g.addDeviceToHostFIFO("eval_correct", ElemType::Float32, 1)));
    out.program.add(Repeat(c.evalSteps, step, "eval"));
  }
  return out;
}

}  // namespace tessera::bench
