// Batch normalisation with given statistics (evaluation: the running mean and variance), one
// row per channel: invStd = 1 / sqrt(var + eps), out = (x - mean) * invStd * weight + bias.
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormApply, (Input, float, in), (Input, float, weight), (Input, float, bias),
               (Input, float, mean), (Input, float, var), (Output, float, out),
               (Output, float, invStd), (Param, uint32_t, length), (Param, float, eps)) {
  const uint32_t n = length;
  for (uint32_t r = 0; r < invStd.size(); ++r) {
    const float* x = in.data() + r * n;
    float* y = out.data() + r * n;
    const float m = mean[r];
    const float is = 1.0f / tessera_sqrtf(var[r] + eps);
    const float w = weight[r], b = bias[r];
    for (uint32_t j = 0; j < n; ++j) y[j] = (x[j] - m) * is * w + b;
    invStd[r] = is;
  }
}
