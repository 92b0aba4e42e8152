// out = 1 / in.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Reciprocal, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = 1.0f / in[i];
}
