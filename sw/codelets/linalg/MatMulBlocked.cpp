// MatMul (linalg/MatMul.cpp) with register blocking: the same fields and the same result bit for
// bit (each element is a chain of fused multiply-adds over k in increasing order, from 0 or from
// c), compared with the plain vertex in sw/library/tests. Blocks of 4 rows by 6 columns keep 4x6
// accumulators in FP registers: per k step 4 + 6 loads feed 24 FMAs, and the pointer updates and
// the loop branch take 3 to 11 more instructions depending on the operand layouts. Rows and columns
// beyond multiples of 4 and 6 take 4x3, 4x1, 1x6, 1x3 and 1x1 blocks.
#include "tessera/vertex.hpp"

namespace {

// One R x C block of c at (i0, j0). a(i, p) is a[i * ra + p * sa] and b(p, j) is b[p * sb + j *
// cb]: the strides say the layout. The main 4 x 6 block is instantiated per layout with constant
// strides (fewer pointer updates); the edges use runtime strides (one instantiation for every
// layout).
template <int R, int C>
__attribute__((always_inline)) inline void block(const float* a, const float* b, float* c,
                                                 uint32_t n, uint32_t k, uint32_t i0, uint32_t j0,
                                                 uint32_t ra, uint32_t sa, uint32_t cb, uint32_t sb,
                                                 bool accumulate) {
  float acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < C; ++j) acc[r][j] = accumulate ? c[(i0 + r) * n + j0 + j] : 0.0f;
  }
  const float* pa[R];
  for (int r = 0; r < R; ++r) pa[r] = a + (i0 + r) * ra;
  const float* pb[C];
  for (int j = 0; j < C; ++j) pb[j] = b + (j0 + j) * cb;
  for (uint32_t p = 0; p < k; ++p) {
    float av[R];
    for (int r = 0; r < R; ++r) av[r] = *pa[r], pa[r] += sa;
#pragma clang loop unroll(full)
    for (int j = 0; j < C; ++j) {
      const float bv = *pb[j];
      pb[j] += sb;
      for (int r = 0; r < R; ++r) acc[r][j] = __builtin_fmaf(av[r], bv, acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < C; ++j) c[(i0 + r) * n + j0 + j] = acc[r][j];
  }
}

template <int R, int C>
__attribute__((noinline)) void edge(const float* a, const float* b, float* c, uint32_t n,
                                    uint32_t k, uint32_t i0, uint32_t j0, uint32_t ra, uint32_t sa,
                                    uint32_t cb, uint32_t sb, bool accumulate) {
  block<R, C>(a, b, c, n, k, i0, j0, ra, sa, cb, sb, accumulate);
}

// The rows below the last multiple of four, in 1 x 6 blocks (columns [0, nb)).
void edgeRows(const float* a, const float* b, float* c, uint32_t n, uint32_t k, uint32_t i0,
              uint32_t i1, uint32_t nb, uint32_t ra, uint32_t sa, uint32_t cb, uint32_t sb,
              bool acc) {
  for (uint32_t j = 0; j < nb; j += 6) {
    for (uint32_t i = i0; i < i1; ++i) edge<1, 6>(a, b, c, n, k, i, j, ra, sa, cb, sb, acc);
  }
}

// The columns [j0, ncols) beyond the last multiple of six, every row: 4 x 3, 4 x 1, 1 x 3, 1 x 1.
void edgeCols(const float* a, const float* b, float* c, uint32_t m, uint32_t ncols, uint32_t n,
              uint32_t k, uint32_t j0, uint32_t ra, uint32_t sa, uint32_t cb, uint32_t sb,
              bool acc) {
  for (uint32_t j = j0; j < ncols;) {
    const bool three = j + 3 <= ncols;
    uint32_t i = 0;
    for (; i + 4 <= m; i += 4) {
      if (three)
        edge<4, 3>(a, b, c, n, k, i, j, ra, sa, cb, sb, acc);
      else
        edge<4, 1>(a, b, c, n, k, i, j, ra, sa, cb, sb, acc);
    }
    for (; i < m; ++i) {
      if (three)
        edge<1, 3>(a, b, c, n, k, i, j, ra, sa, cb, sb, acc);
      else
        edge<1, 1>(a, b, c, n, k, i, j, ra, sa, cb, sb, acc);
    }
    j += three ? 3 : 1;
  }
}

