// SGD step in place without weight decay (torch.optim.SGD, momentum 0): w = fma(-lr, g, w),
// ScaledAddTo with scale -lr bit for bit; lr is a device scalar. Four elements a loop trip (4.75
// instructions an element instead of 8: mixed precision updates every master weight this way
// each step). With weight decay: SgdUpdateDecay, a codelet of its own so that a graph without
// decay carries no code for it (docs/library.md, "The step's other codelets").
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SgdUpdate, (InOut, float, w), (Input, float, g), (Input, float, lr)) {
  const float nlr = -lr[0];
  float* p = w.data();
  const float* q = g.data();
  float* const end = p + w.size();
  for (float* const end4 = p + (w.size() & ~3u); p != end4; p += 4, q += 4) {
    p[0] = __builtin_fmaf(nlr, q[0], p[0]);
    p[1] = __builtin_fmaf(nlr, q[1], p[1]);
    p[2] = __builtin_fmaf(nlr, q[2], p[2]);
    p[3] = __builtin_fmaf(nlr, q[3], p[3]);
  }
  for (; p != end; ++p, ++q) *p = __builtin_fmaf(nlr, *q, *p);
}
