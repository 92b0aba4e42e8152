// The gradient of LayerNorm per row (n = length, xhat = (x - mean) * rstd, g = dy * weight, sums
// left to right):
//   dx = ((g - sum(g) / n) - xhat * (sum(g * xhat) / n)) * rstd
//   gxhat = dy * xhat, whose column sums (the library's reduceSum) are the weight's gradient.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(LayerNormGrad, (Input, float, grad), (Input, float, in), (Input, float, weight),
               (Input, float, mean), (Input, float, rstd), (Output, float, dx),
               (Output, float, gxhat), (Param, uint32_t, length)) {
  const uint32_t n = length;
  const float fn = static_cast<float>(n);
  for (uint32_t r = 0; r < mean.size(); ++r) {
    const float* dy = grad.data() + r * n;
    const float* x = in.data() + r * n;
    float* d = dx.data() + r * n;
    float* gx = gxhat.data() + r * n;
    const float m = mean[r], rs = rstd[r];
    float s1 = 0.0f, s2 = 0.0f;
    for (uint32_t j = 0; j < n; ++j) {
      const float g = dy[j] * weight[j];
      const float xh = (x[j] - m) * rs;
      s1 += g;
      s2 += g * xh;
      gx[j] = dy[j] * xh;
    }
    const float a = s1 / fn, b = s2 / fn;
    for (uint32_t j = 0; j < n; ++j) d[j] = ((dy[j] * weight[j] - a) - (x[j] - m) * rs * b) * rs;
  }
}
