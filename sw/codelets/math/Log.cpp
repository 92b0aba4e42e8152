// out = ln(in) (tessera_logf, tessera/mathf.h).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Log, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = tessera_logf(in[i]);
}
