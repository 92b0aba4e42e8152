// out = in narrowed to binary16 with stochastic rounding: AMP.SEED with the vertex's seed, then
// AMP.CVTHS.SR on each pair in order (docs/tile.md, "fp16 inputs and conversions"). The bits
// depend only on the seed and the inputs, so every backend gives the same (docs/library.md,
// "fp16 tensors and casts": each vertex gets its own seed from the cast's).
#include "tessera/amp.h"
#include "tessera/vertex.hpp"

TESSERA_EXCLUSIVE_VERTEX(CastToHalfSR, (Input, float, in), (Output, uint16_t, out),
                         (Param, uint32_t, seed)) {
  const uint32_t* src = reinterpret_cast<const uint32_t*>(in.data());
  uint32_t* dst = reinterpret_cast<uint32_t*>(out.data());
  const uint32_t words = out.size() / 2;
  const uint32_t s = seed;
  TESSERA_AMP_SEED(s);
  for (uint32_t i = 0; i < words; ++i) {
    uint32_t h;
    TESSERA_AMP_CVTHS_SR(h, src[2 * i], src[2 * i + 1]);
    dst[i] = h;
  }
}
