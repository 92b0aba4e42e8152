// Batch normalisation in training, step 3 of 3, on one part of a channel: the channel's mean
// and biased variance from the parts' sums and squares (tessera_bn_total / length), then
//   invStd = 1 / sqrt(var + eps), out = (x - mean) * invStd * weight + bias.
#include "batch_stats.h"
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormNormalise, (Input, float, in), (Input, float, sums),
               (Input, float, squares), (Input, float, weight), (Input, float, bias),
               (Output, float, out), (Param, uint32_t, length), (Param, float, eps)) {
  const float fn = static_cast<float>(length);
  const float m = tessera_bn_total(sums.data(), sums.size(), 1) / fn;
  const float var = tessera_bn_total(squares.data(), squares.size(), 1) / fn;
  const float is = 1.0f / tessera_sqrtf(var + eps);
  const float w = weight[0], b = bias[0];
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = (in[i] - m) * is * w + b;
}
