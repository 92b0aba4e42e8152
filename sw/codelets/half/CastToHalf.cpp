// out = in narrowed to binary16, round to nearest, ties to even: AMP.CVTHS on each pair
// (docs/tile.md, "fp16 inputs and conversions"; docs/library.md, "fp16 tensors and casts").
// out holds whole words (the compiler moves float16 tensors in pairs), so out.size() is even.
// Four words a loop trip (4.75 instructions a word instead of 8: mixed precision casts every
// weight each step).
#include "tessera/amp.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(CastToHalf, (Input, float, in), (Output, uint16_t, out)) {
  const uint32_t* src = reinterpret_cast<const uint32_t*>(in.data());
  uint32_t* dst = reinterpret_cast<uint32_t*>(out.data());
  const uint32_t words = out.size() / 2;
  uint32_t* const end = dst + words;
  for (uint32_t* const end4 = dst + (words & ~3u); dst != end4; dst += 4, src += 8) {
    uint32_t h0, h1, h2, h3;
    TESSERA_AMP_CVTHS(h0, src[0], src[1]);
    TESSERA_AMP_CVTHS(h1, src[2], src[3]);
    TESSERA_AMP_CVTHS(h2, src[4], src[5]);
    TESSERA_AMP_CVTHS(h3, src[6], src[7]);
    dst[0] = h0;
    dst[1] = h1;
    dst[2] = h2;
    dst[3] = h3;
  }
  for (; dst != end; ++dst, src += 2) {
    uint32_t h;
    TESSERA_AMP_CVTHS(h, src[0], src[1]);
    *dst = h;
  }
}
