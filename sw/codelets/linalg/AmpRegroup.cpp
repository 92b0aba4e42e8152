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
// Pointers walk (nothing is indexed), four words a step where a group of four is whole: about 2.75
// instructions a word in modes 0 to 2, 3.5 in mode 3 (four source pointers); padding rows and
// columns are stored without reading.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AmpRegroup, (Input, float, in), (Output, float, out), (Param, uint32_t, mode),
               (Param, uint32_t, rows), (Param, uint32_t, realRows), (Param, uint32_t, realCols),
               (Param, uint32_t, ld), (Param, uint32_t, width), (Param, uint32_t, begin),
               (Param, float, pad)) {
  const uint32_t m = mode, nr = rows, rr = realRows < rows ? realRows : rows, rc = realCols;
  const uint32_t l = ld, b = begin;
  const float p = pad;
  const float* const src = in.data();
  float* d = out.data();
  if (m == 0 || m == 3) {
    // Source step between the four words of a group, and between rows.
    const uint32_t js = m == 0 ? 1 : l, rs = m == 0 ? l : 1;
    const uint32_t groups = out.size() / (nr * 4);
    for (uint32_t g = b; g < b + groups; ++g) {
      const uint32_t c0 = 4 * g;
      const uint32_t real = c0 >= rc ? 0 : (rc - c0 < 4 ? rc - c0 : 4);
      float* const dReal = d + 4 * rr;  // past the rows with source words
      if (real == 4 && js == 1) {
        for (const float* s = src + c0; d != dReal; d += 4, s += rs)
          d[0] = s[0], d[1] = s[1], d[2] = s[2], d[3] = s[3];
      } else if (real == 4) {
        const float* s0 = src + c0 * js;
        const float* s1 = s0 + js;
        const float* s2 = s1 + js;
        const float* s3 = s2 + js;
        for (; d != dReal; d += 4, s0 += rs, s1 += rs, s2 += rs, s3 += rs)
          d[0] = *s0, d[1] = *s1, d[2] = *s2, d[3] = *s3;
      } else {
        // The last group, partly padding columns.
        for (uint32_t r = 0; r < rr; ++r, d += 4) {
          for (uint32_t j = 0; j < 4; ++j) d[j] = j < real ? src[(c0 + j) * js + r * rs] : p;
        }
      }
      for (float* const dEnd = d + 4 * (nr - rr); d != dEnd; d += 4)
        d[0] = p, d[1] = p, d[2] = p, d[3] = p;
    }
  } else if (m == 1) {
    const uint32_t count = out.size() / rc, whole = rc / 4, tail = rc % 4;
    const uint32_t gs = nr * 4;  // floats from a row's group to its next
    for (uint32_t r = b; r < b + count; ++r) {
      const float* s = src + r * 4;
      for (float* const dq = d + 4 * whole; d != dq; d += 4, s += gs)
        d[0] = s[0], d[1] = s[1], d[2] = s[2], d[3] = s[3];
      for (uint32_t j = 0; j < tail; ++j) *d++ = s[j];
    }
  } else {
    // A row: its quads, its last 1 to 3 words and its 1 to 3 padding words (k padded to a
    // multiple of 4) straight, more padding in a loop.
    const uint32_t w = width, count = out.size() / w, quads = rc / 4, tail = rc % 4;
    const uint32_t padding = w - rc;
    const float* row = src + b * l;
    for (uint32_t r = 0; r < count; ++r, row += l) {
      const float* s = row;
      for (float* const dq = d + 4 * quads; d != dq; d += 4, s += 4)
        d[0] = s[0], d[1] = s[1], d[2] = s[2], d[3] = s[3];
      switch (tail) {
        case 3:
          d[2] = s[2];
          [[fallthrough]];
        case 2:
          d[1] = s[1];
          [[fallthrough]];
        case 1:
          d[0] = s[0];
          break;
        default:
          break;
      }
      d += tail;
      switch (padding) {
        case 0:
          break;
        case 3:
          d[2] = p;
          [[fallthrough]];
        case 2:
          d[1] = p;
          [[fallthrough]];
        case 1:
          d[0] = p;
          break;
        default:
          for (uint32_t j = 0; j < padding; ++j) d[j] = p;
          break;
      }
      d += padding;
    }
  }
}
