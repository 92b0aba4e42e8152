// out[i] = value.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Fill, (Output, float, out), (Param, float, value)) {
  const float v = value;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = v;
}
