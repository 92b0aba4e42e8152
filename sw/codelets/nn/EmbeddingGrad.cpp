// The gradient of an embedding lookup on a block of table columns: out ([vocab, width], this
// tile's block of the table's gradient) is zeroed in columns [col, col + cols), then row r of grad
// ([rows, width]) is added to row indices[r], for r = 0, 1, ... in order (a deterministic
// scatter-add; indices outside [0, vocab) are skipped, their forward rows were NaN).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(EmbeddingGrad, (Input, float, grad), (Input, int32_t, indices), (Output, float, out),
               (Param, uint32_t, width), (Param, uint32_t, col), (Param, uint32_t, cols),
               (Param, uint32_t, vocab)) {
  const uint32_t w = width, c0 = col, c1 = col + cols, v = vocab;
  for (uint32_t i = 0; i < v; ++i) {
    for (uint32_t j = c0; j < c1; ++j) out[i * w + j] = 0.0f;
  }
  for (uint32_t r = 0; r < indices.size(); ++r) {
    const int32_t idx = indices[r];
    if (idx < 0 || static_cast<uint32_t>(idx) >= v) continue;
    float* t = out.data() + static_cast<uint32_t>(idx) * w;
    const float* g = grad.data() + r * w;
    for (uint32_t j = c0; j < c1; ++j) t[j] += g[j];
  }
}
