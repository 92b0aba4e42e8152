// out = in * scale.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Scale, (Input, float, in), (Output, float, out), (Param, float, scale)) {
  const float s = scale;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = in[i] * s;
}
