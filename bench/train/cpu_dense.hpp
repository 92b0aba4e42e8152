// The dense pieces the CPU references of the benchmark's networks share (cpu_mlp, cpu_lenet):
// the device's matmul chains and its softmax cross-entropy, in the device's order of operations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tessera::bench::cpu {

/// y[j] = fmaf(a, x[j], y[j]) for j < n: one fused multiply-add per element.
void fmaRow(float a, const float* x, float* y, size_t n);

/// out[c] (c < n) = sum over t < k of coef[t] * rows[t * stride + c], as the device's matmul
/// computes it: k in `parts` parts of ceil(k / parts) terms (rounded up to a multiple of grain:
/// the float16 product's parts are multiples of 8), each an fmaf chain over t in increasing order
/// from 0.0f, the parts added in order. out must hold n zeros; tmp is scratch.
void splitDot(size_t k, size_t parts, const float* coef, const float* rows, size_t stride,
              float* out, size_t n, std::vector<float>& tmp, size_t grain = 1);

/// x rounded to the nearest float16 (ties to even; AMP.CVTHS) and widened back exactly.
float roundToHalf(float x);

/// Softmax cross-entropy of logits [rows, classes] as sw/codelets/nn/SoftmaxCrossEntropy.cpp
/// computes it: each row's loss (NaN for a label outside [0, classes)), the gradient of
/// scale x (sum of the row losses) into grad, and the rows whose first maximal logit is the label.
void softmaxCrossEntropy(std::span<const float> logits, std::span<const int32_t> labels,
                         size_t classes, float scale, std::vector<float>& grad,
                         std::vector<float>& rowLoss, uint32_t& correct);

}  // namespace tessera::bench::cpu