// The main 4 x 6 block, per layout, k unrolled by two: a stored row-major (TA false) is read
// through four row pointers with immediate offsets, transposed through one pointer; b likewise
// through one pointer (row-major) or six column pointers (TB).
template <bool TA, bool TB>
__attribute__((noinline)) void block46(const float* a, const float* b, float* c, uint32_t lda,
                                       uint32_t n, uint32_t k, uint32_t i0, uint32_t j0,
                                       bool accumulate) {
  float acc[4][6];
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 6; ++j) acc[r][j] = accumulate ? c[(i0 + r) * n + j0 + j] : 0.0f;
  }
  const float* pa[4];
  for (int r = 0; r < 4; ++r) pa[r] = TA ? a + i0 : a + (i0 + r) * k;
  const float* pb[6];
  for (int j = 0; j < 6; ++j) pb[j] = TB ? b + (j0 + j) * k : b + j0;
  // a(i0 + r, p + q) and b(p + q, j0 + j) relative to the pointers, q = 0 or 1.
  auto av = [&](int r, int q) __attribute__((always_inline)) {
    return TA ? pa[0][q * lda + r] : pa[r][q];
  };
  auto bv = [&](int j, int q) __attribute__((always_inline)) {
    return TB ? pb[j][q] : pb[0][q * n + j];
  };
  auto stepUp = [&](uint32_t q) __attribute__((always_inline)) {
    for (int r = 0; r < (TA ? 1 : 4); ++r) pa[r] += TA ? q * lda : q;
    for (int j = 0; j < (TB ? 6 : 1); ++j) pb[j] += TB ? q : q * n;
  };
  auto mac = [&](int q) __attribute__((always_inline)) {
    float x[4];
    for (int r = 0; r < 4; ++r) x[r] = av(r, q);
#pragma clang loop unroll(full)
    for (int j = 0; j < 6; ++j) {
      const float y = bv(j, q);
      for (int r = 0; r < 4; ++r) acc[r][j] = __builtin_fmaf(x[r], y, acc[r][j]);
    }
  };
  for (uint32_t p = 0; p + 2 <= k; p += 2) {
    mac(0);
    mac(1);
    stepUp(2);
  }
  if (k % 2) mac(0);
  for (int r = 0; r < 4; ++r) {
    for (int j = 0; j < 6; ++j) c[(i0 + r) * n + j0 + j] = acc[r][j];
  }
}

// m x ncols of c (row stride n, which is also b's row stride when b is row-major); a transposed
// has row stride lda (its own row count).
template <bool TA, bool TB>
void matmul(const float* a, const float* b, float* c, uint32_t m, uint32_t ncols, uint32_t lda,
            uint32_t n, uint32_t k, bool accumulate) {
  const uint32_t ra = TA ? 1 : k, sa = TA ? lda : 1;
  const uint32_t cb = TB ? k : 1, sb = TB ? 1 : n;
  const uint32_t mb = m - m % 4, nb = ncols - ncols % 6;
  for (uint32_t j0 = 0; j0 < nb; j0 += 6) {
    for (uint32_t i0 = 0; i0 < mb; i0 += 4) block46<TA, TB>(a, b, c, lda, n, k, i0, j0, accumulate);
  }
  if (mb < m) edgeRows(a, b, c, n, k, mb, m, nb, ra, sa, cb, sb, accumulate);
  if (nb < ncols) edgeCols(a, b, c, m, ncols, n, k, nb, ra, sa, cb, sb, accumulate);
}

}  // namespace

TESSERA_VERTEX(MatMulBlocked, (Input, float, a), (Input, float, b), (InOut, float, c),
               (Param, uint32_t, k), (Param, uint32_t, flags), (Param, uint32_t, row),
               (Param, uint32_t, rows), (Param, uint32_t, col), (Param, uint32_t, cols)) {
  const uint32_t kk = k;
  const uint32_t lda = a.size() / kk;  // rows of op(a)
  const uint32_t n = b.size() / kk;    // columns of op(b) = the row stride of c
  const bool accumulate = (flags & 4u) != 0;
  const bool ta = (flags & 1u) != 0, tb = (flags & 2u) != 0;
  const uint32_t r0 = row, c0 = col;
  const float* const a0 = ta ? a.data() + r0 : a.data() + r0 * kk;
  const float* const b0 = tb ? b.data() + c0 * kk : b.data() + c0;
  float* const cc = c.data() + r0 * n + c0;
  switch (flags & 3u) {
    case 0:
      matmul<false, false>(a0, b0, cc, rows, cols, lda, n, kk, accumulate);
      break;
    case 1:
      matmul<true, false>(a0, b0, cc, rows, cols, lda, n, kk, accumulate);
      break;
    case 2:
      matmul<false, true>(a0, b0, cc, rows, cols, lda, n, kk, accumulate);
      break;
    default:
      matmul<true, true>(a0, b0, cc, rows, cols, lda, n, kk, accumulate);
      break;
  }
}
