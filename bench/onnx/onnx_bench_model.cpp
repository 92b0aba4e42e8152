#include "onnx_bench_model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "tessera/error.hpp"
#include "tessera/nn.hpp"
#include "tessera/program.hpp"

namespace tessera::onnx {

namespace {

// The Philox key of the dropout masks of a model's training-mode Dropout nodes ("onnx"); the
// counter's step is the training step.
constexpr uint32_t kDropoutKey = 0x786e6e6f;

}  // namespace

OnnxBenchModel::OnnxBenchModel(OnnxModel model) : model_(std::move(model)) {
  if (model_.inputs().size() != 1)
    throw Error(fmt::format("{}: training feeds one input (the images); the model has {}",
                            model_.path(), model_.inputs().size()));
  if (model_.inputs()[0].integer)
    throw Error(fmt::format("{}: input \"{}\" is integer; training feeds the images as float32",
                            model_.path(), model_.inputs()[0].name));
  const std::vector<int64_t>& d = model_.inputs()[0].dims;
  const bool image = d.size() == 4 && d[1] == 1 && d[2] == 28 && d[3] == 28;
  const bool flat = d.size() == 2 && d[1] == 784;
  if (!image && !flat) {
    throw Error(
        fmt::format("{}: input \"{}\" is [{}]; training on Fashion-MNIST needs "
                    "[N, 1, 28, 28] or [N, 784]",
                    model_.path(), model_.inputs()[0].name, fmt::join(d, ", ")));
  }
}

std::string OnnxBenchModel::describe() const {
  size_t trainable = 0, buffers = 0, values = 0;
  for (const Variable& v : model_.variables()) {
    (v.trainable ? trainable : buffers) += 1;
    values += v.values.size();
  }
  return fmt::format("{} (opset {}, {} trainable arrays, {} buffers, {} values)",
                     std::filesystem::path(model_.path()).filename().string(), model_.opset(),
                     trainable, buffers, values);
}

std::vector<bench::ParameterShape> OnnxBenchModel::parameterShapes() const {
  std::vector<bench::ParameterShape> s;
  for (const Variable& v : model_.variables()) s.push_back({v.name, v.shape});
  return s;
}

std::vector<Tensor> OnnxBenchModel::createParameters(Graph& graph, size_t batch) const {
  std::vector<Tensor> p;
  for (size_t i = 0; i < model_.variables().size(); ++i)
    p.push_back(createVariable(graph, model_, i, batch));
  return p;
}

Tensor OnnxBenchModel::createInput(Graph& graph, size_t batch) const {
  return onnx::createInput(graph, model_, 0, batch);
}

autodiff::Value OnnxBenchModel::forward(autodiff::Tape& tape,
                                        const std::vector<autodiff::Value>& params,
                                        const autodiff::Value& x, const std::string& prefix) const {
  return forwardPhase(tape, params, x, prefix, false);
}

autodiff::Value OnnxBenchModel::forwardPhase(autodiff::Tape& tape,
                                             const std::vector<autodiff::Value>& params,
                                             const autodiff::Value& x, const std::string& prefix,
                                             bool training) const {
  BuildOptions o;
  o.batch = x.tensor().dim(0);
  o.training = training;
  o.prefix = prefix;
  o.trainingRun = true;
  // Dropout nodes exported in training mode drop under a device seed whose step the training step
  // advances before its first dropout: a new mask every step, the same on every backend, and kept
  // by a checkpoint (it is device memory). Evaluation leaves them out.
  o.dropoutSeed = [&tape, &prefix] {
    Graph& g = tape.graph();
    const Tensor s = ops::createDropoutSeed(g, kDropoutKey, prefix + "dropout_seed");
    ops::advanceDropoutSeed(g, s, tape.forward(), prefix + "dropout_seed/next");
    return tape.input(s);
  };
  const autodiff::Value logits = buildGraph(tape, model_, params, {x}, o).front();
  const std::vector<size_t> want{o.batch, 10};
  if (logits.tensor().shape() != want) {
    throw Error(fmt::format(
        "{}: the first output \"{}\" is {}; training needs the logits as "
        "[{}, 10]",
        model_.path(), model_.outputs()[0].name, logits.tensor().shapeString(), o.batch));
  }
  return logits;
}

bench::ModelParameters OnnxBenchModel::initialize(uint32_t) const {
  bench::ModelParameters p;
  p.shapes = parameterShapes();
  for (const Variable& v : model_.variables()) p.values.push_back(v.values);
  return p;
}

bench::ModelDefaults OnnxBenchModel::defaults() const {
  // PyTorch's usual steps; 624 KiB tiles (the IPU's) hold LeNet-sized activations at batch 32.
  return {"sgd", 0.05f, 0.01f, 0.001f, 0.9f, 624};
}

}  // namespace tessera::onnx
