// ONNX import (docs/onnx.md): a model file read with libonnx's protobuf classes, checked (opset,
// operators, attributes, shapes) and built op by op on an autodiff Tape through the op registry,
// under the ONNX op type names. Initializers become device variables, graph inputs host streams,
// outputs device-to-host streams; the shape arithmetic exporters emit around Reshape is folded
// into constants on the host. `infer` runs a model on a device; training (tessera-onnx train)
// reuses the benchmark's trainer and lives in bench/onnx (tessera/onnx_train.hpp,
// tessera::onnx::train, library tessera_onnx_train).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/autodiff.hpp"
#include "tessera/device.hpp"
#include "tessera/graph.hpp"
#include "tessera/npy.hpp"

namespace tessera::onnx {

/// Largest model file read (bytes): protobuf parsing is bounded by it (docs/onnx.md, "Limits").
inline constexpr uint64_t kMaxModelBytes = uint64_t{1} << 30;
/// The newest ai.onnx opset understood (opset 18 moves more attributes into inputs).
inline constexpr int64_t kMaxOpset = 17;
/// The oldest ai.onnx opset understood: opsets 9 to 12 are read with their own semantics
/// (Softmax's 2-D coercion, attributes that opset 13 made inputs; docs/onnx.md, "Opsets").
inline constexpr int64_t kMinOpset = 9;

/// A graph input or output: its name and its dimensions (-1 where the file leaves one open).
struct ValueShape {
  std::string name;
  std::vector<int64_t> dims;
  bool integer =
      false;  ///< a graph input of int64 or int32 elements (indices), int32 on the device
};

/// A float initializer that becomes a device variable.
struct Variable {
  std::string name;
  std::vector<size_t> shape;
  bool trainable = true;      ///< false: a buffer the ops update themselves (BatchNorm statistics)
  std::vector<float> values;  ///< the file's values, row-major
};

/// A parsed and checked ONNX model (cheap to copy: the parsed file is shared).
class OnnxModel {
 public:
  /// Read and check path: size limit, protobuf, opset, operators, initializers. Throws
  /// tessera::Error naming the file (and the node, op type and opset at fault).
  static OnnxModel load(const std::string& path);
  /// The file it was read from.
  const std::string& path() const;
  /// The ai.onnx opset the model imports.
  int64_t opset() const;
  /// The graph inputs that are not initializers, in order.
  const std::vector<ValueShape>& inputs() const;
  /// The graph outputs, in order.
  const std::vector<ValueShape>& outputs() const;
  /// The float initializers that become device variables, in file order.
  const std::vector<Variable>& variables() const;
  /// The batch when none is asked for: the first input's static leading dimension; throws
  /// naming the input when it has none.
  size_t defaultBatch() const;
  /// Input i's shape with its leading (batch) dimension bound to batch (0: defaultBatch()).
  std::vector<size_t> inputShape(size_t i, size_t batch) const;
  /// Write the model to path with the variables' values replaced by values (by name; every
  /// value bit-exact as float32 raw_data); the rest of the file as it was read.
  void save(const std::string& path, const std::map<std::string, std::vector<float>>& values) const;

  struct Impl;
  /// The parsed file (sw/onnx's own code reads it).
  const Impl& impl() const;

 private:
  std::shared_ptr<const Impl> impl_;
};

/// The device variable of model.variables()[i], mapped over the tiles for its first consumer.
Tensor createVariable(Graph& graph, const OnnxModel& model, size_t i, size_t batch);
/// The device tensor of input i with batch rows, mapped for its first consumer.
Tensor createInput(Graph& graph, const OnnxModel& model, size_t i, size_t batch);

/// How buildGraph records the model.
struct BuildOptions {
  size_t batch = 0;       ///< the bound batch (0: the model's default)
  bool training = false;  ///< BatchNormalization uses the batch statistics (training_mode 1)
  std::string prefix;     ///< prepended to every op's debug name (with a '/' between)
  /// Makes the device seed (int32 [2], ops::createDropoutSeed) of the Dropout nodes whose
  /// training_mode is 1, in the training step (training); called once, at the first of them.
  /// Each node drops with its own stream, in file order.
  std::function<autodiff::Value()> dropoutSeed;
  /// Part of a training run: in its evaluation (training false) a training_mode Dropout is the
  /// identity; outside one (plain inference) it is refused, as ONNX would drop at random.
  bool trainingRun = false;
};

/// Record the model's nodes on tape, in file order: variables are Values of variables() (in that
/// order: Tape::parameter for trainable ones, Tape::input for buffers), inputs Values of inputs().
/// Returns the graph outputs. Throws tessera::Error naming the node (name and index), its op type
/// and the opset for an unsupported op, attribute or non-constant shape input.
std::vector<autodiff::Value> buildGraph(autodiff::Tape& tape, const OnnxModel& model,
                                        const std::vector<autodiff::Value>& variables,
                                        const std::vector<autodiff::Value>& inputs,
                                        const BuildOptions& options = {});

/// Where and how infer runs.
struct InferOptions {
  std::string device = "model";  ///< a device string (model, rtl, tcp://..., serial:...)
  unsigned tiles = 16;           ///< tiles of the chip
  size_t batch = 0;              ///< rows per run of the compiled graph; 0: the model's default
  uint32_t tileMemKiB = 0;       ///< 0: 624 KiB on the model, the backend's own elsewhere
  ModelEngine modelEngine = defaultModelEngine();  ///< the model's engine (DeviceOptions)
  /// Called with the compile report's JSON (CompileReport::toJson) before the run, if set.
  std::function<void(const std::string&)> onCompiled;
};

/// The first output of the model at modelPath for every row of the inputs, one array per graph
/// input in the model's order (float32, or integer for an integer input, whose values must fit
/// int32; each with the input's shape after a leading dimension that all share), computed on a
/// device in batches of options.batch (the last one padded with zeros). Throws tessera::Error
/// naming the file, input, node or array at fault.
NpyArray infer(const std::string& modelPath, const std::vector<NpyArray>& inputs,
               const InferOptions& options = {});
/// infer of a model with one input.
NpyArray infer(const std::string& modelPath, const NpyArray& input,
               const InferOptions& options = {});

}  // namespace tessera::onnx
