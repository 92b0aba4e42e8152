// The gradient of GELU (erf form) at its input x, PyTorch's formula and order:
//   cdf = 0.5 (1 + erf(x / sqrt 2)), pdf = e^(-x^2 / 2) / sqrt(2 pi), dx = grad (cdf + x pdf).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(GeluGrad, (Input, float, grad), (Input, float, in), (Output, float, dx)) {
  for (uint32_t i = 0; i < dx.size(); ++i) {
    const float x = in[i];
    const float cdf = 0.5f * (1.0f + tessera_erff(x * 0.707106781f));
    const float pdf = tessera_expf(x * x * -0.5f) * 0.398942280f;
    dx[i] = grad[i] * (cdf + x * pdf);
  }
}
