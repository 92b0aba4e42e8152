// out = sqrt(in), correctly rounded (FSQRT.S).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Sqrt, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = tessera_sqrtf(in[i]);
}
