#include "model.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "tessera/conv.hpp"
#include "tessera/error.hpp"
#include "tessera/half.hpp"
#include "tessera/nn.hpp"
#include "tessera/ops.hpp"
#include "tessera/program.hpp"
#include "train/mlp_parameters.hpp"

namespace tessera::bench {

float ModelDefaults::learningRate(const std::string& opt) const {
  if (opt == "sgd") return sgdLearningRate;
  if (opt == "momentum") return momentumLearningRate;
  if (opt == "adam") return adamLearningRate;
  throw Error(fmt::format("train: unknown optimizer \"{}\" (known: sgd, momentum, adam)", opt));
}

MlpModel::MlpModel(size_t inputs, std::vector<size_t> hidden, size_t classes, bool half)
    : half_(half) {
  sizes_.push_back(inputs);
  sizes_.insert(sizes_.end(), hidden.begin(), hidden.end());
  sizes_.push_back(classes);
  for (size_t s : sizes_) {
    if (s == 0) throw Error("mlp: every layer needs at least one unit");
    if (half && s % 2 != 0) {
      throw Error(
          fmt::format("mlp: float16 products need every layer size even (float16 moves in pairs of "
                      "elements); the layers are {}",
                      fmt::join(sizes_, "-")));
    }
  }
}

std::string MlpModel::describe() const {
  return fmt::format("{}{}", fmt::join(sizes_, "-"),
                     half_ ? ", float16 products with float32 accumulation" : "");
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
    // In float16, each float32 master lies where its gradient, the float16 product x^T g, is
    // computed, so that the update is local; the forward gathers its float16 cast.
    const std::string name = fmt::format("w{}", l);
    p.push_back(half_ ? ops::createMatMulHalfResult(g, sizes_[l], batch, sizes_[l + 1], name)
                      : ops::createMatMulRhs(g, batch, sizes_[l], sizes_[l + 1], name));
    p.push_back(ops::createLinear(g, ElemType::Float32, {sizes_[l + 1]}, fmt::format("b{}", l)));
  }
  return p;
}

Tensor MlpModel::createInput(Graph& g, size_t batch) const {
  // In float16 the input is spread over all the tiles, so that its cast is too (the product
  // gathers its float16 blocks).
  if (half_) return ops::createLinear(g, ElemType::Float32, {batch, sizes_[0]}, "x", 2);
  return ops::createMatMulLhs(g, batch, sizes_[0], sizes_[1], "x");
}

