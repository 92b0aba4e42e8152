// Automatic differentiation over the graph API (docs/autodiff.md), in reverse mode as PopART does
// it from an ONNX graph. A Tape records the forward pass op by op: each op appends its forward
// steps to the forward Sequence at once (the values are ordinary Tensors) and remembers what its
// backward needs. Tape::gradients then walks the recorded ops backwards and appends each op's
// backward. Ops are found by name in an OpRegistry with ONNX-like attributes, so a graph read from
// a file builds the same way as one written in C++; each op registers its forward and its backward
// together, in one place (sw/autodiff/ops.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tessera/conv.hpp"
#include "tessera/graph.hpp"
#include "tessera/nn.hpp"
#include "tessera/ops.hpp"
#include "tessera/optimizers.hpp"
#include "tessera/program.hpp"

namespace tessera::autodiff {

/// An attribute of an op: an integer, a float, a list of integers or a string (as in ONNX).
using Attribute = std::variant<int64_t, double, std::vector<int64_t>, std::string>;
/// An op's attributes by name.
using Attributes = std::map<std::string, Attribute>;

/// A differentiable value recorded on a tape: a tensor and where it came from.
class Value {
 public:
  Value() = default;
  /// True for a value made by a Tape.
  bool valid() const { return id_ != kNone; }
  /// The tensor holding the value.
  const Tensor& tensor() const { return tensor_; }
  /// Index of the value on its tape.
  size_t id() const { return id_; }

 private:
  friend class Tape;
  static constexpr size_t kNone = ~size_t{0};
  Tensor tensor_;
  size_t id_ = kNone;
};

/// A gradient during the backward pass: a tensor, or the same known float in every element (the
/// seed of a loss, and what ops such as scale and reduceSum make of it, with no device work).
struct Gradient {
  Tensor tensor;              ///< valid unless the gradient is a constant
  float constant = 0.0f;      ///< the value of every element of a constant gradient
  std::vector<size_t> shape;  ///< the shape of a constant gradient
  /// True when the gradient is a known constant rather than a tensor.
  bool isConstant() const { return !tensor.valid(); }
  /// A constant gradient.
  static Gradient uniform(float value, std::vector<size_t> shape);
  /// A tensor gradient.
  static Gradient of(const Tensor& t);
};

/// Where a parameter's gradient may be added directly: target += factor * scalar[0] * gradient.
/// A plain SGD step is (w, lr, -1); an op whose backward can fuse the product into the update
/// (matmul: matmulAccumulate) never stores the gradient.
struct GradientSink {
  Tensor target;
  Tensor scalar;
  float factor = -1.0f;
};

/// One recorded op (read by backward functions).
struct OpNode {
  std::string type;  ///< the registry name, "MatMul"
  std::string name;  ///< debug name, used in every error
  Attributes attributes;
  std::vector<size_t> inputs;   ///< value ids
  std::vector<size_t> outputs;  ///< value ids
  std::vector<Tensor> saved;    ///< extra tensors the forward kept for the backward
  /// Integer attribute key, or fallback when absent; throws naming the op if it has another type.
  int64_t intAttr(const std::string& key, int64_t fallback) const;
  /// Float attribute (an integer is accepted).
  double floatAttr(const std::string& key, double fallback) const;
  /// List attribute (empty when absent).
  std::vector<int64_t> intsAttr(const std::string& key) const;
};

/// What an op's forward function gets: the graph, the program to append to and its inputs.
struct ForwardContext {
  Graph& graph;
  Sequence& prog;
  OpNode& node;
  const std::vector<Tensor>& inputs;
  /// Keep a tensor for the backward (node.saved).
  void save(const Tensor& t) { node.saved.push_back(t); }
};

/// What an op's backward function gets: its forward's tensors, the gradients of its outputs, and
/// where to put the gradients of its inputs.
class BackwardContext {
 public:
  Graph& graph;
  Sequence& prog;
  const OpNode& node;
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  /// Debug name for a backward step: "<op name>/grad/<what>".
  std::string stepName(const std::string& what) const;
  /// The gradient of output i (always present when the backward runs; a constant or a tensor).
  const Gradient& gradOutput(size_t i) const { return gradOutputs_[i]; }
  /// The gradient of output i as a tensor mapped like the output (a constant is filled in).
  Tensor gradOutputTensor(size_t i);
  /// True when the gradient of input i is wanted.
  bool needsGrad(size_t i) const { return needs_[i]; }
  /// True when input i is a leaf (a parameter or an input, not made by an op).
  bool isLeaf(size_t i) const { return leaf_[i]; }
  /// The sink of input i, if its gradient may be added straight into a parameter's update; an op
  /// that uses it calls sinkUsed(i) and sets no gradient for i. It must read input i for its other
  /// gradients first: the target is the parameter itself.
  const GradientSink* sink(size_t i) const { return sinks_[i]; }
  /// Mark input i's sink as done.
  void sinkUsed(size_t i);
  /// Set the gradient of input i.
  void setGrad(size_t i, Gradient g);

