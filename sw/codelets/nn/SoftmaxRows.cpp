// Softmax (log = 0) or log-softmax (log = 1) of each row of length `length` (PyTorch's order):
//   m = max of the row, s = sum of e^(x - m) left to right,
//   softmax = e^(x - m) / s, log-softmax = (x - m) - log s.
// The library makes any axis the rows' axis by a view (docs/library.md, "softmax"). The maximum,
// the exponentials (into out, which never is in: log-softmax reads x after) and their sum are
// softmax_steps.hpp's.
#include "softmax_steps.hpp"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(SoftmaxRows, (Input, float, in), (Output, float, out), (Param, uint32_t, length),
               (Param, uint32_t, log)) {
  using namespace tessera_softmax;
  const uint32_t n = length;
  const bool isLog = log != 0;
  for (uint32_t r = 0; r * n < out.size(); ++r) {
    const float* x = in.data() + r * n;
    float* y = out.data() + r * n;
    const float mx = rowMax(x, n);
    exps(x, mx, y, n);
    const float sum = sumOf(y, n);
    if (isLog) {
      const float ls = tessera_logf(sum);
      for (uint32_t j = 0; j < n; ++j) y[j] = (x[j] - mx) - ls;
    } else {
      for (uint32_t j = 0; j < n; ++j) y[j] = y[j] / sum;
    }
  }
}
