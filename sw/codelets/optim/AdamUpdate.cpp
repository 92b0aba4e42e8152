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
  // Pointers walked, and m and w kept in registers between their load and their store (through
  // the fields they were reloaded after each store): 25 instructions an element instead of 27,
  // beside the three long ops' 21 extra rounds (docs/tile.md).
  float* pw = w.data();
  float* pm = m.data();
  float* pv = v.data();
  const float* pg = g.data();
  for (float* const end = pw + w.size(); pw != end; ++pw, ++pm, ++pv, ++pg) {
    const float wi = *pw;
    const float d = wd != 0.0f ? __builtin_fmaf(wd, wi, *pg) : *pg;
    const float mi = __builtin_fmaf(c1, d, *pm * b1);
    const float vi = *pv * b2 + (c2 * d) * d;
    *pm = mi;
    *pv = vi;
    const float denom = __builtin_sqrtf(vi) / bc2 + e;
    *pw = __builtin_fmaf(nstep, mi / denom, wi);
  }
}
