// Embedding lookup on a block of table columns: table is this tile's [vocab, width] block of the
// table, out its [rows, width] block of the result; this vertex fills columns [col, col + cols)
// of every row: out[r][j] = table[indices[r]][j]. An index outside [0, vocab) gives a NaN row
// (the host sees it) instead of reading outside the table.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(EmbeddingLookup, (Input, float, table), (Input, int32_t, indices),
               (Output, float, out), (Param, uint32_t, width), (Param, uint32_t, col),
               (Param, uint32_t, cols), (Param, uint32_t, vocab)) {
  const uint32_t w = width, c0 = col, c1 = col + cols, v = vocab;
  for (uint32_t r = 0; r < indices.size(); ++r) {
    const int32_t idx = indices[r];
    float* y = out.data() + r * w;
    if (idx < 0 || static_cast<uint32_t>(idx) >= v) {
      union {
        uint32_t u;
        float f;
      } nan = {0x7fc00000u};
      for (uint32_t j = c0; j < c1; ++j) y[j] = nan.f;
      continue;
    }
    const float* t = table.data() + static_cast<uint32_t>(idx) * w;
    for (uint32_t j = c0; j < c1; ++j) y[j] = t[j];
  }
}
