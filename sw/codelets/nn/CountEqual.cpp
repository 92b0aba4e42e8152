// count[0] = number of i with a[i] == b[i], as a float (exact below 2^24).
#include "tessera/vertex.hpp"

TESSERA_VERTEX(CountEqual, (Input, int32_t, a), (Input, int32_t, b), (Output, float, count)) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < a.size(); ++i) n += a[i] == b[i] ? 1u : 0u;
  count[0] = static_cast<float>(n);
}
