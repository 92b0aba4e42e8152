// c (m x n, row-major) = rows [row, row + m) of op(a) times op(b) (+ c when accumulate), with
// op(a) M x k and op(b) k x n: a is stored M x k, or k x M when transA (M = a.size() / k; several
// vertices of a tile share one gathered a and take different rows); b is stored k x n, or n x k
// when transB; m = c.size() / n. Each element is summed over k in increasing order with fused
// multiply-adds, so the result is bit-exact against a host reference that does the same.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MatMul, (Input, float, a), (Input, float, b), (Output, float, c),
               (Param, uint32_t, k), (Param, uint32_t, flags), (Param, uint32_t, row)) {
  const uint32_t kk = k;
  const uint32_t rows = a.size() / kk;  // M
  const uint32_t n = b.size() / kk;
  const uint32_t m = c.size() / n;
  const uint32_t r0 = row;
  const bool transA = (flags & 1u) != 0;
  const bool transB = (flags & 2u) != 0;
  const bool accumulate = (flags & 4u) != 0;
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      float s = accumulate ? c[i * n + j] : 0.0f;
      for (uint32_t p = 0; p < kk; ++p) {
        const float x = transA ? a[p * rows + r0 + i] : a[(r0 + i) * kk + p];
        const float y = transB ? b[j * kk + p] : b[p * n + j];
        s = __builtin_fmaf(x, y, s);
      }
      c[i * n + j] = s;
    }
  }
}
