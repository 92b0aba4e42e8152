// SGD step in place with PyTorch's L2 weight decay (torch.optim.SGD, momentum 0):
//   d = weightDecay != 0 ? fma(weightDecay, w, g) : g;  w = fma(-lr, d, w)
// lr is a device scalar; without weight decay this is ScaledAddTo with scale -lr, bit for bit.
// Without weight decay four elements a loop trip (4.75 instructions an element instead of 8: a
// weight's update in mixed precision is one pass over the whole layer).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SgdUpdate, (InOut, float, w), (Input, float, g), (Input, float, lr),
               (Param, float, weightDecay)) {
  const float nlr = -lr[0];
  const float wd = weightDecay;
  float* p = w.data();
  const float* q = g.data();
  float* const end = p + w.size();
  if (wd != 0.0f) {
    for (; p != end; ++p, ++q) *p = __builtin_fmaf(nlr, __builtin_fmaf(wd, *p, *q), *p);
    return;
  }
  for (float* const end4 = p + (w.size() & ~3u); p != end4; p += 4, q += 4) {
    p[0] = __builtin_fmaf(nlr, q[0], p[0]);
    p[1] = __builtin_fmaf(nlr, q[1], p[1]);
    p[2] = __builtin_fmaf(nlr, q[2], p[2]);
    p[3] = __builtin_fmaf(nlr, q[3], p[3]);
  }
  for (; p != end; ++p, ++q) *p = __builtin_fmaf(nlr, *q, *p);
}
