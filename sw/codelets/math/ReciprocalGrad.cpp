// The gradient of y = 1 / x: out = -(g * (y * y)) (PyTorch's -grad * (result * result)).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReciprocalGrad, (Input, float, g), (Input, float, y), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) out[i] = -(g[i] * (y[i] * y[i]));
}
