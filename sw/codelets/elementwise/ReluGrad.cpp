// out = grad where the forward activation act was positive, else 0.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReluGrad, (Input, float, grad), (Input, float, act), (Output, float, out)) {
#pragma GCC unroll 4
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = act[i] > 0.0f ? grad[i] : 0.0f;
}
