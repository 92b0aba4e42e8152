// out[j] = in[0][j] + in[1][j] + ... (in.size() = parts * out.size()), summed in part order.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceSum, (Input, float, in), (Output, float, out)) {
  const uint32_t n = out.size();
  const uint32_t parts = in.size() / n;
  for (uint32_t j = 0; j < n; ++j) {
    float s = in[j];
    for (uint32_t p = 1; p < parts; ++p) s += in[p * n + j];
    out[j] = s;
  }
}
