// out[j] = in[0][offset + j] + in[1][offset + j] + ..., where in is [parts, width] row-major:
// several vertices of one tile share one gathered input and each sums its own columns, so the
// exchange moves whole rows (docs/library.md, "Reductions").
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceSumStrided, (Input, float, in), (Output, float, out), (Param, uint32_t, width),
               (Param, uint32_t, offset)) {
  const uint32_t w = width;
  const uint32_t parts = in.size() / w;
  const float* base = in.data() + static_cast<uint32_t>(offset);
  for (uint32_t j = 0; j < out.size(); ++j) {
    float s = base[j];
    for (uint32_t p = 1; p < parts; ++p) s += base[p * w + j];
    out[j] = s;
  }
}
