// x += delta on int32 elements (wrapping), e.g. a loop counter of RepeatWhile.
#include "tessera/vertex.hpp"

TESSERA_VERTEX(AddInt, (InOut, int32_t, x), (Param, int32_t, delta)) {
  const uint32_t d = static_cast<uint32_t>(static_cast<int32_t>(delta));
  for (uint32_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<int32_t>(static_cast<uint32_t>(x[i]) + d);
}
