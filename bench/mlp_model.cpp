#include "mlp_model.hpp"

#include <fmt/format.h>

#include "tessera/autodiff.hpp"
#include "tessera/error.hpp"
#include "tessera/fit.hpp"
#include "tessera/ops.hpp"

namespace tessera::bench {

std::vector<size_t> layerSizes(const MlpConfig& c) {
  std::vector<size_t> sizes{c.inputs};
  sizes.insert(sizes.end(), c.hidden.begin(), c.hidden.end());
  sizes.push_back(c.classes);
  return sizes;
}

std::shared_ptr<const Model> modelOf(const MlpConfig& c) {
  return c.model ? c.model : std::make_shared<MlpModel>(c.inputs, c.hidden, c.classes);
}

autodiff::OptimizerConfig optimizerOf(const MlpConfig& c) {
  autodiff::OptimizerConfig oc;
  oc.kind = c.optimizer.value_or(c.momentum == 0.0f ? autodiff::OptimizerConfig::Kind::Sgd
                                                    : autodiff::OptimizerConfig::Kind::Momentum);
  oc.learningRate = c.learningRate;
  oc.momentum = c.momentum;
  oc.beta1 = c.beta1;
  oc.beta2 = c.beta2;
  oc.eps = c.eps;
  oc.weightDecay = c.weightDecay;
  return oc;
}

size_t gradientCount(const MlpConfig& c) {
  size_t n = 0;
  const std::shared_ptr<const Model> model = modelOf(c);
  const std::vector<ParameterShape> shapes = model->parameterShapes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (model->trainable(i)) n += shapes[i].size();
  }
  return n;
}

