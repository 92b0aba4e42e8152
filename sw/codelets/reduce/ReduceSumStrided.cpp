// out[j] = in[0][offset + j] + in[1][offset + j] + ..., where in is [parts, width] row-major:
// several vertices of one tile share one gathered input and each sums its own columns, so the
// exchange moves whole rows (docs/library.md, "Reductions").
//
// Four outputs at a time keep their sums in registers while the loop walks the parts (4 loads and
// 4 adds a part, about 2.75 instructions an add instead of 5 to 6 one output at a time). Each
// output is still the sum in part order from in[0], so the bits are those of the plain loop.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceSumStrided, (Input, float, in), (Output, float, out), (Param, uint32_t, width),
               (Param, uint32_t, offset)) {
  const uint32_t w = width;
  const uint32_t parts = in.size() / w;
  const float* base = in.data() + static_cast<uint32_t>(offset);
  const uint32_t size = out.size(), size4 = size & ~3u;
  float* o = out.data();
  for (uint32_t j = 0; j < size4; j += 4) {
    const float* q = base + j;
    float s0 = q[0], s1 = q[1], s2 = q[2], s3 = q[3];
    for (uint32_t p = 1; p < parts; ++p) {
      q += w;
      s0 += q[0], s1 += q[1], s2 += q[2], s3 += q[3];
    }
    o[j] = s0, o[j + 1] = s1, o[j + 2] = s2, o[j + 3] = s3;
  }
  for (uint32_t j = size4; j < size; ++j) {
    float s = base[j];
    for (uint32_t p = 1; p < parts; ++p) s += base[p * w + j];
    o[j] = s;
  }
}
