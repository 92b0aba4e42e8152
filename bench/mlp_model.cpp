#include "mlp_model.hpp"

#include <fmt/format.h>

#include "tessera/error.hpp"
#include "tessera/ops.hpp"

namespace tessera::bench {

MlpGraph buildMlpTraining(Graph& g, const MlpConfig& c) {
  if (c.batch == 0 || c.inputs == 0 || c.classes == 0) throw Error("mlp: batch, inputs and classes must be positive");
  std::vector<size_t> sizes{c.inputs};
  sizes.insert(sizes.end(), c.hidden.begin(), c.hidden.end());
  sizes.push_back(c.classes);
  const size_t layers = sizes.size() - 1;
  MlpGraph out;
  for (size_t l = 0; l < layers; ++l) {
    out.weights.push_back(ops::createMatMulRhs(g, c.batch, sizes[l], sizes[l + 1], fmt::format("w{}", l)));
    out.biases.push_back(ops::createLinear(g, ElemType::Float32, {sizes[l + 1]}, fmt::format("b{}", l)));
    g.exposeTensor(fmt::format("w{}", l), out.weights.back());
    g.exposeTensor(fmt::format("b{}", l), out.biases.back());
  }
  DataStream images = g.addHostToDeviceFIFO("images", ElemType::Float32, c.batch * c.inputs);
  DataStream labelStream = g.addHostToDeviceFIFO("labels", ElemType::Int32, c.batch);
  DataStream lossStream = g.addDeviceToHostFIFO("loss", ElemType::Float32, c.batch);
  DataStream correctStream = g.addDeviceToHostFIFO("correct", ElemType::Float32, 1);
  Tensor x = ops::createMatMulLhs(g, c.batch, c.inputs, sizes[1], "x");
  Tensor labels = ops::createLinear(g, ElemType::Int32, {c.batch}, "labels");

  Sequence step;
  step.add(Copy(images, x));
  step.add(Copy(labelStream, labels));
  // Forward: acts[l] is the input of layer l.
  std::vector<Tensor> acts{x};
  Tensor logits;
  for (size_t l = 0; l < layers; ++l) {
    const Tensor z = ops::addBias(g, ops::matmul(g, acts[l], out.weights[l], step, fmt::format("fwd{}/mm", l)),
                                  out.biases[l], step, fmt::format("fwd{}/bias", l));
    if (l + 1 < layers) {
      acts.push_back(ops::relu(g, z, step, fmt::format("fwd{}/relu", l)));
    } else {
      logits = z;
    }
  }
  auto sce = ops::softmaxCrossEntropy(g, logits, labels, 1.0f / static_cast<float>(c.batch), step, "loss");
  const Tensor correct = ops::correctCount(g, logits, labels, step, "correct");
  // Backward and update, last layer first: the gradient to a layer's input uses its weights
  // before they change.
  Tensor dz = sce.grad;
  for (size_t l = layers; l-- > 0;) {
    Tensor dAct;
    if (l > 0) dAct = ops::matmul(g, dz, out.weights[l], step, fmt::format("bwd{}/dx", l), {false, true});
    const Tensor db = ops::reduceSum(g, dz, 0, step, fmt::format("bwd{}/db", l));
    const Tensor scaled = ops::scale(g, dz, -c.learningRate, step, fmt::format("bwd{}/scale", l));
    ops::matmulAccumulate(g, out.weights[l], acts[l], scaled, step, fmt::format("bwd{}/dw", l), {true, false});
    ops::scaledAddTo(g, out.biases[l], db, -c.learningRate, step, fmt::format("bwd{}/bias", l));
    if (l > 0) dz = ops::reluGrad(g, dAct, acts[l], step, fmt::format("bwd{}/relu", l - 1));
  }
  step.add(Copy(sce.loss, lossStream));
  step.add(Copy(correct, correctStream));
  out.program.add(Repeat(c.steps, step));
  return out;
}

}  // namespace tessera::bench