MlpGraph buildMlp(Graph& g, const MlpConfig& c) {
  if (c.batch == 0 || c.inputs == 0 || c.classes == 0)
    throw Error("mlp: batch, inputs and classes must be positive");
  if (c.replicas == 0) throw Error("mlp: replicas must be at least 1");
  if (c.replicas > 1 && !c.gradientSync)
    throw Error("mlp: replicas need the gradient sync (MlpConfig::gradientSync)");
  ops::requirePowerOfTwoScale(c.lossScale, "mlp: the loss scale");
  const std::shared_ptr<const Model> model = modelOf(c);
  if (model->inputs() != c.inputs || model->classes() != c.classes) {
    throw Error(fmt::format("{}: the model has {} inputs and {} classes, the config {} and {}",
                            model->name(), model->inputs(), model->classes(), c.inputs, c.classes));
  }
  if (model->halfPrecision() && c.batch % 2 != 0) {
    throw Error(fmt::format(
        "{}: float16 products need an even batch (float16 moves in pairs of elements), got {}",
        model->name(), c.batch));
  }
  const std::vector<ParameterShape> shapes = model->parameterShapes();
  // The element-by-element ops cut the products' column blocks into one chunk per context
  // (docs/library.md, "Chunks across a tile's runs") where the model asks for it.
  g.setSpanRuns(model->spanRuns());
  MlpGraph out;
  out.parameters = model->createParameters(g, c.batch);
  for (size_t i = 0; i < shapes.size(); ++i) {
    g.exposeTensor(shapes[i].name, out.parameters[i]);
    (i % 2 == 0 ? out.weights : out.biases).push_back(out.parameters[i]);
  }
  Tensor x = model->createInput(g, c.batch);
  Tensor labels = ops::createLinear(g, ElemType::Int32, {c.batch}, "labels");

  // A step's minibatch in (images and labels streams named prefix + "images" / "labels"), then the
  // forward pass recorded on tape.
  // params gets the trainable parameters (what the optimizer updates); the forward sees all of
  // them, buffers as tape inputs.
  auto stepWithForward = [&](const std::string& prefix, const std::string& fwdName, Sequence& step,
                             autodiff::Tape& tape, std::vector<autodiff::Value>& params) {
    step.add(
        Copy(g.addHostToDeviceFIFO(prefix + "images", ElemType::Float32, c.batch * c.inputs), x));
    step.add(Copy(g.addHostToDeviceFIFO(prefix + "labels", ElemType::Int32, c.batch), labels));
    std::vector<autodiff::Value> all;
    for (size_t i = 0; i < out.parameters.size(); ++i) {
      all.push_back(model->trainable(i) ? tape.parameter(out.parameters[i])
                                        : tape.input(out.parameters[i]));
      if (model->trainable(i)) params.push_back(all.back());
    }
    return model->forwardPhase(tape, all, tape.input(x), fwdName, prefix.empty());
  };
  // Plain SGD: the autodiff adds x^T (-lr dz) straight into the weights (the matmul's backward
  // fused with the step) and never stores a weight gradient. With momentum (or Adam, or weight
  // decay) every gradient is accumulated from zero into a buffer laid out like its weights, then
  // v = mu v + g, w -= lr v (docs/autodiff.md). The learning rate is the device scalar "lr".
  autodiff::Optimizer optimizer(g, optimizerOf(c), "lr");
  out.learningRate = optimizer.learningRate();
  // The mean loss's gradient, times the static loss scale (the optimizer or the replicas' sum
  // divides it out again).
  const float lossScale = 1.0f / static_cast<float>(c.batch * c.replicas);
  const float seedScale = lossScale * c.lossScale;
  if (c.dynamicLossScale && c.trainSteps > 0) {
    out.lossScaler = ops::createLossScaler(g, c.lossScale, c.lossScaleInterval, kLossScaleTensor);
    g.exposeTensor(kLossScaleTensor, out.lossScaler->scale);
    g.exposeTensor(kLossScaleStateTensor, out.lossScaler->state);
  }
  if (c.trainSteps > 0) {
    Sequence step;
    autodiff::Tape tape(g, step);
    std::vector<autodiff::Value> params;
    const autodiff::Value logits = stepWithForward("", "fwd", step, tape, params);
    // A dynamic scale multiplies the loss's gradient (1 / batch) on its way into the logits: the
    // same bits as the static seed (1 / batch) x scale, the scale being a power of two.
    const autodiff::Value loss = autodiff::softmaxCrossEntropy(
        tape,
        out.lossScaler ? autodiff::scaleGradient(tape, logits, tape.input(out.lossScaler->scale),
                                                 "loss_scale/grad")
                       : logits,
        tape.input(labels), out.lossScaler ? lossScale : seedScale, "loss");
    const Tensor correct = ops::correctCount(g, logits.tensor(), labels, step, "correct");
    if (c.gradientSync) {
      // The replica step: every layer's gradients from the weights as they are, out to the host,
      // the sum over the replicas back in place, then every layer's update from that sum.
      step.add(Copy(loss.tensor(), g.addDeviceToHostFIFO("loss", ElemType::Float32, c.batch)));
      step.add(Copy(correct, g.addDeviceToHostFIFO("correct", ElemType::Float32, 1)));
      const std::vector<Tensor> grads =
          tape.gradients(loss, params, step, out.lossScaler ? lossScale : seedScale, "bwd");
      for (size_t i = 0; i < grads.size() && c.lossScale != 1.0f && !out.lossScaler; ++i) {
        // The replicas sum true gradients: each divided by the static scale (exact) before it
        // goes out. A dynamic scale is the same on every replica (each sees the same sums), so the
        // replicas sum the scaled gradients, as PyTorch's DDP does with a GradScaler, and each
        // checks and divides the same sum.
        ops::scaleInPlace(g, grads[i], 1.0f / c.lossScale, step, fmt::format("bwd/unscale{}", i));
      }
      std::vector<Tensor> parts, paramTensors;
      for (size_t i = 0; i < params.size(); ++i) {
        parts.push_back(grads[i].flatten());
        paramTensors.push_back(params[i].tensor());
      }
      const Tensor all = concat(parts, 0);
      step.add(Copy(all, g.addDeviceToHostFIFO("grads", ElemType::Float32, all.numElements())));
      step.add(Copy(g.addHostToDeviceFIFO("grads_sum", ElemType::Float32, all.numElements()), all));
      if (out.lossScaler)
        optimizer.update(paramTensors, grads, step, "upd", *out.lossScaler);
      else
        optimizer.update(paramTensors, grads, step, "upd");
    } else if (out.lossScaler || c.lossScale != 1.0f) {
      // The optimizer takes the scaled gradients: a static scale as Optimizer::update's
      // gradScale; a dynamic one checked first, the update run only when they are all finite.
      const std::vector<Tensor> grads =
          tape.gradients(loss, params, step, out.lossScaler ? lossScale : seedScale, "opt/bwd");
      std::vector<Tensor> paramTensors;
      for (const autodiff::Value& p : params) paramTensors.push_back(p.tensor());
      if (out.lossScaler)
        optimizer.update(paramTensors, grads, step, "opt", *out.lossScaler);
      else
        optimizer.update(paramTensors, grads, step, "opt", c.lossScale);
      step.add(Copy(loss.tensor(), g.addDeviceToHostFIFO("loss", ElemType::Float32, c.batch)));
      step.add(Copy(correct, g.addDeviceToHostFIFO("correct", ElemType::Float32, 1)));
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

Compiled compileMlp(const Target& target, const MlpConfig& config, bool* usedUnit,
                    std::string* unitRefusal) {
  auto build = [&config](const Target& t) {
    Graph g(t);
    const MlpGraph mlp = buildMlp(g, config);
    CompileOptions o;
    o.mergeComputeSets = config.mergeComputeSets;
    return compile(g, mlp.program, o);
  };
  return compileFitting(target, build, usedUnit, unitRefusal, modelOf(config)->halfPrecision());
}

}  // namespace tessera::bench
