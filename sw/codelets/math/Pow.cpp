// out = a^b (tessera_powf, tessera/mathf.h: exact for the exponents PyTorch computes exactly).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Pow, (Input, float, a), (Input, float, b), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = tessera_powf(a[i], b[i]);
}