 private:
  friend class Tape;
  BackwardContext(Graph& g, Sequence& p, const OpNode& n, const std::vector<Tensor>& in,
                  const std::vector<Tensor>& out)
      : graph(g), prog(p), node(n), inputs(in), outputs(out) {}
  std::vector<Gradient> gradOutputs_;
  std::vector<bool> needs_, leaf_;
  std::vector<const GradientSink*> sinks_;
  std::vector<std::optional<Gradient>> gradInputs_;
  std::vector<bool> sinkDone_;
};

/// An op's forward: checks its inputs' shapes (errors name node.name, the tensors and shapes),
/// appends its steps to ctx.prog and returns its outputs.
using ForwardFn = std::function<std::vector<Tensor>(ForwardContext& ctx)>;
/// An op's backward: sets the gradients of the inputs with needsGrad(i).
using BackwardFn = std::function<void(BackwardContext& ctx)>;

/// A differentiable op: its name, its forward and its backward (empty: not differentiable).
struct OpDefinition {
  std::string type;
  ForwardFn forward;
  BackwardFn backward;
};

/// The ops a tape knows, by name.
class OpRegistry {
 public:
  /// The built-in ops (docs/autodiff.md has the list).
  static OpRegistry builtin();
  /// Add (or replace) an op.
  void add(OpDefinition op);
  /// The op called type, or nullptr.
  const OpDefinition* find(const std::string& type) const;
  /// Names of every op, sorted.
  std::vector<std::string> names() const;

 private:
  std::map<std::string, OpDefinition> ops_;
};

/// A recorded forward pass and its backward generator (see the file comment).
class Tape {
 public:
  /// A tape whose ops append their forward steps to forward.
  Tape(Graph& graph, Sequence& forward, OpRegistry registry = OpRegistry::builtin());
  ~Tape();
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  /// The graph.
  Graph& graph() { return graph_; }
  /// The forward program.
  Sequence& forward() { return forward_; }

  /// A value that is not differentiated (data, labels).
  Value input(const Tensor& t);
  /// A trainable value (a variable of the graph): gradients may be asked for it.
  Value parameter(const Tensor& t);
  /// Record op type on inputs: runs its forward now and returns its outputs. Throws naming name
  /// when the op is unknown or its inputs do not fit it.
  std::vector<Value> apply(const std::string& type, const std::vector<Value>& inputs,
                           const Attributes& attributes, const std::string& name);
  /// apply for an op with one output.
  Value apply1(const std::string& type, const std::vector<Value>& inputs,
               const Attributes& attributes, const std::string& name);

  /// The gradients of lossScale * (the sum of loss's elements) with respect to each of wrt, in
  /// order, appended to prog: tensors mapped like the parameters (views of a gradient are
  /// copied). Throws naming the op, tensor and shapes when an op on the way has no gradient, or
  /// naming the parameter when it does not reach the loss.
  std::vector<Tensor> gradients(const Value& loss, const std::vector<Value>& wrt, Sequence& prog,
                                float lossScale = 1.0f, const std::string& name = "bwd");
  /// The vector-Jacobian product: gradients of sum(seed * output) with respect to wrt.
  std::vector<Tensor> gradients(const Value& output, const Tensor& seed,
                                const std::vector<Value>& wrt, Sequence& prog,
                                const std::string& name = "bwd");
  /// The backward pass where the gradient of each wrt[i] goes into sinks[i] (target += factor *
  /// scalar * gradient) as soon as it is complete; used by Optimizer.
  void backwardInto(const Value& loss, const std::vector<Value>& wrt,
                    const std::vector<GradientSink>& sinks, Sequence& prog, float lossScale,
                    const std::string& name);

  /// The recorded ops, in forward order.
  const std::vector<OpNode>& ops() const { return ops_; }

 private:
  struct ValueInfo {
    Tensor tensor;
    bool parameter = false;
    size_t producer = ~size_t{0};  // op index, none for a leaf
    size_t index = 0;              // output index within the producer
  };
  Value make(const Tensor& t, bool parameter, size_t producer, size_t index);
  std::vector<std::optional<Tensor>> run(const Value& output, const Gradient& seed,
                                         const std::vector<Value>& wrt,
                                         const std::vector<const GradientSink*>& sinks,
                                         Sequence& prog, const std::string& name);

