// GELU, erf form (PyTorch's default, approximate='none'): out = x * 0.5 * (1 + erf(x / sqrt 2)),
// evaluated left to right as PyTorch does, tessera_erff (tessera/mathf.h).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Gelu, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) {
    const float x = in[i];
    out[i] = x * 0.5f * (1.0f + tessera_erff(x * 0.707106781f));
  }
}
