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
  // Two columns at a time: n, col and cols are even, so b's halves j and j + 1 of a row are one
  // word (one load, both widenings); per two multiply-adds about ten instructions.
  const uint32_t stride = n / 2;  // words of a row of b
  for (uint32_t i = row; i < row + rows; ++i) {
    float* const ci = c.data() + i * n;
    for (uint32_t j = col; j < col + cols; j += 2) {
      float s0 = accumulate ? ci[j] : 0.0f, s1 = accumulate ? ci[j + 1] : 0.0f;
      const uint16_t* pa = a.data() + i * kk;
      const uint16_t* const end = pa + kk;
      const uint32_t* pb = reinterpret_cast<const uint32_t*>(b.data() + j);
      for (; pa != end; ++pa, pb += stride) {
        const uint32_t ha = *pa, w = *pb;
        float x, y0, y1;
        TESSERA_AMP_CVTSH_LO(x, ha);
        TESSERA_AMP_CVTSH_LO(y0, w);
        TESSERA_AMP_CVTSH_HI(y1, w);
        s0 = __builtin_fmaf(x, y0, s0);
        s1 = __builtin_fmaf(x, y1, s1);
      }
      ci[j] = s0;
      ci[j + 1] = s1;
    }
  }
}
