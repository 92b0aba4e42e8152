// The gradient of y = a^b with respect to a: out = g * (b * a^(b - 1)) (PyTorch's
// grad * (exponent * self.pow(exponent - 1))); 0 where b is 0. A b of one element is the exponent
// of every element.
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(PowGradA, (Input, float, g), (Input, float, a), (Input, float, b),
               (Output, float, out)) {
  const bool scalar = b.size() == 1;
  for (uint32_t i = 0; i < out.size(); ++i) {
    const float e = b[scalar ? 0 : i];
    out[i] = e == 0.0f ? 0.0f : g[i] * (e * tessera_powf(a[i], e - 1.0f));
  }
}
