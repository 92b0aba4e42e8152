// Layers of neural networks beyond the MLP (docs/library.md, "Layers"): activations, softmax
// along any axis, layer and batch normalisation, dropout, embeddings and batched matmul, each
// with its backward pass as a separate builder (so that an autodiff layer can pair them). Builders
// in the poplibs shape: the graph first, then the program to append to, then a debug name; the
// definitions follow PyTorch's (GELU by erf, biased variance for normalising, unbiased for running
// statistics, epsilon inside the square root), with transcendentals from tessera/mathf.h.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/graph.hpp"
#include "tessera/ops.hpp"
#include "tessera/program.hpp"

namespace tessera::ops {

/// tanh(x), elementwise, mapped like x.
Tensor tanh(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// Gradient of tanh from its output y: grad * (1 - y * y).
Tensor tanhBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                    const std::string& name);
/// 1 / (1 + e^-x), elementwise, mapped like x.
Tensor sigmoid(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// Gradient of sigmoid from its output y: grad * (1 - y) * y.
Tensor sigmoidBackward(Graph& graph, const Tensor& grad, const Tensor& y, Sequence& prog,
                       const std::string& name);
/// GELU, erf form: x * 0.5 * (1 + erf(x / sqrt 2)), elementwise, mapped like x.
Tensor gelu(Graph& graph, const Tensor& x, Sequence& prog, const std::string& name);
/// Gradient of GELU from its input x: grad * (cdf(x) + x * pdf(x)).
Tensor geluBackward(Graph& graph, const Tensor& grad, const Tensor& x, Sequence& prog,
                    const std::string& name);

/// Softmax of x along dimension axis (any rank); the result has x's shape.
Tensor softmax(Graph& graph, const Tensor& x, size_t axis, Sequence& prog, const std::string& name);
/// Gradient of softmax from its output y: y * (grad - sum(grad * y)) along axis.
Tensor softmaxBackward(Graph& graph, const Tensor& grad, const Tensor& y, size_t axis,
                       Sequence& prog, const std::string& name);
/// Log-softmax of x along dimension axis: (x - max) - log(sum(e^(x - max))).
Tensor logSoftmax(Graph& graph, const Tensor& x, size_t axis, Sequence& prog,
                  const std::string& name);
/// Gradient of logSoftmax from its output y: grad - e^y * sum(grad) along axis.
Tensor logSoftmaxBackward(Graph& graph, const Tensor& grad, const Tensor& y, size_t axis,
                          Sequence& prog, const std::string& name);

/// Output of a normalisation and the statistics its backward pass needs.
struct NormResult {
  Tensor out;     ///< normalised, scaled and shifted; x's shape
  Tensor mean;    ///< per normalised group (a row for layerNorm, a channel for batchNorm)
  Tensor invStd;  ///< 1 / sqrt(var + eps) per group
};
/// Gradients of a normalisation.
struct NormGradients {
  Tensor input;   ///< d loss / d x
  Tensor weight;  ///< d loss / d weight (gamma)
  Tensor bias;    ///< d loss / d bias (beta)
};

/// Layer normalisation of x over its trailing dimensions of weight's shape (PyTorch's
/// LayerNorm(normalized_shape = weight.shape)); weight and bias have that shape.
NormResult layerNorm(Graph& graph, const Tensor& x, const Tensor& weight, const Tensor& bias,
                     float eps, Sequence& prog, const std::string& name);
/// Gradients of layerNorm from its saved mean and invStd.
NormGradients layerNormBackward(Graph& graph, const Tensor& grad, const Tensor& x,
                                const Tensor& weight, const Tensor& mean, const Tensor& invStd,
                                Sequence& prog, const std::string& name);

/// Batch normalisation in training of x [N, C, ...] (NCHW, or [N, F]) over all dimensions but
/// 1, with weight and bias [C]: batch statistics, biased variance. When runningMean and
/// runningVar ([C]) are valid tensors they are updated in place with momentum and the unbiased
/// variance, as PyTorch's BatchNorm does; pass default Tensors to skip the update.
NormResult batchNormTraining(Graph& graph, const Tensor& x, const Tensor& weight,
                             const Tensor& bias, const Tensor& runningMean,
                             const Tensor& runningVar, float eps, float momentum, Sequence& prog,
                             const std::string& name);
/// Batch normalisation in evaluation: normalised with runningMean and runningVar (result.mean is
/// runningMean, result.invStd is computed).
NormResult batchNormInference(Graph& graph, const Tensor& x, const Tensor& weight,
                              const Tensor& bias, const Tensor& runningMean,
                              const Tensor& runningVar, float eps, Sequence& prog,
                              const std::string& name);
/// Parts each channel's values are split into by batchNormTraining and batchNormBackward (in
/// training): one vertex a part, the parts' partial sums added in part order (docs/library.md).
size_t batchNormParts(const Graph& graph, size_t channels, size_t valuesPerChannel);
/// Gradients of batchNormTraining (training = true) or batchNormInference (false), from the
/// forward's mean and invStd.
NormGradients batchNormBackward(Graph& graph, const Tensor& grad, const Tensor& x,
                                const Tensor& weight, const Tensor& mean, const Tensor& invStd,
                                bool training, Sequence& prog, const std::string& name);

/// A dropout seed: an int32 [2] variable (key, step) on tile 0 set to (seed, 0). Change the step
/// (or the key) between training steps, by a host write or a stream, for a new mask.
Tensor createDropoutSeed(Graph& graph, uint32_t seed, const std::string& name);
/// Add one to the step of seed (createDropoutSeed's) on the device: at the start of a training
/// step's program, a new mask every step with no host write, kept by a checkpoint.
void advanceDropoutSeed(Graph& graph, const Tensor& seed, Sequence& prog, const std::string& name);
/// Dropout in training: each element kept with probability 1 - p and scaled by 1 / (1 - p), else
/// 0; the mask comes from Philox-4x32-10 under the key seed (int32 [2]) at counter (element /
/// 4, stream), so it is the same on every backend and mapping. Give each dropout of a network its
/// own stream. In evaluation dropout is the identity: do not call this.
Tensor dropout(Graph& graph, const Tensor& x, const Tensor& seed, float p, uint32_t stream,
               Sequence& prog, const std::string& name);
/// Gradient of dropout: grad through the same mask and scale (same seed, p and stream).
Tensor dropoutBackward(Graph& graph, const Tensor& grad, const Tensor& seed, float p,
                       uint32_t stream, Sequence& prog, const std::string& name);

/// A new [vocab, dim] embedding table mapped in column blocks, one per tile (where embedding
/// and embeddingBackward work).
Tensor createEmbeddingTable(Graph& graph, size_t vocab, size_t dim, const std::string& name);
/// Rows of table [V, D] picked by int32 indices (any shape): the result is indices' shape + [D].
/// An index outside [0, V) gives a row of NaN.
Tensor embedding(Graph& graph, const Tensor& table, const Tensor& indices, Sequence& prog,
                 const std::string& name);
/// Gradient of embedding with respect to the table: a new [vocab, D] tensor (mapped as
/// createEmbeddingTable) whose row v is the sum of the rows of grad whose index is v, added in
/// increasing order of their position in indices, starting from zero.
Tensor embeddingBackward(Graph& graph, const Tensor& grad, const Tensor& indices, size_t vocab,
                         Sequence& prog, const std::string& name);

/// Batched op(a) [B, M, K] times op(b) [B, K, N] = [B, M, N]; options transpose the last two
/// dimensions of a ([B, K, M] stored) or b ([B, N, K] stored), as attention's Q K^T needs. Each
/// batch is one matmul (same plan, same order of operations).
Tensor batchMatMul(Graph& graph, const Tensor& a, const Tensor& b, Sequence& prog,
                   const std::string& name, const MatMulOptions& options = {});
/// Gradient of batchMatMul with respect to a, in a's stored layout.
Tensor batchMatMulBackwardA(Graph& graph, const Tensor& grad, const Tensor& b, Sequence& prog,
                            const std::string& name, const MatMulOptions& options = {});
/// Gradient of batchMatMul with respect to b, in b's stored layout.
Tensor batchMatMulBackwardB(Graph& graph, const Tensor& grad, const Tensor& a, Sequence& prog,
                            const std::string& name, const MatMulOptions& options = {});

}  // namespace tessera::ops
