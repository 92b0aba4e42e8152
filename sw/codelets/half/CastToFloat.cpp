// out = in widened to binary32, exactly: AMP.CVTSH.LO and .HI on each word of two halves
// (docs/tile.md, "fp16 inputs and conversions"). in holds whole words, so in.size() is even.
#include "tessera/amp.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(CastToFloat, (Input, uint16_t, in), (Output, float, out)) {
  const uint32_t* src = reinterpret_cast<const uint32_t*>(in.data());
  float* dst = out.data();
  const uint32_t words = in.size() / 2;
  for (uint32_t i = 0; i < words; ++i) {
    const uint32_t w = src[i];
    float lo, hi;
    TESSERA_AMP_CVTSH_LO(lo, w);
    TESSERA_AMP_CVTSH_HI(hi, w);
    dst[2 * i] = lo;
    dst[2 * i + 1] = hi;
  }
}
