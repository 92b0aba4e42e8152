// Adam in place with bias correction, in torch.optim.Adam's operation order (L2 weight decay):
//   d = weightDecay != 0 ? fma(weightDecay, w, g) : g
//   m = fma(1 - beta1, d, m * beta1);  v = v * beta2 + ((1 - beta2) * d) * d
//   w = fma(-stepSize, m / (sqrt(v) / bc2sqrt + eps), w)
// with (stepSize, bc2sqrt) = hyper from AdamStep.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AdamUpdate, (InOut, float, w), (InOut, float, m), (InOut, float, v),
               (Input, float, g), (Input, float, hyper), (Param, float, beta1),
               (Param, float, beta2), (Param, float, eps), (Param, float, weightDecay)) {
  const float b1 = beta1, b2 = beta2, e = eps, wd = weightDecay;
  const float c1 = 1.0f - b1, c2 = 1.0f - b2;
  const float nstep = -hyper[0], bc2 = hyper[1];
  for (uint32_t i = 0; i < w.size(); ++i) {
    const float d = wd != 0.0f ? __builtin_fmaf(wd, w[i], g[i]) : g[i];
    m[i] = __builtin_fmaf(c1, d, m[i] * b1);
    v[i] = v[i] * b2 + (c2 * d) * d;
    const float denom = __builtin_sqrtf(v[i]) / bc2 + e;
    w[i] = __builtin_fmaf(nstep, m[i] / denom, w[i]);
  }
}
