// The gradient of erf: out = (2 / sqrt(pi) * e^-(x * x)) * g (PyTorch's order).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ErfGrad, (Input, float, g), (Input, float, x), (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) {
    out[i] = 1.12837917f * tessera_expf(-(x[i] * x[i])) * g[i];
  }
}
