// out = erf(in) (tessera_erff, tessera/mathf.h: the erf of the GELU codelets).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Erf, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = tessera_erff(in[i]);
}
