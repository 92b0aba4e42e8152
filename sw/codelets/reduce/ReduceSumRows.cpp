// out[r] = in[r][0] + in[r][1] + ... (in.size() = out.size() * columns), summed left to right.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceSumRows, (Input, float, in), (Output, float, out)) {
  const uint32_t m = out.size();
  const uint32_t cols = in.size() / m;
  for (uint32_t r = 0; r < m; ++r) {
    float s = in[r * cols];
    for (uint32_t j = 1; j < cols; ++j) s += in[r * cols + j];
    out[r] = s;
  }
}
