// out = rows [row, row + out.size() / cols) of in^T: in is [cols, rows] row-major, out the part's
// rows of the [rows, cols] transpose. The matrix unit's matmul transposes a stored op(a) block on
// its tile with it (docs/library.md, "matmul on the matrix unit"): the exchange then moves the
// block in long runs instead of one word per message.
//
// The bulk goes in 4 x 4 tiles: four source rows read with immediate offsets, four destination
// rows written so, eight pointer steps and the loop's branch, about 2.6 instructions a word (a
// word at a time, down a source column, took 4.75). The inner loop runs along the longer side of
// the part (a part of 8 rows of a 32-column transpose walks the 8 column quads, not the 2 row
// quads: fewer loop starts). The last 1 to 3 rows go 4 columns at a time (four source rows, one
// destination row, about 3.5 a word), and the last 1 to 3 columns a word at a time. Words are
// moved as they are (FLW/FSW keep NaN payloads).
#include "tessera/vertex.hpp"

namespace {

// The 4 x 4 tile at source rows s0..s3 (a column quad of the transpose), columns 0..3 (its row
// quad) into destination rows d0..d3.
__attribute__((always_inline)) inline void tile4x4(const float* s0, const float* s1,
                                                   const float* s2, const float* s3, float* d0,
                                                   float* d1, float* d2, float* d3) {
  const float a0 = s0[0], a1 = s0[1], a2 = s0[2], a3 = s0[3];
  const float b0 = s1[0], b1 = s1[1], b2 = s1[2], b3 = s1[3];
  const float c0 = s2[0], c1 = s2[1], c2 = s2[2], c3 = s2[3];
  const float e0 = s3[0], e1 = s3[1], e2 = s3[2], e3 = s3[3];
  d0[0] = a0, d0[1] = b0, d0[2] = c0, d0[3] = e0;
  d1[0] = a1, d1[1] = b1, d1[2] = c1, d1[3] = e1;
  d2[0] = a2, d2[1] = b2, d2[2] = c2, d2[3] = e2;
  d3[0] = a3, d3[1] = b3, d3[2] = c3, d3[3] = e3;
}

}  // namespace

TESSERA_VERTEX(Transpose2d, (Input, float, in), (Output, float, out), (Param, uint32_t, rows),
               (Param, uint32_t, cols), (Param, uint32_t, row)) {
  const uint32_t n = rows, k = cols;
  const uint32_t count = out.size() / k;
  const float* const src = in.data() + static_cast<uint32_t>(row);
  float* const dst = out.data();
  const uint32_t count4 = count & ~3u, k4 = k & ~3u;
  if (count4 != 0 && k4 != 0) {
    if (k4 >= count4) {
      // Outer: the row quads r; inner: the column quads c (source rows c..c+3, destination
      // columns c..c+3).
      for (uint32_t r = 0; r < count4; r += 4) {
        const float* s0 = src + r;
        const float* s1 = s0 + n;
        const float* s2 = s1 + n;
        const float* s3 = s2 + n;
        float* d0 = dst + r * k;
        float* d1 = d0 + k;
        float* d2 = d1 + k;
        float* d3 = d2 + k;
        float* const dEnd = d0 + k4;
        const uint32_t step = 4 * n;
        for (; d0 != dEnd; s0 += step, s1 += step, s2 += step, s3 += step) {
          tile4x4(s0, s1, s2, s3, d0, d1, d2, d3);
          d0 += 4, d1 += 4, d2 += 4, d3 += 4;
        }
      }
    } else {
      // Outer: the column quads c; inner: the row quads r.
      for (uint32_t c = 0; c < k4; c += 4) {
        const float* s0 = src + c * n;
        const float* s1 = s0 + n;
        const float* s2 = s1 + n;
        const float* s3 = s2 + n;
        float* d0 = dst + c;
        float* d1 = d0 + k;
        float* d2 = d1 + k;
        float* d3 = d2 + k;
        const float* const sEnd = s0 + count4;
        const uint32_t step = 4 * k;
        for (; s0 != sEnd; s0 += 4, s1 += 4, s2 += 4, s3 += 4) {
          tile4x4(s0, s1, s2, s3, d0, d1, d2, d3);
          d0 += step, d1 += step, d2 += step, d3 += step;
        }
      }
    }
  }
  // The last 1 to 3 rows, 4 columns at a time: source rows c..c+3 at column r, one destination
  // row.
  const uint32_t step = 4 * n;
  for (uint32_t r = count4; r < count; ++r) {
    const float* s0 = src + r;
    const float* s1 = s0 + n;
    const float* s2 = s1 + n;
    const float* s3 = s2 + n;
    float* d = dst + r * k;
    float* const dEnd = d + k4;
    for (; d != dEnd; d += 4, s0 += step, s1 += step, s2 += step, s3 += step) {
      const float a = *s0, b = *s1, c = *s2, e = *s3;
      d[0] = a, d[1] = b, d[2] = c, d[3] = e;
    }
  }
  // The last 1 to 3 columns of every row, a word at a time.
  for (uint32_t c = k4; c < k; ++c) {
    const float* s = src + c * n;
    float* d = dst + c;
    for (uint32_t r = 0; r < count; ++r, d += k) *d = s[r];
  }
}
