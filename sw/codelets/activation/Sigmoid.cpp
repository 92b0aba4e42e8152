// out = 1 / (1 + e^-in), tessera_expf (tessera/mathf.h).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Sigmoid, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = 1.0f / (1.0f + tessera_expf(-in[i]));
}