  Graph& graph_;
  Sequence& forward_;
  OpRegistry registry_;
  std::vector<ValueInfo> values_;
  std::vector<OpNode> ops_;
};

// Typed builders over Tape::apply (one per built-in op; the name is the op's debug name).

/// op(a) op(b) (matmul with optional transposes); 3-D operands [B, M, K] and [B, K, N] give a
/// batched product (ops::batchMatMul), the options transposing each batch's matrices.
Value matmul(Tape& tape, const Value& a, const Value& b, const std::string& name,
             const ops::MatMulOptions& o = {});
/// a + b.
Value add(Tape& tape, const Value& a, const Value& b, const std::string& name);
/// a - b.
Value sub(Tape& tape, const Value& a, const Value& b, const std::string& name);
/// a * b, element by element.
Value mul(Tape& tape, const Value& a, const Value& b, const std::string& name);
/// a * s.
Value scale(Tape& tape, const Value& a, float s, const std::string& name);
/// max(a, 0).
Value relu(Tape& tape, const Value& a, const std::string& name);
/// x [rows, n] + bias [n].
Value addBias(Tape& tape, const Value& x, const Value& bias, const std::string& name);
/// max(x + bias, 0): addBias then relu in one op, the same bits (ops::addBiasRelu).
Value addBiasRelu(Tape& tape, const Value& x, const Value& bias, const std::string& name);
/// Sum of a 2-D value along axis (ops::reduceSum).
Value reduceSum(Tape& tape, const Value& x, size_t axis, const std::string& name);
/// Per-row softmax cross-entropy of logits [rows, classes] against int32 labels [rows] (a
/// Tape::input). gradScale is the constant gradient each row's loss is expected to receive (the
/// loss scale given to Tape::gradients): with it the forward computes the gradient fused with the
/// loss; any other gradient is still right, at the cost of a second pass.
Value softmaxCrossEntropy(Tape& tape, const Value& logits, const Value& labels, float gradScale,
                          const std::string& name);
/// The same elements with another shape (a view).
Value reshape(Tape& tape, const Value& x, const std::vector<size_t>& shape,
              const std::string& name);
/// Dimensions permuted (a view): result dimension i is dimension perm[i].
Value transpose(Tape& tape, const Value& x, const std::vector<size_t>& perm,
                const std::string& name);
/// Elements [begin, end) of dimension axis (a view).
Value slice(Tape& tape, const Value& x, size_t begin, size_t end, size_t axis,
            const std::string& name);
/// Values joined along axis (a view).
Value concat(Tape& tape, const std::vector<Value>& xs, size_t axis, const std::string& name);

/// Convolution (op "Conv"): x [N, C, H, W] with weights [OC, C / groups, KH, KW], plus bias [OC]
/// (pass Value() for none); ops::conv2d's arguments and order of operations.
Value conv2d(Tape& tape, const Value& x, const Value& weights, const Value& bias,
             const std::string& name, const ops::Conv2dParams& params = {});
/// Max pooling of x [N, C, H, W] (op "MaxPool"); stride 0 means the kernel size, as in the library.
Value maxPool2d(Tape& tape, const Value& x, const std::string& name,
                const ops::Pool2dParams& params = {});
/// Average pooling of x [N, C, H, W] (op "AveragePool", count_include_pad = 1).
Value avgPool2d(Tape& tape, const Value& x, const std::string& name,
                const ops::Pool2dParams& params = {});
/// x viewed as [product of dimensions before axis, product of the rest] (op "Flatten", a view).
Value flatten(Tape& tape, const Value& x, size_t axis, const std::string& name);

/// tanh(x) (op "Tanh").
Value tanh(Tape& tape, const Value& x, const std::string& name);
/// 1 / (1 + e^-x) (op "Sigmoid").
Value sigmoid(Tape& tape, const Value& x, const std::string& name);
/// GELU, erf form (op "Gelu", PyTorch's default).
Value gelu(Tape& tape, const Value& x, const std::string& name);
/// Softmax of x along axis (op "Softmax").
Value softmax(Tape& tape, const Value& x, size_t axis, const std::string& name);
/// Log-softmax of x along axis (op "LogSoftmax").
Value logSoftmax(Tape& tape, const Value& x, size_t axis, const std::string& name);
/// Layer normalisation of x over its trailing dimensions of weight's shape, scaled by weight and
/// shifted by bias (op "LayerNormalization"; PyTorch's LayerNorm).
Value layerNorm(Tape& tape, const Value& x, const Value& weight, const Value& bias, float eps,
                const std::string& name);
/// Batch normalisation of x [N, C, ...] with weight and bias [C] (op "BatchNormalization"):
/// training uses the batch statistics and updates runningMean and runningVar (Tape::input
/// values, or Value() for none) in place with PyTorch's momentum; evaluation uses them.
Value batchNorm(Tape& tape, const Value& x, const Value& weight, const Value& bias,
                const Value& runningMean, const Value& runningVar, bool training, float eps,
                float momentum, const std::string& name);
/// Dropout in training with probability p (op "Dropout"): the mask is Philox under seed (an
/// int32 [2] Tape::input from ops::createDropoutSeed) at this stream, the same on every backend.
Value dropout(Tape& tape, const Value& x, const Value& seed, float p, uint32_t stream,
              const std::string& name);
/// Rows of table [V, D] picked by int32 indices (op "Gather" along axis 0: an embedding lookup).
Value embedding(Tape& tape, const Value& table, const Value& indices, const std::string& name);
/// x cast to type (float32 <-> float16: tessera/half.hpp's cast, nearest-even when narrowing); the
/// gradient is the cast back (op CastPrecision, attribute "to" 16 or 32). Needs the matrix unit.
Value cast(Tape& tape, const Value& x, ElemType type, const std::string& name);
/// x itself in the forward pass; its gradient times the device scalar scale [1] (a Tape::input)
/// in the backward (op ScaleGradient): where a dynamic loss scale (ops::LossScaler::scale) enters
/// the backward pass.
Value scaleGradient(Tape& tape, const Value& x, const Value& scale, const std::string& name);

/// An optimizer on the tiles (docs/autodiff.md, "Optimizers"), PyTorch's semantics: weight decay
/// is L2, added to the gradient (torch.optim.SGD and torch.optim.Adam, not AdamW).
struct OptimizerConfig {
  enum class Kind { Sgd, Momentum, Adam };
  Kind kind = Kind::Sgd;
  float learningRate = 0.01f;  ///< initial value of the device-side learning rate
  float momentum = 0.9f;       ///< Momentum
  float beta1 = 0.9f;          ///< Adam
  float beta2 = 0.999f;        ///< Adam
  float eps = 1e-8f;           ///< Adam
  float weightDecay = 0.0f;
};

/// Updates parameters from their gradients on the tiles. The learning rate is a device scalar
/// exposed under the name given to the constructor; the host writes it between runs.
class Optimizer {
 public:
  /// An optimizer of graph; its learning rate is exposed as lrName.
  Optimizer(Graph& graph, const OptimizerConfig& config, const std::string& lrName = "lr");
  /// The learning rate tensor (float32 [1], on tile 0).
  const Tensor& learningRate() const { return lr_; }
  /// The configuration.
  const OptimizerConfig& config() const { return config_; }
  /// Backward of loss (scaled by lossScale) and the update of every parameter, appended to prog.
  /// Plain SGD without weight decay adds each gradient into its parameter as soon as it is known
  /// (fused into the matmul that makes it where the op allows); the others compute every gradient,
  /// then update.
  void minimize(Tape& tape, const Value& loss, const std::vector<Value>& params, Sequence& prog,
                float lossScale, const std::string& name = "opt");
  /// The update of params from gradients already computed (e.g. summed over replicas).
  /// gradScale: the gradients are gradScale times the true ones (a static loss scale, a power of
  /// two). SGD and momentum then take them as they are, with the rate lr / gradScale and the decay
  /// weightDecay * gradScale (the velocity holds gradScale times its value): the same bits as
  /// dividing them first wherever no value is subnormal or overflows, without a pass over them.
  /// Adam divides them first (ops::scaleInPlace).
  void update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, Sequence& prog,
              const std::string& name = "opt", float gradScale = 1.0f);
  /// The update under a dynamic loss scale (docs/autodiff.md, "Dynamic loss scale"): the
  /// gradients carry scaler.scale; ops::lossScaleStep checks them and advances the scale, and the
  /// update runs only when every element is finite (a skipped step leaves parameters, optimizer
  /// state and Adam's step count as they were). Plain SGD without weight decay takes the
  /// gradients as they are at the rate lr * inv; the others divide them first
  /// (ops::scaleInPlaceByScalar). Without an overflow the bits are the static scale's.
  void update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, Sequence& prog,
              const std::string& name, const ops::LossScaler& scaler);
  /// The optimizer state of param (velocity, or Adam's first and second moments), created on
  /// first use, mapped like param, starting at zero.
  std::vector<Tensor> state(const Tensor& param);

 private:
  // The updates of params at the rate lr (a device scalar) with weight decay weightDecay.
  void apply(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, Sequence& prog,
             const std::string& name, const Tensor& lr, float weightDecay);
  Graph& graph_;
  OptimizerConfig config_;
  Tensor lr_;
  std::optional<ops::AdamScalars> adam_;
  std::vector<std::pair<Tensor, std::vector<Tensor>>> state_;
};

}  // namespace tessera::autodiff
