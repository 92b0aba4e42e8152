// The gradient of batch normalisation, step 1 of 2, on one part of a channel: sums[0] = sum(dy)
// and sums[1] = sum(dy * xhat) with xhat = (x - mean) * invStd, left to right from 0.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormGradSums, (Input, float, grad), (Input, float, in), (Input, float, mean),
               (Input, float, invStd), (Output, float, sums)) {
  const float m = mean[0], is = invStd[0];
  float s1 = 0.0f, s2 = 0.0f;
  for (uint32_t i = 0; i < in.size(); ++i) {
    s1 += grad[i];
    s2 += grad[i] * ((in[i] - m) * is);
  }
  sums[0] = s1;
  sums[1] = s2;
}
