// data += scale * delta, fused (one rounding), the SGD step with scale = -learning rate.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ScaledAddTo, (InOut, float, data), (Input, float, delta), (Param, float, scale)) {
  const float s = scale;
  for (uint32_t i = 0; i < data.size(); ++i) data[i] = __builtin_fmaf(s, delta[i], data[i]);
}
