#include "cpu_transformer_tiny.hpp"

#include <fmt/format.h>

#include <cmath>

#include "cpu_dense.hpp"
#include "tessera/error.hpp"
#include "tessera/nn_reference.hpp"

namespace tessera::bench {
namespace {

namespace nnref = autodiff::gradcheck::nnref;
using Floats = std::vector<float>;

using namespace transformer_tiny;  // NOLINT: the sizes and parameter indices
constexpr size_t kHeadDim = kModel / kHeads, kClasses = 10, kQkv = 3 * kModel;
constexpr float kEps = 1e-5f;  // the layer norms' (PyTorch's default)
// The Linear weights: held [in, out] on the device (the right operand of x W), whose gradient is
// accumulated (or, with plain SGD, the update fused) by ops::matmulAccumulate.
constexpr size_t kLinearWeights[] = {kEmbedW, kInProjW, kOutProjW, kLinear1W, kLinear2W, kFcW};

Floats transposed(const Floats& v, size_t rows, size_t cols) {
  Floats t(v.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = v[i * cols + j];
  return t;
}

// a [m, k] b [k, n] (both row-major) as ops::matmul computes it with a plan of `parts` k parts.
Floats product(const Floats& a, const Floats& b, size_t m, size_t k, size_t n, size_t parts) {
  Floats c(m * n, 0.0f), tmp;
  for (size_t i = 0; i < m; ++i)
    cpu::splitDot(k, parts, a.data() + i * k, b.data(), n, c.data() + i * n, n, tmp);
  return c;
}

// c [in, out] += a [rows, in]^T g [rows, out]: each element an fmaf chain over the rows in order,
// from c (ops::matmulAccumulate: no k split).
void accumulate(Floats& c, const Floats& a, const Floats& g, size_t rows, size_t in, size_t out) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < in; ++i)
      cpu::fmaRow(a[r * in + i], g.data() + r * out, c.data() + i * out, out);
}

// Column sums of g [rows, cols], each from row 0 adding the rows in order (ops::reduceSum along
// axis 0: the bias gradients, the position embedding's sum over the batch).
Floats columnSums(const Floats& g, size_t rows, size_t cols) {
  Floats s(g.begin(), g.begin() + static_cast<std::ptrdiff_t>(cols));
  for (size_t r = 1; r < rows; ++r)
    for (size_t j = 0; j < cols; ++j) s[j] += g[r * cols + j];
  return s;
}

// x [rows, n] + bias [n] (AddBias).
Floats addBias(Floats x, const Floats& bias) {
  for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] + bias[i % bias.size()];
  return x;
}

Floats add(const Floats& a, const Floats& b) {
  Floats c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = a[i] + b[i];
  return c;
}

// Head z = b * kHeads + hd of part (0 q, 1 k, 2 v) of qkv [rows, 96] as [tokens, headDim]: the
// views Slice, Reshape [B, T, H, D], Transpose (0, 2, 1, 3), Reshape [B H, T, D].
Floats head(const Floats& qkv, size_t part, size_t z) {
  const size_t b = z / kHeads, hd = z % kHeads;
  Floats t(kTokens * kHeadDim);
  for (size_t i = 0; i < kTokens; ++i)
    for (size_t d = 0; d < kHeadDim; ++d)
      t[i * kHeadDim + d] = qkv[(b * kTokens + i) * kQkv + part * kModel + hd * kHeadDim + d];
  return t;
}

}  // namespace

// What the forward keeps for the backward (the device's saved activations).
struct CpuTransformerTiny::Pass {
  size_t batch = 0, rows = 0;
  uint32_t step = 0;            // the dropout seed's step
  Floats x;                     // [rows, 28]
  Floats w[kFcW + 1];           // the Linear weights as [in, out]
  Floats h0, qkv;               // embedding + position [rows, 32]; in_proj's output [rows, 96]
  std::vector<Floats> q, k, v;  // per head [28, 16]
  Floats attn;                  // softmax [B H, 28, 28]
  Floats ctx;                   // context as rows [rows, 32]
  Floats r1, h1, f1, g1, r2;    // residual 1, norm1, linear1, GELU, residual 2
  Floats pooled;                // [B, 32]
  Floats dLogits;               // (softmax - onehot) / B
  StepResult result;
};

