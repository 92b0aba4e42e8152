// Layer normalisation of each row of length `length` with a per-column affine (PyTorch's
// LayerNorm over the trailing dimensions, flattened): sums left to right,
//   mean = sum(x) / n, var = sum((x - mean)^2) / n (biased), rstd = 1 / sqrt(var + eps),
//   out = (x - mean) * rstd * weight + bias.
// mean and rstd of each row are kept for the backward pass.
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(LayerNorm, (Input, float, in), (Input, float, weight), (Input, float, bias),
               (Output, float, out), (Output, float, mean), (Output, float, rstd),
               (Param, uint32_t, length), (Param, float, eps)) {
  const uint32_t n = length;
  const float fn = static_cast<float>(n);
  for (uint32_t r = 0; r < mean.size(); ++r) {
    const float* x = in.data() + r * n;
    float* y = out.data() + r * n;
    float s = 0.0f;
    for (uint32_t j = 0; j < n; ++j) s += x[j];
    const float m = s / fn;
    float v = 0.0f;
    for (uint32_t j = 0; j < n; ++j) v += (x[j] - m) * (x[j] - m);
    const float rs = 1.0f / tessera_sqrtf(v / fn + eps);
    for (uint32_t j = 0; j < n; ++j) y[j] = (x[j] - m) * rs * weight[j] + bias[j];
    mean[r] = m;
    rstd[r] = rs;
  }
}
