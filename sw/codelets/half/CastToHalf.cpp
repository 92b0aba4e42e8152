// out = in narrowed to binary16, round to nearest, ties to even: AMP.CVTHS on each pair
// (docs/tile.md, "fp16 inputs and conversions"; docs/library.md, "fp16 tensors and casts").
// out holds whole words (the compiler moves float16 tensors in pairs), so out.size() is even.
#include "tessera/amp.h"
#include "tessera/vertex.hpp"

TESSERA_VERTEX(CastToHalf, (Input, float, in), (Output, uint16_t, out)) {
  const uint32_t* src = reinterpret_cast<const uint32_t*>(in.data());
  uint32_t* dst = reinterpret_cast<uint32_t*>(out.data());
  const uint32_t words = out.size() / 2;
  for (uint32_t i = 0; i < words; ++i) {
    uint32_t h;
    TESSERA_AMP_CVTHS(h, src[2 * i], src[2 * i + 1]);
    dst[i] = h;
  }
}
