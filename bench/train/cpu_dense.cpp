#include "cpu_dense.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "fp16.hpp"
#include "tessera/mathf.h"

namespace tessera::bench::cpu {

// The loop may run in vector registers without changing any result. On x86-64 a clone with FMA
// instructions is picked at load time when the CPU has them (the default clone calls libm's fmaf;
// both are exact).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("fma", "default")))
#endif
void fmaRow(float a, const float* x, float* y, size_t n) {
  for (size_t j = 0; j < n; ++j) y[j] = std::fma(a, x[j], y[j]);
}

void splitDot(size_t k, size_t parts, const float* coef, const float* rows, size_t stride,
              float* out, size_t n, std::vector<float>& tmp, size_t grain) {
  parts = std::max<size_t>(1, std::min(parts, k));
  grain = std::max<size_t>(1, grain);
  const size_t kb = ((k + parts - 1) / parts + grain - 1) / grain * grain;
  for (size_t t0 = 0; t0 < k; t0 += kb) {
    const size_t t1 = std::min(k, t0 + kb);
    float* acc = out;
    if (t0 > 0) {
      tmp.assign(n, 0.0f);
      acc = tmp.data();
    }
    for (size_t t = t0; t < t1; ++t) fmaRow(coef[t], rows + t * stride, acc, n);
    if (t0 > 0)
      for (size_t c = 0; c < n; ++c) out[c] = out[c] + tmp[c];
  }
}

float roundToHalf(float x) {
  return std::bit_cast<float>(fp::f16_to_f32(fp::f32_to_f16(std::bit_cast<uint32_t>(x), false, 0)));
}

void softmaxCrossEntropy(std::span<const float> logits, std::span<const int32_t> labels, size_t c,
                         float sc, std::vector<float>& grad, std::vector<float>& rowLoss,
                         uint32_t& correct) {
  const size_t batch = labels.size();
  grad.assign(batch * c, 0.0f);
  rowLoss.assign(batch, 0.0f);
  correct = 0;
  for (size_t r = 0; r < batch; ++r) {
    const float* x = logits.data() + r * c;
    float* g = grad.data() + r * c;
    float mx = x[0];
    for (size_t j = 1; j < c; ++j) mx = x[j] > mx ? x[j] : mx;
    float sum = 0.0f;
    for (size_t j = 0; j < c; ++j) {
      g[j] = tessera_expf(x[j] - mx);
      sum += g[j];
    }
    const int32_t label = labels[r];
    const bool valid = label >= 0 && static_cast<size_t>(label) < c;
    const float inv = 1.0f / sum;
    for (size_t j = 0; j < c; ++j)
      g[j] = (g[j] * inv - (static_cast<int32_t>(j) == label ? 1.0f : 0.0f)) * sc;
    rowLoss[r] = valid ? tessera_logf(sum) - (x[label] - mx) : std::nanf("");
    size_t best = 0;  // ArgMax: the first maximum
    for (size_t j = 1; j < c; ++j) best = x[j] > x[best] ? j : best;
    correct += static_cast<int32_t>(best) == label ? 1u : 0u;
  }
}

}  // namespace tessera::bench::cpu
