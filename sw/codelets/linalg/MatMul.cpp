// c (M x N, row-major) = op(a) * op(b) (+ c when accumulate) on rows [row, row + rows) and columns
// [col, col + cols) only, so that several vertices of a tile share one gathered a, one b and one c
// and each computes its own part. op(a) is M x k: a is stored M x k, or k x M when transA (M =
// a.size() / k); op(b) is k x N: b is stored k x N, or N x k when transB (N = b.size() / k).
// Each element is summed over k in increasing order with fused multiply-adds, so the result is
// bit-exact against a host reference that does the same.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MatMul, (Input, float, a), (Input, float, b), (InOut, float, c),
               (Param, uint32_t, k), (Param, uint32_t, flags), (Param, uint32_t, row),
               (Param, uint32_t, rows), (Param, uint32_t, col), (Param, uint32_t, cols)) {
  const uint32_t kk = k;
  const uint32_t mAll = a.size() / kk;
  const uint32_t n = b.size() / kk;
  const bool transA = (flags & 1u) != 0;
  const bool transB = (flags & 2u) != 0;
  const bool accumulate = (flags & 4u) != 0;
  for (uint32_t i = row; i < row + rows; ++i) {
    for (uint32_t j = col; j < col + cols; ++j) {
      float s = accumulate ? c[i * n + j] : 0.0f;
      for (uint32_t p = 0; p < kk; ++p) {
        const float x = transA ? a[p * mAll + i] : a[i * kk + p];
        const float y = transB ? b[j * kk + p] : b[p * n + j];
        s = __builtin_fmaf(x, y, s);
      }
      c[i * n + j] = s;
    }
  }
}
