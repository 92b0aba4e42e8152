// The gradient of batch normalisation per channel row (n = length, w = weight of the row,
// xhat = (x - mean) * invStd, sums left to right):
//   dbias = sum(dy), dweight = sum(dy * xhat)
//   training:   dx = ((dy * w - (dbias / n) * w) - xhat * ((dweight / n) * w)) * invStd
//   evaluation: dx = dy * w * invStd (the statistics are constants)
#include "tessera/vertex.hpp"

TESSERA_VERTEX(BatchNormGrad, (Input, float, grad), (Input, float, in), (Input, float, weight), (Input, float, mean),
               (Input, float, invStd), (Output, float, dx), (Output, float, dweight), (Output, float, dbias),
               (Param, uint32_t, length), (Param, uint32_t, training)) {
  const uint32_t n = length;
  const float fn = static_cast<float>(n);
  for (uint32_t r = 0; r < mean.size(); ++r) {
    const float* dy = grad.data() + r * n;
    const float* x = in.data() + r * n;
    float* d = dx.data() + r * n;
    const float m = mean[r], is = invStd[r], w = weight[r];
    float s1 = 0.0f, s2 = 0.0f;
    for (uint32_t j = 0; j < n; ++j) {
      s1 += dy[j];
      s2 += dy[j] * ((x[j] - m) * is);
    }
    dbias[r] = s1;
    dweight[r] = s2;
    if (training != 0) {
      const float a = (s1 / fn) * w, b = (s2 / fn) * w;
      for (uint32_t j = 0; j < n; ++j) d[j] = ((dy[j] * w - a) - (x[j] - m) * is * b) * is;
    } else {
      for (uint32_t j = 0; j < n; ++j) d[j] = dy[j] * w * is;
    }
  }
}
