// The networks of the training benchmark (docs/training.md, "Models") behind one interface, so
// that one training graph (mlp_model.cpp), one trainer (mlp_trainer.cpp) and one command
// (train_command.cpp) serve every model: its parameters (names, shapes, initialization), its
// forward pass on the autodiff tape, and its training defaults. The MLP, LeNet-5, resnet-tiny and
// transformer-tiny are here; `makeModel` is the registry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/autodiff.hpp"
#include "tessera/graph.hpp"
#include "train/model_parameters.hpp"

namespace tessera::bench {

/// What a model trains best with when the command line does not say (docs/training.md).
struct ModelDefaults {
  std::string optimizer;      ///< "sgd", "momentum" or "adam"
  float sgdLearningRate = 0;  ///< the step size of each optimizer
  float momentumLearningRate = 0;
  float adamLearningRate = 0;
  float momentum = 0.9f;           ///< for "momentum"
  uint32_t modelTileMemKiB = 128;  ///< tile memory on the "model" backend (others: their own)
  size_t batch = 32;               ///< the minibatch of tessera-bench train and compile-mlp
  /// The step size of optimizer; throws tessera::Error naming an unknown optimizer.
  float learningRate(const std::string& optimizer) const;
};

/// A network of the benchmark.
class Model {
 public:
  virtual ~Model() = default;
  /// The registry name ("mlp", "lenet").
  virtual std::string name() const = 0;
  /// One line naming its layers, for the summary.
  virtual std::string describe() const = 0;
  /// Input values per sample (784: 28 x 28 pixels, row by row).
  virtual size_t inputs() const = 0;
  /// Classes of the output.
  virtual size_t classes() const = 0;
  /// The parameters in order, named and shaped as in the .npz (weight/bias pairs, layer order).
  virtual std::vector<ParameterShape> parameterShapes() const = 0;
  /// True when the device holds parameter i as the transpose of its 2-D .npz shape (a Linear
  /// weight, (out, in) in PyTorch, is [in, out] on the device: the right operand of x W).
  virtual bool deviceTransposed(size_t i) const = 0;
  /// The parameter variables for a minibatch of `batch`, in order, each mapped for the op that
  /// uses it; the caller exposes them under their names.
  virtual std::vector<Tensor> createParameters(Graph& graph, size_t batch) const = 0;
  /// The input variable for a minibatch of `batch` (batch x inputs() values in stream order).
  virtual Tensor createInput(Graph& graph, size_t batch) const = 0;
  /// Record the forward pass of x on tape; returns the logits [batch, classes()]. Op names start
  /// with prefix.
  virtual autodiff::Value forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                                  const autodiff::Value& x, const std::string& prefix) const = 0;
  /// forward for training (training = true) or for the evaluation: a model whose layers differ
  /// between the two (batch normalisation's statistics) overrides it; the others are forward.
  virtual autodiff::Value forwardPhase(autodiff::Tape& tape,
                                       const std::vector<autodiff::Value>& params,
                                       const autodiff::Value& x, const std::string& prefix,
                                       bool /*training*/) const {
    return forward(tape, params, x, prefix);
  }
  /// False for a parameter the optimizer leaves alone: a buffer the forward updates itself (batch
  /// normalisation's running statistics), held on the device and saved like the others.
  virtual bool trainable(size_t /*i*/) const { return true; }
  /// Whether its graph lets element-by-element ops span a tile's runs (Graph::setSpanRuns): on
  /// for the MLP; off for the others, whose measured cycles stay those of their reports.
  virtual bool spanRuns() const { return false; }
  /// True when its products take float16 operands with float32 accumulation (mixed precision,
  /// docs/training.md, "Mixed precision"): float32 master weights cast to float16 for each
  /// product; the trainer then scales the loss (MlpConfig::lossScale).
  virtual bool halfPrecision() const { return false; }
  /// The seeded initialization (the run's seed).
  virtual ModelParameters initialize(uint32_t seed) const = 0;
  /// The training defaults.
  virtual ModelDefaults defaults() const = 0;
};

/// The MLP: inputs -> hidden... -> classes, ReLU between layers. Its arrays keep the names and
/// layouts the benchmark has always saved: w0 (fan_in, fan_out), b0, w1, b1, ...
class MlpModel : public Model {
 public:
  /// The layer sizes; half: every layer's product in float16 (halfPrecision).
  MlpModel(size_t inputs, std::vector<size_t> hidden, size_t classes, bool half = false);
  std::string name() const override { return "mlp"; }
  std::string describe() const override;
  size_t inputs() const override { return sizes_.front(); }
  size_t classes() const override { return sizes_.back(); }
  std::vector<ParameterShape> parameterShapes() const override;
  bool deviceTransposed(size_t) const override { return false; }
  bool spanRuns() const override { return true; }
  bool halfPrecision() const override { return half_; }
  std::vector<Tensor> createParameters(Graph& graph, size_t batch) const override;
  Tensor createInput(Graph& graph, size_t batch) const override;
  autodiff::Value forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                          const autodiff::Value& x, const std::string& prefix) const override;
  /// MlpParameters::initialize (Glorot uniform, biases 0).
  ModelParameters initialize(uint32_t seed) const override;
  ModelDefaults defaults() const override;
  /// inputs, hidden..., classes.
  const std::vector<size_t>& sizes() const { return sizes_; }

 private:
  std::vector<size_t> sizes_;
  bool half_ = false;
};

