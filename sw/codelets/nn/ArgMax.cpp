// index[r] = the first j with the largest logits[r][j] (rows of `classes` elements).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(ArgMax, (Input, float, logits), (Output, int32_t, index),
               (Param, uint32_t, classes)) {
  const uint32_t c = classes;
  for (uint32_t r = 0; r < index.size(); ++r) {
    const float* x = logits.data() + r * c;
    uint32_t best = 0;
    for (uint32_t j = 1; j < c; ++j) best = x[j] > x[best] ? j : best;
    index[r] = static_cast<int32_t>(best);
  }
}
