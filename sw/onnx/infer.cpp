// tessera::onnx::infer (tessera/onnx.hpp): the model compiled once for a batch, run over all the
// rows of the input in one program (Repeat over the batches), streams in and out.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/compiler.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"
#include "tessera/fit.hpp"
#include "tessera/onnx.hpp"
#include "tessera/program.hpp"

namespace tessera::onnx {

namespace {

// Input i's rows as the words the device reads: float32 bits, or int32 indices (each value must
// fit, or the error names the input and the position).
std::vector<uint32_t> inputWords(const std::string& modelPath, const ValueShape& info,
                                 const NpyArray& a, size_t paddedRows) {
  const size_t rowSize = a.size() / a.shape[0];
  std::vector<uint32_t> words(paddedRows * rowSize, 0);  // the last batch padded with zeros
  if (!info.integer) {
    std::memcpy(words.data(), a.data.data(), a.data.size() * 4);
    return words;
  }
  for (size_t i = 0; i < a.ints.size(); ++i) {
    const int64_t v = a.ints[i];
    if (v < INT32_MIN || v > INT32_MAX) {
      throw Error(fmt::format("{}: input \"{}\" element {} is {}, which does not fit int32",
                              modelPath, info.name, i, v));
    }
    words[i] = static_cast<uint32_t>(static_cast<int32_t>(v));
  }
  return words;
}

}  // namespace

NpyArray infer(const std::string& modelPath, const NpyArray& input, const InferOptions& options) {
  return infer(modelPath, std::vector<NpyArray>{input}, options);
}

NpyArray infer(const std::string& modelPath, const std::vector<NpyArray>& inputs,
               const InferOptions& options) {
  const OnnxModel model = OnnxModel::load(modelPath);
  const size_t count = model.inputs().size();
  if (inputs.size() != count) {
    std::vector<std::string> names;
    for (const ValueShape& v : model.inputs()) names.push_back('"' + v.name + '"');
    throw Error(fmt::format("{}: the model has {} input{} ({}); infer was given {} array{}",
                            modelPath, count, count == 1 ? "" : "s", fmt::join(names, ", "),
                            inputs.size(), inputs.size() == 1 ? "" : "s"));
  }
  const size_t batch = options.batch ? options.batch : model.defaultBatch();
  size_t rows = 0;
  for (size_t i = 0; i < count; ++i) {
    const NpyArray& a = inputs[i];
    const ValueShape& info = model.inputs()[i];
    const std::vector<size_t> shape = model.inputShape(i, batch);
    const size_t values = a.integer ? a.ints.size() : a.data.size();
    if (a.shape.size() != shape.size() || values != a.size() ||
        !std::equal(shape.begin() + 1, shape.end(), a.shape.begin() + 1) || a.shape[0] == 0) {
      std::vector<std::string> want{"N"};
      for (size_t d = 1; d < shape.size(); ++d) want.push_back(std::to_string(shape[d]));
      throw Error(fmt::format("{}: the input is ({}), the model's input \"{}\" is ({})", modelPath,
                              fmt::join(a.shape, ", "), info.name, fmt::join(want, ", ")));
    }
    if (a.integer != info.integer) {
      throw Error(fmt::format("{}: the model's input \"{}\" is {}, the array given for it is {}",
                              modelPath, info.name, info.integer ? "integer" : "float32",
                              a.integer ? "integer" : "float32"));
    }
    if (i == 0) rows = a.shape[0];
    if (a.shape[0] != rows) {
      throw Error(
          fmt::format("{}: input \"{}\" has {} rows, input \"{}\" {}; every input needs "
                      "the same",
                      modelPath, info.name, a.shape[0], model.inputs()[0].name, rows));
    }
  }
  const size_t runs = (rows + batch - 1) / batch;
  if (runs > UINT32_MAX) throw Error("infer: too many batches");

  DeviceOptions dopt;
  dopt.tiles = options.tiles;
  dopt.modelEngine = options.modelEngine;
  if (options.tileMemKiB)
    dopt.tileMemBytes = options.tileMemKiB * 1024;
  else if (options.device == "model")
    dopt.tileMemBytes = 624 * 1024;
  std::unique_ptr<Device> dev = openDevice(options.device, dopt);

  // Built for the device's target; where the matrix unit's layouts do not fit the tiles, again
  // for the scalar codelets (the same bits).
  std::vector<size_t> yShape;
  auto build = [&](const Target& target) {
    Graph g(target);
    std::vector<Tensor> vars;
    for (size_t i = 0; i < model.variables().size(); ++i) {
      vars.push_back(createVariable(g, model, i, batch));
      g.setInitialValue(vars.back(), model.variables()[i].values);
    }
    Sequence step;
    std::vector<Tensor> xs;
    for (size_t i = 0; i < count; ++i) {
      xs.push_back(createInput(g, model, i, batch));
      const ElemType type = model.inputs()[i].integer ? ElemType::Int32 : ElemType::Float32;
      step.add(Copy(g.addHostToDeviceFIFO(fmt::format("input{}", i), type, xs.back().numElements()),
                    xs.back()));
    }
    autodiff::Tape tape(g, step);
    std::vector<autodiff::Value> varValues, inValues;
    for (const Tensor& t : vars) varValues.push_back(tape.input(t));
    for (const Tensor& t : xs) inValues.push_back(tape.input(t));
    BuildOptions bo;
    bo.batch = batch;
    const std::vector<autodiff::Value> outs = buildGraph(tape, model, varValues, inValues, bo);
    const Tensor& y = outs.front().tensor();
    if (y.rank() == 0 || y.dim(0) != batch || y.elementType() != ElemType::Float32) {
      throw Error(
          fmt::format("{}: the first output \"{}\" is {} {}; infer needs float32 with the "
                      "batch ({}) as its leading dimension",
                      modelPath, model.outputs()[0].name, elemTypeName(y.elementType()),
                      y.shapeString(), batch));
    }
    step.add(Copy(y, g.addDeviceToHostFIFO("output", ElemType::Float32, y.numElements())));
    yShape = y.shape();
    return compile(g, Repeat(static_cast<uint32_t>(runs), step, "infer"));
  };
  const Compiled compiled = compileFitting(Target::of(dev->info()), build);
  const size_t outRow = [&] {
    size_t n = 1;
    for (size_t d : yShape) n *= d;
    return n / batch;
  }();
  if (options.onCompiled) options.onCompiled(compiled.report.toJson());

  std::vector<std::vector<uint32_t>> in;
  for (size_t i = 0; i < count; ++i)
    in.push_back(inputWords(modelPath, model.inputs()[i], inputs[i], runs * batch));
  std::vector<float> out(runs * batch * outRow);
  Engine engine(*dev, compiled.executable);
  for (size_t i = 0; i < count; ++i) {
    engine.connectStream(
        fmt::format("input{}", i),
        std::span<uint8_t>(reinterpret_cast<uint8_t*>(in[i].data()), in[i].size() * 4));
  }
  engine.connectStream("output",
                       std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size() * 4));
  const RunResult r = engine.run();
  if (r.reason == StopReason::Trap)
    throw Error(fmt::format("{}: {}", modelPath, describeTrap(r.trap)));
  if (r.reason != StopReason::Halted)
    throw Error(fmt::format("{}: the device did not halt", modelPath));

  NpyArray result;
  result.shape = yShape;
  result.shape[0] = rows;
  result.data.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(rows * outRow));
  return result;
}

}  // namespace tessera::onnx
