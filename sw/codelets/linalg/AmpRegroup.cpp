// The matrix unit's padded operands (docs/library.md, "Narrow blocks on the unit"): words moved
// as they are (FLW/FSW keep NaN payloads) between a row-major block and the unit's layouts, with
// `pad` where the padded layout has no source word.
//   mode 0: out = groups [begin, begin + out.size() / (rows * 4)) of the column groups
//           [groups][rows][4] of the row-major block in [realRows][ld] (columns 0 .. realCols):
//           out[g][r][j] = in[r * ld + 4 g + j], or pad where r >= realRows or 4 g + j >= realCols
//   mode 1: out = rows [begin, ...) of the row-major [rows][realCols] block stored in column
//           groups in [groups][rows][4] (the inverse of mode 0 on the real columns)
//   mode 2: out = rows [begin, ...) of [rows][width]: in[r * ld + c] for c < realCols, else pad
//   mode 3: mode 0 of the transpose: out[g][r][j] = in[(4 g + j) * ld + r], pad as mode 0
// Four words a step where a group of four is whole (about three instructions a word).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AmpRegroup, (Input, float, in), (Output, float, out), (Param, uint32_t, mode),
               (Param, uint32_t, rows), (Param, uint32_t, realRows), (Param, uint32_t, realCols),
               (Param, uint32_t, ld), (Param, uint32_t, width), (Param, uint32_t, begin),
               (Param, float, pad)) {
  const uint32_t m = mode, nr = rows, rr = realRows, rc = realCols, l = ld, b = begin;
  const float p = pad;
  const float* const src = in.data();
  float* d = out.data();
  if (m == 0 || m == 3) {
    // Source step between the four words of a group, and between rows.
    const uint32_t js = m == 0 ? 1 : l, rs = m == 0 ? l : 1;
    const uint32_t groups = out.size() / (nr * 4);
    for (uint32_t g = b; g < b + groups; ++g) {
      const uint32_t c0 = 4 * g;
      const float* s = src + c0 * js;
      const uint32_t real = c0 >= rc ? 0 : (rc - c0 < 4 ? rc - c0 : 4);
      for (uint32_t r = 0; r < nr; ++r, d += 4, s += rs) {
        if (r < rr && real == 4) {
          d[0] = s[0], d[1] = s[js], d[2] = s[2 * js], d[3] = s[3 * js];
        } else {
          for (uint32_t j = 0; j < 4; ++j) d[j] = r < rr && j < real ? s[j * js] : p;
        }
      }
    }
  } else if (m == 1) {
    const uint32_t count = out.size() / rc, whole = rc / 4;
    for (uint32_t r = b; r < b + count; ++r) {
      const float* s = src + r * 4;
      for (uint32_t g = 0; g < whole; ++g, d += 4, s += nr * 4)
        d[0] = s[0], d[1] = s[1], d[2] = s[2], d[3] = s[3];
      for (uint32_t j = 0; j < rc % 4; ++j) *d++ = s[j];
    }
  } else {
    const uint32_t w = width, count = out.size() / w;
    for (uint32_t r = b; r < b + count; ++r) {
      const float* s = src + r * l;
      uint32_t c = 0;
      for (; c + 4 <= rc; c += 4, d += 4)
        d[0] = s[c], d[1] = s[c + 1], d[2] = s[c + 2], d[3] = s[c + 3];
      for (; c < rc; ++c) *d++ = s[c];
      for (; c < w; ++c) *d++ = p;
    }
  }
}
