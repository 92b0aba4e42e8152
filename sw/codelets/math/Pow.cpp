// out = a^b (tessera_powf, tessera/mathf.h: exact for the exponents PyTorch computes exactly). A
// b of one element is the exponent of every element (Pow(x, 2) of an export: no repeated operand
// to gather).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Pow, (Input, float, a), (Input, float, b), (Output, float, out)) {
  const bool scalar = b.size() == 1;
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = tessera_powf(a[i], b[scalar ? 0 : i]);
}
