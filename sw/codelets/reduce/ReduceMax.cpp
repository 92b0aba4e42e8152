// out[j] = max over parts p of in[p][j] (in.size() = parts * out.size()).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ReduceMax, (Input, float, in), (Output, float, out)) {
  const uint32_t n = out.size();
  const uint32_t parts = in.size() / n;
  for (uint32_t j = 0; j < n; ++j) {
    float s = in[j];
    for (uint32_t p = 1; p < parts; ++p) s = in[p * n + j] > s ? in[p * n + j] : s;
    out[j] = s;
  }
}
