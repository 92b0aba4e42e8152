// c (m x n, row-major) = op(a) * op(b) (+ c when accumulate), with op(a) m x k and op(b) k x n.
// a is stored m x k, or k x m when transA; b is stored k x n, or n x k when transB. Each element
// is summed over k in increasing order with fused multiply-adds, so the result is bit-exact against
// a host reference that does the same (sw/library tests).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MatMul, (Input, float, a), (Input, float, b), (Output, float, c),
               (Param, uint32_t, k), (Param, uint32_t, flags)) {
  const uint32_t kk = k;
  const uint32_t m = a.size() / kk;
  const uint32_t n = b.size() / kk;
  const bool transA = (flags & 1u) != 0;
  const bool transB = (flags & 2u) != 0;
  const bool accumulate = (flags & 4u) != 0;
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      float s = accumulate ? c[i * n + j] : 0.0f;
      for (uint32_t p = 0; p < kk; ++p) {
        const float x = transA ? a[p * m + i] : a[i * kk + p];
        const float y = transB ? b[j * kk + p] : b[p * n + j];
        s = __builtin_fmaf(x, y, s);
      }
      c[i * n + j] = s;
    }
  }
}
