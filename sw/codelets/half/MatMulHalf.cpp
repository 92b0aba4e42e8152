// c (M x N, row-major, fp32) (+)= a b with a (M x k) and b (k x N) binary16 bit patterns,
// row-major, on rows [row, row + rows) and columns [col, col + cols) only (several vertices of a
// tile share the fields, as MatMul's do). Each element is fma(w(a_ip), w(b_pj), s) over k in
// increasing order from +0 or from c (flags bit 2), w the exact widening AMP.CVTSH: AMP.H's chain,
// so a product gives the same bits with MatMulAmpH or with this (docs/library.md, "fp16 matmul").
// The blocks the unit's codelet does not take (k not a multiple of 8 or below 16, columns not a
// multiple of 4).
#include "tessera/amp.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(MatMulHalf, (Input, uint16_t, a), (Input, uint16_t, b), (InOut, float, c),
               (Param, uint32_t, k), (Param, uint32_t, flags), (Param, uint32_t, row),
               (Param, uint32_t, rows), (Param, uint32_t, col), (Param, uint32_t, cols)) {
  const uint32_t kk = k;
  const uint32_t n = b.size() / kk;
  const bool accumulate = (flags & 4u) != 0;
  for (uint32_t i = row; i < row + rows; ++i) {
    for (uint32_t j = col; j < col + cols; ++j) {
      float s = accumulate ? c[i * n + j] : 0.0f;
      for (uint32_t p = 0; p < kk; ++p) {
        const uint32_t ha = a[i * kk + p], hb = b[p * n + j];
        float x, y;
        TESSERA_AMP_CVTSH_LO(x, ha);
        TESSERA_AMP_CVTSH_LO(y, hb);
        s = __builtin_fmaf(x, y, s);
      }
      c[i * n + j] = s;
    }
  }
}
