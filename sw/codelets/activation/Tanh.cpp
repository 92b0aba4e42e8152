// out = tanh(in), tessera_tanhf (tessera/mathf.h).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Tanh, (Input, float, in), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = tessera_tanhf(in[i]);
}
