// The gradient of y = a / b with respect to b: out = -(g * (y / b)), PyTorch's
// -grad * ((a / b) / b) with the quotient a / b taken from the forward's output y.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(DivGradB, (Input, float, g), (Input, float, y), (Input, float, b),
               (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = -(g[i] * (y[i] / b[i]));
}
