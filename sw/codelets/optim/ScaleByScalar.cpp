// out = in * (factor * s[0]): a scale read from a device scalar (the learning rate, which the host
// writes between steps without recompiling). factor is -1 or 1 in the optimizers, so the product
// factor * s[0] is exact and out equals Scale's in * (factor * s) bit for bit.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ScaleByScalar, (Input, float, in), (Input, float, s), (Output, float, out),
               (Param, float, factor)) {
  const float k = static_cast<float>(factor) * s[0];
  // Four elements a loop trip (3.75 instructions an element instead of 7).
#pragma GCC unroll 4
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = in[i] * k;
}
