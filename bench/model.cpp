#include "model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tessera/conv.hpp"
#include "tessera/error.hpp"
#include "tessera/ops.hpp"
#include "train/mlp_parameters.hpp"

namespace tessera::bench {

float ModelDefaults::learningRate(const std::string& opt) const {
  if (opt == "sgd") return sgdLearningRate;
  if (opt == "momentum") return momentumLearningRate;
  if (opt == "adam") return adamLearningRate;
  throw Error(fmt::format("train: unknown optimizer \"{}\" (known: sgd, momentum, adam)", opt));
}

MlpModel::MlpModel(size_t inputs, std::vector<size_t> hidden, size_t classes) {
  sizes_.push_back(inputs);
  sizes_.insert(sizes_.end(), hidden.begin(), hidden.end());
  sizes_.push_back(classes);
  for (size_t s : sizes_) {
    if (s == 0) throw Error("mlp: every layer needs at least one unit");
  }
}

std::string MlpModel::describe() const {
  return fmt::format("{}", fmt::join(sizes_, "-"));
}

std::vector<ParameterShape> MlpModel::parameterShapes() const {
  std::vector<ParameterShape> s;
  for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
    s.push_back({fmt::format("w{}", l), {sizes_[l], sizes_[l + 1]}});
    s.push_back({fmt::format("b{}", l), {sizes_[l + 1]}});
  }
  return s;
}

std::vector<Tensor> MlpModel::createParameters(Graph& g, size_t batch) const {
  std::vector<Tensor> p;
  for (size_t l = 0; l + 1 < sizes_.size(); ++l) {
    p.push_back(ops::createMatMulRhs(g, batch, sizes_[l], sizes_[l + 1], fmt::format("w{}", l)));
    p.push_back(ops::createLinear(g, ElemType::Float32, {sizes_[l + 1]}, fmt::format("b{}", l)));
  }
  return p;
}

Tensor MlpModel::createInput(Graph& g, size_t batch) const {
  return ops::createMatMulLhs(g, batch, sizes_[0], sizes_[1], "x");
}

autodiff::Value MlpModel::forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                                  const autodiff::Value& x, const std::string& prefix) const {
  const size_t layers = sizes_.size() - 1;
  autodiff::Value act = x;
  for (size_t l = 0; l < layers; ++l) {
    const autodiff::Value z = autodiff::addBias(
        tape, autodiff::matmul(tape, act, params[2 * l], fmt::format("{}{}/mm", prefix, l)),
        params[2 * l + 1], fmt::format("{}{}/bias", prefix, l));
    act = l + 1 < layers ? autodiff::relu(tape, z, fmt::format("{}{}/relu", prefix, l)) : z;
  }
  return act;
}

ModelParameters MlpModel::initialize(uint32_t seed) const {
  const MlpParameters m = MlpParameters::initialize(sizes_, seed);
  ModelParameters p;
  p.shapes = parameterShapes();
  for (size_t l = 0; l < m.layers(); ++l) {
    p.values.push_back(m.weights[l]);
    p.values.push_back(m.biases[l]);
  }
  p.inputScale = m.inputScale;
  p.inputOffset = m.inputOffset;
  return p;
}

ModelDefaults MlpModel::defaults() const {
  // Plain SGD at 0.05 reaches 85% in two epochs (docs/training.md); 128 KiB tiles hold the default
  // network with it (momentum needs a gradient and a velocity per weight: --tile-mem 256).
  return {"sgd", 0.05f, 0.05f, 0.001f, 0.9f, 128};
}

std::string LenetModel::describe() const {
  return "1x28x28-conv5x5(6,pad2)-relu-maxpool2-conv5x5(16)-relu-maxpool2-400-120-84-10";
}

std::vector<Tensor> LenetModel::createParameters(Graph& g, size_t batch) const {
  std::vector<Tensor> p;
  for (const ParameterShape& s : lenetShapes()) {
    if (s.name.rfind("fc", 0) == 0 && s.shape.size() == 2) {
      // [in, out] on the device, the right operand of x W.
      p.push_back(ops::createMatMulRhs(g, batch, s.shape[1], s.shape[0], s.name));
    } else {
      p.push_back(ops::createLinear(g, ElemType::Float32, s.shape, s.name));
    }
  }
  return p;
}

Tensor LenetModel::createInput(Graph& g, size_t batch) const {
  return ops::createConv2dInput(g, {batch, 1, 28, 28}, "x");
}

autodiff::Value LenetModel::forward(autodiff::Tape& tape,
                                    const std::vector<autodiff::Value>& params,
                                    const autodiff::Value& x, const std::string& prefix) const {
  autodiff::Value act = x;
  for (size_t l = 0; l < 2; ++l) {
    const std::string n = fmt::format("{}conv{}", prefix, l);
    ops::Conv2dParams conv;
    if (l == 0) conv.padding = {2, 2};
    act = autodiff::conv2d(tape, act, params[2 * l], params[2 * l + 1], n, conv);
    act = autodiff::relu(tape, act, n + "/relu");
    act = autodiff::maxPool2d(tape, act, n + "/pool", ops::Pool2dParams{});  // 2x2, stride 2
  }
  act = autodiff::flatten(tape, act, 1, prefix + "flatten");
  for (size_t l = 0; l < 3; ++l) {
    const std::string n = fmt::format("{}fc{}", prefix, l);
    act = autodiff::addBias(tape, autodiff::matmul(tape, act, params[4 + 2 * l], n + "/mm"),
                            params[5 + 2 * l], n + "/bias");
    if (l < 2) act = autodiff::relu(tape, act, n + "/relu");
  }
  return act;
}

ModelParameters LenetModel::initialize(uint32_t seed) const {
  return ModelParameters::kaimingUniform(lenetShapes(), seed);
}

ModelDefaults LenetModel::defaults() const {
  // The activations of a 32-image minibatch (conv0's output alone is 600 KiB) do not fit 128 KiB
  // tiles: 624 KiB, the IPU's, on the model.
  // Adam at PyTorch's default step: ahead of SGD with momentum 0.9 at 0.01 over the first epoch
  // of the CPU reference (docs/training.md, "Models").
  return {"adam", 0.05f, 0.01f, 0.001f, 0.9f, 624};
}

std::shared_ptr<const Model> makeModel(const std::string& name, const std::vector<size_t>& hidden) {
  if (name == "mlp") return std::make_shared<MlpModel>(784, hidden, 10);
  if (name == "lenet") return std::make_shared<LenetModel>();
  throw Error(
      fmt::format("train: unknown model \"{}\" (known: {})", name, fmt::join(modelNames(), ", ")));
}

std::vector<std::string> modelNames() {
  return {"mlp", "lenet"};
}

}  // namespace tessera::bench
