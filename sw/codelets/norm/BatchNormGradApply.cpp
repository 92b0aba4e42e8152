// The gradient of batch normalisation, step 2 of 2, on one part of a channel (n = length, w the
// channel's weight, sums the parts' [sum(dy), sum(dy * xhat)] pairs, totals by tessera_bn_total):
//   training:   dx = ((dy * w - (s1 / n) * w) - xhat * ((s2 / n) * w)) * invStd
//   evaluation: dx = dy * w * invStd (the statistics are constants)
#include "batch_stats.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormGradApply, (Input, float, grad), (Input, float, in), (Input, float, weight),
               (Input, float, mean), (Input, float, invStd), (Input, float, sums),
               (Output, float, dx), (Param, uint32_t, length), (Param, uint32_t, training)) {
  const float m = mean[0], is = invStd[0], w = weight[0];
  if (training != 0) {
    const float fn = static_cast<float>(length);
    const uint32_t parts = sums.size() / 2;
    const float a = (tessera_bn_total(sums.data(), parts, 2) / fn) * w;
    const float b = (tessera_bn_total(sums.data() + 1, parts, 2) / fn) * w;
    for (uint32_t i = 0; i < dx.size(); ++i)
      dx[i] = ((grad[i] * w - a) - (in[i] - m) * is * b) * is;
  } else {
    for (uint32_t i = 0; i < dx.size(); ++i) dx[i] = grad[i] * w * is;
  }
}