autodiff::Value MlpModel::forward(autodiff::Tape& tape, const std::vector<autodiff::Value>& params,
                                  const autodiff::Value& x, const std::string& prefix) const {
  const size_t layers = sizes_.size() - 1;
  autodiff::Value act = x;
  for (size_t l = 0; l < layers; ++l) {
    const std::string mm = fmt::format("{}{}/mm", prefix, l);
    // Mixed precision: the activation and the float32 master weight cast to float16 (nearest
    // even), their product accumulated in float32; bias and ReLU in float32.
    const autodiff::Value y =
        half_ ? autodiff::matmul(
                    tape, autodiff::cast(tape, act, ElemType::Float16, mm + "/a16"),
                    autodiff::cast(tape, params[2 * l], ElemType::Float16, mm + "/w16"), mm)
              : autodiff::matmul(tape, act, params[2 * l], mm);
    // A hidden layer's bias and ReLU in one op (one pass over the product's column blocks).
    act =
        l + 1 < layers
            ? autodiff::addBiasRelu(tape, y, params[2 * l + 1], fmt::format("{}{}/bias", prefix, l))
            : autodiff::addBias(tape, y, params[2 * l + 1], fmt::format("{}{}/bias", prefix, l));
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
  // In float16 (--precision fp16) the first layer's weight gradient is a stored product (the
  // float32 step adds it into the weights on the unit), and the casts' copies: 192 KiB.
  return {"sgd", 0.05f, 0.05f, 0.001f, 0.9f, half_ ? 192u : 128u};
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

namespace {

// A 2-D Linear weight (PyTorch's (out, in)) is held as [in, out], the right operand of x W.
Tensor createLinearWeight(Graph& g, size_t rows, const ParameterShape& s) {
  return ops::createMatMulRhs(g, rows, s.shape[1], s.shape[0], s.name);
}

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// x W + b for a Linear layer whose device weight is [in, out].
autodiff::Value linear(autodiff::Tape& tape, const autodiff::Value& x, const autodiff::Value& w,
                       const autodiff::Value& b, const std::string& name) {
  return autodiff::addBias(tape, autodiff::matmul(tape, x, w, name + "/mm"), b, name + "/bias");
}

}  // namespace

// ---- resnet-tiny: parameters in resnetTinyShapes() order: conv0.weight (0), bn0.* (1-4),
// conv1.weight (5), bn1.* (6-9), conv2.weight (10), bn2.* (11-14), fc0.weight (15), fc0.bias (16).

std::string ResnetTinyModel::describe() const {
  return "1x28x28-conv3x3(16,s2,pad1)-bn-relu-[dwconv3x3(16,pad1)-bn-relu-conv1x1(16)-bn]+skip-"
         "relu-maxpool2-784-10";
}

bool ResnetTinyModel::deviceTransposed(size_t i) const {
  return i == 15;
}

bool ResnetTinyModel::trainable(size_t i) const {
  const std::string n = resnetTinyShapes().at(i).name;
  return !endsWith(n, ".running_mean") && !endsWith(n, ".running_var");
}

std::vector<Tensor> ResnetTinyModel::createParameters(Graph& g, size_t batch) const {
  std::vector<Tensor> p;
  for (const ParameterShape& s : resnetTinyShapes()) {
    p.push_back(s.name == "fc0.weight" ? createLinearWeight(g, batch, s)
                                       : ops::createLinear(g, ElemType::Float32, s.shape, s.name));
  }
  return p;
}

Tensor ResnetTinyModel::createInput(Graph& g, size_t batch) const {
  return ops::createConv2dInput(g, {batch, 1, 28, 28}, "x");
}

autodiff::Value ResnetTinyModel::forward(autodiff::Tape& tape,
                                         const std::vector<autodiff::Value>& params,
                                         const autodiff::Value& x,
                                         const std::string& prefix) const {
  return forwardPhase(tape, params, x, prefix, true);
}

autodiff::Value ResnetTinyModel::forwardPhase(autodiff::Tape& tape,
                                              const std::vector<autodiff::Value>& params,
                                              const autodiff::Value& x, const std::string& prefix,
                                              bool training) const {
  namespace ad = autodiff;
  // conv l (weight params[5 l]) then bn l (params[5 l + 1 .. 5 l + 4]); PyTorch's BatchNorm2d
  // defaults (eps 1e-5, momentum 0.1).
  auto convBn = [&](const ad::Value& in, size_t l, const ops::Conv2dParams& conv) {
    const std::string n = fmt::format("{}conv{}", prefix, l);
    const ad::Value c = ad::conv2d(tape, in, params[5 * l], ad::Value(), n, conv);
    return ad::batchNorm(tape, c, params[5 * l + 1], params[5 * l + 2], params[5 * l + 3],
                         params[5 * l + 4], training, 1e-5f, 0.1f,
                         fmt::format("{}bn{}", prefix, l));
  };
  ops::Conv2dParams stem;
  stem.stride = {2, 2};
  stem.padding = {1, 1};
  const ad::Value a0 = ad::relu(tape, convBn(x, 0, stem), prefix + "bn0/relu");
  ops::Conv2dParams depthwise;
  depthwise.padding = {1, 1};
  depthwise.groups = 16;
  const ad::Value a1 = ad::relu(tape, convBn(a0, 1, depthwise), prefix + "bn1/relu");
  const ad::Value b2 = convBn(a1, 2, ops::Conv2dParams{});
  const ad::Value sum = ad::add(tape, b2, a0, prefix + "skip");
  ad::Value act = ad::relu(tape, sum, prefix + "skip/relu");
  act = ad::maxPool2d(tape, act, prefix + "pool", ops::Pool2dParams{});  // 2x2, stride 2
  act = ad::flatten(tape, act, 1, prefix + "flatten");
  return linear(tape, act, params[15], params[16], prefix + "fc0");
}

ModelParameters ResnetTinyModel::initialize(uint32_t seed) const {
  return ModelParameters::kaimingUniform(resnetTinyShapes(), seed);
}

ModelDefaults ResnetTinyModel::defaults() const {
  // Adam at PyTorch's default step, as LeNet; the activations of a 32-image minibatch (each
  // 16 x 14 x 14 map 392 KiB) want the IPU's 624 KiB tiles at 16 tiles.
  return {"adam", 0.05f, 0.01f, 0.001f, 0.9f, 624};
}

// ---- transformer-tiny: parameters in transformerTinyShapes() order.

using namespace transformer_tiny;  // NOLINT: the parameter indices

std::string TransformerTinyModel::describe() const {
  return "28 tokens x 28-linear(32)+pos-encoder(2 heads, ff 64, gelu, post-norm, dropout 0.1)-"
         "mean-10";
}

bool TransformerTinyModel::deviceTransposed(size_t i) const {
  return i == kEmbedW || i == kInProjW || i == kOutProjW || i == kLinear1W || i == kLinear2W ||
         i == kFcW;
}

std::vector<Tensor> TransformerTinyModel::createParameters(Graph& g, size_t batch) const {
  std::vector<Tensor> p;
  const std::vector<ParameterShape> shapes = transformerTinyShapes();
  for (size_t i = 0; i < shapes.size(); ++i) {
    // The token-wise layers multiply batch x 28 rows, the classifier batch rows.
    const size_t rows = i == kFcW ? batch : batch * kTokens;
    p.push_back(deviceTransposed(i)
                    ? createLinearWeight(g, rows, shapes[i])
                    : ops::createLinear(g, ElemType::Float32, shapes[i].shape, shapes[i].name));
  }
  return p;
}

Tensor TransformerTinyModel::createInput(Graph& g, size_t batch) const {
  // Row r of sample b is token (b, r): the stream's order, as the left operand of the projection.
  return ops::createMatMulLhs(g, batch * kTokens, kFeatures, kModel, "x");
}

autodiff::Value TransformerTinyModel::forward(autodiff::Tape& tape,
                                              const std::vector<autodiff::Value>& params,
                                              const autodiff::Value& x,
                                              const std::string& prefix) const {
  return forwardPhase(tape, params, x, prefix, true);
}

autodiff::Value TransformerTinyModel::forwardPhase(autodiff::Tape& tape,
                                                   const std::vector<autodiff::Value>& params,
                                                   const autodiff::Value& x,
                                                   const std::string& prefix, bool training) const {
  namespace ad = autodiff;
  const size_t rows = x.tensor().dim(0);
  const size_t batch = rows / kTokens, headDim = kModel / kHeads;
  ad::Value seed;
  if (training) {
    Graph& g = tape.graph();
    const Tensor s = ops::createDropoutSeed(g, kDropoutKey, prefix + "dropout_seed");
    ops::advanceDropoutSeed(g, s, tape.forward(), prefix + "dropout_seed/next");
    seed = tape.input(s);
  }
  auto dropout = [&](const ad::Value& v, uint32_t stream, const std::string& name) {
    return training ? ad::dropout(tape, v, seed, kDropout, stream, name) : v;
  };
  const std::string n = prefix + "encoder/";
  // Tokens: x W_embed + b, plus the position embedding broadcast over the batch.
  ad::Value h = linear(tape, x, params[kEmbedW], params[kEmbedB], prefix + "embed");
  h = ad::add(tape, ad::reshape(tape, h, {batch, kTokens, kModel}, prefix + "embed/tokens"),
              params[kPos], prefix + "pos");
  h = ad::reshape(tape, h, {rows, kModel}, prefix + "pos/rows");
  // Self-attention: q, k, v from one projection; heads as [batch x heads, tokens, headDim].
  const ad::Value qkv = linear(tape, h, params[kInProjW], params[kInProjB], n + "in_proj");
  auto heads = [&](size_t part, const std::string& name) {
    ad::Value t = ad::slice(tape, qkv, part * kModel, (part + 1) * kModel, 1, n + name);
    t = ad::reshape(tape, t, {batch, kTokens, kHeads, headDim}, n + name + "/split");
    t = ad::transpose(tape, t, {0, 2, 1, 3}, n + name + "/heads");
    return ad::reshape(tape, t, {batch * kHeads, kTokens, headDim}, n + name + "/batch");
  };
  const ad::Value q = heads(0, "q"), k = heads(1, "k"), v = heads(2, "v");
  ad::Value scores = ad::matmul(tape, q, k, n + "scores", {false, true});
  scores = ad::scale(tape, scores, 1.0f / std::sqrt(static_cast<float>(headDim)), n + "scaled");
  const ad::Value attn = ad::softmax(tape, scores, 2, n + "softmax");
  ad::Value ctx = ad::matmul(tape, attn, v, n + "context");
  ctx = ad::reshape(tape, ctx, {batch, kHeads, kTokens, headDim}, n + "context/split");
  ctx = ad::transpose(tape, ctx, {0, 2, 1, 3}, n + "context/tokens");
  ctx = ad::reshape(tape, ctx, {rows, kModel}, n + "context/rows");
  ad::Value sa = linear(tape, ctx, params[kOutProjW], params[kOutProjB], n + "out_proj");
  sa = dropout(sa, 0, n + "dropout1");
  h = ad::layerNorm(tape, ad::add(tape, h, sa, n + "residual1"), params[kNorm1W], params[kNorm1B],
                    1e-5f, n + "norm1");
  // The MLP: linear1, GELU, linear2.
  ad::Value ff = ad::gelu(
      tape, linear(tape, h, params[kLinear1W], params[kLinear1B], n + "linear1"), n + "gelu");
  ff = linear(tape, ff, params[kLinear2W], params[kLinear2B], n + "linear2");
  ff = dropout(ff, 1, n + "dropout2");
  h = ad::layerNorm(tape, ad::add(tape, h, ff, n + "residual2"), params[kNorm2W], params[kNorm2B],
                    1e-5f, n + "norm2");
  // The mean over the tokens, then the classifier.
  ad::Value pooled = ad::reshape(tape, h, {batch, kTokens, kModel}, prefix + "pool/tokens");
  pooled =
      tape.apply1("ReduceMean", {pooled},
                  {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}, prefix + "pool");
  return linear(tape, pooled, params[kFcW], params[kFcB], prefix + "fc0");
}

ModelParameters TransformerTinyModel::initialize(uint32_t seed) const {
  return ModelParameters::kaimingUniform(transformerTinyShapes(), seed);
}

ModelDefaults TransformerTinyModel::defaults() const {
  // Adam at PyTorch's default step; 624 KiB tiles, as the CNNs. Batch 8: at 32 the vertex states
  // and exchange programs of its per-row vertices and 64 attention products need more than 1 MiB
  // on tile 0 of 16 (docs/training.md, "Models").
  return {"adam", 0.05f, 0.01f, 0.001f, 0.9f, 624, 8};
}

std::shared_ptr<const Model> makeModel(const std::string& name, const std::vector<size_t>& hidden,
                                       bool half) {
  if (name == "mlp") return std::make_shared<MlpModel>(784, hidden, 10, half);
  if (half && (name == "lenet" || name == "resnet-tiny" || name == "transformer-tiny")) {
    throw Error(fmt::format(
        "train: --precision fp16 is the MLP's only: {}'s convolutions, normalisations and batched "
        "products have no float16 form yet (docs/training.md, \"Mixed precision\")",
        name));
  }
  if (name == "lenet") return std::make_shared<LenetModel>();
  if (name == "resnet-tiny") return std::make_shared<ResnetTinyModel>();
  if (name == "transformer-tiny") return std::make_shared<TransformerTinyModel>();
  throw Error(
      fmt::format("train: unknown model \"{}\" (known: {})", name, fmt::join(modelNames(), ", ")));
}

std::vector<std::string> modelNames() {
  return {"mlp", "lenet", "resnet-tiny", "transformer-tiny"};
}

}  // namespace tessera::bench
