// Adam's per-step scalars, once per step on one tile (docs/autodiff.md, "Optimizers"):
//   pows = (beta1^t, beta2^t) as running float products;
//   hyper = (lr / (1 - beta1^t), sqrt(1 - beta2^t)), the step size and the second moment's
//   bias correction that AdamUpdate reads on every tile.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AdamStep, (InOut, float, pows), (Input, float, lr), (Output, float, hyper),
               (Param, float, beta1), (Param, float, beta2)) {
  pows[0] = pows[0] * static_cast<float>(beta1);
  pows[1] = pows[1] * static_cast<float>(beta2);
  hyper[0] = lr[0] / (1.0f - pows[0]);
  hyper[1] = __builtin_sqrtf(1.0f - pows[1]);
}
