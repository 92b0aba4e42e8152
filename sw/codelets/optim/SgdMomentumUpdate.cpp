// SGD with momentum in place, PyTorch's semantics (torch.optim.SGD, dampening 0, not Nesterov):
//   d = weightDecay != 0 ? fma(weightDecay, w, g) : g;  v = fma(momentum, v, d);  w = fma(-lr, v,
//   w)
// lr is a device scalar; without weight decay this is SgdMomentum bit for bit.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SgdMomentumUpdate, (InOut, float, w), (InOut, float, v), (Input, float, g),
               (Input, float, lr), (Param, float, momentum), (Param, float, weightDecay)) {
  const float mu = momentum;
  const float wd = weightDecay;
  const float nlr = -lr[0];
  for (uint32_t i = 0; i < w.size(); ++i) {
    const float d = wd != 0.0f ? __builtin_fmaf(wd, w[i], g[i]) : g[i];
    v[i] = __builtin_fmaf(mu, v[i], d);
    w[i] = __builtin_fmaf(nlr, v[i], w[i]);
  }
}
