// SGD with momentum, in place: v = momentum * v + g; w = w - lr * v (each fused, one rounding).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SgdMomentum, (InOut, float, w), (InOut, float, v), (Input, float, g),
               (Param, float, lr), (Param, float, momentum)) {
  const float mu = momentum;
  const float nlr = -static_cast<float>(lr);
  for (uint32_t i = 0; i < w.size(); ++i) {
    v[i] = __builtin_fmaf(mu, v[i], g[i]);
    w[i] = __builtin_fmaf(nlr, v[i], w[i]);
  }
}
