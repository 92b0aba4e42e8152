// out = rows [row, row + out.size() / cols) of in^T: in is [cols, rows] row-major, out the part's
// rows of the [rows, cols] transpose. The matrix unit's matmul transposes a stored op(a) block on
// its tile with it (docs/library.md, "matmul on the matrix unit"): the exchange then moves the
// block in long runs instead of one word per message.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(Transpose2d, (Input, float, in), (Output, float, out), (Param, uint32_t, rows),
               (Param, uint32_t, cols), (Param, uint32_t, row)) {
  const uint32_t n = rows, k = cols;
  const uint32_t count = out.size() / k;
  const float* src = in.data() + row;
  float* dst = out.data();
  for (uint32_t r = 0; r < count; ++r, ++src) {
    const float* s = src;
    uint32_t c = 0;
    for (; c + 4 <= k; c += 4, dst += 4, s += 4 * n) {
      const float v0 = s[0], v1 = s[n], v2 = s[2 * n], v3 = s[3 * n];
      dst[0] = v0, dst[1] = v1, dst[2] = v2, dst[3] = v3;
    }
    for (; c < k; ++c, s += n) *dst++ = *s;
  }
}
