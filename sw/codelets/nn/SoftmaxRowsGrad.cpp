// The gradient of SoftmaxRows at its output y, per row (PyTorch's formulas), sums left to right:
//   softmax:     dx = y * (dy - sum(dy * y))
//   log-softmax: dx = dy - e^y * sum(dy)
#include "tessera/mathf.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SoftmaxRowsGrad, (Input, float, grad), (Input, float, out), (Output, float, dx),
               (Param, uint32_t, length), (Param, uint32_t, log)) {
  const uint32_t n = length;
  const bool isLog = log != 0;
  for (uint32_t r = 0; r * n < dx.size(); ++r) {
    const float* dy = grad.data() + r * n;
    const float* y = out.data() + r * n;
    float* d = dx.data() + r * n;
    float s = 0.0f;
    if (isLog) {
      for (uint32_t j = 0; j < n; ++j) s += dy[j];
      for (uint32_t j = 0; j < n; ++j) d[j] = dy[j] - tessera_expf(y[j]) * s;
    } else {
      for (uint32_t j = 0; j < n; ++j) s += dy[j] * y[j];
      for (uint32_t j = 0; j < n; ++j) d[j] = y[j] * (dy[j] - s);
    }
  }
}