CpuTransformerTiny::CpuTransformerTiny(ModelParameters params, CpuOptimizerConfig optimizer,
                                       KParts kParts, Dropout dropout)
    : params_(std::move(params)),
      opt_(optimizer, params_.values),
      kParts_(std::move(kParts)),
      dropout_(dropout) {
  const std::vector<ParameterShape> want = transformerTinyShapes();
  if (params_.shapes.size() != want.size())
    throw Error(fmt::format("cpu transformer-tiny: {} arrays, the model has {}",
                            params_.shapes.size(), want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    if (params_.shapes[i].name != want[i].name || params_.shapes[i].shape != want[i].shape)
      throw Error(fmt::format("cpu transformer-tiny: array {} is {}, the model's is {}", i,
                              params_.shapes[i].name, want[i].name));
  }
  if (!(dropout_.rate >= 0.0f && dropout_.rate < 1.0f))
    throw Error(
        fmt::format("cpu transformer-tiny: dropout rate {} is not in [0, 1)", dropout_.rate));
  params_.validate();
}

size_t CpuTransformerTiny::parts(size_t m, size_t k, size_t n) const {
  return kParts_ ? kParts_(m, k, n) : 1;
}

void CpuTransformerTiny::runForward(Pass& p, std::span<const float> images,
                                    std::span<const int32_t> labels, uint32_t step) const {
  const size_t B = labels.size();
  if (B == 0 || images.size() != B * 784)
    throw Error(
        fmt::format("cpu transformer-tiny: {} input values for a batch of {}", images.size(), B));
  const std::vector<Floats>& P = params_.values;
  const size_t R = B * kTokens;
  p.batch = B, p.rows = R, p.step = step;
  p.x.assign(images.begin(), images.end());  // row r of sample b is token (b, r)
  for (size_t i : kLinearWeights)            // PyTorch's (out, in)
    p.w[i] = transposed(P[i], params_.shapes[i].shape[0], params_.shapes[i].shape[1]);
  auto linear = [&](const Floats& a, size_t rows, size_t w, size_t fanIn, size_t out) {
    return addBias(product(a, p.w[w], rows, fanIn, out, parts(rows, fanIn, out)), P[w + 1]);
  };
  auto drop = [&](const Floats& a, uint32_t stream) {
    return dropout_.rate > 0.0f ? nnref::dropout(a, dropout_.key, step, dropout_.rate, stream) : a;
  };
  // Tokens, plus the position embedding broadcast over the batch.
  p.h0 = linear(p.x, R, kEmbedW, kFeatures, kModel);
  for (size_t i = 0; i < p.h0.size(); ++i) p.h0[i] = p.h0[i] + P[kPos][i % (kTokens * kModel)];
  // Self-attention, one product per head and sample.
  p.qkv = linear(p.h0, R, kInProjW, kModel, kQkv);
  const size_t Z = B * kHeads;
  p.q.resize(Z), p.k.resize(Z), p.v.resize(Z);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  Floats scores;
  for (size_t z = 0; z < Z; ++z) {
    p.q[z] = head(p.qkv, 0, z), p.k[z] = head(p.qkv, 1, z), p.v[z] = head(p.qkv, 2, z);
    const Floats s = product(p.q[z], transposed(p.k[z], kTokens, kHeadDim), kTokens, kHeadDim,
                             kTokens, parts(kTokens, kHeadDim, kTokens));
    for (float e : s) scores.push_back(e * scale);
  }
  p.attn = nnref::softmax(scores, {Z, kTokens, kTokens}, 2, false);
  p.ctx.assign(R * kModel, 0.0f);
  for (size_t z = 0; z < Z; ++z) {
    const Floats a(p.attn.begin() + static_cast<std::ptrdiff_t>(z * kTokens * kTokens),
                   p.attn.begin() + static_cast<std::ptrdiff_t>((z + 1) * kTokens * kTokens));
    const Floats c =
        product(a, p.v[z], kTokens, kTokens, kHeadDim, parts(kTokens, kTokens, kHeadDim));
    const size_t b = z / kHeads, hd = z % kHeads;
    for (size_t i = 0; i < kTokens; ++i)
      for (size_t d = 0; d < kHeadDim; ++d)
        p.ctx[(b * kTokens + i) * kModel + hd * kHeadDim + d] = c[i * kHeadDim + d];
  }
  const Floats sa = drop(linear(p.ctx, R, kOutProjW, kModel, kModel), 0);
  p.r1 = add(p.h0, sa);
  const Floats zeros(R * kModel, 0.0f);
  p.h1 = nnref::layerNorm(p.r1, P[kNorm1W], P[kNorm1B], zeros, kModel, kEps).out;
  // The feed-forward block.
  p.f1 = linear(p.h1, R, kLinear1W, kModel, kFeedForward);
  p.g1 = nnref::gelu(p.f1);
  const Floats f2 = drop(linear(p.g1, R, kLinear2W, kFeedForward, kModel), 1);
  p.r2 = add(p.h1, f2);
  const Floats h2 = nnref::layerNorm(p.r2, P[kNorm2W], P[kNorm2B], zeros, kModel, kEps).out;
  // The mean over the tokens (each sum from the first token, then one division), the classifier.
  p.pooled.assign(B * kModel, 0.0f);
  for (size_t b = 0; b < B; ++b) {
    for (size_t j = 0; j < kModel; ++j) {
      float s = h2[(b * kTokens) * kModel + j];
      for (size_t t = 1; t < kTokens; ++t) s += h2[(b * kTokens + t) * kModel + j];
      p.pooled[b * kModel + j] = s / static_cast<float>(kTokens);
    }
  }
  const Floats logits = linear(p.pooled, B, kFcW, kModel, kClasses);
  cpu::softmaxCrossEntropy(logits, labels, kClasses, 1.0f / static_cast<float>(B), p.dLogits,
                           p.result.rowLoss, p.result.correct);
  float total = 0.0f;
  for (float v : p.result.rowLoss) total += v;
  p.result.meanLoss = total / static_cast<float>(B);
}

std::vector<Floats> CpuTransformerTiny::runBackward(Pass& p, bool fusedSgd, float lr) {
  const std::vector<Floats>& P = params_.values;
  const size_t B = p.batch, R = p.rows, Z = B * kHeads;
  std::vector<Floats> grads(P.size());
  auto drop = [&](const Floats& a, uint32_t stream) {
    return dropout_.rate > 0.0f ? nnref::dropout(a, dropout_.key, p.step, dropout_.rate, stream)
                                : a;
  };
  // A Linear layer's backward from dz [rows, out] (its input a [rows, in]): the input gradient
  // dz Wᵀ with the weight before its update (skipped for the embedding, whose input is data),
  // the bias gradient, then the weight's gradient or, with plain SGD, its update (the sink).
  auto linearBackward = [&](const Floats& a, const Floats& dz, size_t rows, size_t w, size_t in,
                            size_t out, bool inputGrad) {
    Floats da;
    if (inputGrad) da = product(dz, P[w], rows, out, in, parts(rows, out, in));
    grads[w + 1] = columnSums(dz, rows, out);
    if (fusedSgd) {
      Floats scaled(dz.size());
      for (size_t i = 0; i < dz.size(); ++i) scaled[i] = dz[i] * -lr;
      accumulate(p.w[w], a, scaled, rows, in, out);
      params_.values[w] = transposed(p.w[w], in, out);
    } else {
      Floats gw(in * out, 0.0f);
      accumulate(gw, a, dz, rows, in, out);
      grads[w] = transposed(gw, in, out);
    }
    return da;
  };
  // fc0, then the mean's gradient: each token gets dpooled / 28.
  const Floats dPooled = linearBackward(p.pooled, p.dLogits, B, kFcW, kModel, kClasses, true);
  Floats dh2(R * kModel);
  for (size_t b = 0; b < B; ++b)
    for (size_t t = 0; t < kTokens; ++t)
      for (size_t j = 0; j < kModel; ++j)
        dh2[(b * kTokens + t) * kModel + j] = dPooled[b * kModel + j] / static_cast<float>(kTokens);
  // norm2; residual 2 passes its gradient to h1 and, through dropout 2, to linear2.
  const nnref::Norm n2 = nnref::layerNorm(p.r2, P[kNorm2W], P[kNorm2B], dh2, kModel, kEps);
  grads[kNorm2W] = n2.dw;
  grads[kNorm2B] = n2.db;
  const Floats dg1 = linearBackward(p.g1, drop(n2.dx, 1), R, kLinear2W, kFeedForward, kModel, true);
  const Floats dh1Mm =
      linearBackward(p.h1, nnref::geluGrad(dg1, p.f1), R, kLinear1W, kModel, kFeedForward, true);
  // h1's two gradients: the residual's (the later use, visited first) plus linear1's.
  const Floats dh1 = add(n2.dx, dh1Mm);
  const nnref::Norm n1 = nnref::layerNorm(p.r1, P[kNorm1W], P[kNorm1B], dh1, kModel, kEps);
  grads[kNorm1W] = n1.dw;
  grads[kNorm1B] = n1.db;
  const Floats dCtx = linearBackward(p.ctx, drop(n1.dx, 0), R, kOutProjW, kModel, kModel, true);
  // Attention, per head and sample: context = attn v, then softmax, the scale, scores = q kᵀ.
  // Each of q, k, v's gradients is a zero [rows, 96] tensor with its slice filled (Slice's
  // backward); qkv's gradient adds them as the tape meets them: v, then k, then q.
  Floats dq(R * kQkv, 0.0f), dk(R * kQkv, 0.0f), dv(R * kQkv, 0.0f), dAttn;
  for (size_t z = 0; z < Z; ++z) {
    Floats g(kTokens * kHeadDim);
    const size_t b = z / kHeads, hd = z % kHeads;
    for (size_t i = 0; i < kTokens; ++i)
      for (size_t d = 0; d < kHeadDim; ++d)
        g[i * kHeadDim + d] = dCtx[(b * kTokens + i) * kModel + hd * kHeadDim + d];
    const Floats a(p.attn.begin() + static_cast<std::ptrdiff_t>(z * kTokens * kTokens),
                   p.attn.begin() + static_cast<std::ptrdiff_t>((z + 1) * kTokens * kTokens));
    const Floats da = product(g, transposed(p.v[z], kTokens, kHeadDim), kTokens, kHeadDim, kTokens,
                              parts(kTokens, kHeadDim, kTokens));
    dAttn.insert(dAttn.end(), da.begin(), da.end());
    const Floats dvz = product(transposed(a, kTokens, kTokens), g, kTokens, kTokens, kHeadDim,
                               parts(kTokens, kTokens, kHeadDim));
    for (size_t i = 0; i < kTokens; ++i)
      for (size_t d = 0; d < kHeadDim; ++d)
        dv[(b * kTokens + i) * kQkv + 2 * kModel + hd * kHeadDim + d] = dvz[i * kHeadDim + d];
  }
  const Floats dSoft = nnref::softmaxGrad(dAttn, p.attn, {Z, kTokens, kTokens}, 2, false);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (size_t z = 0; z < Z; ++z) {
    Floats ds(kTokens * kTokens);
    for (size_t i = 0; i < ds.size(); ++i) ds[i] = dSoft[z * kTokens * kTokens + i] * scale;
    const Floats dqz =
        product(ds, p.k[z], kTokens, kTokens, kHeadDim, parts(kTokens, kTokens, kHeadDim));
    const Floats dkz = product(transposed(ds, kTokens, kTokens), p.q[z], kTokens, kTokens, kHeadDim,
                               parts(kTokens, kTokens, kHeadDim));
    const size_t b = z / kHeads, hd = z % kHeads;
    for (size_t i = 0; i < kTokens; ++i) {
      for (size_t d = 0; d < kHeadDim; ++d) {
        const size_t at = (b * kTokens + i) * kQkv + hd * kHeadDim + d;
        dq[at] = dqz[i * kHeadDim + d];
        dk[at + kModel] = dkz[i * kHeadDim + d];
      }
    }
  }
  const Floats dQkv = add(add(dv, dk), dq);
  const Floats dh0Mm = linearBackward(p.h0, dQkv, R, kInProjW, kModel, kQkv, true);
  // h0's two gradients: residual 1's plus in_proj's; the position embedding's is their sum over
  // the batch, the embedding's the same gradient.
  const Floats dh0 = add(n1.dx, dh0Mm);
  grads[kPos] = columnSums(dh0, B, kTokens * kModel);
  linearBackward(p.x, dh0, R, kEmbedW, kFeatures, kModel, false);
  return grads;
}

CpuTransformerTiny::StepResult CpuTransformerTiny::trainStep(std::span<const float> images,
                                                             std::span<const int32_t> labels) {
  Pass pass;
  runForward(pass, images, labels, step_ + 1);
  ++step_;
  // Plain SGD without weight decay fuses each Linear weight's update into its gradient's matmul
  // (docs/autodiff.md, "Optimizers"); every other array is updated after the backward.
  const bool fusedSgd =
      opt_.config().kind == CpuOptimizerConfig::Kind::Sgd && opt_.config().weightDecay == 0.0f;
  const std::vector<Floats> grads = runBackward(pass, fusedSgd, opt_.config().learningRate);
  opt_.step(params_.values, grads);
  return pass.result;
}

CpuTransformerTiny::StepResult CpuTransformerTiny::forward(std::span<const float> images,
                                                           std::span<const int32_t> labels) const {
  Pass pass;
  runForward(pass, images, labels, step_ + 1);
  return pass.result;
}

std::vector<Floats> CpuTransformerTiny::gradients(std::span<const float> images,
                                                  std::span<const int32_t> labels) const {
  CpuTransformerTiny copy = *this;
  Pass pass;
  copy.runForward(pass, images, labels, step_ + 1);
  return copy.runBackward(pass, false, 0.0f);
}

}  // namespace tessera::bench
