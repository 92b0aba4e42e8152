// The gradient of tanh at its output y: out = grad * (1 - y * y), PyTorch's order.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(TanhGrad, (Input, float, grad), (Input, float, out), (Output, float, dx)) {
  for (uint32_t i = 0; i < dx.size(); ++i) dx[i] = grad[i] * (1.0f - out[i] * out[i]);
}
