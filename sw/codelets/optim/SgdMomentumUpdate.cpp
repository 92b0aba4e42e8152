// SGD with momentum in place, PyTorch's semantics (torch.optim.SGD, dampening 0, not Nesterov):
//   d = weightDecay != 0 ? fma(weightDecay, w, g) : g;  v = fma(momentum, v, d);  w = fma(-lr, v,
//   w)
// lr is a device scalar; without weight decay this is SgdMomentum bit for bit. Without weight
// decay four elements a loop trip (8 instructions an element instead of 12: the update is one
// pass over every weight each step).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SgdMomentumUpdate, (InOut, float, w), (InOut, float, v), (Input, float, g),
               (Input, float, lr), (Param, float, momentum), (Param, float, weightDecay)) {
  const float mu = momentum;
  const float wd = weightDecay;
  const float nlr = -lr[0];
  float* pw = w.data();
  float* pv = v.data();
  const float* pg = g.data();
  float* const end = pw + w.size();
  if (wd != 0.0f) {
    for (; pw != end; ++pw, ++pv, ++pg) {
      *pv = __builtin_fmaf(mu, *pv, __builtin_fmaf(wd, *pw, *pg));
      *pw = __builtin_fmaf(nlr, *pv, *pw);
    }
    return;
  }
  for (float* const end4 = pw + (w.size() & ~3u); pw != end4; pw += 4, pv += 4, pg += 4) {
    for (int j = 0; j < 4; ++j) {
      const float vj = __builtin_fmaf(mu, pv[j], pg[j]);
      pv[j] = vj;
      pw[j] = __builtin_fmaf(nlr, vj, pw[j]);
    }
  }
  for (; pw != end; ++pw, ++pv, ++pg) {
    const float vj = __builtin_fmaf(mu, *pv, *pg);
    *pv = vj;
    *pw = __builtin_fmaf(nlr, vj, *pw);
  }
}
