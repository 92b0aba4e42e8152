// tessera::onnx::infer (tessera/onnx.hpp): the model compiled once for a batch, run over all the
// rows of the input in one program (Repeat over the batches), streams in and out.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "tessera/compiler.hpp"
#include "tessera/device.hpp"
#include "tessera/engine.hpp"
#include "tessera/error.hpp"
#include "tessera/onnx.hpp"
#include "tessera/program.hpp"

namespace tessera::onnx {

NpyArray infer(const std::string& modelPath, const NpyArray& input, const InferOptions& options) {
  const OnnxModel model = OnnxModel::load(modelPath);
  if (model.inputs().size() != 1)
    throw Error(fmt::format("{}: the model has {} inputs; infer feeds one", modelPath,
                            model.inputs().size()));
  const size_t batch = options.batch ? options.batch : model.defaultBatch();
  const std::vector<size_t> shape = model.inputShape(0, batch);
  if (input.shape.size() != shape.size() || input.data.size() != input.size() ||
      !std::equal(shape.begin() + 1, shape.end(), input.shape.begin() + 1) || input.shape[0] == 0) {
    std::vector<std::string> want{"N"};
    for (size_t d = 1; d < shape.size(); ++d) want.push_back(std::to_string(shape[d]));
    throw Error(fmt::format("{}: the input is ({}), the model's input \"{}\" is ({})", modelPath,
                            fmt::join(input.shape, ", "), model.inputs()[0].name,
                            fmt::join(want, ", ")));
  }
  const size_t rows = input.shape[0];
  const size_t rowSize = input.size() / rows;
  const size_t runs = (rows + batch - 1) / batch;
  if (runs > UINT32_MAX) throw Error("infer: too many batches");

  DeviceOptions dopt;
  dopt.tiles = options.tiles;
  if (options.tileMemKiB)
    dopt.tileMemBytes = options.tileMemKiB * 1024;
  else if (options.device == "model")
    dopt.tileMemBytes = 624 * 1024;
  std::unique_ptr<Device> dev = openDevice(options.device, dopt);

  Graph g(Target::of(dev->info()));
  std::vector<Tensor> vars;
  for (size_t i = 0; i < model.variables().size(); ++i) {
    vars.push_back(createVariable(g, model, i, batch));
    g.setInitialValue(vars.back(), model.variables()[i].values);
  }
  const Tensor x = createInput(g, model, 0, batch);
  Sequence step;
  step.add(Copy(g.addHostToDeviceFIFO("input", ElemType::Float32, batch * rowSize), x));
  autodiff::Tape tape(g, step);
  std::vector<autodiff::Value> varValues;
  for (const Tensor& t : vars) varValues.push_back(tape.input(t));
  BuildOptions bo;
  bo.batch = batch;
  const std::vector<autodiff::Value> outs = buildGraph(tape, model, varValues, {tape.input(x)}, bo);
  const Tensor y = outs.front().tensor();
  if (y.rank() == 0 || y.dim(0) != batch || y.elementType() != ElemType::Float32) {
    throw Error(fmt::format(
        "{}: the first output \"{}\" is {} {}; infer needs float32 with the "
        "batch ({}) as its leading dimension",
        modelPath, model.outputs()[0].name, elemTypeName(y.elementType()), y.shapeString(), batch));
  }
  const size_t outRow = y.numElements() / batch;
  step.add(Copy(y, g.addDeviceToHostFIFO("output", ElemType::Float32, y.numElements())));
  const Compiled compiled = compile(g, Repeat(static_cast<uint32_t>(runs), step, "infer"));
  if (options.onCompiled) options.onCompiled(compiled.report.toJson());

  std::vector<float> in(runs * batch * rowSize, 0.0f);  // the last batch padded with zeros
  std::copy(input.data.begin(), input.data.end(), in.begin());
  std::vector<float> out(runs * batch * outRow);
  Engine engine(*dev, compiled.executable);
  engine.connectStream("input",
                       std::span<uint8_t>(reinterpret_cast<uint8_t*>(in.data()), in.size() * 4));
  engine.connectStream("output",
                       std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size() * 4));
  const RunResult r = engine.run();
  if (r.reason == StopReason::Trap)
    throw Error(fmt::format("{}: {}", modelPath, describeTrap(r.trap)));
  if (r.reason != StopReason::Halted)
    throw Error(fmt::format("{}: the device did not halt", modelPath));

  NpyArray result;
  result.shape = y.shape();
  result.shape[0] = rows;
  result.data.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(rows * outRow));
  return result;
}

}  // namespace tessera::onnx
