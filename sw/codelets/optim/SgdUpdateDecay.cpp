// SGD step in place with PyTorch's L2 weight decay (torch.optim.SGD, momentum 0):
//   d = fma(weightDecay, w, g);  w = fma(-lr, d, w)
// lr is a device scalar. Without weight decay: SgdUpdate.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SgdUpdateDecay, (InOut, float, w), (Input, float, g), (Input, float, lr),
               (Param, float, weightDecay)) {
  const float nlr = -lr[0];
  const float wd = weightDecay;
  for (uint32_t i = 0; i < w.size(); ++i)
    w[i] = __builtin_fmaf(nlr, __builtin_fmaf(wd, w[i], g[i]), w[i]);
}
