// SGD step in place with PyTorch's L2 weight decay (torch.optim.SGD, momentum 0):
//   d = weightDecay != 0 ? fma(weightDecay, w, g) : g;  w = fma(-lr, d, w)
// lr is a device scalar; without weight decay this is ScaledAddTo with scale -lr, bit for bit.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SgdUpdate, (InOut, float, w), (Input, float, g), (Input, float, lr),
               (Param, float, weightDecay)) {
  const float nlr = -lr[0];
  const float wd = weightDecay;
  for (uint32_t i = 0; i < w.size(); ++i) {
    const float d = wd != 0.0f ? __builtin_fmaf(wd, w[i], g[i]) : g[i];
    w[i] = __builtin_fmaf(nlr, d, w[i]);
  }
}
