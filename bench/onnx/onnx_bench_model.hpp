// An ONNX model as one more Model of the training benchmark (model.hpp): its float initializers
// are the parameters (BatchNormalization's running statistics as buffers), its graph the forward.
#pragma once

#include <string>
#include <vector>

#include "model.hpp"
#include "tessera/onnx.hpp"

namespace tessera::onnx {

/// The model of an ONNX file for the benchmark's trainer: one float32 input of 784 values per
/// sample ([N, 1, 28, 28] or [N, 784]), first output the logits [N, 10].
class OnnxBenchModel : public bench::Model {
 public:
  /// Checks the input and output shapes; throws tessera::Error naming the file.
  explicit OnnxBenchModel(OnnxModel model);
  std::string name() const override { return "onnx"; }
  std::string describe() const override;
  size_t inputs() const override { return 784; }
  size_t classes() const override { return 10; }
  std::vector<bench::ParameterShape> parameterShapes() const override;
  bool deviceTransposed(size_t) const override { return false; }
  bool trainable(size_t i) const override { return model_.variables().at(i).trainable; }
  std::vector<Tensor> createParameters(Graph& graph, size_t batch) const override;
  Tensor createInput(Graph& graph, size_t batch) const override;
  autodiff::Value forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                          const autodiff::Value& x, const std::string& prefix) const override;
  autodiff::Value forwardPhase(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                               const autodiff::Value& x, const std::string& prefix,
                               bool training) const override;
  /// The file's initializers (the seed is not used: the export holds the initial weights).
  bench::ModelParameters initialize(uint32_t seed) const override;
  bench::ModelDefaults defaults() const override;
  /// The parsed file.
  const OnnxModel& model() const { return model_; }

 private:
  OnnxModel model_;
};

}  // namespace tessera::onnx
