// The gradient of y = sqrt(x): out = g / (2 * y) (PyTorch's grad / (2 * result)).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SqrtGrad, (Input, float, g), (Input, float, y), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = g[i] / (2.0f * y[i]);
}
