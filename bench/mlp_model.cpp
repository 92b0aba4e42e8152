#include "mlp_model.hpp"

#include <fmt/format.h>

#include "tessera/autodiff.hpp"
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

// The forward pass from x on tape; returns the logits.
autodiff::Value forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& weights,
                        const std::vector<autodiff::Value>& biases, const autodiff::Value& x,
                        const std::string& prefix) {
  const size_t layers = weights.size();
  autodiff::Value act = x;
  for (size_t l = 0; l < layers; ++l) {
    const autodiff::Value z = autodiff::addBias(
        tape, autodiff::matmul(tape, act, weights[l], fmt::format("{}{}/mm", prefix, l)), biases[l],
        fmt::format("{}{}/bias", prefix, l));
    act = l + 1 < layers ? autodiff::relu(tape, z, fmt::format("{}{}/relu", prefix, l)) : z;
  }
  return act;
}

}  // namespace

MlpGraph buildMlp(Graph& g, const MlpConfig& c) {
  if (c.batch == 0 || c.inputs == 0 || c.classes == 0)
    throw Error("mlp: batch, inputs and classes must be positive");
  if (c.replicas == 0) throw Error("mlp: replicas must be at least 1");
  if (c.replicas > 1 && !c.gradientSync)
    throw Error("mlp: replicas need the gradient sync (MlpConfig::gradientSync)");
  for (size_t h : c.hidden) {
    if (h == 0) throw Error("mlp: a hidden layer has no units");
  }
  const std::vector<size_t> sizes = layerSizes(c);
  const size_t layers = sizes.size() - 1;
  MlpGraph out;
  for (size_t l = 0; l < layers; ++l) {
    out.weights.push_back(
        ops::createMatMulRhs(g, c.batch, sizes[l], sizes[l + 1], fmt::format("w{}", l)));
    out.biases.push_back(
        ops::createLinear(g, ElemType::Float32, {sizes[l + 1]}, fmt::format("b{}", l)));
    g.exposeTensor(fmt::format("w{}", l), out.weights.back());
    g.exposeTensor(fmt::format("b{}", l), out.biases.back());
  }
  Tensor x = ops::createMatMulLhs(g, c.batch, c.inputs, sizes[1], "x");
  Tensor labels = ops::createLinear(g, ElemType::Int32, {c.batch}, "labels");

  // A step's minibatch in (images and labels streams named prefix + "images" / "labels"), then the
  // forward pass recorded on tape.
  auto stepWithForward = [&](const std::string& prefix, const std::string& fwdName, Sequence& step,
                             autodiff::Tape& tape, std::vector<autodiff::Value>& params) {
    step.add(
        Copy(g.addHostToDeviceFIFO(prefix + "images", ElemType::Float32, c.batch * c.inputs), x));
    step.add(Copy(g.addHostToDeviceFIFO(prefix + "labels", ElemType::Int32, c.batch), labels));
    std::vector<autodiff::Value> ws, bs;
    for (size_t l = 0; l < layers; ++l) {
      ws.push_back(tape.parameter(out.weights[l]));
      bs.push_back(tape.parameter(out.biases[l]));
      params.push_back(ws.back());
      params.push_back(bs.back());
    }
    return forward(tape, ws, bs, tape.input(x), fwdName);
  };
  // Momentum 0 is plain SGD: the autodiff adds x^T (-lr dz) straight into the weights (the
  // matmul's backward fused with the step) and never stores a weight gradient. With momentum every
  // gradient is accumulated from zero into a buffer laid out like its weights, then v = mu v + g,
  // w -= lr v. The learning rate is the device scalar "lr".
  autodiff::OptimizerConfig oc;
  oc.kind = c.momentum == 0.0f ? autodiff::OptimizerConfig::Kind::Sgd
                               : autodiff::OptimizerConfig::Kind::Momentum;
  oc.learningRate = c.learningRate;
  oc.momentum = c.momentum;
  autodiff::Optimizer optimizer(g, oc, "lr");
  out.learningRate = optimizer.learningRate();
  const float lossScale = 1.0f / static_cast<float>(c.batch * c.replicas);
  if (c.trainSteps > 0) {
    Sequence step;
    autodiff::Tape tape(g, step);
    std::vector<autodiff::Value> params;
    const autodiff::Value logits = stepWithForward("", "fwd", step, tape, params);
    const autodiff::Value loss =
        autodiff::softmaxCrossEntropy(tape, logits, tape.input(labels), lossScale, "loss");
    const Tensor correct = ops::correctCount(g, logits.tensor(), labels, step, "correct");
    if (c.gradientSync) {
      // The replica step: every layer's gradients from the weights as they are, out to the host,
      // the sum over the replicas back in place, then every layer's update from that sum.
      step.add(Copy(loss.tensor(), g.addDeviceToHostFIFO("loss", ElemType::Float32, c.batch)));
      step.add(Copy(correct, g.addDeviceToHostFIFO("correct", ElemType::Float32, 1)));
      const std::vector<Tensor> grads = tape.gradients(loss, params, step, lossScale, "bwd");
      std::vector<Tensor> parts, paramTensors;
      for (size_t i = 0; i < params.size(); ++i) {
        parts.push_back(grads[i].flatten());
        paramTensors.push_back(params[i].tensor());
      }
      const Tensor all = concat(parts, 0);
      step.add(Copy(all, g.addDeviceToHostFIFO("grads", ElemType::Float32, all.numElements())));
      step.add(Copy(g.addHostToDeviceFIFO("grads_sum", ElemType::Float32, all.numElements()), all));
      optimizer.update(paramTensors, grads, step, "upd");
    } else {
      optimizer.minimize(tape, loss, params, step, lossScale, "opt");
      step.add(Copy(loss.tensor(), g.addDeviceToHostFIFO("loss", ElemType::Float32, c.batch)));
      step.add(Copy(correct, g.addDeviceToHostFIFO("correct", ElemType::Float32, 1)));
    }
    out.program.add(Repeat(c.trainSteps, step, "train"));
  }
  if (c.evalSteps > 0) {
    Sequence step;
    autodiff::Tape tape(g, step);
    std::vector<autodiff::Value> params;
    const autodiff::Value logits = stepWithForward("eval_", "eval", step, tape, params);
    const Tensor correct = ops::correctCount(g, logits.tensor(), labels, step, "eval_correct");
    step.add(Copy(correct, g.addDeviceToHostFIFO("eval_correct", ElemType::Float32, 1)));
    out.program.add(Repeat(c.evalSteps, step, "eval"));
  }
  return out;
}

}  // namespace tessera::bench