/// LeNet-5 (lenetShapes()): two 5x5 convolutions with ReLU and 2x2 max-pooling, then three
/// Linear layers, on 1 x 28 x 28 images.
class LenetModel : public Model {
 public:
  std::string name() const override { return "lenet"; }
  std::string describe() const override;
  size_t inputs() const override { return 784; }
  size_t classes() const override { return 10; }
  std::vector<ParameterShape> parameterShapes() const override { return lenetShapes(); }
  bool deviceTransposed(size_t i) const override { return i >= 4 && i % 2 == 0; }
  std::vector<Tensor> createParameters(Graph& graph, size_t batch) const override;
  Tensor createInput(Graph& graph, size_t batch) const override;
  autodiff::Value forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                          const autodiff::Value& x, const std::string& prefix) const override;
  /// ModelParameters::kaimingUniform (PyTorch's default for Conv2d and Linear).
  ModelParameters initialize(uint32_t seed) const override;
  ModelDefaults defaults() const override;
};

/// resnet-tiny (resnetTinyShapes(), docs/training.md): a 3x3 stride-2 stem, one residual block of
/// a depthwise 3x3 and a pointwise 1x1 convolution, batch normalisation after each convolution,
/// 2x2 max-pooling and one Linear layer, on 1 x 28 x 28 images.
class ResnetTinyModel : public Model {
 public:
  std::string name() const override { return "resnet-tiny"; }
  std::string describe() const override;
  size_t inputs() const override { return 784; }
  size_t classes() const override { return 10; }
  std::vector<ParameterShape> parameterShapes() const override { return resnetTinyShapes(); }
  bool deviceTransposed(size_t i) const override;
  bool trainable(size_t i) const override;
  std::vector<Tensor> createParameters(Graph& graph, size_t batch) const override;
  Tensor createInput(Graph& graph, size_t batch) const override;
  /// The training forward (batch statistics).
  autodiff::Value forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                          const autodiff::Value& x, const std::string& prefix) const override;
  /// Batch normalisation with the batch's statistics (updating the running ones) in training,
  /// with the running statistics in evaluation.
  autodiff::Value forwardPhase(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                               const autodiff::Value& x, const std::string& prefix,
                               bool training) const override;
  /// ModelParameters::kaimingUniform (PyTorch's defaults, BatchNorm's included).
  ModelParameters initialize(uint32_t seed) const override;
  ModelDefaults defaults() const override;
};

/// transformer-tiny (transformerTinyShapes(), docs/training.md): the 28 rows of an image as 28
/// tokens of 28 pixels, a Linear token projection to 32 plus a learned position embedding, one
/// post-norm encoder layer (2-head self-attention, GELU MLP of 64, layer norms, dropout 0.1),
/// the mean over the tokens and a Linear layer to 10.
class TransformerTinyModel : public Model {
 public:
  std::string name() const override { return "transformer-tiny"; }
  std::string describe() const override;
  size_t inputs() const override { return 784; }
  size_t classes() const override { return 10; }
  std::vector<ParameterShape> parameterShapes() const override { return transformerTinyShapes(); }
  bool deviceTransposed(size_t i) const override;
  std::vector<Tensor> createParameters(Graph& graph, size_t batch) const override;
  Tensor createInput(Graph& graph, size_t batch) const override;
  /// The training forward (with dropout).
  autodiff::Value forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                          const autodiff::Value& x, const std::string& prefix) const override;
  /// Dropout in training only: its seed is a device variable (key kDropoutKey, step) whose step
  /// the training step itself advances by one before its first dropout, so that every step has
  /// a new mask with no host write (and a checkpoint keeps it).
  autodiff::Value forwardPhase(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                               const autodiff::Value& x, const std::string& prefix,
                               bool training) const override;
  /// ModelParameters::kaimingUniform (LayerNorm: 1 and 0).
  ModelParameters initialize(uint32_t seed) const override;
  ModelDefaults defaults() const override;

  static constexpr size_t kTokens = transformer_tiny::kTokens;
  static constexpr size_t kFeatures = transformer_tiny::kFeatures;
  static constexpr size_t kModel = transformer_tiny::kModel;
  static constexpr size_t kHeads = transformer_tiny::kHeads;
  static constexpr size_t kFeedForward = transformer_tiny::kFeedForward;
  static constexpr float kDropout = 0.1f;
  static constexpr uint32_t kDropoutKey = 24;  ///< the Philox key of the dropout masks
};

/// The model called name ("mlp" with the given hidden layers, "lenet", "resnet-tiny",
/// "transformer-tiny"); throws tessera::Error
/// listing the known names otherwise. half: its mixed-precision form (Model::halfPrecision; the
/// MLP's only, an error for the others).
std::shared_ptr<const Model> makeModel(const std::string& name,
                                       const std::vector<size_t>& hidden = {128},
                                       bool half = false);
/// The registry's names.
std::vector<std::string> modelNames();

}  // namespace tessera::bench
