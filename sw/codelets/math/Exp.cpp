// out = e^in (tessera_expf, tessera/mathf.h).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Exp, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = tessera_expf(in[i]);
}
