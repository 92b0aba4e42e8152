// The gradient of y = a^b with respect to b: out = g * (y * ln a) (PyTorch's
// grad * (result * self.log())), 0 where a is 0 and b >= 0 (PyTorch's mask).
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(PowGradB, (Input, float, g), (Input, float, a), (Input, float, b), (Input, float, y),
               (Output, float, out)) {
  for (uint32_t i = 0; i < out.size(); ++i) {
    out[i] = a[i] == 0.0f && b[i] >= 0.0f ? 0.0f : g[i] * (y[i] * tessera_logf(a[i]));
  }
}
