// Batch normalisation in training, one row per channel (the library views NCHW as [C, N*H*W]),
// with a per-row affine: sums left to right over the row (n-major, then spatial),
//   mean = sum(x) / n, var = sum((x - mean)^2) / n (biased, as PyTorch normalises),
//   invStd = 1 / sqrt(var + eps), out = (x - mean) * invStd * weight + bias.
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormTrain, (Input, float, in), (Input, float, weight), (Input, float, bias), (Output, float, out),
               (Output, float, mean), (Output, float, var), (Output, float, invStd), (Param, uint32_t, length),
               (Param, float, eps)) {
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
    const float vb = v / fn;
    const float is = 1.0f / tessera_sqrtf(vb + eps);
    const float w = weight[r], b = bias[r];
    for (uint32_t j = 0; j < n; ++j) y[j] = (x[j] - m) * is * w + b;
    mean[r] = m;
    var[r] = vb;
    invStd[r] = is;
  }
}
